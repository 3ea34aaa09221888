/*
 * require.c - the --require expression language: comma-separated terms
 * NAME[.FIELD][OP VALUE] over the devices of a context, each decided on
 * what the probes found, the first unmet one reported as one line.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <accel/report.h>
#include "core.h"

#define ALL_CLASSES ((1u << ACCEL_CLASS_COUNT) - 1)
#define BIT(c) (1u << (c))

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
	while (*t->value_text == ' ' || *t->value_text == '\t')
		t->value_text++;
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

/* Classes whose probes a term needs: those of the backends that report
 * the API it names, when it names one. */
static unsigned term_classes(const struct accel_ctx *ctx, const struct term *t)
{
	int c = accel_class_parse(t->name);
	if (c >= 0)
		return BIT(c);
	if (accel_cpu_flag_known(ctx, t->name))
		return BIT(ACCEL_CLASS_CPU);
	unsigned classes = accel_api_classes(ctx, t->name);
	return classes ? classes : ALL_CLASSES;
}

/* The OR of the kinds of the APIs backend b reports. */
static unsigned backend_kinds(const struct accel_backend *b)
{
	unsigned kinds = 0;
	for (const struct accel_api_info *a = b && b->apis ? b->apis : NULL; a && a->name; a++)
		kinds |= a->kinds;
	return kinds;
}

/* The word that begins b's notes about devices of API `name`. */
static const char *note_word(const struct accel_backend *b, const char *name)
{
	for (const struct accel_api_note *n = b && b->api_notes ? b->api_notes : NULL; n && n->api; n++)
		if (!strcmp(n->api, name) && n->word)
			return n->word;
	return name;
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
		static const char *const topo[4] = { "packages", "cores", "threads", "numa_nodes" };
		const int counts[4] = { d->packages, d->cores, d->threads, d->numa_nodes };
		int t = 0;
		while (t < 4 && strcmp(name, topo[t]))
			t++;
		number = 1;
		if (t < 4) {
			/* 0: a topology hwloc could not read, null in the
			 * JSON: no term on it holds. */
			if (!counts[t])
				return 0;
			v = counts[t];
		} else if (accel_cpu_flag_known(NULL, name) || accel_device_has_flag(d, name))
			v = accel_device_has_flag(d, name);
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
			if (cls == ACCEL_CLASS_VIDEO ? !core_has_video(ctx, d, 1) : (int)d->cls != cls)
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
			/* No video engine at all: the probes of the backends that
			 * report video APIs say why. */
			for (int i = 0; i < accel_backend_count(ctx) && !count && cls == ACCEL_CLASS_VIDEO; i++) {
				const struct accel_backend_status *s = accel_backend_status(ctx, i);
				size_t used = strlen(why);
				if ((backend_kinds(s->backend) & ACCEL_API_VIDEO) && s->reason[0] && used + 4 < len)
					snprintf(why + used, len - used, ": %.255s", s->reason);
			}
			return 0;
		}
		if (!reported) {
			snprintf(why, len, "no %.47s device reports %.47s%s", t->name, t->field,
				 software ? " (software devices do not count)" : "");
		} else if (best_set && t->kind == VAL_NUMBER && t->op != CMP_NONE && bytes_field(t->field)) {
			char b[32];
			core_human_bytes(b, sizeof b, best);
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
	/* A CPU flag: 1 where a CPU has it, else 0 ("avx2", "avx512f==0"). */
	if (!t->field[0] && accel_cpu_flag_known(ctx, t->name)) {
		int has = 0;
		for (int i = 0; i < n && !has; i++) {
			const struct accel_device *d = accel_device_at(ctx, i);
			has = d->cls == ACCEL_CLASS_CPU && accel_device_has_flag(d, t->name);
		}
		f = (struct field){ .number = 1, .v = has };
		if (holds(&f, t))
			return 1;
		if (has)
			snprintf(why, len, "the CPU has %.47s", t->name);
		else
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
	/* A backend no device names as an API (fftw, onnxruntime, opencv on
	 * the CPU): its engines, counted. */
	for (int i = 0; !seen && !t->field[0] && i < accel_engine_count(ctx); i++) {
		const struct accel_engine *e = accel_engine_at(ctx, i);
		if (e && e->backend && !strcmp(e->backend->name, t->name))
			count++;
	}
	seen |= count > 0 && !t->field[0];
	if (seen && !t->field[0] && (t->op == CMP_NONE ? count > 0 : t->kind == VAL_NUMBER && compare(count, t->op, t->value)))
		return 1;
	if (reported && !seen) {
		snprintf(why, len, "no device meets it (%s)", first);
	} else if (!seen) {
		/* The backend that would have found it (the one that reports
		 * the API, else a backend of that name) says why it did not. */
		const char *owner = accel_api_backend(ctx, t->name);
		int api = owner != NULL;
		if (!owner)
			owner = t->name;
		for (int i = 0; i < accel_backend_count(ctx); i++) {
			const struct accel_backend_status *s = accel_backend_status(ctx, i);
			if (strcmp(s->name, owner))
				continue;
			/* Its note on devices of the API, when the API is not the
			 * backend's own (then its reason is the probe's): "vaapi
			 * /dev/dri/renderD128: ...", "cuda 0: Cannot load
			 * libcuda.so.1" (FFmpeg's cuda type, for nvenc). */
			const char *word = note_word(s->backend, t->name);
			int notes = api && (strcmp(owner, t->name) || word != t->name);
			for (int k = 0; k < s->nnotes && notes; k++)
				if (!strncmp(s->notes[k], word, strlen(word)) && s->notes[k][strlen(word)] == ' ') {
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

/* The keys a device may have whatever the machine: its own, the CPU's and
 * the properties the bundled backends report. The APIs come from the
 * registry (each backend's apis table); a plugin's other keys count once a
 * device has them. */
static const char *const known_fields[] = {
	"id", "class", "vendor", "model", "driver", "pci_address", "software", "numa_node", "memory",
	"memory_bytes", "count", "packages", "cores", "threads", "numa_nodes", "l1d_bytes", "l2_bytes",
	"l3_bytes", "l4_bytes",
	"active", "buildinfo", "cgroup_cpus", "combined_channels", "compute_capability", "compute_units",
	"cuda_driver_version", "device_file", "device_type", "firmware", "fp16", "fp64", "interface",
	"local_cpulist", "mac_address", "max_alloc_bytes", "mig_mode", "mtu", "multiprocessors",
	"offloads", "opencl_driver_version", "opencl_platform", "opencl_version", "operstate", "pci_id",
	"power_watts", "provider", "render_node", "rx_queues", "services", "speed_mbps", "sriov_numvfs",
	"sriov_totalvfs", "state", "subgroup_size", "temperature_celsius", "tx_queues", "utilization_percent",
	"uuid", "version", "video_device_file", "virtual", "vulkan_api_version", "vulkan_compute_queues",
	"vulkan_driver_info", "vulkan_memory_heaps",
	NULL
};

/* Families of keys: FFmpeg's per type ("vaapi_device", "nvdec_decoders")
 * and sizes ("numa0_memory_bytes"). */
static const char *const known_suffixes[] = { "_device", "_decoders", "_encoders", "_bytes", NULL };

/* FIELD without its JSON path ("properties.fp64" is "fp64"). */
static const char *field_key(const char *f)
{
	static const char *const paths[] = { "properties.", "cpu.cache.", "cpu.", "cache.", "apis.", NULL };
	for (int i = 0; paths[i]; i++)
		if (!strncmp(f, paths[i], strlen(paths[i])))
			return f + strlen(paths[i]);
	return f;
}

/* Whether a device of this machine or any backend can have key f. */
static int field_known(struct accel_ctx *ctx, const char *f)
{
	size_t n = strlen(f);
	for (int i = 0; known_fields[i]; i++)
		if (!strcmp(f, known_fields[i]))
			return 1;
	for (int i = 0; known_suffixes[i]; i++) {
		size_t k = strlen(known_suffixes[i]);
		if (n > k && !strcmp(f + n - k, known_suffixes[i]))
			return 1;
	}
	if (accel_cpu_flag_known(ctx, f) || accel_api_kinds(ctx, f))
		return 1;
	for (int i = 0; i < accel_device_count(ctx); i++) {
		const struct accel_device *d = accel_device_at(ctx, i);
		for (int k = 0; k < d->nprops; k++)
			if (!strcmp(d->props[k].key, f))
				return 1;
		for (int k = 0; k < d->napis; k++)
			if (!strcmp(d->apis[k].name, f))
				return 1;
	}
	return 0;
}

/* The known key closest to f, within 2 edits and under half its length;
 * NULL when none is. */
static const char *closest_field(struct accel_ctx *ctx, const char *f)
{
	const char *best = NULL;
	int bd = 3;
	for (int i = 0; known_fields[i]; i++) {
		int k = core_edit_distance(f, known_fields[i]);
		if (k < bd && 2 * k < (int)strlen(f))
			best = known_fields[i], bd = k;
	}
	for (int i = 0; i < accel_device_count(ctx); i++) {
		const struct accel_device *d = accel_device_at(ctx, i);
		for (int k = 0; k < d->nprops; k++) {
			int e = core_edit_distance(f, d->props[k].key);
			if (e < bd && 2 * e < (int)strlen(f))
				best = d->props[k].key, bd = e;
		}
	}
	return best;
}

struct accel_require {
	char *copy;              /* the expression; the terms' texts point into it */
	int nterms;
	struct term terms[ACCEL_REQUIRE_MAX_TERMS];
};

void accel_require_free(struct accel_require *req)
{
	if (!req)
		return;
	free(req->copy);
	free(req);
}

int accel_require_parse(const char *expr, struct accel_require **out, char *err, size_t len)
{
	*out = NULL;
	int count = 1;
	for (const char *c = expr; *c; c++)
		count += *c == ',';
	if (count > ACCEL_REQUIRE_MAX_TERMS) {
		snprintf(err, len, "%d terms; at most %d are supported", count, ACCEL_REQUIRE_MAX_TERMS);
		return ACCEL_EINVAL;
	}
	if (!*expr) {
		snprintf(err, len, "empty expression");
		return ACCEL_EINVAL;
	}
	struct accel_require *req = calloc(1, sizeof *req);
	if (!req || !(req->copy = strdup(expr))) {
		free(req);
		snprintf(err, len, "%s", accel_strerror(ACCEL_ENOMEM));
		return ACCEL_ENOMEM;
	}
	for (char *w = req->copy, *next; w; w = next) {
		char why[160];
		next = strchr(w, ',');
		if (next)
			*next++ = 0;
		/* Blanks around a term (and after its OP) are not part of it,
		 * as a shell's quoting leaves them: 'avx2 ', 'cpu.cores==2 '. */
		while (*w == ' ' || *w == '\t')
			w++;
		for (size_t k = strlen(w); k && (w[k - 1] == ' ' || w[k - 1] == '\t'); k--)
			w[k - 1] = 0;
		if (!*w) {
			snprintf(err, len, "empty term in '%s'", expr);
			accel_require_free(req);
			return ACCEL_EINVAL;
		}
		if (parse_term(w, &req->terms[req->nterms], why, sizeof why) < 0) {
			snprintf(err, len, "'%s': %s (NAME[.FIELD][OP VALUE], as gpu>=2, gpu.memory>=40G)", w, why);
			accel_require_free(req);
			return ACCEL_EINVAL;
		}
		req->nterms++;
	}
	*out = req;
	return 0;
}

unsigned accel_require_classes(const struct accel_require *req, const struct accel_ctx *ctx)
{
	unsigned need = 0;
	for (int i = 0; i < req->nterms; i++)
		need |= term_classes(ctx, &req->terms[i]);
	return need;
}

/* The APIs and the names of the bundled backends, known whether or not
 * their plugins are installed here: a machine without them does not meet
 * vulkan, say (where a misspelt name is a usage error). */
static const char *const known_apis[] = {
	"cuda", "d3d11va", "drm", "dxva2", "host", "mediacodec", "netdev", "nvdec", "nvenc", "nvml", "opencl",
	"openssl", "pci", "qat", "qsv", "vaapi", "vdpau", "videotoolbox", "vulkan",
	"cpu", "cufft", "ffmpeg", "fftw", "nic", "onnxruntime", "opencv", "vkfft",
	NULL
};

/* Whether a term's NAME alone names something: a class, a CPU flag, an
 * API (of a bundled backend, a backend or a device here), a backend, or a
 * key of a device. */
static int name_known(struct accel_ctx *ctx, const char *name)
{
	for (int i = 0; known_apis[i]; i++)
		if (!strcmp(known_apis[i], name))
			return 1;
	if (accel_class_parse(name) >= 0 || accel_cpu_flag_known(ctx, name) || accel_api_backend(ctx, name) ||
	    field_known(ctx, name))
		return 1;
	for (int i = 0; i < accel_backend_count(ctx); i++)
		if (!strcmp(accel_backend_status(ctx, i)->name, name))
			return 1;
	return 0;
}

/* Keep cand in *best when it is nearer to name than *score says (edits
 * first, then the difference in length), within 2 edits and under half
 * the length of name. */
static void nearer(const char *name, const char *cand, const char **best, int *score)
{
	int k = core_edit_distance(name, cand), n = (int)strlen(name), d = n - (int)strlen(cand);
	int s = k * 100 + (d < 0 ? -d : d);
	if (k <= 2 && 2 * k < n && s < *score)
		*best = cand, *score = s;
}

/* The class, CPU flag, API, backend or key nearest to name; NULL when
 * none is near. */
static const char *closest_name(struct accel_ctx *ctx, const char *name)
{
	const char *best = NULL, *c;
	int bd = 300;
	for (int i = 0; i < ACCEL_CLASS_COUNT; i++)
		nearer(name, accel_class_name(i), &best, &bd);
	for (int i = 0; known_apis[i]; i++)
		nearer(name, known_apis[i], &best, &bd);
	if ((c = accel_cpu_flag_nearest(name)))
		nearer(name, c, &best, &bd);
	for (int i = 0; i < accel_backend_count(ctx); i++) {
		const struct accel_backend_status *s = accel_backend_status(ctx, i);
		nearer(name, s->name, &best, &bd);
		for (const struct accel_api_info *a = s->backend ? s->backend->apis : NULL; a && a->name; a++)
			nearer(name, a->name, &best, &bd);
	}
	if ((c = closest_field(ctx, name)))
		nearer(name, c, &best, &bd);
	return best;
}

/* 0 when each term names what a device can have: NAME a class, CPU flag,
 * API or key (as name_known), CLASS.FIELD and PATH.FIELD a key; else
 * ACCEL_EINVAL, why naming the first that does not and the closest name. */
static int check_fields(const struct accel_require *req, struct accel_ctx *ctx, char *why, size_t len)
{
	for (int i = 0; i < req->nterms; i++) {
		const struct term *t = &req->terms[i];
		int cls = accel_class_parse(t->name) >= 0;
		if (!t->field[0]) {
			if (name_known(ctx, t->name))
				continue;
			const char *near = closest_name(ctx, t->name);
			if (near)
				snprintf(why, len, "'%s': unknown name '%s'; did you mean '%s'?", t->text, t->name, near);
			else
				snprintf(why, len, "'%s': unknown name '%s' (a class, a CPU flag as /proc/cpuinfo lists "
					 "it, an API, or a field of a device in --json)", t->text, t->name);
			return ACCEL_EINVAL;
		}
		char path[100];
		snprintf(path, sizeof path, "%s.%s", t->name, t->field);
		const char *field = cls ? t->field : path;
		const char *f = field_key(field);
		if (field_known(ctx, f))
			continue;
		const char *near = closest_field(ctx, f);
		if (!near)
			near = accel_cpu_flag_nearest(f);
		if (near)
			snprintf(why, len, "'%s': unknown field '%s'; did you mean '%s'?", t->text, field, near);
		else
			snprintf(why, len, "'%s': unknown field '%s' (fields: id, class, vendor, model, driver, "
				 "pci_address, software, numa_node, memory, count, the keys of cpu and properties in "
				 "--json, API names, CPU flags)", t->text, field);
		return ACCEL_EINVAL;
	}
	return 0;
}

int accel_require_eval(const struct accel_require *req, struct accel_ctx *ctx, char *why, size_t len)
{
	int rc = check_fields(req, ctx, why, len);
	if (rc < 0)
		return rc;
	for (int i = 0; i < req->nterms; i++) {
		char reason[512];
		if (!eval_term(ctx, &req->terms[i], reason, sizeof reason)) {
			snprintf(why, len, "%s: %s", req->terms[i].text, reason);
			return ACCEL_EUNMET;
		}
	}
	return 0;
}
