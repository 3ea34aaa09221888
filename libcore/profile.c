/*
 * profile.c - the routing profile: measured MB/s per (operation, engine,
 * size class), written by accel-bench --save and read by the router. It
 * records the machine it was measured on and keys engines by a stable
 * identity, so it never applies to another machine or another device.
 *
 * Format (JSON, schema_version 2):
 *   {"schema_version": 2,
 *    "machine": {"cpu_model": "AMD EPYC 7763 64-Core Processor",
 *                "devices": [{"id": "gpu0", "class": "gpu", "vendor": "NVIDIA",
 *                             "model": "NVIDIA H100", "pci_address": "0000:65:00.0",
 *                             "pci_id": "10de:2330", "driver": "nvidia",
 *                             "driver_versions": {"cuda_driver_version": "12.4"}}]},
 *    "entries": [{"operation": "zstd.compress", "engine": "cuda:gpu0",
 *                 "engine_key": "cuda@pci:0000:65:00.0", "size_class": "large",
 *                 "mb_per_s": 2500.0}]}
 * Schema 1 (no machine, entries matched by engine name) is still read.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "core.h"

#define PROFILE_MAX_BYTES (8u << 20)

const char *accel_size_class(int64_t bytes)
{
	if (bytes < 0)
		return "unknown";
	if (bytes < (int64_t)ACCEL_SMALL_JOB_BYTES)
		return "small";
	if (bytes < ((int64_t)64 << 20))
		return "medium";
	return "large";
}

int accel_profile_path(const char *path, char *buf, size_t len)
{
	const char *p = path ? path : getenv("ACCEL_PROFILE");
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	buf[0] = 0;
	if (p)
		snprintf(buf, len, "%s", p);
	else if (xdg && *xdg)
		snprintf(buf, len, "%s/accel/profile.json", xdg);
	else if (home && *home)
		snprintf(buf, len, "%s/.cache/accel/profile.json", home);
	return buf[0] ? 0 : ACCEL_EINVAL;
}

int accel_engine_key(const struct accel_ctx *ctx, const struct accel_engine *e, char *buf, size_t len)
{
	/* BACKEND[.VARIANT]: the engine's name before the device part. */
	size_t n = strcspn(e->name, ":");
	if (e->device < 0 || e->device >= ctx->ndevices) {
		snprintf(buf, len, "%.*s@none", (int)n, e->name);
		return ACCEL_EINVAL;
	}
	const struct accel_device *d = &ctx->devices[e->device];
	if (d->pci_address[0])
		snprintf(buf, len, "%.*s@pci:%s", (int)n, e->name, d->pci_address);
	else if (d->cls == ACCEL_CLASS_CPU)
		snprintf(buf, len, "%.*s@cpu:%s", (int)n, e->name, d->model);
	else
		snprintf(buf, len, "%.*s@%s:%s/%s/%s", (int)n, e->name, accel_class_name(d->cls), d->vendor,
			 d->model, d->id);
	return 0;
}

/* The model of this machine's CPU, probing the cpu backend if needed; ""
 * when unknown. */
static const char *cpu_model(struct accel_ctx *ctx)
{
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < ctx->ndevices; i++)
			if (ctx->devices[i].cls == ACCEL_CLASS_CPU)
				return ctx->devices[i].model;
		if (!pass)
			accel_cpu_engine(ctx);
	}
	return "";
}

/* Properties that name a driver's version ("cuda_driver_version",
 * "opencl_driver_version", "vulkan_driver_info"): recorded and compared. */
static int is_driver_version(const char *key)
{
	size_t n = strlen(key);
	return (n >= 14 && !strcmp(key + n - 14, "driver_version")) ||
	       (n >= 11 && !strcmp(key + n - 11, "driver_info"));
}

/* The text of file `path`, NUL-terminated (malloc'd), and its size in
 * *got: max + 1 when it holds more than max bytes (the text is cut to
 * max). The buffer grows with what is read, so a small file costs little.
 * NULL with errno set when it cannot be opened, read or held. */
static char *slurp(const char *path, size_t max, size_t *got)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int e = 0;
	while (n <= max) {
		if (n == cap) {
			size_t grow = cap ? 2 * cap : 4096;
			char *nb = realloc(buf, (grow < max + 1 ? grow : max + 1) + 1);
			if (!nb) {
				e = ENOMEM;
				break;
			}
			buf = nb;
			cap = grow < max + 1 ? grow : max + 1;
		}
		size_t r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0) {
			e = ferror(f) ? (errno ? errno : EIO) : 0;
			break;
		}
	}
	fclose(f);
	if (e) {
		free(buf);
		errno = e;
		return NULL;
	}
	buf[n > max ? max : n] = 0;
	*got = n;
	return buf;
}

static const char *str_item(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Whether s is a string that is not empty and fits a field of `size`
 * bytes. */
static int fits(const char *s, size_t size)
{
	return s && s[0] && strlen(s) < size;
}

/* Parse the text of a profile: its entries into *out (malloc'd) and its
 * schema version into *version. Returns the number of entries or
 * ACCEL_EDATA / ACCEL_ENOMEM, with the reason in why[len]. */
static int parse(const char *text, cJSON **rootp, int *version, struct accel_profile_entry **out,
		 char *why, size_t len)
{
	cJSON *root = cJSON_Parse(text);
	*rootp = root;
	if (!root) {
		snprintf(why, len, "not valid JSON");
		return ACCEL_EDATA;
	}
	if (!cJSON_IsObject(root)) {
		snprintf(why, len, "not a JSON object");
		return ACCEL_EDATA;
	}
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "schema_version");
	if (!ver) {
		snprintf(why, len, "no schema_version");
		return ACCEL_EDATA;
	}
	if (!cJSON_IsNumber(ver)) {
		snprintf(why, len, "schema_version is not a number");
		return ACCEL_EDATA;
	}
	if (ver->valuedouble != 1 && ver->valuedouble != ACCEL_PROFILE_SCHEMA) {
		snprintf(why, len, "schema_version %g is not supported (this build reads 1 and %d)",
			 ver->valuedouble, ACCEL_PROFILE_SCHEMA);
		return ACCEL_EDATA;
	}
	*version = ver->valueint;
	const cJSON *entries = cJSON_GetObjectItemCaseSensitive(root, "entries");
	if (!cJSON_IsArray(entries)) {
		snprintf(why, len, "no \"entries\" array");
		return ACCEL_EDATA;
	}
	if (*version >= 2) {
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "machine");
		if (!cJSON_IsObject(m) || !str_item(m, "cpu_model") ||
		    !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(m, "devices"))) {
			snprintf(why, len, "no machine identity (\"machine\" with \"cpu_model\" and \"devices\")");
			return ACCEL_EDATA;
		}
	}
	int n = cJSON_GetArraySize(entries), k = 0;
	struct accel_profile_entry *e = calloc(n ? (size_t)n : 1, sizeof *e);
	if (!e) {
		snprintf(why, len, "out of memory");
		return ACCEL_ENOMEM;
	}
	/* An entry lacking a field (or holding it empty, or longer than this
	 * build's names), or with no positive, finite speed, is skipped. */
	const cJSON *it;
	cJSON_ArrayForEach(it, entries) {
		const char *op = str_item(it, "operation"), *en = str_item(it, "engine");
		const char *key = str_item(it, "engine_key"), *sc = str_item(it, "size_class");
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, "mb_per_s");
		if (!fits(op, sizeof e[k].op) || !cJSON_IsNumber(v) || !(v->valuedouble > 0) || !isfinite(v->valuedouble))
			continue;
		if (*version >= 2 ? !fits(key, sizeof e[k].key) : !fits(en, sizeof e[k].engine))
			continue;
		if ((en && strlen(en) >= sizeof e[k].engine) || (sc && !fits(sc, sizeof e[k].size_class)))
			continue;
		core_strlcpy(e[k].op, op, sizeof e[k].op);
		core_strlcpy(e[k].engine, en ? en : "", sizeof e[k].engine);
		core_strlcpy(e[k].key, *version >= 2 ? key : "", sizeof e[k].key);
		core_strlcpy(e[k].size_class, sc ? sc : "large", sizeof e[k].size_class);
		e[k].mbps = v->valuedouble;
		k++;
	}
	*out = e;
	return k;
}

int accel_profile_load(const char *path, struct accel_profile_entry **out)
{
	*out = NULL;
	size_t got;
	char *text = slurp(path, PROFILE_MAX_BYTES, &got);
	if (!text)
		return errno == ENOENT ? 0 : ACCEL_EIO;
	cJSON *root;
	int version;
	char why[160];
	int rc = got > PROFILE_MAX_BYTES ? ACCEL_EDATA : parse(text, &root, &version, out, why, sizeof why);
	if (got <= PROFILE_MAX_BYTES)
		cJSON_Delete(root);
	free(text);
	return rc;
}

/* Whether the machine recorded in `m` is this one, as far as ctx knows
 * it: the same CPU model, and every device of ctx at a PCI address the
 * profile names the same function (pci_id, class) with the same driver
 * versions where both sides know them. 0, or ACCEL_ENOTSUP with why. */
static int same_machine(struct accel_ctx *ctx, const cJSON *m, char *why, size_t len)
{
	const char *here = cpu_model(ctx), *there = str_item(m, "cpu_model");
	if (here[0] && strcmp(here, there)) {
		snprintf(why, len, "measured on another machine (CPU '%s', this one '%s')", there, here);
		return ACCEL_ENOTSUP;
	}
	const cJSON *dev;
	cJSON_ArrayForEach(dev, cJSON_GetObjectItemCaseSensitive(m, "devices")) {
		const char *pci = str_item(dev, "pci_address");
		if (!pci || !pci[0])
			continue;
		for (int i = 0; i < ctx->ndevices; i++) {
			const struct accel_device *d = &ctx->devices[i];
			if (strcmp(d->pci_address, pci))
				continue;
			const char *cls = str_item(dev, "class"), *id = str_item(dev, "pci_id");
			const char *id_here = accel_device_get(d, "pci_id");
			/* A video engine may share the function of its GPU. */
			int video = d->cls == ACCEL_CLASS_VIDEO || (cls && !strcmp(cls, "video"));
			if ((cls && !video && strcmp(cls, accel_class_name(d->cls))) ||
			    (id && id_here && strcmp(id, id_here))) {
				snprintf(why, len, "measured on another machine (PCI %s held %s %s, now %s %s)", pci,
					 id ? id : cls ? cls : "?", str_item(dev, "model") ? str_item(dev, "model") : "",
					 id_here ? id_here : accel_class_name(d->cls), d->model);
				return ACCEL_ENOTSUP;
			}
			/* Members of an object, named: an array's have no name. */
			const cJSON *v;
			cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(dev, "driver_versions")) {
				const char *now = v->string && cJSON_IsString(v) ? accel_device_get(d, v->string) : NULL;
				if (now && strcmp(now, v->valuestring)) {
					snprintf(why, len, "measured with another driver on %s (%s %s, now %s)", pci,
						 v->string, v->valuestring, now);
					return ACCEL_ENOTSUP;
				}
			}
		}
	}
	return 0;
}

int accel_profile_load_for(struct accel_ctx *ctx, const char *path, struct accel_profile_entry **out,
			   char *why, size_t len)
{
	*out = NULL;
	why[0] = 0;
	size_t got;
	char *text = slurp(path, PROFILE_MAX_BYTES, &got);
	if (!text) {
		if (errno == ENOENT)
			return 0;
		snprintf(why, len, "cannot read it: %s", strerror(errno));
		return ACCEL_EIO;
	}
	if (got > PROFILE_MAX_BYTES) {
		free(text);
		snprintf(why, len, "larger than %u MiB", PROFILE_MAX_BYTES >> 20);
		return ACCEL_EDATA;
	}
	cJSON *root;
	int version = 0;
	int rc = parse(text, &root, &version, out, why, len);
	free(text);
	if (rc >= 0 && version >= 2) {
		int same = same_machine(ctx, cJSON_GetObjectItemCaseSensitive(root, "machine"), why, len);
		/* The reason quotes the file's strings: control characters
		 * (a newline, a terminal escape) become '?', so it stays one
		 * line of text. */
		for (char *c = why; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		if (same < 0) {
			free(*out);
			*out = NULL;
			rc = same;
		}
	}
	cJSON_Delete(root);
	return rc;
}

double accel_profile_lookup(const struct accel_profile_entry *p, int n, const char *op, const char *key,
			    const char *engine, const char *size_class, char *used, size_t len)
{
	double any = 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(p[i].op, op))
			continue;
		/* Schema 2 entries match by key only; schema 1 ones by name. */
		if (p[i].key[0] ? !key || strcmp(p[i].key, key) : !engine || strcmp(p[i].engine, engine))
			continue;
		if (!strcmp(p[i].size_class, size_class)) {
			core_strlcpy(used, size_class, len);
			return p[i].mbps;
		}
		if (!any || !strcmp(p[i].size_class, "large")) {
			any = p[i].mbps;
			core_strlcpy(used, p[i].size_class, len);
		}
	}
	return any;
}

int accel_profile_put(const struct accel_ctx *ctx, struct accel_profile_entry **entries, int *n,
		      const char *op, const struct accel_engine *e, const char *size_class, double mbps)
{
	if (!op || !e || !size_class || !(mbps > 0) || strlen(op) >= sizeof (*entries)->op ||
	    strlen(size_class) >= sizeof (*entries)->size_class)
		return ACCEL_EINVAL;
	char key[sizeof (*entries)->key];
	if (accel_engine_key(ctx, e, key, sizeof key) < 0)
		return ACCEL_EINVAL;
	struct accel_profile_entry *x = NULL;
	for (int i = 0; i < *n && !x; i++)
		if (!strcmp((*entries)[i].op, op) && !strcmp((*entries)[i].key, key) &&
		    !strcmp((*entries)[i].size_class, size_class))
			x = &(*entries)[i];
	if (!x) {
		struct accel_profile_entry *grown = realloc(*entries, (size_t)(*n + 1) * sizeof *grown);
		if (!grown)
			return ACCEL_ENOMEM;
		*entries = grown;
		x = &grown[(*n)++];
		memset(x, 0, sizeof *x);
	}
	core_strlcpy(x->op, op, sizeof x->op);
	core_strlcpy(x->engine, e->name, sizeof x->engine);
	core_strlcpy(x->key, key, sizeof x->key);
	core_strlcpy(x->size_class, size_class, sizeof x->size_class);
	x->mbps = mbps;
	return 0;
}

/* The profile as JSON text (cJSON_Print's), or NULL when out of memory. */
static char *render(struct accel_ctx *ctx, const struct accel_profile_entry *entries, int n)
{
	cJSON *root = cJSON_CreateObject(), *m = cJSON_CreateObject(), *devs = cJSON_CreateArray();
	cJSON *list = cJSON_CreateArray();
	char *text = NULL;
	if (!root || !m || !devs || !list) {
		cJSON_Delete(root); cJSON_Delete(m); cJSON_Delete(devs); cJSON_Delete(list);
		return NULL;
	}
	cJSON_AddNumberToObject(root, "schema_version", ACCEL_PROFILE_SCHEMA);
	cJSON_AddItemToObject(root, "machine", m);
	cJSON_AddStringToObject(m, "cpu_model", cpu_model(ctx));
	cJSON_AddItemToObject(m, "devices", devs);
	cJSON_AddItemToObject(root, "entries", list);
	for (int i = 0; i < ctx->ndevices; i++) {
		const struct accel_device *d = &ctx->devices[i];
		cJSON *o = cJSON_CreateObject(), *vers = cJSON_CreateObject();
		if (!o || !vers) {
			cJSON_Delete(o); cJSON_Delete(vers);
			goto out;
		}
		cJSON_AddItemToArray(devs, o);
		cJSON_AddStringToObject(o, "id", d->id);
		cJSON_AddStringToObject(o, "class", accel_class_name(d->cls));
		cJSON_AddStringToObject(o, "vendor", d->vendor);
		cJSON_AddStringToObject(o, "model", d->model);
		cJSON_AddStringToObject(o, "pci_address", d->pci_address);
		const char *pci_id = accel_device_get(d, "pci_id");
		cJSON_AddStringToObject(o, "pci_id", pci_id ? pci_id : "");
		cJSON_AddStringToObject(o, "driver", d->driver);
		cJSON_AddItemToObject(o, "driver_versions", vers);
		for (int k = 0; k < d->nprops; k++)
			if (is_driver_version(d->props[k].key))
				cJSON_AddStringToObject(vers, d->props[k].key, d->props[k].value);
	}
	for (int i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		if (!o)
			goto out;
		cJSON_AddItemToArray(list, o);
		cJSON_AddStringToObject(o, "operation", entries[i].op);
		cJSON_AddStringToObject(o, "engine", entries[i].engine);
		cJSON_AddStringToObject(o, "engine_key", entries[i].key);
		cJSON_AddStringToObject(o, "size_class", entries[i].size_class);
		cJSON_AddNumberToObject(o, "mb_per_s", entries[i].mbps);
	}
	text = cJSON_Print(root);
out:
	cJSON_Delete(root);
	return text;
}

/* mkdir -p of the folder holding `path`; 0 or -1 with errno. */
static int make_parents(const char *path)
{
	char dir[4096];
	if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) {
		errno = ENAMETOOLONG;
		return -1;
	}
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = 0;
	for (char *p = dir + 1;; p++) {
		if (*p && *p != '/')
			continue;
		char c = *p;
		*p = 0;
		struct stat st;
		if (mkdir(dir, 0777) < 0 && (errno != EEXIST || stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))) {
			if (errno == EEXIST)
				errno = ENOTDIR;
			return -1;
		}
		if (!c)
			return 0;
		*p = c;
	}
}

int accel_profile_save(struct accel_ctx *ctx, const char *path, const struct accel_profile_entry *entries,
		       int n, char *err, size_t len)
{
	err[0] = 0;
	for (int i = 0; i < n; i++)
		if (!entries[i].key[0] || !entries[i].op[0] || !(entries[i].mbps > 0)) {
			snprintf(err, len, "cannot save %s: entry %d has no engine key, operation or speed", path, i);
			return ACCEL_EINVAL;
		}
	char *text = render(ctx, entries, n);
	if (!text) {
		snprintf(err, len, "cannot save %s: out of memory", path);
		return ACCEL_ENOMEM;
	}
	if (make_parents(path) < 0) {
		snprintf(err, len, "cannot create the folder of %s: %s", path, strerror(errno));
		free(text);
		return ACCEL_EIO;
	}
	/* A temporary beside it, renamed into place: readers see the old
	 * profile or the new one, never a part. open() applies the umask. */
	char tmp[4200];
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	int fd = -1;
	for (unsigned k = 0; k < 100 && fd < 0; k++) {
		snprintf(tmp, sizeof tmp, "%.*s.%s.%ld.%u", dirlen, path, slash ? slash + 1 : path, (long)getpid(), k);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	int rc = 0;
	if (fd < 0) {
		snprintf(err, len, "cannot save %s: %s", path, strerror(errno));
		free(text);
		return ACCEL_EIO;
	}
	size_t total = strlen(text), done = 0;
	text[total] = '\n';
	total++;
	while (done < total) {
		ssize_t w = write(fd, text + done, total - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			rc = ACCEL_EIO;
			break;
		}
		done += (size_t)w;
	}
	if (!rc && fsync(fd) < 0 && errno != EINVAL)
		rc = ACCEL_EIO;
	int e = errno;
	if (close(fd) < 0 && !rc) {
		rc = ACCEL_EIO;
		e = errno;
	}
	if (!rc && rename(tmp, path) < 0) {
		rc = ACCEL_EIO;
		e = errno;
	}
	if (rc) {
		unlink(tmp);
		snprintf(err, len, "cannot save %s: %s", path, strerror(e));
	}
	free(text);
	return rc;
}
