/*
 * manifest.c - the plugin manifest: CORE_MANIFEST in a plugin folder lists
 * each plugin's registry fields (name, ops, classes, priority, apis, api
 * notes, description), so that a context registers the plugins without
 * loading them and dlopens one only when it is probed or asked for its
 * versions (discover.c). Written at build time (tools/plugin-manifest.c,
 * `make`), installed beside the plugins by `make install`. A folder without
 * one, with one of another format or ABI, or whose listed plugin is missing
 * or is not the file listed is scanned as before: every plugin loaded.
 *
 * A plugin is known by its content, not by its times: its size and its
 * GNU build-id (buildid.c), which a rebuild changes and a copy (cp -p,
 * rsync -t, a package), a hard link (perf's build-id cache, backups),
 * chmod, chown, a label or a clamped date keep. One without a build-id is
 * known by its size and modification time. A plugin that is not an ELF
 * object this reader takes is left out of the manifest (a scan loads it).
 *
 * Format (text, one plugin a line, fields split by tabs):
 *   accel-plugin-manifest FORMAT ABI
 *   FILE SIZE ID NAME PRIORITY CLASSES OPS APIS NOTES BOUNDS DESCRIPTION
 * SIZE is the file's size in bytes; ID "build-id:HEX" (lowercase), or
 * "mtime:SECONDS.NANOSECONDS" for a plugin without a build-id; CLASSES is
 * the class mask in decimal; OPS "a,b" (or "-": none); APIS
 * "name:kinds,..." (or "-"); NOTES "api=word,..." (or "-"); BOUNDS
 * "op=mbps,..." (prior_bounds, in C's %.17g; or "-"); DESCRIPTION the
 * rest of the line (empty: none). Format 3 added BOUNDS.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core.h"

#define MANIFEST_FORMAT 3

/* One plugin of a manifest: its registry fields as a table (no functions). */
struct core_manifest_entry {
	char file[64];
	const char *size, *id;  /* as recorded (fresh compares them with the file's) */
	struct accel_backend table;
	const char **ops;
	struct accel_api_info *apis;
	struct accel_api_note *notes;
	struct accel_prior_bound *bounds;
	char *text;          /* the line, cut in place: the strings above point into it */
};

struct core_manifest {
	struct core_manifest *next;        /* a context's manifests, one per folder */
	struct core_manifest_entry *entries;
	int n;
};

/* Whether a field may be written as is: no separator of the format in it. */
static int plain(const char *s, const char *forbid)
{
	return s && !strpbrk(s, forbid) && !strpbrk(s, "\t\n\r");
}

/* The identity of plugin `path`, "SIZE\tID" as a manifest line has it,
 * into buf[len]: 0, or -1 when it cannot be opened or is not a regular
 * ELF file this machine's reader takes (buildid.c). An open, an fstat and
 * one or two preads. */
static int identity(const char *path, char *buf, size_t len)
{
	/* O_NONBLOCK: a FIFO in a plugin's place must not hang the start. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	struct stat st;
	unsigned char id[64];
	int n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ?
		core_elf_build_id(fd, (uint64_t)st.st_size, id, sizeof id) : -1;
	close(fd);
	if (n < 0)
		return -1;
	int k = snprintf(buf, len, "%lld\t", (long long)st.st_size);
	if (n == 0)
		k += snprintf(buf + k, len - (size_t)k, "mtime:%lld.%09ld", (long long)st.st_mtim.tv_sec,
			      (long)st.st_mtim.tv_nsec);
	else
		k += snprintf(buf + k, len - (size_t)k, "build-id:");
	for (int i = 0; i < n && (size_t)k + 2 < len; i++)
		k += snprintf(buf + k, len - (size_t)k, "%02x", id[i]);
	return 0;
}

/* The line of table b (of plugin `file`, whose identity is id), or 0 when
 * a field holds a separator (the plugin is then left out, and found by a
 * scan). */
static int write_entry(FILE *out, const char *file, const char *id, const struct accel_backend *b)
{
	if (!plain(file, "") || !plain(b->name, ",:=") || (b->description && !plain(b->description, "")))
		return 0;
	for (const char *const *o = b->ops; o && *o; o++)
		if (!**o || !plain(*o, ",:="))
			return 0;
	for (const struct accel_api_info *a = b->apis; a && a->name; a++)
		if (!*a->name || !plain(a->name, ",:="))
			return 0;
	for (const struct accel_api_note *a = b->api_notes; a && a->api; a++)
		if (!*a->api || !a->word || !*a->word || !plain(a->api, ",:=") || !plain(a->word, ",:="))
			return 0;
	for (const struct accel_prior_bound *p = b->prior_bounds; p && p->op; p++)
		if (!*p->op || !plain(p->op, ",:=") || !(p->mbps > 0) || p->mbps > 1e15)
			return 0;
	fprintf(out, "%s\t%s\t%s\t%d\t%u\t", file, id, b->name, b->priority, b->classes);
	if (!b->ops || !b->ops[0])
		fputc('-', out);
	for (const char *const *o = b->ops; o && *o; o++)
		fprintf(out, "%s%s", o == b->ops ? "" : ",", *o);
	fputc('\t', out);
	if (!b->apis || !b->apis[0].name)
		fputc('-', out);
	for (const struct accel_api_info *a = b->apis; a && a->name; a++)
		fprintf(out, "%s%s:%u", a == b->apis ? "" : ",", a->name, a->kinds);
	fputc('\t', out);
	if (!b->api_notes || !b->api_notes[0].api)
		fputc('-', out);
	for (const struct accel_api_note *a = b->api_notes; a && a->api; a++)
		fprintf(out, "%s%s=%s", a == b->api_notes ? "" : ",", a->api, a->word);
	fputc('\t', out);
	if (!b->prior_bounds || !b->prior_bounds[0].op)
		fputc('-', out);
	for (const struct accel_prior_bound *p = b->prior_bounds; p && p->op; p++)
		fprintf(out, "%s%s=%.17g", p == b->prior_bounds ? "" : ",", p->op, p->mbps);
	fprintf(out, "\t%s\n", b->description ? b->description : "");
	return 1;
}

int core_manifest_write(FILE *out, const char *dir, char *err, size_t len)
{
	struct dirent **list;
	int n = scandir(dir, &list, NULL, alphasort);
	if (n < 0) {
		snprintf(err, len, "%s: %s", dir, strerror(errno));
		return ACCEL_EIO;
	}
	fprintf(out, "accel-plugin-manifest %d %u\n", MANIFEST_FORMAT, ACCEL_BACKEND_ABI);
	for (int i = 0; i < n; i++) {
		char name[32], path[PATH_MAX], sym[64], why[256], id[192];
		const char *file = list[i]->d_name;
		/* A plugin whose table cannot be used is left out: a scan
		 * loads it and says why. */
		if (core_plugin_name(file, name, sizeof name) == 0) {
			snprintf(path, sizeof path, "%s/%s", dir, file);
			snprintf(sym, sizeof sym, "accel_backend_%s", name);
			void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
			const struct accel_backend *b = h ? dlsym(h, sym) : NULL;
			if (b && !core_table_problem(b, name, why, sizeof why) && !identity(path, id, sizeof id))
				write_entry(out, file, id, b);
		}
		free(list[i]);
	}
	free(list);
	if (fflush(out) || ferror(out)) {
		snprintf(err, len, "cannot write the manifest: %s", strerror(errno));
		return ACCEL_EIO;
	}
	return 0;
}

/* Split s at sep in place: the pieces into v[max], NULL-terminated; the count. */
static int split(char *s, char sep, char **v, int max)
{
	int n = 0;
	if (!strcmp(s, "-"))
		s = NULL;
	while (s && n < max) {
		v[n++] = s;
		s = strchr(s, sep);
		if (s)
			*s++ = 0;
	}
	v[n] = NULL;
	return s ? -1 : n;
}

/* A "key=value" item of a field (NOTES, BOUNDS), cut at its '=': the
 * value, or NULL when the key or the value is empty or there is no '='. */
static char *pair_value(char *item)
{
	char *c = strchr(item, '=');
	if (!c || c == item || !c[1])
		return NULL;
	*c = 0;
	return c + 1;
}

/* Parse one line (cut in place) into e; 0, or -1 when malformed. */
static int parse_entry(struct core_manifest_entry *e, char *line)
{
	char *f[11];
	int n = 0;
	for (char *s = line; n < 11; n++) {
		f[n] = s;
		s = n < 10 ? strchr(s, '\t') : NULL;
		if (n < 10 && !s)
			return -1;
		if (s)
			*s++ = 0;
	}
	char *end, name[32];
	if (strlen(f[0]) >= sizeof e->file || core_plugin_name(f[0], name, sizeof name) || strcmp(name, f[3]))
		return -1;
	core_strlcpy(e->file, f[0], sizeof e->file);
	e->size = f[1];
	e->id = f[2];
	e->table.abi = ACCEL_BACKEND_ABI;
	e->table.name = f[3];
	errno = 0;
	long prio = strtol(f[4], &end, 10);
	if (errno || *end || end == f[4] || prio < INT_MIN || prio > INT_MAX)
		return -1;
	e->table.priority = (int)prio;
	unsigned long cls = strtoul(f[5], &end, 10);
	if (*end || end == f[5] || cls > ACCEL_CLASS_ALL)
		return -1;
	e->table.classes = (unsigned)cls;
	e->table.description = *f[10] ? f[10] : NULL;

	char *v[65];
	int k = split(f[6], ',', v, 64);
	if (k < 0 || !(e->ops = calloc((size_t)k + 1, sizeof *e->ops)))
		return -1;
	for (int i = 0; i < k; i++)
		e->ops[i] = v[i];
	e->table.ops = k ? e->ops : NULL;

	k = split(f[7], ',', v, 64);
	if (k < 0 || !(e->apis = calloc((size_t)k + 1, sizeof *e->apis)))
		return -1;
	for (int i = 0; i < k; i++) {
		char *c = strchr(v[i], ':');
		if (!c || c == v[i])
			return -1;
		*c++ = 0;
		e->apis[i].name = v[i];
		e->apis[i].kinds = (unsigned)strtoul(c, &end, 10);
		if (*end || end == c)
			return -1;
	}
	e->table.apis = k ? e->apis : NULL;

	k = split(f[8], ',', v, 64);
	if (k < 0 || !(e->notes = calloc((size_t)k + 1, sizeof *e->notes)))
		return -1;
	for (int i = 0; i < k; i++) {
		char *c = pair_value(v[i]);
		if (!c)
			return -1;
		e->notes[i].api = v[i];
		e->notes[i].word = c;
	}
	e->table.api_notes = k ? e->notes : NULL;

	k = split(f[9], ',', v, 64);
	if (k < 0 || !(e->bounds = calloc((size_t)k + 1, sizeof *e->bounds)))
		return -1;
	for (int i = 0; i < k; i++) {
		char *c = pair_value(v[i]);
		if (!c)
			return -1;
		e->bounds[i].op = v[i];
		errno = 0;
		e->bounds[i].mbps = strtod(c, &end);
		if (errno || *end || !(e->bounds[i].mbps > 0) || e->bounds[i].mbps > 1e15)
			return -1;
	}
	e->table.prior_bounds = k ? e->bounds : NULL;
	return 0;
}

void core_manifest_free(struct core_manifest *m)
{
	while (m) {
		struct core_manifest *next = m->next;
		for (int i = 0; i < m->n; i++) {
			free(m->entries[i].ops);
			free(m->entries[i].apis);
			free(m->entries[i].notes);
			free(m->entries[i].bounds);
			free(m->entries[i].text);
		}
		free(m->entries);
		free(m);
		m = next;
	}
}

/* Whether plugin e of dir is the file the manifest recorded: the same
 * size and build-id (or, without one, modification time). */
static int fresh(const char *dir, const struct core_manifest_entry *e)
{
	char path[PATH_MAX], id[192], want[192];
	snprintf(path, sizeof path, "%s/%s", dir, e->file);
	snprintf(want, sizeof want, "%s\t%s", e->size, e->id);
	return identity(path, id, sizeof id) == 0 && !strcmp(id, want);
}

struct core_manifest *core_manifest_read(const char *dir)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", dir, CORE_MANIFEST);
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	struct core_manifest *m = calloc(1, sizeof *m);
	char *line = NULL;
	size_t cap = 0;
	int cap_entries = 0, ok = m != NULL;
	unsigned format = 0, abi = 0;
	ssize_t got = ok ? getline(&line, &cap, f) : -1;
	ok = got > 0 && sscanf(line, "accel-plugin-manifest %u %u", &format, &abi) == 2 &&
	     format == MANIFEST_FORMAT && abi == ACCEL_BACKEND_ABI;
	while (ok && (got = getline(&line, &cap, f)) > 0) {
		if (line[got - 1] == '\n')
			line[--got] = 0;
		if (m->n == cap_entries) {
			int c = cap_entries ? cap_entries * 2 : 16;
			struct core_manifest_entry *e = c <= CORE_MAX_BACKENDS * 4 ?
				realloc(m->entries, (size_t)c * sizeof *e) : NULL;
			if (!e) {
				ok = 0;
				break;
			}
			m->entries = e;
			cap_entries = c;
		}
		struct core_manifest_entry *e = &m->entries[m->n];
		memset(e, 0, sizeof *e);
		if (!(e->text = strdup(line))) {
			ok = 0;
			break;
		}
		m->n++;
		ok = parse_entry(e, e->text) == 0 && fresh(dir, e);
	}
	ok = ok && !ferror(f);
	free(line);
	fclose(f);
	if (!ok) {
		core_manifest_free(m);
		return NULL;
	}
	return m;
}

const struct accel_backend *core_manifest_find(const struct core_manifest *m, const char *file)
{
	for (int i = 0; m && i < m->n; i++)
		if (!strcmp(m->entries[i].file, file))
			return &m->entries[i].table;
	return NULL;
}

void core_manifest_keep(struct accel_ctx *ctx, struct core_manifest *m)
{
	m->next = ctx->manifests;
	ctx->manifests = m;
}
