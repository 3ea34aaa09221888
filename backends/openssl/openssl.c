/*
 * openssl.c - the "openssl" backend's table: OpenSSL 3's providers on this
 * host (providers.c) and the openssl:cpu0 engine, age STREAM chunks and
 * file hashes (engine.c). Both are in the companion object openssl/crypto.so
 * (engine.h), which links libcrypto and which the probe loads: this file,
 * the plugin, maps no OpenSSL.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <openssl/crypto.h>
#include "engine.h"

static const char *const openssl_ops[] = {
	"age.encrypt", "age.decrypt", "sha256", "sha512", "sha3-256", "blake2b512", "sha1", "md5", NULL,
};

/* The companion's table, loaded by the first probe (under load_lock);
 * engines exist only after it. */
static const struct openssl_api *api;
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static int openssl_probe(struct accel_probe *p)
{
	char why[200] = "";
	pthread_mutex_lock(&load_lock);
	if (!api) {
		void *h = accel_probe_dlopen(p, "crypto.so", why, sizeof why);
		const struct openssl_api *t = h ? dlsym(h, "openssl_api_crypto") : NULL;
		if (t && t->version == ACCEL_OPENSSL_API_VERSION)
			api = t;
		else if (h) {
			snprintf(why, sizeof why, "openssl/crypto.so is of another build of this plugin (%s)",
				 t ? "its table's version differs" : "no table");
			dlclose(h);
		}
	}
	const struct openssl_api *t = api;
	pthread_mutex_unlock(&load_lock);
	return t ? t->probe(p) : accel_probe_fail(p, "%s", why);
}

static int openssl_supports(const struct accel_engine *e, const struct accel_op *op, double *prior_mbps,
			    char *reason, size_t len)
{
	return api->supports(e, op, prior_mbps, reason, len);
}

static int openssl_open(const struct accel_engine *e, const struct accel_op *op, void **ctx)
{
	return api->open(e, op, ctx);
}

static int openssl_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	return api->run(ctx, u, err, len);
}

static void openssl_close(void *ctx)
{
	api->close(ctx);
}

static const struct accel_api_info openssl_apis[] = {
	{ "openssl", ACCEL_API_CRYPTO },
	{ NULL, 0 },
};

/* --version: libcrypto's OpenSSL_version, asked of the library the
 * companion links, without loading the companion. */
static void openssl_versions(char *buf, size_t len)
{
	char why[200];
	void *h = accel_dlopen("libcrypto.so.3", why, sizeof why);
	const char *(*v)(int) = h ? (const char *(*)(int))dlsym(h, "OpenSSL_version") : NULL;
	if (v)
		snprintf(buf, len, "openssl %s\n", v(OPENSSL_VERSION_STRING));
	else
		snprintf(buf, len, "openssl (%s)\n", h ? "libcrypto.so.3 has no OpenSSL_version" : why);
}

ACCEL_PLUGIN_EXPORT const struct accel_backend accel_backend_openssl = {
	.abi = ACCEL_BACKEND_ABI,
	.name = "openssl",
	.description = "OpenSSL 3 providers (active, built in, and in the modules folder); age STREAM and hashes on the CPU",
	.ops = openssl_ops,
	.probe = openssl_probe,
	.supports = openssl_supports,
	.open = openssl_open,
	.run = openssl_run,
	.close = openssl_close,
	.classes = ACCEL_CLASS_BIT(ACCEL_CLASS_CRYPTO),
	.priority = 60,
	.apis = openssl_apis,
	.versions = openssl_versions,
};
