/*
 * providers.c - the openssl backend's probe (in its companion object,
 * engine.h): the OpenSSL providers present on this host (OpenSSL 3
 * provider API, provider(7ossl)): the ones active in the process's default
 * library context once the configuration file is read, OpenSSL's own
 * providers, and every module in the modules folder ($OPENSSL_MODULES, else
 * the one OpenSSL was built with). A provider that is not active is loaded
 * in a private library context, so probing changes nothing for the process.
 *
 * OpenSSL's own providers (default, base, fips, legacy, null) run on the CPU
 * and are flagged software; other providers (qatprovider, pkcs11, tpm2)
 * front a device and are not.
 *
 * The probe adds one engine on the CPU device, openssl:cpu0, running the
 * age STREAM and file hashes through the default library context
 * (engine.c). The providers are listed as devices only for an inventory
 * (accel_probe_list_devices): a route needs the engine alone.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include <openssl/provider.h>
#include "engine.h"

#define MAX_PROVIDERS 16

struct found {
	char name[MAX_PROVIDERS][64];
	int n;
};

static void remember(struct found *f, const char *name)
{
	for (int i = 0; i < f->n; i++)
		if (!strcmp(f->name[i], name))
			return;
	if (f->n < MAX_PROVIDERS)
		snprintf(f->name[f->n++], sizeof f->name[0], "%s", name);
}

static int active_cb(OSSL_PROVIDER *prov, void *arg)
{
	remember(arg, OSSL_PROVIDER_get0_name(prov));
	return 1;
}

static int builtin(const char *name)
{
	static const char *const own[] = { "default", "base", "fips", "legacy", "null" };
	for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
		if (!strcmp(own[i], name))
			return 1;
	return 0;
}

/* Describe provider `prov` (loaded) into d. */
static void describe(struct accel_device *d, OSSL_PROVIDER *prov)
{
	char *name = NULL, *version = NULL, *buildinfo = NULL;
	int status = 1;
	OSSL_PARAM params[] = {
		OSSL_PARAM_utf8_ptr(OSSL_PROV_PARAM_NAME, &name, 0),
		OSSL_PARAM_utf8_ptr(OSSL_PROV_PARAM_VERSION, &version, 0),
		OSSL_PARAM_utf8_ptr(OSSL_PROV_PARAM_BUILDINFO, &buildinfo, 0),
		OSSL_PARAM_int(OSSL_PROV_PARAM_STATUS, &status),
		OSSL_PARAM_END,
	};
	if (!OSSL_PROVIDER_get_params(prov, params))
		return;
	if (OSSL_PARAM_modified(&params[0]) && name)
		snprintf(d->model, sizeof d->model, "%s", name);
	if (OSSL_PARAM_modified(&params[1]) && version)
		accel_device_set(d, "version", version);
	if (OSSL_PARAM_modified(&params[2]) && buildinfo && (!version || strcmp(buildinfo, version)))
		accel_device_set(d, "buildinfo", buildinfo);
	if (OSSL_PARAM_modified(&params[3]) && !status)
		accel_device_add_api(d, "openssl", 0, "the provider reports an error status");
}

/* The first queued OpenSSL error, for a reason. */
static void last_error(char *buf, size_t len)
{
	unsigned long e = ERR_peek_last_error();
	if (e)
		ERR_error_string_n(e, buf, len);
	else
		snprintf(buf, len, "cannot be loaded");
	ERR_clear_error();
}

static void add_provider(struct accel_probe *p, const char *name, const char *module_dir)
{
	struct accel_device d;
	memset(&d, 0, sizeof d);
	d.cls = ACCEL_CLASS_CRYPTO;
	d.numa_node = -1;
	d.software = builtin(name);
	snprintf(d.vendor, sizeof d.vendor, "%s", d.software ? "OpenSSL" : "OpenSSL provider");
	snprintf(d.model, sizeof d.model, "%s provider", name);
	snprintf(d.driver, sizeof d.driver, "%s", name);
	int active = OSSL_PROVIDER_available(NULL, name);
	accel_device_set(&d, "provider", name);
	accel_device_set(&d, "active", active ? "true" : "false");
	OSSL_LIB_CTX *lib = NULL;
	OSSL_PROVIDER *prov = NULL;
	if (active) {
		prov = OSSL_PROVIDER_load(NULL, name);   /* a reference to the active one */
	} else if ((lib = OSSL_LIB_CTX_new())) {
		if (module_dir)
			OSSL_PROVIDER_set_default_search_path(lib, module_dir);
		prov = OSSL_PROVIDER_try_load(lib, name, 1);
	}
	if (prov) {
		accel_device_add_api(&d, "openssl", 1, NULL);
		describe(&d, prov);
		OSSL_PROVIDER_unload(prov);
	} else {
		char why[120];
		last_error(why, sizeof why);
		accel_device_add_api(&d, "openssl", 0, why);
	}
	OSSL_LIB_CTX_free(lib);
	accel_probe_add_device(p, &d);
}

/* Shared objects in `dir`, their names without ".so" ("legacy.so" gives
 * "legacy"), into f. */
static void scan_modules(struct found *f, const char *dir)
{
	if (!dir)
		return;
	DIR *dp = opendir(dir);
	if (!dp)
		return;
	struct dirent *e;
	while ((e = readdir(dp))) {
		size_t n = strlen(e->d_name);
		if (n > 3 && !strcmp(e->d_name + n - 3, ".so")) {
			char name[64];
			snprintf(name, sizeof name, "%.*s", (int)(n - 3 < 63 ? n - 3 : 63), e->d_name);
			remember(f, name);
		}
	}
	closedir(dp);
}

int openssl_providers_probe(struct accel_probe *p)
{
	/* Providers are this host's libraries, not the recorded tree's. */
	if (accel_probe_sysroot(p)[0])
		return accel_probe_fail(p, "not run: ACCEL_SYSROOT is set");
	if (!OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG, NULL))
		return accel_probe_fail(p, "OpenSSL cannot read its configuration (%s)", OPENSSL_info(OPENSSL_INFO_CONFIG_DIR));
	const char *env = getenv("OPENSSL_MODULES");
	const char *dir = env && *env ? env : OPENSSL_info(OPENSSL_INFO_MODULES_DIR);
	struct found f;
	memset(&f, 0, sizeof f);
	remember(&f, "default");    /* active unless the configuration says otherwise */
	OSSL_PROVIDER_do_all(NULL, active_cb, &f);
	scan_modules(&f, dir);
	accel_probe_note(p, "%s; modules in %s", OpenSSL_version(OPENSSL_VERSION), dir ? dir : "(none)");
	/* ENGINEs (the API before providers, deprecated in OpenSSL 3) are
	 * named, not loaded: loading one may open its device. */
	struct found eng;
	memset(&eng, 0, sizeof eng);
	const char *edir = OPENSSL_info(OPENSSL_INFO_ENGINES_DIR);
	scan_modules(&eng, edir);
	char list[200] = "";
	for (int i = 0; i < eng.n; i++) {
		size_t n = strlen(list);
		snprintf(list + n, sizeof list - n, "%s%s", n ? " " : "", eng.name[i]);
	}
	if (eng.n)
		accel_probe_note(p, "engines (deprecated ENGINE API) in %s: %s", edir, list);
	/* Each provider is a device: loaded (in a private library context
	 * when not active) for its name and version, only for an inventory;
	 * a route needs the engine alone. */
	int list_devices = accel_probe_list_devices(p);
	for (int i = 0; list_devices && i < f.n; i++)
		add_provider(p, f.name[i], env && *env ? env : NULL);
	int cpu = accel_probe_cpu_device(p);
	if (cpu < 0)
		accel_probe_note(p, "no CPU device: no openssl engine");
	else if (accel_probe_add_engine(p, cpu, NULL) < 0)
		accel_probe_note(p, "cannot add the openssl engine on the CPU device");
	return 0;
}
