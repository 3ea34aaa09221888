/*
 * fault.c - fault injection for tests. $ACCEL_FAULT lists rules separated by
 * ';', each ENGINE:UNITS, where ENGINE is an engine name ("cpu",
 * "vulkan:gpu0") or a backend name (matching all its engines) and UNITS is
 * '*' or a comma list of unit numbers and ranges ("3", "0,5-7"). A matching
 * engine fails on those units with an "injected fault" error, on every
 * attempt. Documented in accel(7), section TESTING.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "core.h"

#define MAX_RULES 16
#define MAX_RANGES 16

struct rule {
	char engine[40];
	int all;
	int nranges;
	uint64_t lo[MAX_RANGES], hi[MAX_RANGES];
};

static struct rule rules[MAX_RULES];
static int nrules;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int parse_rule(char *s, struct rule *r)
{
	char *colon = strrchr(s, ':');
	if (!colon || colon == s)
		return ACCEL_EINVAL;
	*colon = 0;
	memset(r, 0, sizeof *r);
	core_strlcpy(r->engine, s, sizeof r->engine);
	char *units = colon + 1, *save = NULL;
	if (!strcmp(units, "*")) {
		r->all = 1;
		return 0;
	}
	for (char *t = strtok_r(units, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *end;
		if (r->nranges == MAX_RANGES || *t < '0' || *t > '9')
			return ACCEL_EINVAL;
		uint64_t lo = strtoull(t, &end, 10), hi = lo;
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				return ACCEL_EINVAL;
			hi = strtoull(end + 1, &end, 10);
		}
		if (*end || hi < lo)
			return ACCEL_EINVAL;
		r->lo[r->nranges] = lo;
		r->hi[r->nranges++] = hi;
	}
	return r->nranges ? 0 : ACCEL_EINVAL;
}

int core_fault_parse(const char *spec)
{
	nrules = 0;
	if (!spec || !*spec)
		return 0;
	char *copy = strdup(spec), *save = NULL;
	if (!copy)
		return ACCEL_ENOMEM;
	int rc = 0;
	for (char *t = strtok_r(copy, ";", &save); t && !rc; t = strtok_r(NULL, ";", &save)) {
		if (nrules == MAX_RULES || parse_rule(t, &rules[nrules]) < 0)
			rc = ACCEL_EINVAL;
		else
			nrules++;
	}
	free(copy);
	if (rc)
		nrules = 0;
	return rc;
}

static int load_rc;

static void load(void)
{
	load_rc = core_fault_parse(getenv("ACCEL_FAULT"));
}

int core_fault_status(void)
{
	pthread_once(&once, load);
	return load_rc;
}

static int engine_match(const char *rule, const char *engine)
{
	if (!strcmp(rule, engine))
		return 1;
	size_t n = strlen(rule);
	return !strncmp(rule, engine, n) && engine[n] == ':';
}

int core_fault_hit(const char *engine, uint64_t seq)
{
	pthread_once(&once, load);
	for (int i = 0; i < nrules; i++) {
		if (!engine_match(rules[i].engine, engine))
			continue;
		if (rules[i].all)
			return 1;
		for (int k = 0; k < rules[i].nranges; k++)
			if (seq >= rules[i].lo[k] && seq <= rules[i].hi[k])
				return 1;
	}
	return 0;
}
