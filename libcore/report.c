/*
 * report.c - reports of devices, routes and probes: accel-detect's table,
 * the JSON document, Slurm gres.conf lines and Kubernetes NFD labels, each
 * a formatter behind one interface (begin, device, route, probes, end).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <cjson/cJSON.h>
#include <accel/cli.h>
#include <accel/report.h>
#include "core.h"
#include "hwloc_dl.h"

#define BIT(c) (1u << (c))

struct style {
	const char *bold, *dim, *ok, *bad, *soft, *off;
};

struct formatter;

struct accel_report {
	const struct formatter *fmt;
	struct accel_report_opts o;
	FILE *f;
	const struct style *st;
	const struct accel_ctx *ctx;  /* from accel_report_begin: what the backends say */
	/* table: devices until they are printed grouped by class; gres: GPUs */
	const struct accel_device *dev[CORE_MAX_DEVICES];
	int ndev;
	int flushed;
	/* json */
	cJSON *root, *devices, *routes, *runs;
	int run;                 /* accel_report_run_start's: prog and status */
	int status, has_status;  /* accel_report_run_end: the exit status */
	/* accel_report_route_devices: devices added so far, by index */
	unsigned char added[CORE_MAX_DEVICES];
	/* nfd: devices per class, the label names written so far */
	int count[ACCEL_CLASS_COUNT];
	char labels[256][64];
	int nlabels;
};

/* One format: each callback returns 0 or a negative ACCEL_E* code. */
struct formatter {
	int (*begin)(struct accel_report *r, struct accel_ctx *ctx);
	int (*device)(struct accel_report *r, const struct accel_device *d);
	int (*route)(struct accel_report *r, const struct accel_route *route);
	int (*probes)(struct accel_report *r, struct accel_ctx *ctx);
	int (*run)(struct accel_report *r, const char *input, const struct accel_stream_stats *s);
	int (*job)(struct accel_report *r, const struct accel_report_job *j);
	int (*end)(struct accel_report *r);
};

/* Whether device d is (or holds) a video engine, a usable one when
 * `usable`: an API that the backends of ctx say decodes or encodes video. */
int core_has_video(const struct accel_ctx *ctx, const struct accel_device *d, int usable)
{
	if (d->cls == ACCEL_CLASS_VIDEO && !usable)
		return 1;
	for (int i = 0; i < d->napis && ctx; i++)
		if ((accel_api_kinds(ctx, d->apis[i].name) & ACCEL_API_VIDEO) && (d->apis[i].ok || !usable))
			return 1;
	return 0;
}

void core_human_bytes(char *buf, size_t len, double b)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	int u = 0;
	while (b >= 1024 && u < 5) {
		b /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", b, units[u]);
}

int accel_report_shows(const struct accel_report *r, const struct accel_device *d)
{
	unsigned classes = r->o.classes;
	/* A GPU holding a video engine is shown for --class video too. */
	return (classes & BIT(d->cls)) || ((classes & BIT(ACCEL_CLASS_VIDEO)) && core_has_video(r->ctx, d, 0));
}

/* Devices in PCI bus order within a class. */
static int cmp_pci(const void *a, const void *b)
{
	const struct accel_device *x = *(const struct accel_device *const *)a;
	const struct accel_device *y = *(const struct accel_device *const *)b;
	if (x->cls != y->cls)
		return (int)x->cls - (int)y->cls;
	if (!x->pci_address[0] || !y->pci_address[0])
		return !x->pci_address[0] - !y->pci_address[0];
	return strcmp(x->pci_address, y->pci_address);
}

/* ------------------------------------------------------------------ JSON */

/* Seconds rounded to microseconds, for stable and short JSON numbers. */
static double micro(double s)
{
	return (double)(long long)(s * 1e6 + 0.5) / 1e6;
}

/* Text that came from outside the program (drivers, sysfs, the
 * environment, plugin paths), with accel_text_sanitize() applied to a copy:
 * the JSON is valid UTF-8 and holds no control characters. */
static cJSON *text(const char *s)
{
	char *c = strdup(s ? s : "");
	if (!c)
		return NULL;
	accel_text_sanitize(c);
	cJSON *j = cJSON_CreateString(c);
	free(c);
	return j;
}

static cJSON *str_or_null(const char *s)
{
	return s && *s ? text(s) : cJSON_CreateNull();
}

/* A new object at the end of array a: NULL when out of memory. */
static cJSON *append_object(cJSON *a)
{
	cJSON *o = cJSON_CreateObject();
	if (o && !cJSON_AddItemToArray(a, o)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static cJSON *device_json(const struct accel_device *d)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddItemToObject(o, "id", text(d->id));
	cJSON_AddStringToObject(o, "class", accel_class_name(d->cls));
	cJSON_AddItemToObject(o, "vendor", str_or_null(d->vendor));
	cJSON_AddItemToObject(o, "model", str_or_null(d->model));
	cJSON_AddItemToObject(o, "driver", str_or_null(d->driver));
	cJSON_AddBoolToObject(o, "software", d->software);
	cJSON_AddItemToObject(o, "pci_address", str_or_null(d->pci_address));
	if (d->numa_node >= 0)
		cJSON_AddNumberToObject(o, "numa_node", d->numa_node);
	else
		cJSON_AddNullToObject(o, "numa_node");
	if (d->memory_bytes)
		cJSON_AddNumberToObject(o, "memory_bytes", (double)d->memory_bytes);
	else
		cJSON_AddNullToObject(o, "memory_bytes");
	cJSON *apis = cJSON_AddArrayToObject(o, "apis");
	for (int i = 0; i < d->napis; i++) {
		cJSON *a = cJSON_CreateObject();
		cJSON_AddItemToObject(a, "name", text(d->apis[i].name));
		cJSON_AddBoolToObject(a, "ok", d->apis[i].ok);
		cJSON_AddItemToObject(a, "reason", str_or_null(d->apis[i].reason));
		cJSON_AddItemToArray(apis, a);
	}
	if (d->cls == ACCEL_CLASS_CPU) {
		cJSON *c = cJSON_AddObjectToObject(o, "cpu");
		/* 0 is a topology hwloc could not read: null, as every value
		 * not known; so is a cache level the machine lacks (l4). */
		static const char *const topo[4] = { "packages", "cores", "threads", "numa_nodes" };
		const int counts[4] = { d->packages, d->cores, d->threads, d->numa_nodes };
		for (int i = 0; i < 4; i++)
			cJSON_AddItemToObject(c, topo[i], counts[i] ? cJSON_CreateNumber(counts[i]) : cJSON_CreateNull());
		static const char *const cache[4] = { "l1d_bytes", "l2_bytes", "l3_bytes", "l4_bytes" };
		cJSON *cb = cJSON_AddObjectToObject(c, "cache");
		for (int i = 0; i < 4; i++)
			cJSON_AddItemToObject(cb, cache[i], d->cache_bytes[i] ? cJSON_CreateNumber((double)d->cache_bytes[i])
									 : cJSON_CreateNull());
		/* Every flag the kernel lists; without that line, the bits. */
		cJSON *fl = cJSON_AddArrayToObject(c, "flags");
		char w[64];
		for (const char *p = d->features; *p;) {
			size_t n = strcspn(p, " ");
			snprintf(w, sizeof w, "%.*s", (int)(n < sizeof w ? n : sizeof w - 1), p);
			cJSON_AddItemToArray(fl, cJSON_CreateString(w));
			p += n + (p[n] == ' ');
		}
		for (int b = 0; b < 64 && !d->features[0]; b++)
			if ((d->flags >> b) & 1 && accel_cpu_flag_name(1ull << b))
				cJSON_AddItemToArray(fl, cJSON_CreateString(accel_cpu_flag_name(1ull << b)));
	}
	cJSON *props = cJSON_AddObjectToObject(o, "properties");
	for (int i = 0; i < d->nprops; i++) {
		const struct accel_prop *p = &d->props[i];
		if (p->numeric)
			cJSON_AddNumberToObject(props, p->key, atof(p->value));
		else if (!strcmp(p->value, "true") || !strcmp(p->value, "false"))
			cJSON_AddBoolToObject(props, p->key, p->value[0] == 't');
		else
			cJSON_AddItemToObject(props, p->key, text(p->value));
	}
	return o;
}

static cJSON *route_json(const struct accel_route *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "operation", r->op);
	cJSON_AddBoolToObject(o, "forced", r->forced);
	cJSON *e = cJSON_AddArrayToObject(o, "engines");
	for (int i = 0; i < r->n; i++) {
		const struct accel_route_entry *x = &r->entries[i];
		cJSON *j = cJSON_CreateObject();
		if (x->usable)
			cJSON_AddNumberToObject(j, "rank", i + 1);
		else
			cJSON_AddNullToObject(j, "rank");
		cJSON_AddItemToObject(j, "name", text(x->name));
		cJSON_AddBoolToObject(j, "usable", x->usable);
		if (x->usable && x->mbps > 0)
			cJSON_AddNumberToObject(j, "expected_mbps", (double)(long long)(x->mbps + 0.5));
		else
			cJSON_AddNullToObject(j, "expected_mbps");
		cJSON_AddItemToObject(j, "reason", text(x->reason));
		cJSON_AddItemToArray(e, j);
	}
	return o;
}

static void host_info(cJSON *host, struct accel_ctx *ctx)
{
	struct utsname u;
	char name[256] = "";
	const char *root = getenv("ACCEL_SYSROOT");
	if (root && *root && accel_sysfs_read(root, name, sizeof name, "/proc/sys/kernel/hostname") > 0)
		cJSON_AddItemToObject(host, "hostname", text(name));
	else if (!gethostname(name, sizeof name - 1))
		cJSON_AddItemToObject(host, "hostname", text(name));
	else
		cJSON_AddNullToObject(host, "hostname");
	if (root && *root && accel_sysfs_read(root, name, sizeof name, "/proc/sys/kernel/osrelease") > 0)
		cJSON_AddItemToObject(host, "kernel", text(name));
	else if (!uname(&u))
		cJSON_AddItemToObject(host, "kernel", text(u.release));
	else
		cJSON_AddNullToObject(host, "kernel");
	cJSON_AddItemToObject(host, "sysroot", str_or_null(root));
	cJSON_AddStringToObject(host, "accel_version", ACCEL_VERSION);
	(void)ctx;
}

static cJSON *probes_json(struct accel_ctx *ctx)
{
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; i < accel_backend_count(ctx); i++) {
		const struct accel_backend_status *s = accel_backend_status(ctx, i);
		cJSON *o = cJSON_CreateObject();
		cJSON_AddItemToObject(o, "name", text(s->name));
		cJSON_AddItemToObject(o, "origin", text(s->origin));
		cJSON_AddBoolToObject(o, "probed", s->probed);
		cJSON_AddBoolToObject(o, "ok", s->backend && s->probed && s->rc == 0);
		cJSON_AddItemToObject(o, "reason", str_or_null(s->reason));
		cJSON_AddNumberToObject(o, "seconds", micro(s->probe_seconds));
		cJSON *notes = cJSON_AddArrayToObject(o, "notes");
		for (int k = 0; k < s->nnotes; k++)
			cJSON_AddItemToArray(notes, text(s->notes[k]));
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* ------------------------------------------------------------------ table */

static const struct style plain = { "", "", "", "", "", "" };
static const struct style ansi = { "\033[1m", "\033[2m", "\033[32m", "\033[31m", "\033[33m", "\033[0m" };

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), k = strlen(tail);
	return n >= k && !strcmp(s + n - k, tail);
}

/* Write text from outside the program, sanitised (see text()). */
static void put_text(FILE *f, const char *s)
{
	char buf[512];
	snprintf(buf, sizeof buf, "%s", s);
	accel_text_sanitize(buf);
	fputs(buf, f);
}

static void print_device(FILE *f, const struct accel_device *d, const struct style *st, int verbose)
{
	char mem[32] = "";
	if (d->memory_bytes)
		core_human_bytes(mem, sizeof mem, (double)d->memory_bytes);
	fprintf(f, "  %s%-8s%s %s", st->bold, d->id, st->off, d->model[0] ? d->model : "(unnamed)");
	if (d->software)
		fprintf(f, "  %s[software]%s", st->soft, st->off);
	fputc('\n', f);
	const char *sep = "";
	if (d->vendor[0] || d->driver[0] || mem[0] || d->pci_address[0] || (d->numa_node >= 0 && d->cls != ACCEL_CLASS_CPU))
		fprintf(f, "           ");
	if (d->vendor[0])
		fprintf(f, "%svendor %s", sep, d->vendor), sep = ", ";
	if (d->driver[0])
		fprintf(f, "%sdriver %s", sep, d->driver), sep = ", ";
	if (mem[0])
		fprintf(f, "%smemory %s", sep, mem), sep = ", ";
	if (d->pci_address[0])
		fprintf(f, "%spci %s", sep, d->pci_address), sep = ", ";
	if (d->numa_node >= 0 && d->cls != ACCEL_CLASS_CPU)
		fprintf(f, "%snuma %d", sep, d->numa_node), sep = ", ";
	if (*sep)
		fputc('\n', f);
	if (d->cls == ACCEL_CLASS_CPU && !d->threads) {
		fprintf(f, "           topology unknown\n");
	} else if (d->cls == ACCEL_CLASS_CPU) {
		fprintf(f, "           %d package%s, %d cores, %d threads, %d NUMA node%s", d->packages,
			d->packages == 1 ? "" : "s", d->cores, d->threads, d->numa_nodes, d->numa_nodes == 1 ? "" : "s");
		if (d->cache_bytes[2]) {
			core_human_bytes(mem, sizeof mem, (double)d->cache_bytes[2]);
			fprintf(f, ", L3 %s", mem);
		}
		fprintf(f, "\n           features:");
		for (int b = 0; b < 64; b++)
			if ((d->flags >> b) & 1 && accel_cpu_flag_name(1ull << b))
				fprintf(f, " %s", accel_cpu_flag_name(1ull << b));
		fputc('\n', f);
	}
	if (d->napis && d->cls != ACCEL_CLASS_CPU) {
		fprintf(f, "           apis:");
		for (int i = 0; i < d->napis; i++) {
			const struct accel_api *a = &d->apis[i];
			if (a->ok)
				fprintf(f, " %s%s%s", st->ok, a->name, st->off);
			else
				fprintf(f, " %s%s (%s)%s", st->bad, a->name, a->reason, st->off);
		}
		fputc('\n', f);
	}
	for (int i = 0; i < d->nprops; i++) {
		const struct accel_prop *p = &d->props[i];
		/* The default view keeps what names a device; -v shows all. */
		if (!verbose && strcmp(p->key, "offloads") && strcmp(p->key, "device_file") &&
		    strcmp(p->key, "speed_mbps") && !ends_with(p->key, "_encoders") && !ends_with(p->key, "_decoders") &&
		    strcmp(p->key, "compute_capability") && strcmp(p->key, "state") && strcmp(p->key, "services"))
			continue;
		fprintf(f, "           %s%s: %s%s\n", st->dim, p->key, p->value, st->off);
	}
}


/* The devices given so far, under the title of each class shown. */
static void table_flush(struct accel_report *r)
{
	static const char *const titles[ACCEL_CLASS_COUNT] = {
		"CPU", "GPU", "Crypto and compression engines", "Video engines", "Network interfaces",
		"NPUs and other accelerators", "Other devices",
	};
	const struct style *st = r->st;
	if (r->flushed)
		return;
	r->flushed = 1;
	for (int c = 0; c < ACCEL_CLASS_COUNT; c++) {
		if (!(r->o.classes & BIT(c)))
			continue;
		int header = 0;
		for (int i = 0; i < r->ndev; i++) {
			const struct accel_device *d = r->dev[i];
			/* Under "Video engines" too when its own class is not shown. */
			int here = (int)d->cls == c ||
				   (c == ACCEL_CLASS_VIDEO && !(r->o.classes & BIT(d->cls)) && core_has_video(r->ctx, d, 0));
			if (!here)
				continue;
			if (!header++)
				fprintf(r->f, "%s%s%s\n", st->bold, titles[c], st->off);
			print_device(r->f, d, st, r->o.verbose);
		}
	}
}

static int table_device(struct accel_report *r, const struct accel_device *d)
{
	if (r->flushed || r->ndev >= CORE_MAX_DEVICES)
		return ACCEL_EINVAL;
	r->dev[r->ndev++] = d;
	return 0;
}

/* Whether the backend of a route's entry offers the operation: it has an
 * engine or a rank, or it is loaded and lists the operation. */
static int entry_offers(const struct accel_report *r, const struct accel_route *route,
			const struct accel_route_entry *x)
{
	if (x->engine || x->usable)
		return 1;
	for (int i = 0; r->ctx && i < accel_backend_count(r->ctx); i++) {
		const struct accel_backend_status *s = accel_backend_status(r->ctx, i);
		if (!strcmp(s->name, x->name))
			return s->backend && core_backend_offers(s->backend, route->op);
	}
	return 1;
}

/* The route's lines; without verbose, an auto route leaves out the
 * backends that do not offer the operation (a line counts them). */
static int table_route(struct accel_report *r, const struct accel_route *route)
{
	table_flush(r);
	if (r->o.verbose || route->forced) {
		accel_route_print(route, r->f);
		return 0;
	}
	struct accel_route *shown = malloc(sizeof *shown);
	if (!shown)
		return ACCEL_ENOMEM;
	*shown = *route;
	shown->n = 0;
	for (int i = 0; i < route->n; i++)
		if (entry_offers(r, route, &route->entries[i]))
			shown->entries[shown->n++] = route->entries[i];
	accel_route_print(shown, r->f);
	int hidden = route->n - shown->n;
	if (hidden)
		fprintf(r->f, "  (%d backend%s without this operation left out: -v lists them)\n", hidden,
			hidden == 1 ? "" : "s");
	free(shown);
	return 0;
}

static int table_probes(struct accel_report *r, struct accel_ctx *ctx)
{
	FILE *f = r->f;
	const struct style *st = r->st;
	table_flush(r);
	int failed = 0;
	for (int i = 0; i < accel_backend_count(ctx); i++) {
		const struct accel_backend_status *s = accel_backend_status(ctx, i);
		failed += s->probed && s->rc < 0;
	}
	if (!r->o.verbose) {
		if (failed && !r->o.quiet)
			fprintf(f, "%s(%d probe%s found nothing; -v says why)%s\n", st->dim, failed,
				failed == 1 ? "" : "s", st->off);
		return 0;
	}
	fprintf(f, "%sProbes%s\n", st->bold, st->off);
	for (int i = 0; i < accel_backend_count(ctx); i++) {
		const struct accel_backend_status *s = accel_backend_status(ctx, i);
		const char *state = !s->backend ? "not loaded" : !s->probed ? "not run" : s->rc < 0 ? "failed" : "ok";
		fprintf(f, "  %-8s %s%-10s%s", s->name, !s->probed || s->rc < 0 ? st->bad : st->ok, state, st->off);
		if (s->probed)
			fprintf(f, " %7.1f ms", s->probe_seconds * 1e3);
		else
			fprintf(f, " %10s", "");
		fprintf(f, "  ");
		put_text(f, s->backend && s->backend->description ? s->backend->description : s->origin);
		if (s->reason[0]) {
			fprintf(f, ": ");
			put_text(f, s->reason);
		}
		else if (s->backend && !s->probed)
			fprintf(f, ": not needed for this query");
		fputc('\n', f);
		for (int k = 0; k < s->nnotes; k++)
			fprintf(f, "           %s%s%s\n", st->dim, s->notes[k], st->off);
	}
	return 0;
}

static int table_run(struct accel_report *r, const char *input, const struct accel_stream_stats *s)
{
	table_flush(r);
	fprintf(r->f, "%s: ", r->o.prog);
	put_text(r->f, input);
	fputs(": ", r->f);
	accel_stream_stats_print(s, r->f);
	return 0;
}

static int table_job(struct accel_report *r, const struct accel_report_job *j)
{
	table_flush(r);
	fprintf(r->f, "%s: ", r->o.prog);
	put_text(r->f, j->input);
	if (j->bytes_in >= 0)
		fprintf(r->f, ": %lld bytes in", (long long)j->bytes_in);
	if (j->bytes_out >= 0)
		fprintf(r->f, ", %lld bytes out", (long long)j->bytes_out);
	if (j->seconds >= 0)
		fprintf(r->f, ", %.3f s", j->seconds);
	if (j->error) {
		fputs(", failed: ", r->f);
		put_text(r->f, j->error);
	}
	fputc('\n', r->f);
	for (int i = 0; i < j->nstages; i++) {
		const struct accel_report_stage *g = &j->stages[i];
		fprintf(r->f, "  %-8s ", g->stage);
		put_text(r->f, g->engine ? g->engine : "?");
		if (g->what) {
			fputc(' ', r->f);
			put_text(r->f, g->what);
		}
		if (g->frames >= 0)
			fprintf(r->f, ", %lld frames", (long long)g->frames);
		if (g->fallback) {
			fputs(" (fallback: ", r->f);
			put_text(r->f, g->fallback);
			fputc(')', r->f);
		}
		fputc('\n', r->f);
	}
	return 0;
}

static int table_end(struct accel_report *r)
{
	table_flush(r);
	return 0;
}

/* ------------------------------------------------------------------ gres, nfd */

/* Slurm's Type: the first word of the model with a digit ("h100"). */
static void gres_type(const char *model, char *buf, size_t len)
{
	snprintf(buf, len, "gpu");
	char copy[128];
	snprintf(copy, sizeof copy, "%s", model);
	char *save = NULL;
	for (char *w = strtok_r(copy, " -_", &save); w; w = strtok_r(NULL, " -_", &save)) {
		if (!strpbrk(w, "0123456789"))
			continue;
		/* Letters, digits, '_' and '-' only: '#' starts a comment
		 * in gres.conf, '=' and '(' mean more there; others become
		 * '_'. */
		size_t i = 0;
		for (; w[i] && i + 1 < len; i++) {
			unsigned char c = (unsigned char)tolower((unsigned char)w[i]);
			buf[i] = (char)(isalnum(c) || c == '_' || c == '-' ? c : '_');
		}
		buf[i] = 0;
		return;
	}
}

/* Slurm's Cores: the logical indexes of the cores holding the CPUs of
 * `cpulist` (sysfs local_cpulist), as hwloc numbers them. */
static void gres_cores(const struct core_hwloc *h, hwloc_topology_t topo, const char *cpulist, char *buf, size_t len)
{
	buf[0] = 0;
	hwloc_bitmap_t set = h->bitmap_alloc(), cores = h->bitmap_alloc();
	/* A topology that does not hold these CPUs (a partial recorded tree)
	 * cannot name their cores: leave Cores out rather than guess. */
	if (set && cores && h->bitmap_list_sscanf(set, cpulist) == 0 &&
	    h->bitmap_isincluded(set, h->topology_get_topology_cpuset(topo))) {
		int n = core_hwloc_count(h, topo, HWLOC_OBJ_CORE);
		for (int i = 0; i < n; i++) {
			hwloc_obj_t core = core_hwloc_obj(h, topo, HWLOC_OBJ_CORE, (unsigned)i);
			if (core && h->bitmap_intersects(core->cpuset, set))
				h->bitmap_set(cores, core->logical_index);
		}
		if (!h->bitmap_iszero(cores))
			h->bitmap_list_snprintf(buf, len, cores);
	}
	h->bitmap_free(set);
	h->bitmap_free(cores);
}

static int gres_device(struct accel_report *r, const struct accel_device *d)
{
	if (d->cls != ACCEL_CLASS_GPU || d->software)
		return 0;
	if (r->ndev >= CORE_MAX_DEVICES)
		return ACCEL_EINVAL;
	r->dev[r->ndev++] = d;
	return 0;
}

static int gres_end(struct accel_report *r)
{
	FILE *f = r->f;
	const struct accel_device **gpu = r->dev;
	int n = r->ndev;
	qsort(gpu, (size_t)n, sizeof gpu[0], cmp_pci);
	fprintf(f, "# gres.conf for this node, written by %s %s (%d GPU%s)\n", r->o.prog, ACCEL_VERSION, n,
		n == 1 ? "" : "s");
	hwloc_topology_t topo = NULL;
	const struct core_hwloc *h = NULL;
	const char *root = getenv("ACCEL_SYSROOT");
	char cpudir[PATH_MAX];
	snprintf(cpudir, sizeof cpudir, "%s/sys/devices/system/cpu", root ? root : "");
	/* A recorded tree without CPU topology names no cores: skip hwloc;
	 * without hwloc, Cores is left out. */
	if (n && (!root || !*root || !access(cpudir, F_OK)) && (h = core_hwloc(NULL, 0))) {
		if (root && *root) {
			setenv("HWLOC_FSROOT", root, 1);
			setenv("HWLOC_COMPONENTS", "-x86", 1);
		}
		if (core_hwloc_topology(h, &topo) < 0)
			topo = NULL;
	}
	for (int i = 0; i < n; i++) {
		char type[32], cores[256] = "";
		gres_type(gpu[i]->model, type, sizeof type);
		const char *file = accel_device_get(gpu[i], "device_file");
		const char *cpus = accel_device_get(gpu[i], "local_cpulist");
		if (topo && cpus)
			gres_cores(h, topo, cpus, cores, sizeof cores);
		fprintf(f, "Name=gpu Type=%s", type);
		if (file)
			fprintf(f, " File=%s", file);
		if (cores[0])
			fprintf(f, " Cores=%s", cores);
		fputc('\n', f);
	}
	if (topo)
		h->topology_destroy(topo);
	return 0;
}

/* A Kubernetes label name (the part after the prefix) or value: at most
 * 63 of [A-Za-z0-9._-], beginning and ending with a letter or digit
 * (a value may be empty). Other bytes become '-', runs of '-' one. */
static void label_part(const char *s, char *buf, size_t len)
{
	size_t n = 0;
	for (; *s && n + 1 < len && n < 63; s++) {
		char c = *s;
		if (!isalnum((unsigned char)c) && c != '.' && c != '_' && c != '-')
			c = '-';
		if (c == '-' && n && buf[n - 1] == '-')
			continue;
		if (!n && !isalnum((unsigned char)c))
			continue;
		buf[n++] = c;
	}
	while (n && !isalnum((unsigned char)buf[n - 1]))
		n--;
	buf[n] = 0;
}

#define NFD "accel.example/"

/*
 * One line of an NFD features file (node-feature-discovery's local
 * source: PREFIX/NAME=VALUE; "#" lines are comments): the name made of
 * the printf-style format, and value, each made a valid label part by
 * label_part; a name that comes out empty, or that was written already
 * (the first value stands), writes nothing. Every label goes through here.
 */
static void nfd_label(struct accel_report *r, const char *value, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void nfd_label(struct accel_report *r, const char *value, const char *fmt, ...)
{
	char raw[256], name[64], v[64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof raw, fmt, ap);
	va_end(ap);
	label_part(raw, name, sizeof name);
	if (!name[0])
		return;
	for (int i = 0; i < r->nlabels; i++)
		if (!strcmp(r->labels[i], name))
			return;
	/* Past the table (no report comes near it) names are not checked
	 * for repeats. */
	if (r->nlabels < (int)(sizeof r->labels / sizeof r->labels[0]))
		memcpy(r->labels[r->nlabels++], name, sizeof name);
	label_part(value, v, sizeof v);
	fprintf(r->f, NFD "%s=%s\n", name, v);
}

static int nfd_begin(struct accel_report *r, struct accel_ctx *ctx)
{
	fprintf(r->f, "# Node Feature Discovery features, written by %s %s\n", r->o.prog, ACCEL_VERSION);
	return 0;
}

static int nfd_device(struct accel_report *r, const struct accel_device *d)
{
	if (d->software)
		return 0;
	r->count[d->cls]++;
	const char *cls = accel_class_name(d->cls);
	if (d->cls == ACCEL_CLASS_CPU) {
		for (int b = 0; b < 64; b++)
			if ((d->flags >> b) & 1 && accel_cpu_flag_name(1ull << b))
				nfd_label(r, "true", "cpu-%s", accel_cpu_flag_name(1ull << b));
		return 0;
	}
	if (r->count[d->cls] == 1) {
		char v[64];
		/* A model that leaves no label value says nothing. */
		label_part(d->model, v, sizeof v);
		if (v[0])
			nfd_label(r, d->model, "%s.model", cls);
		if (d->memory_bytes) {
			char mem[24];
			snprintf(mem, sizeof mem, "%llu", (unsigned long long)d->memory_bytes);
			nfd_label(r, mem, "%s.memory-bytes", cls);
		}
	}
	for (int a = 0; a < d->napis; a++)
		if (d->apis[a].ok)
			nfd_label(r, "true", "%s.api-%s", cls, d->apis[a].name);
	const char *off = accel_device_get(d, "offloads");
	if (off) {
		char copy[128], *save = NULL;
		snprintf(copy, sizeof copy, "%s", off);
		for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save))
			nfd_label(r, "true", "nic.offload-%s", w);
	}
	return 0;
}

static int nfd_end(struct accel_report *r)
{
	for (int c = 0; c < ACCEL_CLASS_COUNT; c++) {
		char n[16];
		snprintf(n, sizeof n, "%d", r->count[c]);
		if ((r->o.classes & BIT(c)) && c != ACCEL_CLASS_CPU)
			nfd_label(r, n, "%s.count", accel_class_name(c));
	}
	return 0;
}

/* ------------------------------------------------------------------ JSON */

static int json_begin(struct accel_report *r, struct accel_ctx *ctx)
{
	r->root = cJSON_CreateObject();
	if (!r->root)
		return ACCEL_ENOMEM;
	cJSON_AddNumberToObject(r->root, "schema_version", ACCEL_REPORT_SCHEMA_VERSION);
	if (r->run)
		cJSON_AddItemToObject(r->root, "prog", text(r->o.prog));
	host_info(cJSON_AddObjectToObject(r->root, "host"), ctx);
	r->devices = cJSON_AddArrayToObject(r->root, "devices");
	if (r->o.routes)
		r->routes = cJSON_AddArrayToObject(r->root, "routes");
	return 0;
}

static int json_device(struct accel_report *r, const struct accel_device *d)
{
	cJSON *j = device_json(d);
	if (!j || !cJSON_AddItemToArray(r->devices, j)) {
		cJSON_Delete(j);
		return ACCEL_ENOMEM;
	}
	return 0;
}

static int json_route(struct accel_report *r, const struct accel_route *route)
{
	if (!r->routes && !(r->routes = cJSON_AddArrayToObject(r->root, "routes")))
		return ACCEL_ENOMEM;
	cJSON *j = route_json(route);
	if (!j || !cJSON_AddItemToArray(r->routes, j)) {
		cJSON_Delete(j);
		return ACCEL_ENOMEM;
	}
	return 0;
}

static int json_probes(struct accel_report *r, struct accel_ctx *ctx)
{
	cJSON *j = probes_json(ctx);
	if (!j || !cJSON_AddItemToObject(r->root, "probes", j)) {
		cJSON_Delete(j);
		return ACCEL_ENOMEM;
	}
	return 0;
}

static int json_run(struct accel_report *r, const char *input, const struct accel_stream_stats *s)
{
	if (!r->runs && !(r->runs = cJSON_AddArrayToObject(r->root, "runs")))
		return ACCEL_ENOMEM;
	cJSON *o = append_object(r->runs);
	if (!o)
		return ACCEL_ENOMEM;
	cJSON_AddItemToObject(o, "input", text(input));
	cJSON_AddNumberToObject(o, "units", (double)s->units);
	cJSON_AddNumberToObject(o, "serial_regions", (double)s->serial_regions);
	cJSON_AddNumberToObject(o, "bytes_in", (double)s->bytes_in);
	cJSON_AddNumberToObject(o, "bytes_out", (double)s->bytes_out);
	cJSON_AddNumberToObject(o, "seconds", micro(s->seconds));
	cJSON_AddNumberToObject(o, "retried", (double)s->retried);
	cJSON_AddNumberToObject(o, "units_in_flight", (double)s->units_in_flight);
	cJSON_AddNumberToObject(o, "unit_bytes", (double)s->unit_bytes);
	if (s->memory_limit)
		cJSON_AddNumberToObject(o, "memory_limit", (double)s->memory_limit);
	else
		cJSON_AddNullToObject(o, "memory_limit");
	cJSON *engines = cJSON_AddArrayToObject(o, "engines");
	if (!engines)
		return ACCEL_ENOMEM;
	for (int i = 0; i < s->nengines && i < ACCEL_ROUTE_MAX; i++) {
		const struct accel_engine_stats *e = &s->engines[i];
		cJSON *j = append_object(engines);
		if (!j)
			return ACCEL_ENOMEM;
		cJSON_AddItemToObject(j, "name", text(e->name));
		cJSON_AddNumberToObject(j, "workers", e->workers);
		cJSON_AddNumberToObject(j, "units", (double)e->units);
		cJSON_AddNumberToObject(j, "bytes_in", (double)e->bytes_in);
		cJSON_AddNumberToObject(j, "bytes_out", (double)e->bytes_out);
		cJSON_AddNumberToObject(j, "busy_seconds", micro(e->busy_seconds));
		cJSON_AddNumberToObject(j, "failures", (double)e->failures);
		cJSON_AddNumberToObject(j, "retried", (double)e->retried);
		cJSON_AddBoolToObject(j, "dropped", e->dropped);
	}
	return 0;
}

/* A count, or null when negative (unknown). */
static cJSON *count_or_null(int64_t n)
{
	return n >= 0 ? cJSON_CreateNumber((double)n) : cJSON_CreateNull();
}

static int json_job(struct accel_report *r, const struct accel_report_job *j)
{
	if (!r->runs && !(r->runs = cJSON_AddArrayToObject(r->root, "runs")))
		return ACCEL_ENOMEM;
	cJSON *o = append_object(r->runs);
	if (!o)
		return ACCEL_ENOMEM;
	cJSON_AddItemToObject(o, "input", text(j->input));
	cJSON_AddItemToObject(o, "bytes_in", count_or_null(j->bytes_in));
	cJSON_AddItemToObject(o, "bytes_out", count_or_null(j->bytes_out));
	if (j->frames_decoded >= 0)
		cJSON_AddNumberToObject(o, "frames_decoded", (double)j->frames_decoded);
	if (j->frames_encoded >= 0)
		cJSON_AddNumberToObject(o, "frames_encoded", (double)j->frames_encoded);
	cJSON_AddItemToObject(o, "seconds", j->seconds >= 0 ? cJSON_CreateNumber(micro(j->seconds)) : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "error", str_or_null(j->error));
	cJSON *stages = cJSON_AddArrayToObject(o, "stages");
	if (!stages)
		return ACCEL_ENOMEM;
	for (int i = 0; i < j->nstages; i++) {
		const struct accel_report_stage *g = &j->stages[i];
		cJSON *x = append_object(stages);
		if (!x)
			return ACCEL_ENOMEM;
		cJSON_AddItemToObject(x, "stage", text(g->stage));
		cJSON_AddItemToObject(x, "what", str_or_null(g->what));
		cJSON_AddItemToObject(x, "engine", str_or_null(g->engine));
		cJSON_AddItemToObject(x, "fallback", str_or_null(g->fallback));
		if (g->frames >= 0)
			cJSON_AddNumberToObject(x, "frames", (double)g->frames);
		cJSON_AddItemToObject(x, "seconds", g->seconds >= 0 ? cJSON_CreateNumber(micro(g->seconds)) : cJSON_CreateNull());
	}
	return 0;
}

static int json_end(struct accel_report *r)
{
	if (r->has_status)
		cJSON_AddNumberToObject(r->root, "status", r->status);
	cJSON_AddNumberToObject(r->root, "seconds", micro(accel_now() - r->o.started));
	char *s = cJSON_Print(r->root);
	cJSON_Delete(r->root);
	r->root = NULL;
	if (!s)
		return ACCEL_ENOMEM;
	/* One write of the whole document and its newline: never half of
	 * it after the stdio buffer of an unbuffered stderr. */
	size_t n = strlen(s);
	s[n] = '\n';
	int rc = fwrite(s, 1, n + 1, r->f) == n + 1 && fflush(r->f) == 0 ? 0 : ACCEL_EIO;
	free(s);
	return rc;
}

/* ------------------------------------------------------------- interface */

static const struct formatter formatters[] = {
	[ACCEL_REPORT_TABLE] = { .device = table_device, .route = table_route, .probes = table_probes,
				 .run = table_run, .job = table_job, .end = table_end },
	[ACCEL_REPORT_JSON] = { .begin = json_begin, .device = json_device, .route = json_route,
				.probes = json_probes, .run = json_run, .job = json_job, .end = json_end },
	[ACCEL_REPORT_GRES] = { .device = gres_device, .end = gres_end },
	[ACCEL_REPORT_NFD] = { .begin = nfd_begin, .device = nfd_device, .end = nfd_end },
};

struct accel_report *accel_report_new(FILE *f, const struct accel_report_opts *opts)
{
	if ((unsigned)opts->format >= sizeof formatters / sizeof formatters[0])
		return NULL;
	struct accel_report *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->fmt = &formatters[opts->format];
	r->o = *opts;
	if (!r->o.classes)
		r->o.classes = (1u << ACCEL_CLASS_COUNT) - 1;
	if (!r->o.prog)
		r->o.prog = "accel";
	if (!r->o.started)
		r->o.started = accel_now();
	r->f = f;
	r->st = r->o.color ? &ansi : &plain;
	return r;
}

int accel_report_begin(struct accel_report *r, struct accel_ctx *ctx)
{
	r->ctx = ctx;
	/* A report lists what the probes can find, not only what a route
	 * needs (accel_probe_list_devices). */
	if (ctx)
		core_ctx_inventory(ctx, ACCEL_CLASS_ALL);
	return r->fmt->begin ? r->fmt->begin(r, ctx) : 0;
}

int accel_report_device(struct accel_report *r, const struct accel_device *d)
{
	if (!accel_report_shows(r, d))
		return 0;
	return r->fmt->device ? r->fmt->device(r, d) : 0;
}

int accel_report_route(struct accel_report *r, const struct accel_route *route)
{
	return r->fmt->route ? r->fmt->route(r, route) : 0;
}

int accel_report_run(struct accel_report *r, const char *input, const struct accel_stream_stats *s)
{
	return r->fmt->run ? r->fmt->run(r, input, s) : 0;
}

int accel_report_job(struct accel_report *r, const struct accel_report_job *j)
{
	return r->fmt->job ? r->fmt->job(r, j) : 0;
}

int accel_report_route_devices(struct accel_report *r, struct accel_ctx *ctx, const struct accel_route *route)
{
	for (int i = 0; i < route->n; i++) {
		const struct accel_engine *e = route->entries[i].engine;
		if (!e || e->device < 0 || e->device >= CORE_MAX_DEVICES || r->added[e->device])
			continue;
		const struct accel_device *d = accel_device_at(ctx, e->device);
		if (!d)
			continue;
		r->added[e->device] = 1;
		int rc = accel_report_device(r, d);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int accel_report_probes(struct accel_report *r, struct accel_ctx *ctx)
{
	return r->fmt->probes ? r->fmt->probes(r, ctx) : 0;
}

int accel_report_end(struct accel_report *r)
{
	if (!r)
		return 0;
	int rc = r->fmt->end ? r->fmt->end(r) : 0;
	cJSON_Delete(r->root);
	free(r);
	return rc;
}

struct accel_report *accel_report_run_start(struct accel_ctx *ctx, const char *prog, double started)
{
	struct accel_report_opts o = { .format = ACCEL_REPORT_JSON, .routes = 1, .started = started, .prog = prog };
	struct accel_report *r = accel_report_new(stderr, &o);
	if (r)
		r->run = 1;
	/* "runs" is there, empty, when the run failed before any. */
	if (r && (accel_report_begin(r, ctx) < 0 || !(r->runs = cJSON_AddArrayToObject(r->root, "runs")))) {
		cJSON_Delete(r->root);
		free(r);
		r = NULL;
	}
	return r;
}

int accel_report_run_end(struct accel_report *r, struct accel_ctx *ctx, int status)
{
	if (!r)
		return status;
	r->status = status;
	r->has_status = 1;
	int rc = accel_report_probes(r, ctx);
	if (rc < 0) {
		cJSON_Delete(r->root);
		r->root = NULL;
		free(r);
	} else {
		rc = accel_report_end(r);
	}
	if (rc < 0 && rc != ACCEL_EIO)
		accel_msg_error("out of memory");
	return rc < 0 && !status ? ACCEL_EXIT_FAILURE : status;
}
