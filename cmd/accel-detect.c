/*
 * accel-detect - the inventory of the machine's accelerators: CPUs, GPUs,
 * crypto/compression and video engines, NICs, merged into one record per
 * physical device; the routes the other programs would take; and formats
 * for scripts (JSON, --require), Slurm (gres.conf) and Kubernetes (NFD).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <cjson/cJSON.h>
#include <hwloc.h>
#include "accel.h"

#define SCHEMA_VERSION 1

enum {
	OPT_CLASS = 1, OPT_ROUTES, OPT_REQUIRE, OPT_FORMAT, OPT_OUTPUT,
};

static const struct accel_option options[] = {
	{ OPT_CLASS, 'c', "class", "LIST", "show only these classes: cpu,gpu,crypto,video,nic,npu,other", "cpu gpu crypto video nic npu other", 0 },
	{ ACCEL_OPT_JSON, 0, "json", NULL, "print one JSON document (same as --format json)", NULL, 0 },
	{ OPT_FORMAT, 'F', "format", "FORMAT", "output format: table (default), json, gres (Slurm gres.conf), nfd (Kubernetes NFD features)", "table json gres nfd", 0 },
	{ OPT_OUTPUT, 'o', "output", "FILE", "write to FILE, replaced atomically, instead of stdout", "file", 0 },
	{ OPT_ROUTES, 0, "routes", NULL, "print the ranked engines for each operation (or the OPERATIONs given)", NULL, 0 },
	{ OPT_REQUIRE, 'r', "require", "EXPR", "exit 0 when EXPR holds, 4 when not (gpu, vulkan, aes,avx2, gpu>=2, gpu.memory>=40G)", NULL, 0 },
	ACCEL_BACKEND_OPTION,
	ACCEL_BASIC_OPTIONS,
	{ 0 },
};

static const int exit_statuses[] = {
	ACCEL_EXIT_OK, ACCEL_EXIT_FAILURE, ACCEL_EXIT_USAGE, ACCEL_EXIT_UNMET, -1,
};

static const struct accel_cli cli = {
	"accel-detect", "[options] [OPERATION...]",
	"List the accelerators of this machine, the routes operations take, or check a requirement.",
	options, exit_statuses,
};

enum format { FMT_TABLE, FMT_JSON, FMT_GRES, FMT_NFD };

struct job {
	unsigned classes;        /* bit per enum accel_device_class */
	enum format format;
	int routes;
	const char *require;
	const char *output;
	char **ops;
	int nops;
	struct accel_common common;
};

#define ALL_CLASSES ((1u << ACCEL_CLASS_COUNT) - 1)
#define BIT(c) (1u << (c))

/*
 * Which classes each backend can find devices of, in the order they are
 * probed: the APIs that name a GPU best come first, so a device merged later
 * (by PCI address) keeps their name. Backends not listed here are probed
 * for every class.
 */
static const struct {
	const char *name;
	unsigned classes;
} probe_order[] = {
	{ "cpu", BIT(ACCEL_CLASS_CPU) },
	{ "cuda", BIT(ACCEL_CLASS_GPU) | BIT(ACCEL_CLASS_VIDEO) },
	{ "vulkan", BIT(ACCEL_CLASS_GPU) },
	{ "opencl", BIT(ACCEL_CLASS_GPU) | BIT(ACCEL_CLASS_NPU) },
	{ "pci", BIT(ACCEL_CLASS_GPU) | BIT(ACCEL_CLASS_NPU) | BIT(ACCEL_CLASS_OTHER) | BIT(ACCEL_CLASS_VIDEO) },
	{ "qat", BIT(ACCEL_CLASS_CRYPTO) },
	{ "openssl", BIT(ACCEL_CLASS_CRYPTO) },
	{ "nic", BIT(ACCEL_CLASS_NIC) },
	{ "ffmpeg", BIT(ACCEL_CLASS_VIDEO) },
};
#define NPROBES (sizeof probe_order / sizeof probe_order[0])

static unsigned backend_classes(const char *name)
{
	for (size_t i = 0; i < NPROBES; i++)
		if (!strcmp(probe_order[i].name, name))
			return probe_order[i].classes;
	return ALL_CLASSES;
}

/* APIs of video engines (the ffmpeg backend's names for FFmpeg's hardware
 * device types; cuda's engines are nvdec and nvenc). */
static int video_api(const char *name)
{
	static const char *const names[] = { "nvdec", "nvenc", "vaapi", "vdpau", "qsv", "drm", "videotoolbox",
					     "d3d11va", "dxva2", "mediacodec" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(names[i], name))
			return 1;
	return 0;
}

/* Whether device d is (or holds) a video engine; a usable one when `usable`. */
static int has_video(const struct accel_device *d, int usable)
{
	if (d->cls == ACCEL_CLASS_VIDEO && !usable)
		return 1;
	for (int i = 0; i < d->napis; i++)
		if (video_api(d->apis[i].name) && (d->apis[i].ok || !usable))
			return 1;
	return 0;
}

/* Run the probes that can find devices of `classes`, in probe_order first. */
static void probe_classes(struct accel_ctx *ctx, unsigned classes)
{
	for (size_t i = 0; i < NPROBES; i++)
		if (probe_order[i].classes & classes)
			accel_probe_backend(ctx, probe_order[i].name);
	for (int i = 0; i < accel_backend_count(ctx); i++) {
		const struct accel_backend_status *s = accel_backend_status(ctx, i);
		if (backend_classes(s->name) == ALL_CLASSES && classes == ALL_CLASSES)
			accel_probe_backend(ctx, s->name);
	}
}

/* "cpu, gpu, crypto, video, nic, npu, other" into buf. */
static const char *class_list(char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (int c = 0; c < ACCEL_CLASS_COUNT && used < len; c++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", c ? ", " : "", accel_class_name(c));
	return buf;
}

/* A comma-separated list of classes; an empty one, or an empty or
 * unknown name in it, is a usage error naming it. */
static int parse_classes(const char *list, unsigned *out)
{
	char names[80];
	*out = 0;
	for (const char *w = list;; w++) {
		size_t n = strcspn(w, ",");
		char name[16] = "";
		int c = n < sizeof name ? (memcpy(name, w, n), accel_class_parse(name)) : -1;
		if (c < 0) {
			accel_msg_usage("--class: '%.*s' is not a class; classes are %s", (int)(n < 64 ? n : 64), w,
					class_list(names, sizeof names));
			return ACCEL_EINVAL;
		}
		*out |= BIT(c);
		w += n;
		if (!*w)
			return 0;
	}
}

/* ------------------------------------------------------------ requirements */

#define MAX_TERMS 32

/* A finite number with an optional K, M, G, T, P suffix (powers of 1024). */
static int parse_value(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || !isfinite(v))
		return ACCEL_EINVAL;
	static const char suffixes[] = "KMGTP";
	if (*end) {
		const char *k = strchr(suffixes, toupper((unsigned char)*end));
		if (!k || (end[1] && strcmp(end + 1, "B") && strcmp(end + 1, "iB")))
			return ACCEL_EINVAL;
		for (const char *u = suffixes; u <= k; u++)
			v *= 1024;
	}
	*out = v;
	return 0;
}

enum cmp { CMP_NONE, CMP_GE, CMP_LE, CMP_GT, CMP_LT, CMP_EQ, CMP_NE };

static int compare(double a, enum cmp op, double b)
{
	switch (op) {
	case CMP_GE: return a >= b;
	case CMP_LE: return a <= b;
	case CMP_GT: return a > b;
	case CMP_LT: return a < b;
	case CMP_EQ: return a == b;
	case CMP_NE: return a != b;
	default: return a != 0;
	}
}

/* What a term's VALUE is: a number, a dotted version ("1.3.250"), or a
 * word (only with == and !=). */
enum value_kind { VAL_NUMBER, VAL_VERSION, VAL_WORD };

/* One term of --require: NAME[.FIELD][OP VALUE]. */
struct term {
	char name[48], field[48];
	enum cmp op;
	enum value_kind kind;
	double value;
	const char *value_text;  /* VALUE as written */
	const char *text;        /* the whole term */
};

/* Digits and dots, a digit at each end: "12", "1.3", "1.3.250". */
static int dotted(const char *s)
{
	if (!isdigit((unsigned char)*s))
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s) && (*s != '.' || !isdigit((unsigned char)s[1])))
			return 0;
	return 1;
}

/* Compare two dotted() versions part by part, a missing part being 0:
 * negative, 0 or positive. */
static int version_cmp(const char *a, const char *b)
{
	while (*a || *b) {
		char *ea, *eb;
		unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);
		if (x != y)
			return x < y ? -1 : 1;
		a = *ea == '.' ? ea + 1 : ea;
		b = *eb == '.' ? eb + 1 : eb;
	}
	return 0;
}

/* 0, or ACCEL_EINVAL with why in err[len]. */
static int parse_term(const char *text, struct term *t, char *err, size_t len)
{
	static const struct { const char *s; enum cmp op; } ops[] = {
		{ ">=", CMP_GE }, { "<=", CMP_LE }, { "==", CMP_EQ }, { "!=", CMP_NE },
		{ ">", CMP_GT }, { "<", CMP_LT }, { "=", CMP_EQ },
	};
	memset(t, 0, sizeof *t);
	t->text = text;
	size_t n = strcspn(text, "<>=!");
	size_t dot = strcspn(text, ".");
	if (dot > n)
		dot = n;
	if (!dot) {
		snprintf(err, len, "no NAME");
		return ACCEL_EINVAL;
	}
	if (dot >= sizeof t->name || (dot < n && n - dot - 1 >= sizeof t->field)) {
		snprintf(err, len, "NAME and FIELD are at most %zu characters each", sizeof t->name - 1);
		return ACCEL_EINVAL;
	}
	memcpy(t->name, text, dot);
	if (dot < n) {
		memcpy(t->field, text + dot + 1, n - dot - 1);
		if (!t->field[0]) {
			snprintf(err, len, "no FIELD after '.'");
			return ACCEL_EINVAL;
		}
	}
	for (char *c = t->name; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-') {
			snprintf(err, len, "NAME holds letters, digits, '_' and '-' only");
			return ACCEL_EINVAL;
		}
	if (!text[n])
		return 0;
	size_t i = 0;
	while (i < sizeof ops / sizeof ops[0] && strncmp(text + n, ops[i].s, strlen(ops[i].s)))
		i++;
	if (i == sizeof ops / sizeof ops[0]) {
		snprintf(err, len, "OP is one of >= <= > < == = !=");
		return ACCEL_EINVAL;
	}
	t->op = ops[i].op;
	t->value_text = text + n + strlen(ops[i].s);
	const char *v = t->value_text;
	if (parse_value(v, &t->value) == 0) {
		t->kind = VAL_NUMBER;
	} else if (dotted(v)) {
		t->kind = VAL_VERSION;
	} else if (!strcmp(v, "true") || !strcmp(v, "false")) {
		t->kind = VAL_NUMBER;
		t->value = v[0] == 't';
	} else if (*v && strspn(v, "<>=!") == 0 && (t->op == CMP_EQ || t->op == CMP_NE)) {
		t->kind = VAL_WORD;
	} else {
		snprintf(err, len, "VALUE is a number (K, M, G, T suffixes), a version (1.3), true, false, "
			 "or with == and != a word");
		return ACCEL_EINVAL;
	}
	return 0;
}

/* Classes whose probes a term needs. */
static unsigned term_classes(const struct term *t)
{
	int c = accel_class_parse(t->name);
	if (c >= 0)
		return BIT(c);
	if (accel_cpu_flags_parse(t->name))
		return BIT(ACCEL_CLASS_CPU);
	if (!strcmp(t->name, "vulkan") || !strcmp(t->name, "opencl") || !strcmp(t->name, "cuda") ||
	    !strcmp(t->name, "nvml"))
		return BIT(ACCEL_CLASS_GPU);
	if (!strcmp(t->name, "qat") || !strcmp(t->name, "openssl"))
		return BIT(ACCEL_CLASS_CRYPTO);
	if (video_api(t->name))
		return BIT(ACCEL_CLASS_VIDEO);
	return ALL_CLASSES;
}

/* A property value as a yes/no: "mig_mode" = "disabled" and
 * "nvenc_encoders" = "none" say no. */
static int truthy(const char *v)
{
	return v && *v && strcmp(v, "0") && strcmp(v, "false") && strcmp(v, "no") && strcmp(v, "disabled") &&
	       strcmp(v, "none");
}

/* A device's value for a field: a number, or text. */
struct field {
	int number;
	double v;
	char s[160];
};

/*
 * The value of `name` on device d, by its key in the JSON output: a key of
 * the device object (memory for memory_bytes), of its cpu object and cpu
 * cache, a CPU flag (1 or 0), a key of its properties, or with `apis` the
 * name of one of its APIs (1 usable, 0 not). The JSON path works too
 * (properties.fp64, cpu.cache.l3_bytes, apis.vulkan). 0 when the device
 * has none (null or absent in the JSON).
 */
static int field_value(const struct accel_device *d, const char *name, int apis, struct field *f)
{
	static const char *const paths[] = { "properties.", "cpu.cache.", "cpu.", "cache.", "apis." };
	static const char *const caches[4] = { "l1d_bytes", "l2_bytes", "l3_bytes", "l4_bytes" };
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
		if (!strncmp(name, paths[i], strlen(paths[i]))) {
			apis = apis || i == 4;
			name += strlen(paths[i]);
			break;
		}
	memset(f, 0, sizeof *f);
	const char *s = NULL;
	double v = 0;
	int number = 0, known = 1;
	if (!strcmp(name, "id"))
		s = d->id;
	else if (!strcmp(name, "class"))
		s = accel_class_name(d->cls);
	else if (!strcmp(name, "vendor"))
		s = d->vendor;
	else if (!strcmp(name, "model"))
		s = d->model;
	else if (!strcmp(name, "driver"))
		s = d->driver;
	else if (!strcmp(name, "pci_address"))
		s = d->pci_address;
	else if (!strcmp(name, "software"))
		number = 1, v = d->software;
	else if (!strcmp(name, "numa_node"))
		number = d->numa_node >= 0, v = d->numa_node;
	else if (!strcmp(name, "memory") || !strcmp(name, "memory_bytes"))
		number = d->memory_bytes > 0, v = (double)d->memory_bytes;
	else
		known = 0;
	if (known && !number && (!s || !*s))
		return 0;  /* null in the JSON */
	if (!known && d->cls == ACCEL_CLASS_CPU) {
		uint64_t flag = accel_cpu_flags_parse(name);
		number = 1;
		if (!strcmp(name, "packages"))
			v = d->packages;
		else if (!strcmp(name, "cores"))
			v = d->cores;
		else if (!strcmp(name, "threads"))
			v = d->threads;
		else if (!strcmp(name, "numa_nodes"))
			v = d->numa_nodes;
		else if (flag && accel_cpu_flag_name(flag))
			v = (d->flags & flag) == flag;
		else
			number = 0;
		for (int i = 0; i < 4 && !number; i++)
			if (!strcmp(name, caches[i]))
				number = d->cache_bytes[i] > 0, v = (double)d->cache_bytes[i];
	}
	for (int i = 0; i < d->nprops && !number && !s; i++) {
		const struct accel_prop *p = &d->props[i];
		if (strcmp(p->key, name))
			continue;
		if (p->numeric || !strcmp(p->value, "true") || !strcmp(p->value, "false"))
			number = 1, v = p->numeric ? atof(p->value) : p->value[0] == 't';
		else
			s = p->value;
	}
	for (int i = 0; i < d->napis && apis && !number && !s; i++)
		if (!strcmp(d->apis[i].name, name))
			number = 1, v = d->apis[i].ok;
	if (number) {
		f->number = 1;
		f->v = v;
		snprintf(f->s, sizeof f->s, "%.15g", v);
		return 1;
	}
	if (!s || !*s)
		return 0;
	snprintf(f->s, sizeof f->s, "%s", s);
	return 1;
}

/* Whether a field's value meets the term's OP VALUE (is true, with no OP):
 * numbers compare as numbers, versions part by part, words ignoring case. */
static int holds(const struct field *f, const struct term *t)
{
	if (t->op == CMP_NONE)
		return f->number ? f->v != 0 : truthy(f->s);
	char *end;
	switch (t->kind) {
	case VAL_NUMBER: {
		if (f->number)
			return compare(f->v, t->op, t->value);
		double v = strtod(f->s, &end);
		if (end != f->s && !*end)
			return compare(v, t->op, t->value);
		/* "1.3.250" >= 1.3 */
		return dotted(f->s) && dotted(t->value_text) && compare(version_cmp(f->s, t->value_text), t->op, 0);
	}
	case VAL_VERSION:
		return dotted(f->s) && compare(version_cmp(f->s, t->value_text), t->op, 0);
	case VAL_WORD:
		return !strcasecmp(f->s, t->value_text) == (t->op == CMP_EQ);
	}
	return 0;
}

static void human_bytes(char *buf, size_t len, double b)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	int u = 0;
	while (b >= 1024 && u < 5) {
		b /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", b, units[u]);
}

/* A field counted in bytes: memory, memory_bytes, l3_bytes ... */
static int bytes_field(const char *name)
{
	size_t n = strlen(name);
	return !strcmp(name, "memory") || (n >= 6 && !strcmp(name + n - 6, "_bytes"));
}

/* Whether a term holds; when not, why in why[len]. */
static int eval_term(struct accel_ctx *ctx, const struct term *t, char *why, size_t len)
{
	int n = accel_device_count(ctx);
	int cls = accel_class_parse(t->name);
	struct field f;
	if (cls >= 0) {
		int count = 0, software = 0, best_set = 0, reported = 0;
		double best = 0;
		char first[200] = "";
		int counting = !t->field[0] || !strcmp(t->field, "count");
		for (int i = 0; i < n; i++) {
			const struct accel_device *d = accel_device_at(ctx, i);
			/* "video": a GPU's engine counts, when it works. */
			if (cls == ACCEL_CLASS_VIDEO ? !has_video(d, 1) : (int)d->cls != cls)
				continue;
			if (d->software) {
				software++;
				continue;
			}
			if (counting) {
				count++;
				continue;
			}
			if (!field_value(d, t->field, 1, &f))
				continue;
			if (holds(&f, t))
				return 1;
			if (f.number && (!best_set || f.v > best))
				best = f.v, best_set = 1;
			if (!reported++)
				snprintf(first, sizeof first, "%.15s has %.150s", d->id, f.s);
		}
		if (counting) {
			if (t->op == CMP_NONE ? count > 0 : t->kind == VAL_NUMBER && compare(count, t->op, t->value))
				return 1;
			snprintf(why, len, "found %d %.47s device%s%s", count, t->name, count == 1 ? "" : "s",
				 software ? " (software devices do not count)" : "");
			/* No video engine at all: FFmpeg's probe says why. */
			for (int i = 0; i < accel_backend_count(ctx) && !count && cls == ACCEL_CLASS_VIDEO; i++) {
				const struct accel_backend_status *s = accel_backend_status(ctx, i);
				size_t used = strlen(why);
				if (!strcmp(s->name, "ffmpeg") && s->reason[0] && used + 4 < len)
					snprintf(why + used, len - used, ": %.255s", s->reason);
			}
			return 0;
		}
		if (!reported) {
			snprintf(why, len, "no %.47s device reports %.47s%s", t->name, t->field,
				 software ? " (software devices do not count)" : "");
		} else if (best_set && t->kind == VAL_NUMBER && t->op != CMP_NONE && bytes_field(t->field)) {
			char b[32];
			human_bytes(b, sizeof b, best);
			snprintf(why, len, "the best %.47s device has %s", t->name, b);
		} else if (best_set && t->kind == VAL_NUMBER && t->op != CMP_NONE) {
			snprintf(why, len, "the best %.47s device has %.47s %g", t->name, t->field, best);
		} else {
			/* "vendor==AMD (gpu0 has NVIDIA)" */
			snprintf(why, len, "no %.47s device has %.120s (%s)", t->name, t->text + strlen(t->name) + 1,
				 first);
		}
		return 0;
	}
	uint64_t flag = accel_cpu_flags_parse(t->name);
	if (flag && !t->field[0]) {
		for (int i = 0; i < n; i++) {
			const struct accel_device *d = accel_device_at(ctx, i);
			if (d->cls == ACCEL_CLASS_CPU && (d->flags & flag) == flag)
				return 1;
		}
		snprintf(why, len, "the CPU lacks %.47s", t->name);
		return 0;
	}
	/* An API (software devices included: they are usable) or a field of
	 * any device. */
	int count = 0, seen = 0, reported = 0;
	char reason[160] = "", first[200] = "";
	for (int i = 0; i < n; i++) {
		const struct accel_device *d = accel_device_at(ctx, i);
		for (int a = 0; a < d->napis; a++) {
			if (strcmp(d->apis[a].name, t->name))
				continue;
			seen = 1;
			if (d->apis[a].ok)
				count++;
			else if (!reason[0])
				snprintf(reason, sizeof reason, "%s", d->apis[a].reason);
		}
		char path[100];
		snprintf(path, sizeof path, "%s%s%s", t->name, t->field[0] ? "." : "", t->field);
		if (!field_value(d, path, 0, &f))
			continue;
		if (holds(&f, t))
			return 1;
		if (!reported++)
			snprintf(first, sizeof first, "%.15s has %.150s", d->id, f.s);
	}
	if (seen && !t->field[0] && (t->op == CMP_NONE ? count > 0 : t->kind == VAL_NUMBER && compare(count, t->op, t->value)))
		return 1;
	if (reported && !seen) {
		snprintf(why, len, "no device meets it (%s)", first);
	} else if (!seen) {
		/* The backend that would have found it says why it did not. */
		const char *owner = video_api(t->name) ? "ffmpeg" : t->name;
		for (int i = 0; i < accel_backend_count(ctx); i++) {
			const struct accel_backend_status *s = accel_backend_status(ctx, i);
			if (strcmp(s->name, owner))
				continue;
			/* FFmpeg's note on this device type: "cuda 0: Cannot load libcuda.so.1". */
			const char *type = !strcmp(t->name, "nvenc") || !strcmp(t->name, "nvdec") ? "cuda" : t->name;
			for (int k = 0; k < s->nnotes && video_api(t->name); k++)
				if (!strncmp(s->notes[k], type, strlen(type)) && s->notes[k][strlen(type)] == ' ') {
					snprintf(why, len, "%.200s", s->notes[k]);
					return 0;
				}
			if (s->reason[0]) {
				snprintf(why, len, "%.200s", s->reason);
				return 0;
			}
		}
		snprintf(why, len, "no device offers %.47s", t->name);
	} else {
		snprintf(why, len, "%d usable %.47s device%s%s%.150s", count, t->name, count == 1 ? "" : "s",
			 reason[0] ? ": " : "", reason);
	}
	return 0;
}

/* Check every term of expr; 0 met, ACCEL_EUNMET (one line unless quiet), ACCEL_EINVAL. */
static int check_require(struct accel_ctx *ctx, const struct job *job, struct term *terms, int nterms)
{
	for (int i = 0; i < nterms; i++) {
		char why[512];
		if (!eval_term(ctx, &terms[i], why, sizeof why)) {
			if (!job->common.quiet)
				accel_msg_error("requirement not met: %s: %s", terms[i].text, why);
			return ACCEL_EUNMET;
		}
	}
	return 0;
}

/* --------------------------------------------------------------- selection */

/* A GPU holding a video engine is shown for --class video too. */
static int shown(const struct job *job, const struct accel_device *d)
{
	return (job->classes & BIT(d->cls)) || ((job->classes & BIT(ACCEL_CLASS_VIDEO)) && has_video(d, 0));
}

/* Devices to show, in PCI bus order within a class when `pci_order`. */
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
		cJSON_AddNumberToObject(c, "packages", d->packages);
		cJSON_AddNumberToObject(c, "cores", d->cores);
		cJSON_AddNumberToObject(c, "threads", d->threads);
		cJSON_AddNumberToObject(c, "numa_nodes", d->numa_nodes);
		static const char *const cache[4] = { "l1d_bytes", "l2_bytes", "l3_bytes", "l4_bytes" };
		cJSON *cb = cJSON_AddObjectToObject(c, "cache");
		for (int i = 0; i < 4; i++)
			if (d->cache_bytes[i])
				cJSON_AddNumberToObject(cb, cache[i], (double)d->cache_bytes[i]);
		cJSON *fl = cJSON_AddArrayToObject(c, "flags");
		for (int b = 0; b < 64; b++)
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

struct style {
	const char *bold, *dim, *ok, *bad, *soft, *off;
};

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
		human_bytes(mem, sizeof mem, (double)d->memory_bytes);
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
			human_bytes(mem, sizeof mem, (double)d->cache_bytes[2]);
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

static void print_table(FILE *f, struct accel_ctx *ctx, const struct job *job, const struct style *st)
{
	static const char *const titles[ACCEL_CLASS_COUNT] = {
		"CPU", "GPU", "Crypto and compression engines", "Video engines", "Network interfaces",
		"NPUs and other accelerators", "Other devices",
	};
	int n = accel_device_count(ctx);
	for (int c = 0; c < ACCEL_CLASS_COUNT; c++) {
		if (!(job->classes & BIT(c)))
			continue;
		int header = 0;
		for (int i = 0; i < n; i++) {
			const struct accel_device *d = accel_device_at(ctx, i);
			/* Under "Video engines" too when its own class is not shown. */
			int here = (int)d->cls == c || (c == ACCEL_CLASS_VIDEO && !(job->classes & BIT(d->cls)) && has_video(d, 0));
			if (!here)
				continue;
			if (!header++)
				fprintf(f, "%s%s%s\n", st->bold, titles[c], st->off);
			print_device(f, d, st, job->common.verbose);
		}
	}
	int failed = 0;
	for (int i = 0; i < accel_backend_count(ctx); i++) {
		const struct accel_backend_status *s = accel_backend_status(ctx, i);
		failed += s->probed && s->rc < 0;
	}
	if (!job->common.verbose) {
		if (failed && !job->common.quiet)
			fprintf(f, "%s(%d probe%s found nothing; -v says why)%s\n", st->dim, failed,
				failed == 1 ? "" : "s", st->off);
		return;
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
		size_t i = 0;
		for (; w[i] && i + 1 < len; i++)
			buf[i] = (char)tolower((unsigned char)w[i]);
		buf[i] = 0;
		return;
	}
}

/* Slurm's Cores: the logical indexes of the cores holding the CPUs of
 * `cpulist` (sysfs local_cpulist), as hwloc numbers them. */
static void gres_cores(hwloc_topology_t topo, const char *cpulist, char *buf, size_t len)
{
	buf[0] = 0;
	hwloc_bitmap_t set = hwloc_bitmap_alloc(), cores = hwloc_bitmap_alloc();
	/* A topology that does not hold these CPUs (a partial recorded tree)
	 * cannot name their cores: leave Cores out rather than guess. */
	if (set && cores && hwloc_bitmap_list_sscanf(set, cpulist) == 0 &&
	    hwloc_bitmap_isincluded(set, hwloc_topology_get_topology_cpuset(topo))) {
		hwloc_obj_t core = NULL;
		while ((core = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, core)))
			if (hwloc_bitmap_intersects(core->cpuset, set))
				hwloc_bitmap_set(cores, core->logical_index);
		if (!hwloc_bitmap_iszero(cores))
			hwloc_bitmap_list_snprintf(buf, len, cores);
	}
	hwloc_bitmap_free(set);
	hwloc_bitmap_free(cores);
}

static void print_gres(FILE *f, struct accel_ctx *ctx)
{
	const struct accel_device *gpu[64];
	int n = 0;
	for (int i = 0; i < accel_device_count(ctx) && n < 64; i++) {
		const struct accel_device *d = accel_device_at(ctx, i);
		if (d->cls == ACCEL_CLASS_GPU && !d->software)
			gpu[n++] = d;
	}
	qsort(gpu, (size_t)n, sizeof gpu[0], cmp_pci);
	fprintf(f, "# gres.conf for this node, written by accel-detect %s (%d GPU%s)\n", ACCEL_VERSION, n,
		n == 1 ? "" : "s");
	hwloc_topology_t topo = NULL;
	const char *root = getenv("ACCEL_SYSROOT");
	char cpudir[PATH_MAX];
	snprintf(cpudir, sizeof cpudir, "%s/sys/devices/system/cpu", root ? root : "");
	/* A recorded tree without CPU topology names no cores: skip hwloc. */
	if (n && (!root || !*root || !access(cpudir, F_OK))) {
		if (root && *root) {
			setenv("HWLOC_FSROOT", root, 1);
			setenv("HWLOC_COMPONENTS", "-x86", 1);
		}
		if (hwloc_topology_init(&topo) < 0)
			topo = NULL;
		else if (hwloc_topology_load(topo) < 0) {
			hwloc_topology_destroy(topo);
			topo = NULL;
		}
	}
	for (int i = 0; i < n; i++) {
		char type[32], cores[256] = "";
		gres_type(gpu[i]->model, type, sizeof type);
		const char *file = accel_device_get(gpu[i], "device_file");
		const char *cpus = accel_device_get(gpu[i], "local_cpulist");
		if (topo && cpus)
			gres_cores(topo, cpus, cores, sizeof cores);
		fprintf(f, "Name=gpu Type=%s", type);
		if (file)
			fprintf(f, " File=%s", file);
		if (cores[0])
			fprintf(f, " Cores=%s", cores);
		fputc('\n', f);
	}
	if (topo)
		hwloc_topology_destroy(topo);
}

/* An NFD label value: at most 63 of [A-Za-z0-9._-], starting and ending alphanumeric. */
static void label_value(const char *s, char *buf, size_t len)
{
	size_t n = 0;
	for (; *s && n + 1 < len && n < 63; s++) {
		char c = *s;
		if (!isalnum((unsigned char)c) && c != '.' && c != '_' && c != '-')
			c = '-';
		if (c == '-' && (n == 0 || buf[n - 1] == '-'))
			continue;
		buf[n++] = c;
	}
	while (n && !isalnum((unsigned char)buf[n - 1]))
		n--;
	buf[n] = 0;
}

#define NFD "accel.example/"

static void print_nfd(FILE *f, struct accel_ctx *ctx, const struct job *job)
{
	int count[ACCEL_CLASS_COUNT] = { 0 };
	fprintf(f, "# Node Feature Discovery features, written by accel-detect %s\n", ACCEL_VERSION);
	for (int i = 0; i < accel_device_count(ctx); i++) {
		const struct accel_device *d = accel_device_at(ctx, i);
		if (!shown(job, d) || d->software)
			continue;
		count[d->cls]++;
		if (d->cls == ACCEL_CLASS_CPU) {
			for (int b = 0; b < 64; b++)
				if ((d->flags >> b) & 1 && accel_cpu_flag_name(1ull << b))
					fprintf(f, NFD "cpu-%s=true\n", accel_cpu_flag_name(1ull << b));
			continue;
		}
		char v[64];
		if (count[d->cls] == 1) {
			label_value(d->model, v, sizeof v);
			if (v[0])
				fprintf(f, NFD "%s.model=%s\n", accel_class_name(d->cls), v);
			if (d->memory_bytes)
				fprintf(f, NFD "%s.memory-bytes=%llu\n", accel_class_name(d->cls),
					(unsigned long long)d->memory_bytes);
		}
		for (int a = 0; a < d->napis; a++)
			if (d->apis[a].ok)
				fprintf(f, NFD "%s.api-%s=true\n", accel_class_name(d->cls), d->apis[a].name);
		const char *off = accel_device_get(d, "offloads");
		if (off) {
			char copy[128], *save = NULL;
			snprintf(copy, sizeof copy, "%s", off);
			for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save))
				fprintf(f, NFD "nic.offload-%s=true\n", w);
		}
	}
	for (int c = 0; c < ACCEL_CLASS_COUNT; c++)
		if ((job->classes & BIT(c)) && c != ACCEL_CLASS_CPU)
			fprintf(f, NFD "%s.count=%d\n", accel_class_name(c), count[c]);
}

/* ------------------------------------------------------------------ main */

/* Operations the programs offer: every op listed by a loaded backend. */
static int all_ops(struct accel_ctx *ctx, const char **ops, int max)
{
	int n = 0;
	for (int i = 0; i < accel_backend_count(ctx); i++) {
		const struct accel_backend_status *s = accel_backend_status(ctx, i);
		if (!s->backend || !s->backend->ops)
			continue;
		for (const char *const *o = s->backend->ops; *o && n < max; o++) {
			int dup = 0;
			for (int k = 0; k < n && !dup; k++)
				dup = !strcmp(ops[k], *o);
			if (!dup)
				ops[n++] = *o;
		}
	}
	return n;
}

static int emit(const struct job *job, const char *text, size_t len)
{
	struct accel_output out;
	int rc = accel_output_open(&out, job->output, 1, 0);
	if (rc < 0) {
		accel_msg_error("cannot write %s: %s", job->output ? job->output : "stdout", strerror(errno));
		return ACCEL_EXIT_FAILURE;
	}
	rc = accel_output_write(&out, text, len);
	if (rc == 0)
		rc = accel_output_commit(&out);
	else
		accel_output_abort(&out);
	if (rc < 0 && rc != ACCEL_EPIPE) {
		accel_msg_error("cannot write %s: %s", job->output ? job->output : "stdout", strerror(errno));
		return ACCEL_EXIT_FAILURE;
	}
	return 0;
}

static int parse_args(struct job *job, int argc, char **argv)
{
	struct accel_optparse p;
	int id, rc;
	const char *arg;
	memset(job, 0, sizeof *job);
	job->classes = ALL_CLASSES;
	if (accel_common_init(&job->common, &cli) < 0)
		return ACCEL_EXIT_USAGE;
	accel_optparse_init(&p, &cli, argc, argv);
	while ((rc = accel_getopt(&p, &id, &arg)) == 1) {
		switch (id) {
		case OPT_CLASS:
			if (parse_classes(arg, &job->classes) < 0)
				return ACCEL_EXIT_USAGE;
			break;
		case ACCEL_OPT_JSON:
			job->format = FMT_JSON;
			break;
		case OPT_FORMAT:
			if (!strcmp(arg, "table"))
				job->format = FMT_TABLE;
			else if (!strcmp(arg, "json"))
				job->format = FMT_JSON;
			else if (!strcmp(arg, "gres"))
				job->format = FMT_GRES;
			else if (!strcmp(arg, "nfd"))
				job->format = FMT_NFD;
			else {
				accel_msg_usage("--format: '%s' is not one of table, json, gres, nfd", arg);
				return ACCEL_EXIT_USAGE;
			}
			break;
		case OPT_OUTPUT:
			job->output = arg;
			break;
		case OPT_ROUTES:
			job->routes = 1;
			break;
		case OPT_REQUIRE:
			job->require = arg;
			break;
		default:
			rc = accel_common_option(&job->common, &cli, id, arg);
			if (rc == 2)
				return -1;
			if (rc < 0)
				return accel_exit_status(rc);
			if (rc == 0) {
				accel_msg_usage("unexpected option");
				return ACCEL_EXIT_USAGE;
			}
		}
	}
	if (rc < 0) {
		accel_msg_usage("%s", p.errbuf);
		return ACCEL_EXIT_USAGE;
	}
	job->ops = p.operands;
	job->nops = p.noperands;
	if (job->nops && !job->routes) {
		accel_msg_usage("operations (%s) are only taken with --routes", job->ops[0]);
		return ACCEL_EXIT_USAGE;
	}
	return 0;
}

/* The route for one operation, as the programs would get it: 0, or the
 * usage exit status for a malformed --backend list. */
static int route_for(struct accel_ctx *ctx, const struct job *job, const char *name, struct accel_route *r)
{
	struct accel_op op = { .name = name, .checksum = 1 };
	struct accel_route_req req = { &op, job->common.backend, -1, NULL };
	if (accel_route(ctx, &req, r) == ACCEL_EINVAL) {
		accel_msg_usage("--backend: malformed list '%s'", job->common.backend);
		return ACCEL_EXIT_USAGE;
	}
	/* Reasons may quote a library's own message. */
	for (int i = 0; i < r->n; i++) {
		accel_text_sanitize(r->entries[i].name);
		accel_text_sanitize(r->entries[i].reason);
	}
	return 0;
}

static int detect(int argc, char **argv)
{
	struct job job;
	accel_msg_prog(cli.prog);
	int rc = parse_args(&job, argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;

	struct term terms[MAX_TERMS];
	int nterms = 0;
	unsigned need = job.classes;
	char *copy = NULL;       /* the terms' texts point into it */
	if (job.require) {
		int count = 1;
		for (const char *c = job.require; *c; c++)
			count += *c == ',';
		if (count > MAX_TERMS) {
			accel_msg_usage("--require: %d terms; at most %d are supported", count, MAX_TERMS);
			return ACCEL_EXIT_USAGE;
		}
		if (!*job.require) {
			accel_msg_usage("--require: empty expression");
			return ACCEL_EXIT_USAGE;
		}
		copy = strdup(job.require);
		if (!copy) {
			accel_msg_error("%s", accel_strerror(ACCEL_ENOMEM));
			return ACCEL_EXIT_FAILURE;
		}
		need = 0;
		for (char *w = copy, *next; w; w = next) {
			char err[160];
			next = strchr(w, ',');
			if (next)
				*next++ = 0;
			if (!*w) {
				accel_msg_usage("--require: empty term in '%s'", job.require);
				free(copy);
				return ACCEL_EXIT_USAGE;
			}
			if (parse_term(w, &terms[nterms], err, sizeof err) < 0) {
				accel_msg_usage("--require: '%s': %s (NAME[.FIELD][OP VALUE], as gpu>=2, gpu.memory>=40G)",
						w, err);
				free(copy);
				return ACCEL_EXIT_USAGE;
			}
			need |= term_classes(&terms[nterms++]);
		}
	}
	if (job.format == FMT_GRES)
		need = job.classes = BIT(ACCEL_CLASS_GPU);

	struct accel_ctx *ctx = accel_ctx_new();
	if (!ctx) {
		accel_msg_error("%s", accel_strerror(ACCEL_ENOMEM));
		return ACCEL_EXIT_FAILURE;
	}
	double t0 = accel_now();
	/* --routes alone probes only what the router needs for each operation. */
	if (job.require || !job.routes || job.format != FMT_TABLE)
		probe_classes(ctx, need);

	if (job.require) {
		rc = check_require(ctx, &job, terms, nterms);
		accel_ctx_free(ctx);
		free(copy);
		return rc < 0 ? ACCEL_EXIT_UNMET : 0;
	}

	const char *ops[64];
	int nops = 0;
	if (job.routes) {
		if (job.nops)
			for (int i = 0; i < job.nops && i < 64; i++)
				ops[nops++] = job.ops[i];
		else
			nops = all_ops(ctx, ops, 64);
	}

	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f) {
		accel_msg_error("%s", accel_strerror(ACCEL_ENOMEM));
		return ACCEL_EXIT_FAILURE;
	}
	int status = 0;
	if (job.format == FMT_JSON) {
		cJSON *root = cJSON_CreateObject();
		cJSON_AddNumberToObject(root, "schema_version", SCHEMA_VERSION);
		host_info(cJSON_AddObjectToObject(root, "host"), ctx);
		cJSON *devs = cJSON_AddArrayToObject(root, "devices");
		for (int i = 0; i < accel_device_count(ctx); i++)
			if (shown(&job, accel_device_at(ctx, i)))
				cJSON_AddItemToArray(devs, device_json(accel_device_at(ctx, i)));
		if (job.routes) {
			cJSON *routes = cJSON_AddArrayToObject(root, "routes");
			for (int i = 0; i < nops; i++) {
				struct accel_route r;
				if ((status = route_for(ctx, &job, ops[i], &r)))
					break;
				cJSON_AddItemToArray(routes, route_json(&r));
			}
		}
		cJSON_AddItemToObject(root, "probes", probes_json(ctx));
		cJSON_AddNumberToObject(root, "seconds", micro(accel_now() - t0));
		char *s = cJSON_Print(root);
		if (s)
			fprintf(f, "%s\n", s);
		free(s);
		cJSON_Delete(root);
	} else if (job.format == FMT_GRES) {
		print_gres(f, ctx);
	} else if (job.format == FMT_NFD) {
		print_nfd(f, ctx, &job);
	} else {
		const char *nc = getenv("NO_COLOR");
		const struct style *st = !job.output && isatty(1) && !(nc && *nc) ? &ansi : &plain;
		if (!job.routes)
			print_table(f, ctx, &job, st);
		for (int i = 0; i < nops; i++) {
			struct accel_route r;
			if ((status = route_for(ctx, &job, ops[i], &r)))
				break;
			accel_route_print(&r, f);
		}
	}
	fclose(f);
	if (!status)
		status = emit(&job, text, len);
	free(text);
	accel_ctx_free(ctx);
	return status;
}

/* A probe that timed out leaves its thread inside the driver: accel_exit
 * then ends the process without running the libraries' exit handlers. */
int main(int argc, char **argv)
{
	accel_exit(detect(argc, argv));
}
