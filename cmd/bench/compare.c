/*
 * compare.c - the CI regression gate: --compare BASELINE.json runs the
 * baseline's cases (or, with --against, reads a second results file),
 * compares each case's median MB/s with the baseline's beside the spread
 * of both sides' runs, and prints the changes as a table or a JSON diff
 * (schemas in accel-bench(1)).
 */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "bench.h"

/* The largest results file read: a document of MAX_SAMPLES runs for every
 * case is far smaller. */
#define MAX_DOC_BYTES ((size_t)256 << 20)
/* The --json diff's schema_version. */
#define DIFF_SCHEMA 1

enum verdict { SAME, REGRESSED, IMPROVED, MISSING };
static const char *const verdicts[] = { "same", "regressed", "improved", "missing" };

/* One line of the comparison: a case of either side, or of both. */
struct change {
	const cJSON *base, *now;  /* the case objects; NULL: missing on that side */
	double pct;               /* change of the median MB/s, percent */
	double noise;             /* the larger spread of the two sides, percent */
	enum verdict v;
};

int regression_option(void *job, const char *arg)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	if (end != arg && *end == '%')
		end++;
	if (errno || end == arg || *end || !(v >= 0 && v < 100)) {
		accel_msg_usage("--max-regression: '%s' is not a percentage under 100 (10%%, 2.5)", arg);
		return ACCEL_EINVAL;
	}
	((struct job *)job)->max_regression = v;
	return 0;
}

int compare_usage(struct job *job)
{
	const char *alone = job->against ? "--against" : job->max_regression >= 0 ? "--max-regression" : NULL;
	if (!job->compare && alone) {
		accel_msg_usage("%s is an option of --compare", alone);
		return ACCEL_EXIT_USAGE;
	}
	if (job->compare && (job->list || job->csv)) {
		accel_msg_usage("--compare prints a table or --json: not %s", job->list ? "--list" : "--csv");
		return ACCEL_EXIT_USAGE;
	}
	if (job->max_regression < 0)
		job->max_regression = 10;
	return 0;
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* What is wrong with case c of a results document, or NULL. */
static const char *bad_case(const cJSON *c)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(c, "mbps");
	double size = num(c, "size"), lo = num(m, "min"), med = num(m, "median"), hi = num(m, "max");
	if (!cJSON_IsObject(c))
		return "not an object";
	if (!str(c, "operation") || !str(c, "engine"))
		return "no operation or engine";
	if (!(size >= 1 && size <= 0x1p53 && size == floor(size)))
		return "no size";
	if (!(lo > 0 && lo <= med && med <= hi && isfinite(hi)))
		return "no mbps min <= median <= max";
	return NULL;
}

/* Read and check the results document `path` (accel-bench --json). The
 * document, or NULL after the one-line message. */
static cJSON *load(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		accel_msg_error("cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	char *text = NULL;
	size_t len = 0, cap = 0;
	int err = 0;
	for (;;) {
		if (len == cap) {
			char *t = cap < MAX_DOC_BYTES ? realloc(text, (cap = cap ? 2 * cap : 65536) + 1) : NULL;
			if (!t) {
				err = cap >= MAX_DOC_BYTES ? EFBIG : ENOMEM;
				break;
			}
			text = t;
		}
		size_t n = fread(text + len, 1, cap - len, f);
		len += n;
		if (n == 0) {
			err = ferror(f) ? errno ? errno : EIO : 0;
			break;
		}
	}
	fclose(f);
	if (err) {
		accel_msg_error("cannot read %s: %s", path, strerror(err));
		free(text);
		return NULL;
	}
	const char *end = NULL;
	cJSON *doc = text ? cJSON_ParseWithLengthOpts(text, len, &end, 0) : NULL;
	if (!doc) {
		int line = 1;
		for (const char *p = text; p && end && p < end; p++)
			line += *p == '\n';
		accel_msg_error("%s: not an accel-bench JSON document (not JSON: line %d)", path, line);
		free(text);
		return NULL;
	}
	free(text);
	const cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
	double v = num(doc, "schema_version");
	const char *why = NULL;
	char buf[96];
	if (!cJSON_IsObject(doc) || isnan(v)) {
		why = "no schema_version";
	} else if (!cJSON_IsArray(cases)) {
		why = "no cases";
	} else if (!str(doc, "accel_version")) {
		why = "no accel_version";
	} else if (v != 1 && v != RESULTS_SCHEMA) {
		/* Schema 1 has the keys compared here as 2 has them. */
		accel_msg_error("%s: schema_version %g is not known here (this accel-bench reads 1 to %d)", path, v,
				RESULTS_SCHEMA);
		cJSON_Delete(doc);
		return NULL;
	} else {
		int i = 0;
		for (const cJSON *c = cases->child; c && !why; c = c->next, i++)
			if ((why = bad_case(c))) {
				snprintf(buf, sizeof buf, "case %d: %s", i + 1, why);
				why = buf;
			}
	}
	if (why) {
		accel_msg_error("%s: not an accel-bench JSON document (%s)", path, why);
		cJSON_Delete(doc);
		return NULL;
	}
	return doc;
}

/* A case's size as --size gives it: VIDEO_SIZE of its "resolution" (the
 * video stages), else its "size"; 0 when its resolution is no size. */
static uint64_t size_of(const cJSON *c)
{
	const char *res = str(c, "resolution");
	uint64_t v;
	if (res)
		return size_word(res, &v) == 0 && IS_VIDEO_SIZE(v) ? v : 0;
	return (uint64_t)num(c, "size");
}

/* 1 when the case is one the operands, -b and --size choose (all when
 * none is given). */
static int chosen(const struct job *job, const cJSON *c)
{
	const char *op = str(c, "operation"), *engine = str(c, "engine"), *list = job->common.backend;
	uint64_t size = size_of(c);
	int hit = !job->common.noperands;
	for (int k = 0; k < job->common.noperands && !hit; k++)
		hit = !fnmatch(job->common.operands[k], op, 0);
	if (hit && list && strcmp(list, "auto")) {
		size_t n = strlen(engine);
		hit = 0;
		for (const char *s = list; *s && !hit; s += strcspn(s, ",") + (s[strcspn(s, ",")] == ','))
			hit = strcspn(s, ",") == n && !strncmp(s, engine, n);
	}
	if (hit && job->nsizes) {
		hit = 0;
		for (int i = 0; i < job->nsizes && !hit; i++)
			hit = job->size[i] == size;
	}
	return hit;
}

/* 0 when every operand matches a case of the baseline, else the usage
 * status after the message. */
static int operands_match(const struct job *job, const cJSON *base)
{
	const cJSON *cases = cJSON_GetObjectItemCaseSensitive(base, "cases");
	for (int k = 0; k < job->common.noperands; k++) {
		int hit = 0;
		for (const cJSON *c = cases->child; c && !hit; c = c->next)
			hit = !fnmatch(job->common.operands[k], str(c, "operation"), 0);
		if (!hit) {
			accel_msg_usage("no case of %s matches '%s'", job->compare, job->common.operands[k]);
			return ACCEL_EXIT_USAGE;
		}
	}
	return 0;
}

cJSON *compare_load(struct job *job, int *status)
{
	cJSON *base = load(job->compare);
	*status = ACCEL_EXIT_FAILURE;
	if (!base || (*status = operands_match(job, base))) {
		cJSON_Delete(base);
		return NULL;
	}
	/* The baseline's settings where the command line gives none. */
	const cJSON *set = cJSON_GetObjectItemCaseSensitive(base, "settings");
	double repeat = num(set, "repeat"), t = num(set, "time_seconds"), warmup = num(set, "warmup");
	double threads = num(set, "threads");
	if (!job->repeat && !job->time) {
		if (repeat >= 1 && repeat <= MAX_SAMPLES)
			job->repeat = (int)repeat;
		else if (t >= 0.001 && t <= 86400)
			job->time = t;
	}
	if (job->warmup < 0 && warmup >= 0 && warmup <= 1000)
		job->warmup = (int)warmup;
	if (!job->common.threads && !getenv("ACCEL_THREADS") && threads >= 0 && threads <= 4096)
		job->common.threads = (int)threads;
	*status = 0;
	return base;
}

/* 1 when engine can run op on this machine (a video stage: one of the
 * engines accel-transcode can name). */
static int runs_here(struct bench *b, const struct opdef *op, const char *engine)
{
	if (IS_VIDEO(op->fam)) {
		char items[16][80];
		return video_engines(b, engine, items, 16) == 1 && !strcmp(items[0], engine);
	}
	struct accel_op o = { .name = op_lib(op), .checksum = 1, .ext = op_ext(b, op) };
	struct accel_route_req req = { &o, engine, -1, NULL };
	struct accel_route r;
	return accel_route(b->ctx, &req, &r) == 0 && r.nranked > 0;
}

/* A case's compression level: its "level", or 0 where it has none (not a
 * codec, or a schema 1 document, which ran each format's default). */
static int level_of(const cJSON *c)
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(c, "level");
	return cJSON_IsNumber(l) ? l->valueint : 0;
}

int compare_cases(struct bench *b, cJSON *base, struct kase **cs, int *n)
{
	const cJSON *cases = cJSON_GetObjectItemCaseSensitive(base, "cases");
	int cap = 0, any = 0;
	*n = 0;
	for (const cJSON *c = cases->child; c; c = c->next) {
		if (!chosen(b->job, c))
			continue;
		any = 1;
		const struct opdef *op = opdef(str(c, "operation"));
		uint64_t size = size_of(c);
		/* Not measured here, or not on this machine: missing now. */
		if (!op || (op->fam == FAM_FFT && (size < 2 || size > (1u << 26))) ||
		    (op->fam == FAM_ONNX && size > MAX_BATCH) || IS_VIDEO(op->fam) != IS_VIDEO_SIZE(size) ||
		    strlen(str(c, "engine")) >= sizeof (*cs)->engine || !runs_here(b, op, str(c, "engine")))
			continue;
		if (*n == cap) {
			struct kase *k = realloc(*cs, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *k);
			if (!k) {
				accel_msg_error("out of memory");
				return ACCEL_EXIT_FAILURE;
			}
			*cs = k;
		}
		struct kase *k = &(*cs)[(*n)++];
		memset(k, 0, sizeof *k);
		k->op = op;
		k->size = size;
		k->level = level_of(c);
		if (k->level <= 0 && op->format && (op->fam == FAM_COMPRESS || op->fam == FAM_DECOMPRESS))
			k->level = accel_compress_default_level(op->format);
		snprintf(k->engine, sizeof k->engine, "%s", str(c, "engine"));
	}
	if (!any) {
		accel_msg_error("nothing to compare: no case of %s is chosen by the operations, -b and --size given",
				b->job->compare);
		return ACCEL_EXIT_FAILURE;
	}
	return 0;
}

/* The machine a results document was measured on, in words: the CPU's
 * model, cores and threads, then each other device that is hardware (not a
 * software device, not a NIC), joined by "; ". */
static void machine_text(const cJSON *doc, char *buf, size_t len)
{
	const cJSON *devs = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "machine"),
							     "devices");
	size_t used = 0;
	buf[0] = 0;
	for (const cJSON *d = cJSON_IsArray(devs) ? devs->child : NULL; d && used < len; d = d->next) {
		const char *cls = str(d, "class"), *model = str(d, "model");
		if (!cls || !model || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "software")) || !strcmp(cls, "nic"))
			continue;
		const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(d, "cpu");
		if (!strcmp(cls, "cpu") && cpu)
			used += (size_t)snprintf(buf + used, len - used, "%s%s %s, %g cores, %g threads", used ? "; " : "",
						 cls, model, num(cpu, "cores"), num(cpu, "threads"));
		else
			used += (size_t)snprintf(buf + used, len - used, "%s%s %s", used ? "; " : "", cls, model);
	}
	if (!buf[0])
		snprintf(buf, len, "unknown");
}

/* The spread of a case's runs: how far below its fastest run its slowest
 * one fell, (max - min) / max MB/s, percent (from 0 to 100, as a fall of
 * the median is). */
static double spread(const cJSON *c)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(c, "mbps");
	return (num(m, "max") - num(m, "min")) / num(m, "max") * 100;
}

/* The verdict on one case seen on both sides: regressed when the median
 * fell by more than the bound and more than the noise, and every run now
 * was slower than every run of the baseline (now's max below the
 * baseline's min); improved the other way round; else the same. */
static void judge(struct change *ch, double bound)
{
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(ch->base, "mbps");
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(ch->now, "mbps");
	ch->pct = (num(n, "median") / num(b, "median") - 1) * 100;
	ch->noise = fmax(spread(ch->base), spread(ch->now));
	ch->v = SAME;
	if (-ch->pct > bound && -ch->pct > ch->noise && num(n, "max") < num(b, "min"))
		ch->v = REGRESSED;
	else if (ch->pct > bound && ch->pct > ch->noise && num(n, "min") > num(b, "max"))
		ch->v = IMPROVED;
}

static int same_case(const cJSON *a, const cJSON *b)
{
	return !strcmp(str(a, "operation"), str(b, "operation")) && !strcmp(str(a, "engine"), str(b, "engine")) &&
	       num(a, "size") == num(b, "size") && !strcmp(str(a, "resolution") ? str(a, "resolution") : "",
							   str(b, "resolution") ? str(b, "resolution") : "") &&
	       (!level_of(a) || !level_of(b) || level_of(a) == level_of(b));
}

/* The comparison of the chosen cases of base and now into *out (the
 * baseline's order, then the cases only now has): their number, or -1
 * when out of memory. */
static int diff(const struct job *job, const cJSON *base, const cJSON *now, struct change **out)
{
	const cJSON *bc = cJSON_GetObjectItemCaseSensitive(base, "cases");
	const cJSON *nc = cJSON_GetObjectItemCaseSensitive(now, "cases");
	int nb = cJSON_GetArraySize(bc), nn = cJSON_GetArraySize(nc), n = 0;
	struct change *ch = calloc((size_t)(nb + nn) + 1, sizeof *ch);
	char *taken = calloc((size_t)nn + 1, 1);
	if (!ch || !taken) {
		free(ch);
		free(taken);
		return -1;
	}
	for (const cJSON *b = bc->child; b; b = b->next) {
		if (!chosen(job, b))
			continue;
		struct change *c = &ch[n++];
		c->base = b;
		c->v = MISSING;
		int i = 0;
		for (const cJSON *k = nc->child; k; k = k->next, i++)
			if (!taken[i] && chosen(job, k) && same_case(b, k)) {
				taken[i] = 1;
				c->now = k;
				judge(c, job->max_regression);
				break;
			}
	}
	int i = 0;
	for (const cJSON *k = nc->child; k; k = k->next, i++)
		if (!taken[i] && chosen(job, k))
			ch[n++] = (struct change){ .now = k, .v = MISSING };
	free(taken);
	*out = ch;
	return n;
}

static void case_size(const cJSON *c, char *buf, size_t len)
{
	uint64_t s = (uint64_t)num(c, "size");
	const char *unit = str(c, "size_unit");
	if (str(c, "resolution"))
		snprintf(buf, len, "%s", str(c, "resolution"));
	else if (unit && !strcmp(unit, "samples"))
		snprintf(buf, len, "N=%llu", (unsigned long long)s);
	else if (unit && !strcmp(unit, "batch"))
		snprintf(buf, len, "batch=%llu", (unsigned long long)s);
	else
		bytes_text(s, buf, len);
}

static void print_changes(const struct change *ch, int n, double bound)
{
	int count[4] = { 0 };
	printf("%-16s %-18s %9s %13s %11s %8s %8s  %s\n", "OPERATION", "ENGINE", "SIZE", "BASELINE MB/S", "NOW MB/S",
	       "CHANGE", "NOISE", "VERDICT");
	for (int i = 0; i < n; i++) {
		const struct change *c = &ch[i];
		const cJSON *any = c->base ? c->base : c->now;
		char sz[32], bm[24] = "-", nm[24] = "-", pct[16] = "-", noise[16] = "-";
		case_size(any, sz, sizeof sz);
		if (c->base)
			snprintf(bm, sizeof bm, "%.1f", num(cJSON_GetObjectItemCaseSensitive(c->base, "mbps"), "median"));
		if (c->now)
			snprintf(nm, sizeof nm, "%.1f", num(cJSON_GetObjectItemCaseSensitive(c->now, "mbps"), "median"));
		if (c->v != MISSING) {
			snprintf(pct, sizeof pct, "%+.1f%%", c->pct);
			snprintf(noise, sizeof noise, "%.1f%%", c->noise);
		}
		printf("%-16s %-18s %9s %13s %11s %8s %8s  %s\n", str(any, "operation"), str(any, "engine"), sz, bm, nm,
		       pct, noise, verdicts[c->v]);
		count[c->v]++;
	}
	printf("%d cases: %d regressed, %d improved, %d same, %d missing (bound %g%%)\n", n, count[REGRESSED],
	       count[IMPROVED], count[SAME], count[MISSING], bound);
}

static cJSON *side_json(const cJSON *c)
{
	if (!c)
		return cJSON_CreateNull();
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(c, "mbps");
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "min", num(m, "min"));
	cJSON_AddNumberToObject(o, "median", num(m, "median"));
	cJSON_AddNumberToObject(o, "max", num(m, "max"));
	double r = num(c, "repeats");
	if (isnan(r))
		cJSON_AddNullToObject(o, "repeats");
	else
		cJSON_AddNumberToObject(o, "repeats", r);
	return o;
}

static cJSON *file_json(const char *path, const cJSON *doc, const char *machine)
{
	cJSON *o = cJSON_CreateObject();
	if (path)
		cJSON_AddStringToObject(o, "file", path);
	else
		cJSON_AddNullToObject(o, "file");
	cJSON_AddStringToObject(o, "accel_version", str(doc, "accel_version"));
	cJSON_AddStringToObject(o, "machine", machine);
	return o;
}

/* The JSON diff on stdout. 0, or -1 when out of memory. */
static int print_diff(const struct job *job, const cJSON *base, const cJSON *now, const char *bmach,
		      const char *nmach, const struct change *ch, int n)
{
	int count[4] = { 0 };
	cJSON *root = cJSON_CreateObject(), *cases = cJSON_CreateArray(), *sum = cJSON_CreateObject();
	cJSON_AddNumberToObject(root, "schema_version", DIFF_SCHEMA);
	cJSON_AddStringToObject(root, "accel_version", ACCEL_VERSION);
	cJSON_AddItemToObject(root, "baseline", file_json(job->compare, base, bmach));
	cJSON_AddItemToObject(root, "now", file_json(job->against, now, nmach));
	cJSON_AddBoolToObject(root, "same_machine", !strcmp(bmach, nmach));
	cJSON_AddNumberToObject(root, "max_regression_percent", job->max_regression);
	for (int i = 0; i < n; i++) {
		const struct change *c = &ch[i];
		const cJSON *any = c->base ? c->base : c->now;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "operation", str(any, "operation"));
		cJSON_AddStringToObject(o, "engine", str(any, "engine"));
		cJSON_AddNumberToObject(o, "size", num(any, "size"));
		cJSON_AddStringToObject(o, "size_unit", str(any, "size_unit") ? str(any, "size_unit") : "bytes");
		if (str(any, "resolution"))
			cJSON_AddStringToObject(o, "resolution", str(any, "resolution"));
		else
			cJSON_AddNullToObject(o, "resolution");
		cJSON_AddStringToObject(o, "verdict", verdicts[c->v]);
		if (c->v == MISSING)
			cJSON_AddStringToObject(o, "missing_in", c->base ? "now" : "baseline");
		else
			cJSON_AddNullToObject(o, "missing_in");
		cJSON_AddItemToObject(o, "baseline", side_json(c->base));
		cJSON_AddItemToObject(o, "now", side_json(c->now));
		if (c->v == MISSING) {
			cJSON_AddNullToObject(o, "change_percent");
			cJSON_AddNullToObject(o, "noise_percent");
		} else {
			cJSON_AddNumberToObject(o, "change_percent", c->pct);
			cJSON_AddNumberToObject(o, "noise_percent", c->noise);
		}
		cJSON_AddItemToArray(cases, o);
		count[c->v]++;
	}
	cJSON_AddItemToObject(root, "cases", cases);
	cJSON_AddNumberToObject(sum, "cases", n);
	for (int v = 0; v < 4; v++)
		cJSON_AddNumberToObject(sum, verdicts[v], count[v]);
	cJSON_AddItemToObject(root, "summary", sum);
	char *text = cJSON_Print(root);
	cJSON_Delete(root);
	if (!text)
		return -1;
	puts(text);
	free(text);
	return 0;
}

/* Compare the chosen cases of base and now, print the changes. Returns
 * ACCEL_EXIT_REGRESSION, 0, or -1 when out of memory. */
static int compare(const struct job *job, const cJSON *base, const cJSON *now)
{
	char bmach[512], nmach[512];
	machine_text(base, bmach, sizeof bmach);
	machine_text(now, nmach, sizeof nmach);
	if (strcmp(bmach, nmach) && !job->common.quiet)
		accel_msg_warn("%s was measured on another machine (%s; %s: %s): a change may be the machine's",
			       job->compare, bmach, job->against ? job->against : "here", nmach);
	struct change *ch;
	int n = diff(job, base, now, &ch), rc = 0;
	if (n < 0)
		return -1;
	if (job->common.json)
		rc = print_diff(job, base, now, bmach, nmach, ch, n);
	else if (!job->common.quiet)
		print_changes(ch, n, job->max_regression);
	for (int i = 0; i < n && !rc; i++)
		if (ch[i].v == REGRESSED)
			rc = ACCEL_EXIT_REGRESSION;
	free(ch);
	return rc;
}

int compare_run(struct bench *b, cJSON *base, struct kase *cs, int n, const char **skipped, int nskipped)
{
	cJSON *now = results_json(b, cs, n, skipped, nskipped);
	int rc = now ? compare(b->job, base, now) : -1;
	cJSON_Delete(now);
	return rc;
}

int compare_files(struct job *job)
{
	cJSON *base = load(job->compare), *now = base ? load(job->against) : NULL;
	int rc = ACCEL_EXIT_FAILURE;
	if (now && !(rc = operands_match(job, base)) && (rc = compare(job, base, now)) < 0) {
		accel_msg_error("out of memory");
		rc = ACCEL_EXIT_FAILURE;
	}
	cJSON_Delete(base);
	cJSON_Delete(now);
	if (rc != ACCEL_EXIT_FAILURE && (fflush(stdout) != 0 || ferror(stdout)) && errno != EPIPE) {
		accel_msg_error("cannot write stdout: %s", strerror(errno ? errno : EIO));
		rc = ACCEL_EXIT_FAILURE;
	}
	return rc;
}
