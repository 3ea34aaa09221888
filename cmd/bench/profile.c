/*
 * profile.c - --save: the measurements of the cases that ran on one engine
 * into the routing profile the programs' router reads (accel(7), PROFILE),
 * merged with the entries it holds for this machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

int profile_target(struct bench *b)
{
	if (accel_profile_path(b->job->save_path, b->profile, sizeof b->profile) < 0) {
		accel_msg_error("--save: no profile path: set ACCEL_PROFILE, XDG_CACHE_HOME or HOME, or give --save=FILE");
		return -1;
	}
	return 0;
}

/* The one engine case c ran on: its -b item routes to that engine alone,
 * which ran its units; NULL for a case of engines together, or one that
 * failed. */
static const struct accel_engine *one_engine(struct bench *b, const struct kase *c)
{
	struct accel_op op = { .name = op_lib(c->op), .ext = op_ext(b, c->op) };
	struct accel_route_req req = { &op, c->engine, -1, NULL };
	struct accel_route r;
	if (c->failed || !c->ours.n || accel_route(b->ctx, &req, &r) < 0 || r.nranked != 1 ||
	    strcmp(r.entries[0].name, c->ran))
		return NULL;
	return r.entries[0].engine;
}

/* Put x into the entries *all of *n, replacing the one for the same
 * operation, engine and size class. 0, or -1 when out of memory. */
static int merge(struct accel_profile_entry **all, int *n, const struct accel_profile_entry *x)
{
	for (int i = 0; i < *n; i++)
		if (!strcmp((*all)[i].op, x->op) && !strcmp((*all)[i].key, x->key) &&
		    !strcmp((*all)[i].size_class, x->size_class)) {
			(*all)[i] = *x;
			return 0;
		}
	struct accel_profile_entry *grown = realloc(*all, (size_t)(*n + 1) * sizeof *grown);
	if (!grown)
		return -1;
	*all = grown;
	grown[(*n)++] = *x;
	return 0;
}

int save_profile(struct bench *b, const struct kase *cs, int ncases)
{
	const char *path = b->profile;
	int quiet = b->job->common.quiet, nfresh = 0, nold, rc = -1;
	struct accel_profile_entry *fresh = NULL, *old = NULL;
	/* Median MB/s of the input the program reads, under the size class
	 * of that input, as the router looks it up: the engines' keys are
	 * taken before discovery below can rename engines. */
	for (int i = 0; i < ncases; i++) {
		const struct kase *c = &cs[i];
		const struct accel_engine *e = one_engine(b, c);
		/* A stream's runs side by side are no figure of one run. */
		if (!e || op_stream(c->op))
			continue;
		double mbps = rate(&c->ours, (double)c->in_bytes / 1e6).median;
		int put = accel_profile_put(b->ctx, &fresh, &nfresh, c->op->name, e,
					    accel_size_class((int64_t)c->in_bytes), mbps);
		if (put == ACCEL_ENOMEM) {
			accel_msg_error("out of memory");
			goto out;
		}
	}
	if (!nfresh) {
		if (!quiet)
			fprintf(stderr, "%s: profile %s: 0 measurements saved (no case ran on one engine)\n",
				cli.prog, path);
		rc = 0;
		goto out;
	}
	/* The machine recorded is every device found. */
	accel_discover(b->ctx, NULL);
	char why[320];
	nold = accel_profile_load_for(b->ctx, path, &old, why, sizeof why);
	for (int i = 0; i < nold; i++)
		if (!old[i].key[0]) {
			snprintf(why, sizeof why, "schema 1, no machine recorded");
			nold = ACCEL_ENOTSUP;
		}
	if (nold == ACCEL_ENOTSUP) {
		if (!quiet)
			fprintf(stderr, "%s: profile %s: %s: replaced\n", cli.prog, path, why);
		nold = 0;
	} else if (nold < 0) {
		accel_msg_error("profile %s: %s: not replaced", path, why);
		goto out;
	}
	for (int i = 0; i < nfresh; i++)
		if (merge(&old, &nold, &fresh[i]) < 0) {
			accel_msg_error("out of memory");
			goto out;
		}
	char err[512];
	if (accel_profile_save(b->ctx, path, old, nold, err, sizeof err) < 0) {
		accel_msg_error("%s", err);
		goto out;
	}
	if (!quiet)
		fprintf(stderr, "%s: profile %s: %d measurement%s saved\n", cli.prog, path, nfresh,
			nfresh == 1 ? "" : "s");
	rc = 0;
out:
	free(fresh);
	free(old);
	return rc;
}
