/*
 * profile.c - the routing profile: measured MB/s per (operation, engine,
 * size class), written by accel-bench --save and read by the router.
 *
 * Format (JSON): {"schema_version": 1, "entries": [{"operation":
 * "zstd.compress", "engine": "cpu", "size_class": "large", "mb_per_s": 250.0}]}
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "core.h"

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

static char *slurp(const char *path, size_t max)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = malloc(max + 1);
	size_t n = buf ? fread(buf, 1, max, f) : 0;
	fclose(f);
	if (buf)
		buf[n] = 0;
	return buf;
}

int accel_profile_load(const char *path, struct accel_profile_entry **out)
{
	*out = NULL;
	char *text = slurp(path, 8u << 20);
	if (!text)
		return errno == ENOENT ? 0 : ACCEL_EIO;
	cJSON *root = cJSON_Parse(text);
	free(text);
	const cJSON *entries = root ? cJSON_GetObjectItemCaseSensitive(root, "entries") : NULL;
	const cJSON *ver = root ? cJSON_GetObjectItemCaseSensitive(root, "schema_version") : NULL;
	if (!cJSON_IsArray(entries) || !cJSON_IsNumber(ver)) {
		cJSON_Delete(root);
		return ACCEL_EDATA;
	}
	int n = cJSON_GetArraySize(entries), k = 0;
	struct accel_profile_entry *e = calloc(n ? (size_t)n : 1, sizeof *e);
	if (!e) {
		cJSON_Delete(root);
		return ACCEL_ENOMEM;
	}
	const cJSON *it;
	cJSON_ArrayForEach(it, entries) {
		const cJSON *op = cJSON_GetObjectItemCaseSensitive(it, "operation");
		const cJSON *en = cJSON_GetObjectItemCaseSensitive(it, "engine");
		const cJSON *sc = cJSON_GetObjectItemCaseSensitive(it, "size_class");
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, "mb_per_s");
		if (!cJSON_IsString(op) || !cJSON_IsString(en) || !cJSON_IsNumber(v) || v->valuedouble <= 0)
			continue;
		core_strlcpy(e[k].op, op->valuestring, sizeof e[k].op);
		core_strlcpy(e[k].engine, en->valuestring, sizeof e[k].engine);
		core_strlcpy(e[k].size_class, cJSON_IsString(sc) ? sc->valuestring : "large",
			     sizeof e[k].size_class);
		e[k].mbps = v->valuedouble;
		k++;
	}
	cJSON_Delete(root);
	*out = e;
	return k;
}
