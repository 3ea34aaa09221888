/*
 * version.c - --version: the toolkit's line, then one line "NAME VERSION"
 * per library a program uses, the version the library reports at run time
 * (or the build's, said so), as `curl -V` and `ffmpeg -version` list theirs.
 */
#include <string.h>
#include <cjson/cJSON.h>
#include <isa-l.h>
#include <libdeflate.h>
#include <lz4.h>
#include <zstd.h>
#include <accel/backend.h>
#include <accel/cli.h>
#include "codec_dl.h"
#include "core.h"
#include "hwloc_dl.h"

#ifndef ACCEL_MINIZIP_VERSION
#define ACCEL_MINIZIP_VERSION "unknown"
#endif

/* The lines printed so far, to print each once. */
struct printed {
	FILE *f;
	char seen[4096];
	size_t used;
};

/* Print each line of text (lines ended by '\n'; a last one without it
 * too) not printed before. */
static void put_lines(struct printed *p, const char *text)
{
	while (*text) {
		size_t n = strcspn(text, "\n");
		int dup = 0;
		for (const char *s = p->seen; s < p->seen + p->used; s += strlen(s) + 1)
			if (strlen(s) == n && !strncmp(s, text, n))
				dup = 1;
		if (n && !dup) {
			fprintf(p->f, "%.*s\n", (int)n, text);
			if (p->used + n + 1 <= sizeof p->seen) {
				memcpy(p->seen + p->used, text, n);
				p->seen[p->used + n] = 0;
				p->used += n + 1;
			}
		}
		text += n + (text[n] == '\n');
	}
}

/* The line of libaccel's library `name` into buf (a name that is none of
 * them says so). */
static void core_library(const char *name, char *buf, size_t len)
{
	char why[200];
	if (!strcmp(name, "zstd")) {
		/* Loaded for it (codec_dl.h), as hwloc is below. */
		const struct core_zstd *z = core_zstd(why, sizeof why);
		if (z)
			snprintf(buf, len, "zstd %s", z->ZSTD_versionString());
		else
			snprintf(buf, len, "zstd (%s)", why);
	} else if (!strcmp(name, "lz4")) {
		const struct core_lz4 *l = core_lz4(why, sizeof why);
		if (l)
			snprintf(buf, len, "lz4 %s", l->LZ4_versionString());
		else
			snprintf(buf, len, "lz4 (%s)", why);
	} else if (!strcmp(name, "xxhash")) {
		const struct core_xxhash *x = core_xxhash(why, sizeof why);
		unsigned v = x ? x->XXH_versionNumber() : 0;
		if (x)
			snprintf(buf, len, "xxhash %u.%u.%u", v / 10000, v / 100 % 100, v % 100);
		else
			snprintf(buf, len, "xxhash (%s)", why);
	} else if (!strcmp(name, "isa-l")) {
		/* ISA-L tells no version at run time. */
		snprintf(buf, len, "isa-l %d.%d.%d (build)", ISAL_MAJOR_VERSION, ISAL_MINOR_VERSION,
			 ISAL_PATCH_VERSION);
	} else if (!strcmp(name, "libdeflate")) {
		/* libdeflate tells no version at run time either. */
		snprintf(buf, len, "libdeflate %s (build)", LIBDEFLATE_VERSION_STRING);
	} else if (!strcmp(name, "hwloc")) {
		/* hwloc tells its API version at run time, not its release;
		 * it is loaded for it. */
		const struct core_hwloc *h = core_hwloc(why, sizeof why);
		unsigned api = h ? h->get_api_version() : 0;
		if (!h)
			snprintf(buf, len, "hwloc (%s)", why);
		else
			snprintf(buf, len, "hwloc %s (build; API %u.%u.%u at run time)", HWLOC_VERSION, api >> 16,
				 (api >> 8) & 0xff, api & 0xff);
	} else if (!strcmp(name, "cjson")) {
		snprintf(buf, len, "cjson %s", cJSON_Version());
	} else if (!strcmp(name, "minizip")) {
		snprintf(buf, len, "minizip %s (build)", ACCEL_MINIZIP_VERSION);
	} else {
		snprintf(buf, len, "%s (not one of libaccel's libraries)", name);
	}
}

/* The lines of the plugins that offer op ("all": every plugin). */
static void plugin_libraries(struct printed *p, const char *op)
{
	struct accel_ctx *ctx = accel_ctx_new();
	if (!ctx)
		return;
	for (int i = 0; i < accel_backend_count(ctx); i++) {
		const struct accel_backend *b = accel_backend_status(ctx, i)->backend;
		if (!b || (strcmp(op, "all") && !core_backend_offers(b, op)))
			continue;
		/* A plugin the manifest lists is loaded only now. */
		pthread_mutex_lock(&ctx->lock);
		core_backend_load(ctx, i);
		pthread_mutex_unlock(&ctx->lock);
		b = accel_backend_status(ctx, i)->backend;
		if (!b || !b->versions)
			continue;
		char buf[1024] = "";
		b->versions(buf, sizeof buf);
		put_lines(p, buf);
	}
	accel_ctx_free(ctx);
}

static const char *libraries;
static void (*own_versions)(char *buf, size_t len);

void accel_cli_libraries(const char *list, void (*versions)(char *buf, size_t len))
{
	libraries = list;
	own_versions = versions;
}

void accel_cli_versions(const struct accel_cli *cli, FILE *f)
{
	struct printed p;
	memset(&p, 0, sizeof p);
	p.f = f;
	fprintf(f, "%s %s\n", cli->prog, ACCEL_VERSION);
	char buf[1024];
	if (own_versions) {
		buf[0] = 0;
		own_versions(buf, sizeof buf);
		put_lines(&p, buf);
	}
	for (const char *w = libraries; w && *w;) {
		size_t n = strcspn(w, " ");
		char word[64];
		snprintf(word, sizeof word, "%.*s", (int)n, w);
		if (word[0] == '@')
			plugin_libraries(&p, word + 1);
		else {
			core_library(word, buf, sizeof buf);
			put_lines(&p, buf);
		}
		w += n + strspn(w + n, " ");
	}
}
