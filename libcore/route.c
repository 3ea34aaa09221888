/*
 * route.c - the router: ranks the engines for one operation, with a reason
 * for each rank and for every engine left out.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <accel/report.h>
#include "core.h"

static struct accel_route_entry *add_entry(struct accel_route *r, const struct accel_engine *e,
					   const char *name)
{
	if (r->n == ACCEL_ROUTE_MAX)
		return NULL;
	struct accel_route_entry *x = &r->entries[r->n++];
	memset(x, 0, sizeof *x);
	x->engine = e;
	core_strlcpy(x->name, e ? e->name : name, sizeof x->name);
	return x;
}

/* Whether engine e (the k-th of its backend) matches selector sel: "" all,
 * digits the k-th, else a device id ("gpu1"). */
static int selector_match(struct accel_ctx *ctx, const struct accel_engine *e, int k, const char *sel)
{
	if (!*sel)
		return 1;
	if (isdigit((unsigned char)*sel))
		return atoi(sel) == k;
	return !strcmp(ctx->devices[e->device].id, sel);
}

static int cmp_entry(const void *a, const void *b)
{
	const struct accel_route_entry *x = a, *y = b;
	if (x->usable != y->usable)
		return y->usable - x->usable;
	return (y->mbps > x->mbps) - (y->mbps < x->mbps);
}

/* Run verify() for entries [0, upto) of r that wait for it (check): one
 * that fails is left out with the reason. Returns how many failed. */
static int verify_entries(const struct accel_op *op, struct accel_route *r, int upto)
{
	int failed = 0;
	for (int i = 0; i < upto && i < r->n; i++) {
		struct accel_route_entry *x = &r->entries[i];
		if (!x->usable || !x->check)
			continue;
		char why[sizeof x->reason] = "";
		x->check = 0;
		if (x->engine->backend->verify(x->engine, op, why, sizeof why) < 0) {
			x->usable = 0;
			x->mbps = 0;
			core_strlcpy(x->reason, why[0] ? why : "cannot run this operation", sizeof x->reason);
			failed++;
		}
	}
	return failed;
}

/* Rank one forced token "name[.variant][:selector]": without a variant,
 * every variant of the backend; "cpu" for an operation the built-in
 * backend does not offer, the CPU device's engine for it. An engine on a
 * software device is taken only when the token names its device by id;
 * when a token finds nothing else, r->no_engine says so. */
static void route_forced(struct accel_ctx *ctx, const struct accel_op *op, const char *tok,
			 struct accel_route *r)
{
	char name[32], variant[16], sel[32];
	core_engine_split(tok, name, sizeof name, variant, sizeof variant, sel, sizeof sel);
	int bi = core_backend_index(ctx, name);
	struct accel_route_entry *x;
	if (bi < 0) {
		if ((x = add_entry(r, NULL, tok)))
			snprintf(x->reason, sizeof x->reason, "no backend named '%s' here", name);
		return;
	}
	struct accel_backend_status *s = &ctx->backends[bi];
	if (s->backend == &accel_backend_cpu && !variant[0] && !core_backend_offers(s->backend, op->name)) {
		/* "cpu" for an operation the built-in backend lacks: the CPU
		 * device's engine for it, as --fallback cpu picks (fftw:cpu0 for
		 * the FFTs), so "cpu+cuda" means the CPU and the GPU. */
		const struct accel_engine *e = accel_cpu_engine_for(ctx, op);
		int dup = 0;
		for (int j = 0; e && j < r->n; j++)
			dup |= r->entries[j].engine == e;
		if (dup)
			return;
		if (e && !selector_match(ctx, e, 0, sel))
			e = NULL;
		if (!(x = add_entry(r, e, tok)))
			return;
		if (!e) {
			snprintf(x->reason, sizeof x->reason, "no engine on the CPU device%s%s runs this operation",
				 sel[0] ? " matching " : "", sel);
			return;
		}
		double prior = 0;
		char why[128] = "";
		e->backend->supports(e, op, &prior, why, sizeof why);
		x->usable = 1;
		x->check = e->backend->verify != NULL;
		x->mbps = prior;
		snprintf(x->reason, sizeof x->reason, "named by --backend (cpu: the CPU device's engine for %s)", op->name);
		return;
	}
	if (!s->backend || !core_backend_offers(s->backend, op->name)) {
		if ((x = add_entry(r, NULL, tok)))
			core_strlcpy(x->reason, !s->backend ? s->reason : "does not offer this operation",
				     sizeof x->reason);
		return;
	}
	/* Named: its devices that could only be software are looked for too
	 * (accel_probe_software_devices). */
	core_probe_named(ctx, bi);
	if (s->rc < 0) {
		if ((x = add_entry(r, NULL, tok)))
			core_strlcpy(x->reason, s->reason, sizeof x->reason);
		return;
	}
	int k = 0, found = 0, hardware = 0, nsoft = 0;
	char soft[160] = "";
	for (int i = 0; i < ctx->nengines; i++) {
		const struct accel_engine *e = &ctx->engines[i];
		if (e->backend != s->backend || (variant[0] && strcmp(e->variant, variant)))
			continue;
		if (!selector_match(ctx, e, k++, sel))
			continue;
		found = 1;
		int named = sel[0] && !isdigit((unsigned char)sel[0]);
		if (e->software && !named) {
			size_t n = strlen(soft);
			snprintf(soft + n, sizeof soft - n, "%s%s", nsoft++ ? ", " : "", e->name);
		} else {
			hardware = 1;
		}
		/* Once on the route; one left out by an earlier item is taken
		 * when this one names it. */
		x = NULL;
		for (int j = 0; j < r->n && !x; j++)
			if (r->entries[j].engine == e)
				x = &r->entries[j];
		if (x ? x->usable || (e->software && !named) : !(x = add_entry(r, e, NULL)))
			continue;
		if (e->software && !named) {
			snprintf(x->reason, sizeof x->reason, "software device: name it in full (%s) to use it", e->name);
			continue;
		}
		char why[128] = "";
		double prior = 0;
		if (e->backend->supports(e, op, &prior, why, sizeof why) < 0) {
			snprintf(x->reason, sizeof x->reason, "%s", why);
			continue;
		}
		x->usable = 1;
		x->check = e->backend->verify != NULL;
		x->mbps = prior;
		snprintf(x->reason, sizeof x->reason, "named by --backend%s", e->software ? " (software device)" : "");
	}
	if (!found && (x = add_entry(r, NULL, tok)))
		snprintf(x->reason, sizeof x->reason, "no %s%s%s engine matches '%s'", name, variant[0] ? "." : "",
			 variant, sel);
	if (nsoft && !hardware && !r->no_engine[0])
		snprintf(r->no_engine, sizeof r->no_engine, "--backend %s: only %s (%s); name %s in full to use it", tok,
			 nsoft > 1 ? "software devices" : "a software device", soft, nsoft > 1 ? "one" : "it");
}

/* The profile's entries for an auto route (*prof malloc'd), or 0 when
 * there is none; one that is invalid or from another machine is ignored,
 * its reason in r->profile_note. */
static int load_profile(struct accel_ctx *ctx, const struct accel_route_req *req, struct accel_route *r,
			struct accel_profile_entry **prof)
{
	char path[4096], why[256];
	*prof = NULL;
	if (accel_profile_path(req->profile, path, sizeof path) < 0)
		return 0;
	int n = accel_profile_load_for(ctx, path, prof, why, sizeof why);
	if (n < 0) {
		size_t cap = sizeof r->profile_note;
		if (snprintf(r->profile_note, cap, "profile %s ignored: %s", path, why) >= (int)cap)
			memcpy(r->profile_note + cap - 4, "...", 4);
		return 0;
	}
	return n;
}

/* Whether the profile measured r->entries[i] for size class cls itself
 * (not another class), at *mbps. */
static int measured_here(struct accel_ctx *ctx, const struct accel_route *r, int i,
			 const struct accel_profile_entry *prof, int nprof, const char *cls, double *mbps)
{
	const struct accel_engine *e = r->entries[i].engine;
	char key[sizeof prof->key], used[16] = "";
	accel_engine_key(ctx, e, key, sizeof key);
	*mbps = accel_profile_lookup(prof, nprof, r->op, key, e->name, cls, used, sizeof used);
	return *mbps > 0 && !strcmp(used, cls) && r->entries[i].mbps == *mbps;
}

/* Co-execution under auto: the leading ranked engines, each on a device of
 * its own, that the profile measured for this size class at
 * ACCEL_SHARE_MIN of the best or more serve the stream together, so their
 * speeds add up. Engines ranked by priors never share. */
static void share_decision(struct accel_ctx *ctx, struct accel_route *r,
			   const struct accel_profile_entry *prof, int nprof, const char *cls)
{
	double best, m;
	r->nserving = r->nranked ? 1 : 0;
	r->shared = 0;
	if (r->nranked < 2 || !measured_here(ctx, r, 0, prof, nprof, cls, &best))
		return;
	int k = 1;
	for (; k < r->nranked; k++) {
		int dup = 0;
		for (int j = 0; j < k; j++)
			dup |= r->entries[j].engine->device == r->entries[k].engine->device;
		if (dup || !measured_here(ctx, r, k, prof, nprof, cls, &m) || m < ACCEL_SHARE_MIN * best)
			break;
	}
	if (k > 1) {
		r->nserving = k;
		r->shared = 1;
	}
}

static int rank_auto(struct accel_ctx *ctx, const struct accel_route_req *req, struct accel_route *r, int small,
		     int all);
static int device_only(const struct accel_backend *b);
static int software_capable(const struct accel_backend *b);

/* Backend b's prior_bounds for op: its MB/s, or 0 when it gives none. */
static double prior_bound(const struct accel_backend *b, const char *op)
{
	for (const struct accel_prior_bound *p = b->prior_bounds; p && p->op; p++)
		if (!strcmp(p->op, op))
			return p->mbps;
	return 0;
}

/* Whether status s is a backend that only finds GPUs and NPUs, offers op
 * and was left unprobed (by rank_auto's small pass). */
static int device_backend_unprobed(const struct accel_backend_status *s, const char *op)
{
	return s->backend && !s->probed && core_backend_offers(s->backend, op) && device_only(s->backend);
}

/* Whether the profile entries prof[n] hold a figure of backend `name` for
 * op: an entry whose key is "NAME@..." or "NAME.VARIANT@..." (schema 1:
 * whose engine is "NAME:..." or "NAME.VARIANT:..."). */
static int profile_measured(const struct accel_profile_entry *prof, int n, const char *op, const char *name)
{
	size_t len = strlen(name);
	for (int i = 0; i < n; i++) {
		const char *id = prof[i].key[0] ? prof[i].key : prof[i].engine;
		char sep = prof[i].key[0] ? '@' : ':';
		if (!strcmp(prof[i].op, op) && !strncmp(id, name, len) && (id[len] == sep || id[len] == '.'))
			return 1;
	}
	return 0;
}

/* Whether r, ranked without the backends that only find GPUs and NPUs
 * (rank_auto's small pass), is what a route with them would lead with, so
 * their drivers need not start (each costs 0.1-1 s): every one of them
 * that could find a device (not a software_capable one on a machine
 * without a GPU or NPU) either could not finish a job of `size` bytes
 * (> 0: known) sooner than r's first engine even with free transfers
 * (size_cut), or gives a prior_bound for the operation that is at most the
 * MB/s of r's first engine while the profile measured none of its engines
 * for it. *size_cut: 1 when the job's size decided, 0 when the bounds did. */
static int devices_cannot_lead(struct accel_ctx *ctx, const struct accel_route_req *req, struct accel_route *r,
			       int *size_cut)
{
	const struct accel_route_entry *top = &r->entries[0];
	const char *op = req->op->name;
	if (!r->n || !top->usable || !(top->mbps > 0))
		return 0;
	*size_cut = req->size_hint > 0 && top->mbps * 1e6 * ACCEL_DEVICE_START_S >= (double)req->size_hint;
	if (*size_cut)
		return 1;
	struct accel_profile_entry *prof = NULL;
	int nprof = -1, lead = 0;   /* lead: one of them could lead */
	for (int b = 0; b < ctx->nbackends && !lead; b++) {
		const struct accel_backend_status *s = &ctx->backends[b];
		if (!device_backend_unprobed(s, op) || (software_capable(s->backend) && !core_may_have_devices(ctx)))
			continue;
		double bound = prior_bound(s->backend, op);
		if (bound > 0 && bound <= top->mbps && nprof < 0) {
			/* Read once, for the first bound that would leave one out. */
			char path[4096], why[256];
			nprof = accel_profile_path(req->profile, path, sizeof path) < 0 ? 0 :
				accel_profile_load_for(ctx, path, &prof, why, sizeof why);
			if (nprof < 0)      /* ignored: the route's note says why */
				nprof = 0;
		}
		lead = !(bound > 0) || bound > top->mbps || profile_measured(prof, nprof, op, s->name);
	}
	free(prof);
	return !lead;
}

/* The reason of the backends that only find GPUs and NPUs, left unprobed
 * by rank_auto's small pass because devices_cannot_lead (size_cut: by the
 * job's `size`, else by their prior_bounds). */
static void not_probed_reason(struct accel_ctx *ctx, const char *op, struct accel_route *r, int64_t size,
			      int size_cut)
{
	const struct accel_route_entry *top = &r->entries[0];
	for (int i = 0; i < r->n; i++) {
		struct accel_route_entry *x = &r->entries[i];
		int b = x->engine ? -1 : core_backend_index(ctx, x->name);
		const struct accel_backend_status *s = b < 0 ? NULL : &ctx->backends[b];
		if (!s || !device_backend_unprobed(s, op))
			continue;
		if (software_capable(s->backend) && !core_may_have_devices(ctx))
			snprintf(x->reason, sizeof x->reason,
				 "not probed: no GPU or NPU on this machine, only software devices could be found (name it with --backend to use it)");
		else if (size_cut)
			snprintf(x->reason, sizeof x->reason,
				 "not probed: %s at %.0f MB/s ends a job of %lld bytes within a device's %.1f s of start-up (name it with --backend to use it)",
				 top->name, top->mbps, (long long)size, ACCEL_DEVICE_START_S);
		else
			snprintf(x->reason, sizeof x->reason,
				 "not probed: %s at %.0f MB/s is ahead of its best prior, %.0f MB/s, unmeasured (name it with --backend to use it)",
				 top->name, top->mbps, prior_bound(s->backend, op));
	}
}

int accel_route(struct accel_ctx *ctx, const struct accel_route_req *req, struct accel_route *r)
{
	const struct accel_op *op = req->op;
	memset(r, 0, sizeof *r);
	core_strlcpy(r->op, op->name, sizeof r->op);
	const char *list = req->backend ? req->backend : getenv("ACCEL_BACKEND");
	if (!list || !*list)
		list = "auto";

	if (strcmp(list, "auto")) {
		r->forced = 1;
		/* Items are split by hand: an empty item is an error, which
		 * strtok would hide. */
		int ntok = 0;
		for (const char *t = list;; ntok++) {
			size_t n = strcspn(t, ",+");
			char tok[64];
			if (!n || n >= sizeof tok)
				return ACCEL_EINVAL;
			memcpy(tok, t, n);
			tok[n] = 0;
			if (!strcmp(tok, "auto"))
				return ACCEL_EINVAL;
			route_forced(ctx, op, tok, r);
			if (!t[n])
				break;
			t += n + 1;
		}
		/* Every engine named is checked now (verify): the user asked
		 * for it, and its reason is the error when none is left. */
		verify_entries(op, r, r->n);
		/* Keep the user's order among usable engines; left-out ones last. */
		struct accel_route_entry tmp[ACCEL_ROUTE_MAX];
		int k = 0;
		for (int pass = 1; pass >= 0; pass--)
			for (int i = 0; i < r->n; i++)
				if (r->entries[i].usable == pass)
					tmp[k++] = r->entries[i];
		memcpy(r->entries, tmp, sizeof tmp[0] * (size_t)r->n);
		for (int i = 0; i < r->n; i++)
			r->nranked += r->entries[i].usable;
		r->shared = r->nranked > 1;
		if (r->nranked)
			r->no_engine[0] = 0;
		return r->nranked ? 0 : ACCEL_ENOENGINE;
	}

	/* A small job stays on the CPU under auto: backends that only find
	 * GPUs and NPUs would rank after it, so their drivers are not started
	 * for it (that costs more than the job), unless no other engine can
	 * run it. So does any other job where the route without them shows
	 * that a device cannot lead (devices_cannot_lead): a job of known size
	 * that the best other engine ends within ACCEL_DEVICE_START_S, or an
	 * engine already ranked above the most those backends offer (16 cores
	 * of FFTW against a GPU's FFT, a pipe's job of unknown size too). */
	int small = req->size_hint >= 0 && req->size_hint < (int64_t)ACCEL_SMALL_JOB_BYTES, size_cut = 0;
	int rc = rank_auto(ctx, req, r, 1, 0);
	if (rc == 0 && !small && devices_cannot_lead(ctx, req, r, &size_cut))
		not_probed_reason(ctx, op->name, r, req->size_hint, size_cut);
	else if (!small)
		rc = ACCEL_ENOENGINE;
	if (rc == ACCEL_ENOENGINE)
		rc = rank_auto(ctx, req, r, 0, 0);
	/* Nothing else runs it: start them all, for an engine or their
	 * reasons. */
	if (rc == ACCEL_ENOENGINE)
		rc = rank_auto(ctx, req, r, 0, 1);
	return rc;
}

/* Whether backend b only finds GPUs and NPUs (so runs no CPU engine). */
static int device_only(const struct accel_backend *b)
{
	unsigned dev = ACCEL_CLASS_BIT(ACCEL_CLASS_GPU) | ACCEL_CLASS_BIT(ACCEL_CLASS_NPU);
	return b->classes && !(b->classes & ~dev);
}

/*
 * Whether backend b only finds GPUs and NPUs through an API that has
 * implementations on the CPU (Vulkan: Mesa's lavapipe; OpenCL: PoCL), so
 * that on a machine with neither it finds only software devices.
 */
static int software_capable(const struct accel_backend *b)
{
	if (!device_only(b) || !b->apis)
		return 0;
	for (const struct accel_api_info *a = b->apis; a->name; a++)
		if (!strcmp(a->name, "vulkan") || !strcmp(a->name, "opencl"))
			return 1;
	return 0;
}


/* One ranking pass of an auto route into r (reset first): small leaves
 * the backends that only find GPUs and NPUs unprobed; all starts too
 * those that could find only software devices here. 0, or
 * ACCEL_ENOENGINE when no engine is ranked. */
static int rank_auto(struct accel_ctx *ctx, const struct accel_route_req *req, struct accel_route *r, int small,
		     int all)
{
	const struct accel_op *op = req->op;
	memset(r, 0, sizeof *r);
	core_strlcpy(r->op, op->name, sizeof r->op);
	int devices = all ? 1 : -1;
	for (int b = 0; b < ctx->nbackends; b++) {
		const struct accel_backend *be = ctx->backends[b].backend;
		if (!be || !core_backend_offers(be, op->name) || (small && device_only(be)))
			continue;
		if (software_capable(be) && devices < 0)
			devices = core_may_have_devices(ctx);
		if (!software_capable(be) || devices)
			accel_probe_backend(ctx, ctx->backends[b].name);
	}
	struct accel_profile_entry *prof = NULL;
	int nprof = load_profile(ctx, req, r, &prof);
	const char *cls = accel_size_class(req->size_hint);
	if (!strcmp(cls, "unknown"))
		cls = "large";

	for (int b = 0; b < ctx->nbackends; b++) {
		struct accel_backend_status *s = &ctx->backends[b];
		struct accel_route_entry *x;
		if (!s->backend || !core_backend_offers(s->backend, op->name)) {
			if ((x = add_entry(r, NULL, s->name)))
				core_strlcpy(x->reason, !s->backend ? s->reason : "does not offer this operation",
					     sizeof x->reason);
			continue;
		}
		if (!s->probed) {
			if ((x = add_entry(r, NULL, s->name)) && small)
				snprintf(x->reason, sizeof x->reason,
					 "not probed: a job of %lld bytes stays on the CPU (name it with --backend to use it)",
					 (long long)req->size_hint);
			else if (x)
				snprintf(x->reason, sizeof x->reason,
					 "not probed: no GPU or NPU on this machine, only software devices could be found (name it with --backend to use it)");
			continue;
		}
		if (s->rc < 0) {
			if ((x = add_entry(r, NULL, s->name)))
				core_strlcpy(x->reason, s->reason, sizeof x->reason);
			continue;
		}
		for (int i = 0; i < ctx->nengines; i++) {
			const struct accel_engine *e = &ctx->engines[i];
			if (e->backend != s->backend || !(x = add_entry(r, e, NULL)))
				continue;
			char why[128] = "", used[16] = "";
			double prior = 0;
			if (e->backend->supports(e, op, &prior, why, sizeof why) < 0) {
				snprintf(x->reason, sizeof x->reason, "%s", why);
				continue;
			}
			/* An engine on the CPU device (fftw, openssl) has no
			 * start-up or transfer to amortise. */
			int cpu = e->backend == &accel_backend_cpu || ctx->devices[e->device].cls == ACCEL_CLASS_CPU;
			char key[sizeof prof->key];
			accel_engine_key(ctx, e, key, sizeof key);
			double m = accel_profile_lookup(prof, nprof, op->name, key, e->name, cls, used, sizeof used);
			if (e->software) {
				x->mbps = 0;
				snprintf(x->reason, sizeof x->reason,
					 "software device: never preferred to native CPU code; name it in full with --backend to use it");
			} else if (!cpu && req->size_hint >= 0 && req->size_hint < (int64_t)ACCEL_SMALL_JOB_BYTES) {
				x->mbps = 0;
				snprintf(x->reason, sizeof x->reason,
					 "job of %lld bytes is too small: start-up and transfer would dominate",
					 (long long)req->size_hint);
			} else if (m > 0) {
				x->mbps = m;
				snprintf(x->reason, sizeof x->reason, "measured %.0f MB/s (profile, %s jobs)", m, used);
			} else {
				x->mbps = prior;
				int at = snprintf(x->reason, sizeof x->reason, "prior %.0f MB/s (%s)", prior,
						  why[0] ? why : "not measured");
				/* A device's start-up, paid once per run, against
				 * the bytes of a job of known size. */
				if (!cpu && req->size_hint > 0 && prior > 0 && at > 0 &&
				    (size_t)at < sizeof x->reason) {
					double mb = (double)req->size_hint / 1e6;
					x->mbps = mb / (ACCEL_DEVICE_START_S + mb / prior);
					snprintf(x->reason + at, sizeof x->reason - (size_t)at,
						 "; %.0f MB/s over %.1f MB after %.1f s of start-up", x->mbps, mb,
						 ACCEL_DEVICE_START_S);
				}
			}
			x->usable = 1;
			x->check = e->backend->verify != NULL;
			/* Demoted engines rank after the CPU but stay on the route. */
			if (x->mbps == 0)
				x->mbps = -1;
		}
	}
	/* The engines that serve first are checked now (verify), ranked
	 * again while one fails; the fallbacks behind them when the stream
	 * first opens them, if it ever does. */
	struct accel_route_entry added[ACCEL_ROUTE_MAX];
	memcpy(added, r->entries, sizeof r->entries[0] * (size_t)r->n);
	for (;;) {
		qsort(r->entries, (size_t)r->n, sizeof r->entries[0], cmp_entry);
		r->nranked = 0;
		for (int i = 0; i < r->n; i++)
			r->nranked += r->entries[i].usable;
		share_decision(ctx, r, prof, nprof, cls);
		if (!verify_entries(op, r, r->nserving > 1 ? r->nserving : 1))
			break;
		/* Ranked again in the order the entries were added, as if
		 * supports() had said what the check did: an engine left out
		 * takes its place among the others left out. */
		for (int i = 0; i < r->n; i++)
			for (int j = 0; j < r->n; j++)
				if (added[j].engine && added[j].engine == r->entries[i].engine)
					added[j] = r->entries[i];
		memcpy(r->entries, added, sizeof r->entries[0] * (size_t)r->n);
	}
	for (int i = 0; i < r->nranked; i++) {
		struct accel_route_entry *x = &r->entries[i];
		size_t n = strlen(x->reason);
		if (x->check && n < sizeof x->reason)
			snprintf(x->reason + n, sizeof x->reason - n, "; checked when first used");
	}
	free(prof);
	return r->nranked ? 0 : ACCEL_ENOENGINE;
}

void accel_route_print(const struct accel_route *r, FILE *f)
{
	fprintf(f, "route for %s (%s):\n", r->op, r->forced ? "--backend" : "auto");
	if (r->profile_note[0])
		fprintf(f, "  %s\n", r->profile_note);
	for (int i = 0; i < r->n; i++) {
		const struct accel_route_entry *x = &r->entries[i];
		if (x->usable)
			fprintf(f, "  %d. %-16s %s\n", i + 1, x->name, x->reason);
		else
			fprintf(f, "  -  %-16s left out: %s\n", x->name, x->reason);
	}
	if (!r->forced && r->nserving > 1)
		fprintf(f, "  engines 1 to %d serve the stream together: the profile measured each at %.0f%%"
			" of the best or more\n", r->nserving, ACCEL_SHARE_MIN * 100);
}

int accel_route_job(struct accel_ctx *ctx, const struct accel_route_req *req, int verbose,
		    struct accel_report *report, struct accel_route *r, char *err, size_t len)
{
	/* -v and --json show the devices of the route as an inventory
	 * does: the probes list them in full. */
	if (report || verbose > 0)
		core_ctx_inventory(ctx, ACCEL_CLASS_ALL);
	int rc = accel_route(ctx, req, r);
	if (report) {
		if (accel_report_route(report, r) < 0 || accel_report_route_devices(report, ctx, r) < 0) {
			snprintf(err, len, "out of memory");
			return ACCEL_ENOMEM;
		}
	} else if (verbose > 0) {
		accel_route_print(r, stderr);
	}
	if (rc == ACCEL_EINVAL) {
		const char *list = req->backend ? req->backend : getenv("ACCEL_BACKEND");
		snprintf(err, len, "--backend: malformed list '%s'", list ? list : "");
	} else if (rc < 0 && r->no_engine[0]) {
		snprintf(err, len, "%s", r->no_engine);
	} else if (rc < 0) {
		snprintf(err, len, "no engine can run %s (try -v for the reasons)", req->op->name);
	}
	return rc;
}
