/*
 * fault.c - fault injection for tests. $ACCEL_FAULT lists rules separated by
 * ';', each ENGINE:UNITS, where ENGINE is an engine name ("cpu",
 * "vulkan:gpu0", "onnxruntime.cuda:gpu0"), a backend name (matching all its
 * engines, every variant) or BACKEND.VARIANT (that variant's), and UNITS is
 * '*' or a comma list of unit numbers and ranges ("3", "0,5-7"). A matching
 * engine fails on those units with an "injected fault" error, on every
 * attempt. ENGINE@STAGE:UNITS narrows a rule to one stage of a program
 * whose engine runs several (accel_fault_hit_stage). Documented in
 * accel(7), section TESTING.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <accel/fault.h>
#include <accel/stream.h>
#include "core.h"

#define MAX_RULES 16
#define MAX_RANGES 16

struct rule {
	char engine[40];
	char stage[16];           /* "": every stage */
	int all;
	int nranges;
	uint64_t lo[MAX_RANGES], hi[MAX_RANGES];
};

static struct rule rules[MAX_RULES];
static int nrules;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char parse_msg[256];   /* why the last parse failed */

static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(parse_msg, sizeof parse_msg, fmt, ap);
	va_end(ap);
	return ACCEL_EINVAL;
}

/* A unit number: digits only, within 64 bits. */
static int unit_number(const char *t, const char *end, uint64_t *v)
{
	if (t == end)
		return ACCEL_EINVAL;
	uint64_t n = 0;
	for (; t < end; t++) {
		if (*t < '0' || *t > '9' || n > (UINT64_MAX - (uint64_t)(*t - '0')) / 10)
			return ACCEL_EINVAL;
		n = n * 10 + (uint64_t)(*t - '0');
	}
	*v = n;
	return 0;
}

/* One ENGINE:UNITS rule, s[0..n). */
static int parse_rule(const char *s, size_t n, struct rule *r)
{
	const char *colon = NULL;
	for (const char *p = s; p < s + n; p++)
		if (*p == ':')
			colon = p;
	if (!colon)
		return bad("'%.*s' is not ENGINE:UNITS", (int)n, s);
	if (colon == s)
		return bad("empty engine name in '%.*s'", (int)n, s);
	memset(r, 0, sizeof *r);
	const char *at = memchr(s, '@', (size_t)(colon - s));
	const char *name_end = at ? at : colon;
	if (name_end == s)
		return bad("empty engine name in '%.*s'", (int)n, s);
	if ((size_t)(name_end - s) >= sizeof r->engine)
		return bad("engine name too long in '%.*s'", (int)n, s);
	memcpy(r->engine, s, (size_t)(name_end - s));
	if (at && colon - at == 1)
		return bad("empty stage name in '%.*s'", (int)n, s);
	if (at && (size_t)(colon - at - 1) >= sizeof r->stage)
		return bad("stage name too long in '%.*s'", (int)n, s);
	if (at)
		memcpy(r->stage, at + 1, (size_t)(colon - at - 1));
	const char *u = colon + 1, *end = s + n;
	if (u == end)
		return bad("no unit numbers after ':' in '%.*s'", (int)n, s);
	if (end - u == 1 && *u == '*') {
		r->all = 1;
		return 0;
	}
	while (u <= end) {
		const char *comma = memchr(u, ',', (size_t)(end - u));
		const char *t_end = comma ? comma : end;
		if (t_end == u)
			return bad("empty unit number in '%.*s'", (int)n, s);
		if (r->nranges == MAX_RANGES)
			return bad("more than %d unit numbers and ranges in '%.*s'", MAX_RANGES, (int)n, s);
		const char *dash = memchr(u, '-', (size_t)(t_end - u));
		uint64_t lo, hi;
		if (unit_number(u, dash ? dash : t_end, &lo) < 0 ||
		    (dash && unit_number(dash + 1, t_end, &hi) < 0))
			return bad("'%.*s' is not a unit number or range (3, 5-7) in '%.*s'", (int)(t_end - u), u,
				   (int)n, s);
		if (!dash)
			hi = lo;
		if (hi < lo)
			return bad("range '%.*s' ends before it starts in '%.*s'", (int)(t_end - u), u, (int)n, s);
		r->lo[r->nranges] = lo;
		r->hi[r->nranges++] = hi;
		u = t_end + 1;
	}
	return 0;
}

int core_fault_parse(const char *spec)
{
	nrules = 0;
	parse_msg[0] = 0;
	if (!spec || !*spec)
		return 0;
	int rc = 0, n = 0;
	for (const char *t = spec; !rc;) {
		const char *semi = strchr(t, ';');
		size_t len = semi ? (size_t)(semi - t) : strlen(t);
		if (!len)
			rc = bad("empty rule in '%s'", spec);
		else if (n == MAX_RULES)
			rc = bad("more than %d rules", MAX_RULES);
		else if ((rc = parse_rule(t, len, &rules[n])) == 0)
			n++;
		if (!semi)
			break;
		t = semi + 1;
	}
	nrules = rc ? 0 : n;
	return rc;
}

const char *core_fault_error(void)
{
	return parse_msg;
}

static int load_rc;
static char load_msg[256];

static void load(void)
{
	load_rc = core_fault_parse(getenv("ACCEL_FAULT"));
	core_strlcpy(load_msg, parse_msg, sizeof load_msg);
}

int core_fault_status(void)
{
	pthread_once(&once, load);
	return load_rc;
}

/* Whether rule engine name `name` can match anything in ctx: a registered
 * backend, an engine found, or BACKEND:DEVICE of a backend not probed yet. */
static int engine_known(const struct accel_ctx *ctx, const char *name)
{
	for (int i = 0; i < ctx->nengines; i++)
		if (!strcmp(ctx->engines[i].name, name))
			return 1;
	char backend[40], variant[16], device[40];
	core_engine_split(name, backend, sizeof backend, variant, sizeof variant, device, sizeof device);
	int i = core_backend_index(ctx, backend);
	if (i < 0)
		return 0;
	const struct accel_backend_status *b = &ctx->backends[i];
	if (!b->backend || !b->probed)
		return b->backend || !device[0];
	/* A probed backend: an engine of that variant (any, without one). */
	for (int k = 0; !device[0] && k < ctx->nengines; k++)
		if (ctx->engines[k].backend == b->backend && (!variant[0] || !strcmp(ctx->engines[k].variant, variant)))
			return 1;
	return !device[0] && !variant[0];
}

int accel_fault_check(const struct accel_ctx *ctx, char *err, size_t len)
{
	pthread_once(&once, load);
	if (load_rc < 0) {
		snprintf(err, len, "ACCEL_FAULT is malformed: %s (see accel(7), TESTING)", load_msg);
		return ACCEL_EINVAL;
	}
	for (int i = 0; ctx && i < nrules; i++)
		if (!engine_known(ctx, rules[i].engine)) {
			snprintf(err, len, "ACCEL_FAULT: no engine or backend named '%s' (see accel(7), TESTING)",
				 rules[i].engine);
			return ACCEL_EINVAL;
		}
	return 0;
}

/* Rule "b" matches b's engines of every variant ("b:gpu0", "b.v:gpu0"),
 * "b.v" those of variant v; a full name matches itself. */
static int engine_match(const char *rule, const char *engine)
{
	if (!strcmp(rule, engine))
		return 1;
	size_t n = strlen(rule);
	if (strncmp(rule, engine, n))
		return 0;
	return engine[n] == ':' || (engine[n] == '.' && !strchr(rule, '.') && !strchr(rule, ':'));
}

int core_fault_hit(const char *engine, uint64_t seq)
{
	return core_fault_hit_stage(engine, NULL, seq);
}

int core_fault_hit_stage(const char *engine, const char *stage, uint64_t seq)
{
	pthread_once(&once, load);
	for (int i = 0; i < nrules; i++) {
		if (!engine_match(rules[i].engine, engine))
			continue;
		if (rules[i].stage[0] && (!stage || strcmp(rules[i].stage, stage)))
			continue;
		if (rules[i].all)
			return 1;
		for (int k = 0; k < rules[i].nranges; k++)
			if (seq >= rules[i].lo[k] && seq <= rules[i].hi[k])
				return 1;
	}
	return 0;
}

int accel_fault_hit(const char *engine, uint64_t unit)
{
	return core_fault_status() == 0 && core_fault_hit(engine, unit);
}

int accel_fault_hit_stage(const char *engine, const char *stage, uint64_t unit)
{
	return core_fault_status() == 0 && core_fault_hit_stage(engine, stage, unit);
}
