/*
 * test_route.c - the router: ranking by prior and by profile, reasons for
 * every engine left out, forced backend lists, software devices and small
 * jobs. Fake backends are registered in-process; the test and badabi
 * plugins are loaded from build/tests/plugins (tests run from the repo root).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "core.h"

#define NO_PROFILE "/nonexistent/accel-test/profile.json"

static const char *const zstd_only[] = { "zstd.compress", NULL };

/* A fake device backend: one GPU with the given id, software or not. */
static int fake_probe_dev(struct accel_probe *p, const char *id, int software)
{
	struct accel_device d;
	memset(&d, 0, sizeof d);
	d.cls = ACCEL_CLASS_GPU;
	d.numa_node = -1;
	d.software = software;
	strcpy(d.id, id);
	strcpy(d.model, "fake");
	int dev = accel_probe_add_device(p, &d);
	assert_true(dev >= 0);
	return accel_probe_add_engine(p, dev, NULL) < 0 ? ACCEL_ENOMEM : 0;
}

static int fast_probe(struct accel_probe *p) { return fake_probe_dev(p, "gpu0", 0); }
static int slow_probe(struct accel_probe *p) { return fake_probe_dev(p, "gpu1", 0); }
static int soft_probe(struct accel_probe *p) { return fake_probe_dev(p, "gpu2", 1); }
static int broken_probe(struct accel_probe *p)
{
	return accel_probe_fail(p, "libbroken.so.1 not found");
}

/* Prior in MB/s from the engine's backend name; levels above 10 are not
 * supported, with a reason. */
static int fake_supports(const struct accel_engine *e, const struct accel_op *op,
			 double *prior, char *reason, size_t len)
{
	if (op->level > 10) {
		snprintf(reason, len, "level %d is beyond this fake", op->level);
		return ACCEL_ENOTSUP;
	}
	const char *n = e->backend->name;
	*prior = !strcmp(n, "slow") ? 1 : 1e6;
	snprintf(reason, len, "fake %s", n);
	return 0;
}

#define FAKE(var, nm, probefn) \
	static const struct accel_backend var = { \
		.abi = ACCEL_BACKEND_ABI, .name = nm, .description = "fake", .ops = zstd_only, \
		.probe = probefn, .supports = fake_supports, \
	}
FAKE(fast_backend, "fast", fast_probe);
FAKE(slow_backend, "slow", slow_probe);
FAKE(soft_backend, "soft", soft_probe);
FAKE(broken_backend, "broken", broken_probe);

/* A backend that only finds GPUs: not probed for a small job under auto. */
static int gpuonly_probe(struct accel_probe *p) { return fake_probe_dev(p, "gpu3", 0); }
static const struct accel_backend gpuonly_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "gpuonly", .description = "fake", .ops = zstd_only,
	.probe = gpuonly_probe, .supports = fake_supports, .classes = ACCEL_CLASS_BIT(ACCEL_CLASS_GPU),
};

static void add_backend(struct accel_ctx *ctx, const struct accel_backend *b)
{
	struct accel_backend_status *s = core_backend_add(ctx, b->name, "test_route.c");
	assert_non_null(s);
	s->backend = b;
}

static struct accel_ctx *new_ctx(void)
{
	unsetenv("ACCEL_BACKEND");
	unsetenv("ACCEL_PROFILE");
	unsetenv("ACCEL_BACKEND_PATH");
	struct accel_ctx *ctx = accel_ctx_new();
	assert_non_null(ctx);
	/* Keep only the built-in backends: the test binary's folder has a
	 * plugins/ subfolder (build/tests/plugins), which libaccel scans. */
	while (ctx->nbackends > 1 && strcmp(ctx->backends[ctx->nbackends - 1].origin, "built-in"))
		ctx->nbackends--;
	assert_int_equal(ctx->nbackends, 1);
	assert_string_equal(ctx->backends[0].name, "cpu");
	return ctx;
}

static struct accel_op zstd_op = { .name = "zstd.compress", .level = 3, .checksum = 1, .chunk_size = 1 << 20 };

static int route(struct accel_ctx *ctx, const char *backend, int64_t size, const char *profile,
		 struct accel_route *r)
{
	struct accel_route_req req = { &zstd_op, backend, size, profile ? profile : NO_PROFILE };
	return accel_route(ctx, &req, r);
}

static const struct accel_route_entry *entry(const struct accel_route *r, const char *name)
{
	for (int i = 0; i < r->n; i++)
		if (!strcmp(r->entries[i].name, name))
			return &r->entries[i];
	fail_msg("no route entry named %s", name);
	return NULL;
}

static void assert_ranked(const struct accel_route *r, int n, ...)
{
	va_list ap;
	va_start(ap, n);
	assert_int_equal(r->nranked, n);
	for (int i = 0; i < n; i++) {
		assert_true(r->entries[i].usable);
		assert_string_equal(r->entries[i].name, va_arg(ap, const char *));
		assert_non_null(r->entries[i].engine);
	}
	va_end(ap);
	for (int i = n; i < r->n; i++)
		assert_false(r->entries[i].usable);
}

static void auto_ranks_by_prior(void **state)
{
	struct accel_ctx *ctx = new_ctx();
	add_backend(ctx, &slow_backend);
	add_backend(ctx, &fast_backend);
	struct accel_route r;
	assert_int_equal(route(ctx, "auto", -1, NULL, &r), 0);
	assert_false(r.forced);
	assert_string_equal(r.op, "zstd.compress");
	assert_ranked(&r, 3, "fast:gpu0", "cpu", "slow:gpu1");
	assert_string_equal(r.entries[0].reason, "prior 1000000 MB/s (fake fast)");
	assert_true(r.entries[0].mbps > r.entries[1].mbps);
	assert_non_null(strstr(entry(&r, "cpu")->reason, "libzstd on "));
	accel_ctx_free(ctx);
}

static void null_backend_reads_environment(void **state)
{
	struct accel_ctx *ctx = new_ctx();
	add_backend(ctx, &fast_backend);
	setenv("ACCEL_BACKEND", "cpu", 1);
	struct accel_route r;
	assert_int_equal(route(ctx, NULL, -1, NULL, &r), 0);
	assert_true(r.forced);
	assert_ranked(&r, 1, "cpu");
	/* An explicit list wins over the environment. */
	assert_int_equal(route(ctx, "fast", -1, NULL, &r), 0);
	assert_ranked(&r, 1, "fast:gpu0");
	unsetenv("ACCEL_BACKEND");
	assert_int_equal(route(ctx, NULL, -1, NULL, &r), 0);
	assert_false(r.forced);
	assert_ranked(&r, 2, "fast:gpu0", "cpu");
	accel_ctx_free(ctx);
}

static void left_out_reasons(void **state)
{
	struct accel_ctx *ctx = new_ctx();
	add_backend(ctx, &broken_backend);
	add_backend(ctx, &fast_backend);
	struct accel_route r;
	/* A backend that does not offer the operation, one whose probe failed. */
	struct accel_op lz4 = { .name = "lz4.compress", .level = 1, .checksum = 1, .chunk_size = 1 << 20 };
	struct accel_route_req req = { &lz4, "auto", -1, NO_PROFILE };
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_ranked(&r, 1, "cpu");
	assert_string_equal(entry(&r, "fast")->reason, "does not offer this operation");
	assert_null(entry(&r, "fast")->engine);
	assert_int_equal(route(ctx, "auto", -1, NULL, &r), 0);
	assert_ranked(&r, 2, "fast:gpu0", "cpu");
	assert_string_equal(entry(&r, "broken")->reason, "libbroken.so.1 not found");
	/* An engine whose supports() says no keeps its reason. */
	struct accel_op hi = { .name = "zstd.compress", .level = 15, .checksum = 1, .chunk_size = 1 << 20 };
	req.op = &hi;
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_ranked(&r, 1, "cpu");
	assert_string_equal(entry(&r, "fast:gpu0")->reason, "level 15 is beyond this fake");
	assert_non_null(entry(&r, "fast:gpu0")->engine);
	accel_ctx_free(ctx);
}

static void forced_keeps_list_order(void **state)
{
	struct accel_ctx *ctx = new_ctx();
	add_backend(ctx, &fast_backend);
	add_backend(ctx, &slow_backend);
	struct accel_route r;
	assert_int_equal(route(ctx, "slow,cpu,fast", -1, NULL, &r), 0);
	assert_true(r.forced);
	assert_true(r.shared);
	assert_ranked(&r, 3, "slow:gpu1", "cpu", "fast:gpu0");
	assert_string_equal(r.entries[0].reason, "named by --backend");
	assert_int_equal(route(ctx, "cpu", -1, NULL, &r), 0);
	assert_false(r.shared);
	assert_ranked(&r, 1, "cpu");
	/* A name given twice is ranked once. */
	assert_int_equal(route(ctx, "fast,cpu,fast", -1, NULL, &r), 0);
	assert_ranked(&r, 2, "fast:gpu0", "cpu");
	/* Selectors: the k-th engine of a backend, or a device id. */
	assert_int_equal(route(ctx, "fast:0,slow:gpu1", -1, NULL, &r), 0);
	assert_ranked(&r, 2, "fast:gpu0", "slow:gpu1");
	assert_int_equal(route(ctx, "fast:7,cpu", -1, NULL, &r), 0);
	assert_ranked(&r, 1, "cpu");
	assert_string_equal(entry(&r, "fast:7")->reason, "no fast engine matches '7'");
	accel_ctx_free(ctx);
}

static void forced_unknown_backend(void **state)
{
	struct accel_ctx *ctx = new_ctx();
	struct accel_route r;
	assert_int_equal(route(ctx, "nosuch,cpu", -1, NULL, &r), 0);
	assert_ranked(&r, 1, "cpu");
	assert_int_equal(r.n, 2);
	assert_string_equal(entry(&r, "nosuch")->reason, "no backend named 'nosuch' here");
	assert_null(entry(&r, "nosuch")->engine);
	assert_int_equal(route(ctx, "nosuch", -1, NULL, &r), ACCEL_ENOENGINE);
	assert_int_equal(r.nranked, 0);
	assert_string_equal(entry(&r, "nosuch")->reason, "no backend named 'nosuch' here");
	accel_ctx_free(ctx);
}

static void malformed_lists(void **state)
{
	struct accel_ctx *ctx = new_ctx();
	struct accel_route r;
	static const char *const bad[] = { ",", ",,", "auto,cpu", "cpu,auto" };
	int failed = 0;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int rc = route(ctx, bad[i], -1, NULL, &r);
		if (rc != ACCEL_EINVAL) {
			print_error("backend list '%s': expected ACCEL_EINVAL (%d), got %d\n", bad[i], ACCEL_EINVAL, rc);
			failed = 1;
		}
	}
	assert_false(failed);
	accel_ctx_free(ctx);
}

/* An empty element is as malformed as "," alone: "-b ,cpu" is a typo. */
static void empty_list_elements(void **state)
{
	struct accel_ctx *ctx = new_ctx();
	struct accel_route r;
	static const char *const bad[] = { ",cpu", "cpu,", "cpu,,cpu" };
	int failed = 0;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int rc = route(ctx, bad[i], -1, NULL, &r);
		if (rc != ACCEL_EINVAL) {
			print_error("backend list '%s': expected ACCEL_EINVAL (%d), got %d\n", bad[i], ACCEL_EINVAL, rc);
			failed = 1;
		}
	}
	assert_false(failed);
	accel_ctx_free(ctx);
}

/* "+" separates items as "," does (the "cpu+cuda"): the same
 * route, the same errors for empty items; the list check agrees. */
static void plus_separates_items(void **state)
{
	struct accel_ctx *ctx = new_ctx();
	add_backend(ctx, &fast_backend);
	add_backend(ctx, &slow_backend);
	struct accel_route r;
	assert_int_equal(route(ctx, "slow+cpu+fast", -1, NULL, &r), 0);
	assert_true(r.forced);
	assert_true(r.shared);
	assert_ranked(&r, 3, "slow:gpu1", "cpu", "fast:gpu0");
	assert_int_equal(route(ctx, "fast:gpu0+slow,cpu", -1, NULL, &r), 0);
	assert_ranked(&r, 3, "fast:gpu0", "slow:gpu1", "cpu");
	static const char *const bad[] = { "+", "+cpu", "cpu+", "cpu++fast", "cpu+,fast", "cpu+auto" };
	char err[512];
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(route(ctx, bad[i], -1, NULL, &r), ACCEL_EINVAL);
		assert_int_equal(accel_backend_list_check(ctx, bad[i], err, sizeof err), ACCEL_EINVAL);
	}
	assert_int_equal(accel_backend_list_check(ctx, "cpu++fast", err, sizeof err), ACCEL_EINVAL);
	assert_string_equal(err, "empty item in 'cpu++fast'");
	assert_int_equal(accel_backend_list_check(ctx, "fast+nosuch", err, sizeof err), ACCEL_EINVAL);
	assert_non_null(strstr(err, "unknown backend 'nosuch'; backends here: auto, cpu, "));
	assert_int_equal(accel_backend_list_check(ctx, "fast.x:gpu0+slow:1,cpu", err, sizeof err), 0);
	accel_ctx_free(ctx);
}

/* Fake FFT backends: one on the CPU device (as the fftw plugin), one on a
 * GPU; the built-in cpu backend offers no FFT. */
static const char *const fft_only[] = { "fft.c2c", NULL };
static int cpufft_probe(struct accel_probe *p)
{
	int cpu = accel_probe_cpu_device(p);
	assert_true(cpu >= 0);
	return accel_probe_add_engine(p, cpu, NULL) < 0 ? ACCEL_ENOMEM : 0;
}
static int fft_supports(const struct accel_engine *e, const struct accel_op *op, double *prior, char *reason,
			size_t len)
{
	*prior = 500;
	snprintf(reason, len, "fake fft");
	return 0;
}
static const struct accel_backend cpufft_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "cpufft", .description = "fake", .ops = fft_only,
	.probe = cpufft_probe, .supports = fft_supports,
};
static const struct accel_backend gpufft_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "gpufft", .description = "fake", .ops = fft_only,
	.probe = fast_probe, .supports = fft_supports,
};

/* "cpu" names the CPU device's engine for an operation the built-in
 * backend lacks (the engine --fallback cpu picks), so "cpu+gpufft" is the
 * CPU and the GPU serving one stream. */
static void cpu_means_the_cpu_engine_for_the_op(void **state)
{
	struct accel_ctx *ctx = new_ctx();
	struct accel_op fft = { .name = "fft.c2c" };
	struct accel_route r;
	struct accel_route_req req = { &fft, "cpu", -1, NO_PROFILE };
	/* No engine on the CPU device runs it yet. */
	assert_int_equal(accel_route(ctx, &req, &r), ACCEL_ENOENGINE);
	assert_string_equal(entry(&r, "cpu")->reason, "no engine on the CPU device runs this operation");
	add_backend(ctx, &gpufft_backend);
	add_backend(ctx, &cpufft_backend);
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_false(r.shared);
	assert_ranked(&r, 1, "cpufft:cpu0");
	assert_string_equal(r.entries[0].reason, "named by --backend (cpu: the CPU device's engine for fft.c2c)");
	assert_true(r.entries[0].mbps == 500);
	req.backend = "cpu+gpufft";
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_true(r.shared);
	assert_ranked(&r, 2, "cpufft:cpu0", "gpufft:gpu0");
	req.backend = "gpufft,cpu:cpu0";
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_ranked(&r, 2, "gpufft:gpu0", "cpufft:cpu0");
	/* Named twice (as itself and as "cpu"): ranked once. */
	req.backend = "cpufft+cpu";
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_false(r.shared);
	assert_ranked(&r, 1, "cpufft:cpu0");
	req.backend = "cpu:gpu0";
	assert_int_equal(accel_route(ctx, &req, &r), ACCEL_ENOENGINE);
	assert_string_equal(entry(&r, "cpu:gpu0")->reason, "no engine on the CPU device matching gpu0 runs this operation");
	/* An operation the built-in backend offers: "cpu" is still its engine. */
	assert_int_equal(route(ctx, "cpu", -1, NULL, &r), 0);
	assert_ranked(&r, 1, "cpu");
	assert_string_equal(r.entries[0].reason, "named by --backend");
	accel_ctx_free(ctx);
}

static void software_never_preferred(void **state)
{
	struct accel_ctx *ctx = new_ctx();
	add_backend(ctx, &soft_backend);
	struct accel_route r;
	assert_int_equal(route(ctx, "auto", -1, NULL, &r), 0);
	assert_ranked(&r, 2, "cpu", "soft:gpu2");
	assert_string_equal(r.entries[1].reason,
			    "software device: never preferred to native CPU code; name it in full with --backend to use it");
	/* Not even a profile that measured it faster puts it first. */
	char path[] = "/tmp/accel-route-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *json = "{\"schema_version\": 1, \"entries\": ["
		"{\"operation\": \"zstd.compress\", \"engine\": \"soft:gpu2\", \"size_class\": \"large\", \"mb_per_s\": 99999},"
		"{\"operation\": \"zstd.compress\", \"engine\": \"cpu\", \"size_class\": \"large\", \"mb_per_s\": 1}]}";
	assert_int_equal(write(fd, json, strlen(json)), (ssize_t)strlen(json));
	close(fd);
	assert_int_equal(route(ctx, "auto", -1, path, &r), 0);
	assert_ranked(&r, 2, "cpu", "soft:gpu2");
	unlink(path);
	/* Named by its backend alone, it is not taken: the route says why. */
	assert_int_equal(route(ctx, "soft", -1, NULL, &r), ACCEL_ENOENGINE);
	assert_int_equal(r.nranked, 0);
	assert_string_equal(entry(&r, "soft:gpu2")->reason, "software device: name it in full (soft:gpu2) to use it");
	assert_string_equal(r.no_engine, "--backend soft: only a software device (soft:gpu2); name it in full to use it");
	assert_int_equal(route(ctx, "soft:0", -1, NULL, &r), ACCEL_ENOENGINE);
	assert_string_equal(r.no_engine, "--backend soft:0: only a software device (soft:gpu2); name it in full to use it");
	/* With another engine usable, the list runs on that one. */
	assert_int_equal(route(ctx, "soft,cpu", -1, NULL, &r), 0);
	assert_ranked(&r, 1, "cpu");
	assert_string_equal(r.no_engine, "");
	/* Named in full (or by its device), it is used, even after the
	 * short name left it out. */
	static const char *const full[] = { "soft:gpu2", "soft,soft:gpu2" };
	for (int i = 0; i < 2; i++) {
		assert_int_equal(route(ctx, full[i], -1, NULL, &r), 0);
		assert_ranked(&r, 1, "soft:gpu2");
		assert_string_equal(r.entries[0].reason, "named by --backend (software device)");
		assert_string_equal(r.no_engine, "");
	}
	accel_ctx_free(ctx);
}

static void small_jobs_stay_on_cpu(void **state)
{
	struct accel_ctx *ctx = new_ctx();
	add_backend(ctx, &fast_backend);
	struct accel_route r;
	assert_int_equal(route(ctx, "auto", 1000, NULL, &r), 0);
	assert_ranked(&r, 2, "cpu", "fast:gpu0");
	assert_string_equal(r.entries[1].reason,
			    "job of 1000 bytes is too small: start-up and transfer would dominate");
	assert_int_equal(route(ctx, "auto", ACCEL_SMALL_JOB_BYTES - 1, NULL, &r), 0);
	assert_ranked(&r, 2, "cpu", "fast:gpu0");
	assert_int_equal(route(ctx, "auto", 0, NULL, &r), 0);
	assert_ranked(&r, 2, "cpu", "fast:gpu0");
	/* From 1 MiB the device is ranked, its start-up charged against the
	 * job's bytes: 1 MiB is 3 MB/s after 0.3 s. */
	assert_int_equal(route(ctx, "auto", ACCEL_SMALL_JOB_BYTES, NULL, &r), 0);
	assert_ranked(&r, 2, "cpu", "fast:gpu0");
	assert_string_equal(r.entries[1].reason,
			    "prior 1000000 MB/s (fake fast); 3 MB/s over 1.0 MB after 0.3 s of start-up");
	assert_true(r.entries[1].mbps > 3 && r.entries[1].mbps < 4);
	/* A job that amortises it, or of unknown size: the device leads. */
	assert_int_equal(route(ctx, "auto", (int64_t)16 << 30, NULL, &r), 0);
	assert_ranked(&r, 2, "fast:gpu0", "cpu");
	assert_int_equal(route(ctx, "auto", -1, NULL, &r), 0);
	assert_ranked(&r, 2, "fast:gpu0", "cpu");
	/* Forced, a small job goes where it is told. */
	assert_int_equal(route(ctx, "fast", 1000, NULL, &r), 0);
	assert_ranked(&r, 1, "fast:gpu0");
	accel_ctx_free(ctx);
}

/* An engine on the CPU device (as fftw's) is no device with start-up and
 * transfer to amortise: a small job ranks it by its speed, while a GPU
 * engine named for it is demoted. */
static void small_jobs_rank_cpu_device_engines(void **state)
{
	struct accel_ctx *ctx = new_ctx();
	add_backend(ctx, &gpufft_backend);
	add_backend(ctx, &cpufft_backend);
	struct accel_op fft = { .name = "fft.c2c" };
	struct accel_route r;
	struct accel_route_req req = { &fft, "auto", 1000, NO_PROFILE };
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_ranked(&r, 2, "cpufft:cpu0", "gpufft:gpu0");
	assert_string_equal(r.entries[0].reason, "prior 500 MB/s (fake fft)");
	assert_string_equal(r.entries[1].reason, "job of 1000 bytes is too small: start-up and transfer would dominate");
	accel_ctx_free(ctx);
}

/* A job the CPU ends within a device's start-up leaves the backends that
 * only find GPUs unprobed, however fast they might be; a longer one probes
 * them. */
static void jobs_the_cpu_ends_before_a_device_starts(void **state)
{
	struct accel_ctx *ctx = new_ctx();
	add_backend(ctx, &gpuonly_backend);
	struct accel_route r;
	assert_int_equal(route(ctx, "auto", 1000, NULL, &r), 0);
	double cpu = entry(&r, "cpu")->mbps;
	assert_true(cpu > 0);
	int64_t within = (int64_t)(cpu * 1e6 * ACCEL_DEVICE_START_S / 2);
	assert_int_equal(route(ctx, "auto", within, NULL, &r), 0);
	assert_ranked(&r, 1, "cpu");
	assert_false(ctx->backends[1].probed);
	char want[160];
	snprintf(want, sizeof want,
		 "not probed: cpu at %.0f MB/s ends a job of %lld bytes within a device's 0.3 s of start-up (name it with --backend to use it)",
		 cpu, (long long)within);
	assert_string_equal(entry(&r, "gpuonly")->reason, want);
	assert_int_equal(route(ctx, "auto", within * 4, NULL, &r), 0);
	assert_true(ctx->backends[1].probed);
	assert_ranked(&r, 2, "gpuonly:gpu3", "cpu");
	accel_ctx_free(ctx);
}

/* GPU-only backends that say the most MB/s their engines are given
 * (prior_bounds): 10 for zstd.compress, below the cpu backend's prior, and
 * 1e9, above it. */
static int bounded_supports(const struct accel_engine *e, const struct accel_op *op, double *prior, char *reason,
			    size_t len)
{
	*prior = e->backend->prior_bounds[0].mbps;
	snprintf(reason, len, "fake bounded");
	return 0;
}
static int gpu4_probe(struct accel_probe *p) { return fake_probe_dev(p, "gpu4", 0); }
static const struct accel_prior_bound low_bound[] = { { "zstd.compress", 10 }, { NULL, 0 } };
static const struct accel_prior_bound high_bound[] = { { "zstd.compress", 1e9 }, { NULL, 0 } };
static const struct accel_backend lowgpu_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "lowgpu", .description = "fake", .ops = zstd_only,
	.probe = gpu4_probe, .supports = bounded_supports, .classes = ACCEL_CLASS_BIT(ACCEL_CLASS_GPU),
	.prior_bounds = low_bound,
};
static const struct accel_backend highgpu_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "highgpu", .description = "fake", .ops = zstd_only,
	.probe = gpu4_probe, .supports = bounded_supports, .classes = ACCEL_CLASS_BIT(ACCEL_CLASS_GPU),
	.prior_bounds = high_bound,
};

static char *write_profile(const char *json);

/* A GPU-only backend whose bound is at most the CPU's MB/s cannot lead:
 * its drivers are not started, for a job of unknown size (a pipe) or of
 * any known one; unless the profile measured one of its engines, or
 * another such backend could lead (then all are probed, as before). */
static void devices_that_cannot_lead_stay_unprobed(void **state)
{
	struct accel_ctx *ctx = new_ctx();
	add_backend(ctx, &lowgpu_backend);
	struct accel_route r;
	static const int64_t sizes[] = { -1, (int64_t)64 << 30 };
	for (int i = 0; i < 2; i++) {
		assert_int_equal(route(ctx, "auto", sizes[i], NULL, &r), 0);
		assert_ranked(&r, 1, "cpu");
		assert_false(ctx->backends[1].probed);
		char want[160];
		snprintf(want, sizeof want,
			 "not probed: cpu at %.0f MB/s is ahead of its best prior, 10 MB/s, unmeasured (name it with --backend to use it)",
			 r.entries[0].mbps);
		assert_string_equal(entry(&r, "lowgpu")->reason, want);
	}
	/* Named, it is used. */
	assert_int_equal(route(ctx, "lowgpu", -1, NULL, &r), 0);
	assert_ranked(&r, 1, "lowgpu:gpu4");
	accel_ctx_free(ctx);

	/* A profile that measured it: probed, ranked by the figure. */
	ctx = new_ctx();
	add_backend(ctx, &lowgpu_backend);
	char *path = write_profile("{\"schema_version\": 1, \"entries\": ["
		"{\"operation\": \"zstd.compress\", \"engine\": \"lowgpu:gpu4\", \"size_class\": \"large\", \"mb_per_s\": 1e7}]}");
	assert_int_equal(route(ctx, "auto", -1, path, &r), 0);
	assert_true(ctx->backends[1].probed);
	assert_ranked(&r, 2, "lowgpu:gpu4", "cpu");
	unlink(path);
	accel_ctx_free(ctx);

	/* Beside one whose bound is above the CPU, both are probed. */
	ctx = new_ctx();
	add_backend(ctx, &lowgpu_backend);
	add_backend(ctx, &highgpu_backend);
	assert_int_equal(route(ctx, "auto", -1, NULL, &r), 0);
	assert_true(ctx->backends[1].probed);
	assert_true(ctx->backends[2].probed);
	assert_string_equal(r.entries[0].name, "highgpu:gpu4");
	accel_ctx_free(ctx);

	/* Without a bound (gpuonly), a job of unknown size probes it. */
	ctx = new_ctx();
	add_backend(ctx, &gpuonly_backend);
	assert_int_equal(route(ctx, "auto", -1, NULL, &r), 0);
	assert_true(ctx->backends[1].probed);
	accel_ctx_free(ctx);
}

static void small_jobs_leave_gpu_backends_unprobed(void **state)
{
	struct accel_ctx *ctx = new_ctx();
	add_backend(ctx, &gpuonly_backend);
	add_backend(ctx, &fast_backend);
	struct accel_route r;
	/* The drivers of a backend that only finds GPUs are not started for
	 * a small job: the CPU would run it anyway. Others are probed. */
	assert_int_equal(route(ctx, "auto", 1000, NULL, &r), 0);
	assert_ranked(&r, 2, "cpu", "fast:gpu0");
	assert_string_equal(entry(&r, "gpuonly")->reason,
			    "not probed: a job of 1000 bytes stays on the CPU (name it with --backend to use it)");
	assert_false(ctx->backends[1].probed);
	assert_true(ctx->backends[2].probed);
	/* A large job probes it. */
	assert_int_equal(route(ctx, "auto", (int64_t)64 << 30, NULL, &r), 0);
	assert_true(ctx->backends[1].probed);
	assert_int_equal(r.nranked, 3);
	assert_string_equal(r.entries[2].name, "cpu");
	accel_ctx_free(ctx);
	/* With no other engine for the job, it is probed after all. */
	ctx = new_ctx();
	ctx->backends[0].backend = NULL;
	strcpy(ctx->backends[0].reason, "left out for this test");
	add_backend(ctx, &gpuonly_backend);
	assert_int_equal(route(ctx, "auto", 1000, NULL, &r), 0);
	assert_ranked(&r, 1, "gpuonly:gpu3");
	assert_true(ctx->backends[1].probed);
	ctx->backends[0].backend = &accel_backend_cpu;
	accel_ctx_free(ctx);
}

static char *write_profile(const char *json)
{
	static char path[64];
	strcpy(path, "/tmp/accel-profile-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, json, strlen(json)), (ssize_t)strlen(json));
	close(fd);
	return path;
}

static void profile_changes_ranking(void **state)
{
	struct accel_ctx *ctx = new_ctx();
	add_backend(ctx, &fast_backend);
	add_backend(ctx, &slow_backend);
	char *path = write_profile("{\"schema_version\": 1, \"entries\": ["
		"{\"operation\": \"zstd.compress\", \"engine\": \"fast:gpu0\", \"size_class\": \"large\", \"mb_per_s\": 5},"
		"{\"operation\": \"zstd.compress\", \"engine\": \"slow:gpu1\", \"size_class\": \"large\", \"mb_per_s\": 2000000},"
		"{\"operation\": \"zstd.compress\", \"engine\": \"slow:gpu1\", \"size_class\": \"medium\", \"mb_per_s\": 3},"
		"{\"operation\": \"zstd.compress\", \"engine\": \"cpu\", \"size_class\": \"large\", \"mb_per_s\": 10},"
		"{\"operation\": \"lz4.compress\", \"engine\": \"fast:gpu0\", \"size_class\": \"large\", \"mb_per_s\": 9e9}]}");
	struct accel_route r;
	assert_int_equal(route(ctx, "auto", -1, path, &r), 0);
	assert_ranked(&r, 3, "slow:gpu1", "cpu", "fast:gpu0");
	assert_string_equal(r.entries[0].reason, "measured 2000000 MB/s (profile, large jobs)");
	assert_string_equal(r.entries[1].reason, "measured 10 MB/s (profile, large jobs)");
	/* Medium jobs: slow measured 3 MB/s for that class; the others fall
	 * back to their measurement for another class. */
	assert_int_equal(route(ctx, "auto", 8 << 20, path, &r), 0);
	assert_ranked(&r, 3, "cpu", "fast:gpu0", "slow:gpu1");
	assert_string_equal(r.entries[2].reason, "measured 3 MB/s (profile, medium jobs)");
	assert_string_equal(r.entries[1].reason, "measured 5 MB/s (profile, large jobs)");
	/* ACCEL_PROFILE is read when the request names no profile. */
	setenv("ACCEL_PROFILE", path, 1);
	struct accel_route_req req = { &zstd_op, "auto", -1, NULL };
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_ranked(&r, 3, "slow:gpu1", "cpu", "fast:gpu0");
	unsetenv("ACCEL_PROFILE");
	/* A profile that is not valid JSON is ignored: priors rank. */
	unlink(path);
	path = write_profile("{\"schema_version\": 1, \"entries\": [");
	assert_int_equal(route(ctx, "auto", -1, path, &r), 0);
	assert_ranked(&r, 3, "fast:gpu0", "cpu", "slow:gpu1");
	unlink(path);
	accel_ctx_free(ctx);
}

static void profile_load(void **state)
{
	struct accel_profile_entry *e;
	assert_int_equal(accel_profile_load(NO_PROFILE, &e), 0);
	free(e);
	char *path = write_profile("{\"schema_version\": 1, \"entries\": ["
		"{\"operation\": \"zstd.compress\", \"engine\": \"cpu\", \"mb_per_s\": 7.5},"
		"{\"operation\": \"zstd.compress\", \"engine\": \"cpu\", \"mb_per_s\": -1},"
		"{\"engine\": \"cpu\", \"mb_per_s\": 1}]}");
	assert_int_equal(accel_profile_load(path, &e), 1);
	assert_string_equal(e[0].op, "zstd.compress");
	assert_string_equal(e[0].engine, "cpu");
	assert_string_equal(e[0].size_class, "large");
	assert_true(e[0].mbps == 7.5);
	free(e);
	unlink(path);
	path = write_profile("[1, 2]");
	assert_int_equal(accel_profile_load(path, &e), ACCEL_EDATA);
	unlink(path);
	assert_string_equal(accel_size_class(-1), "unknown");
	assert_string_equal(accel_size_class(0), "small");
	assert_string_equal(accel_size_class((1 << 20) - 1), "small");
	assert_string_equal(accel_size_class(1 << 20), "medium");
	assert_string_equal(accel_size_class((64 << 20) - 1), "medium");
	assert_string_equal(accel_size_class(64 << 20), "large");
}

static void plugins_load_with_reasons(void **state)
{
	unsetenv("ACCEL_BACKEND");
	setenv("ACCEL_BACKEND_PATH", "/nonexistent/accel:build/tests/plugins", 1);
	struct accel_ctx *ctx = accel_ctx_new();
	unsetenv("ACCEL_BACKEND_PATH");
	assert_non_null(ctx);
	const struct accel_backend_status *test = NULL, *bad = NULL;
	for (int i = 0; i < accel_backend_count(ctx); i++) {
		const struct accel_backend_status *s = accel_backend_status(ctx, i);
		if (!strcmp(s->name, "test"))
			test = s;
		if (!strcmp(s->name, "badabi"))
			bad = s;
	}
	assert_non_null(test);
	assert_non_null(bad);
	assert_non_null(test->backend);
	assert_string_equal(test->origin, "build/tests/plugins/accel_test.so");
	assert_null(bad->backend);
	assert_string_equal(bad->reason, "plugin built for backend ABI 112, this libaccel has ABI 12");

	struct accel_route r;
	assert_int_equal(route(ctx, "auto", -1, NULL, &r), 0);
	assert_ranked(&r, 2, "cpu", "test:other0");
	assert_non_null(strstr(entry(&r, "test:other0")->reason, "software device"));
	const struct accel_device *d = accel_device_at(ctx, entry(&r, "test:other0")->engine->device);
	assert_string_equal(d->model, "accel test engine");
	assert_int_equal(d->software, 1);
	assert_int_equal(route(ctx, "badabi,test:other0", -1, NULL, &r), 0);
	assert_ranked(&r, 1, "test:other0");
	assert_string_equal(entry(&r, "badabi")->reason,
			    "plugin built for backend ABI 112, this libaccel has ABI 12");
	accel_ctx_free(ctx);
}

static void print_route(void **state)
{
	struct accel_ctx *ctx = new_ctx();
	add_backend(ctx, &fast_backend);
	struct accel_route r;
	assert_int_equal(route(ctx, "fast,nosuch", -1, NULL, &r), 0);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	accel_route_print(&r, f);
	fclose(f);
	assert_string_equal(text, "route for zstd.compress (--backend):\n"
			    "  1. fast:gpu0        named by --backend\n"
			    "  -  nosuch           left out: no backend named 'nosuch' here\n");
	free(text);
	accel_ctx_free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(auto_ranks_by_prior),
		cmocka_unit_test(null_backend_reads_environment),
		cmocka_unit_test(left_out_reasons),
		cmocka_unit_test(forced_keeps_list_order),
		cmocka_unit_test(forced_unknown_backend),
		cmocka_unit_test(malformed_lists),
		cmocka_unit_test(empty_list_elements),
		cmocka_unit_test(plus_separates_items),
		cmocka_unit_test(cpu_means_the_cpu_engine_for_the_op),
		cmocka_unit_test(software_never_preferred),
		cmocka_unit_test(small_jobs_stay_on_cpu),
		cmocka_unit_test(small_jobs_rank_cpu_device_engines),
		cmocka_unit_test(small_jobs_leave_gpu_backends_unprobed),
		cmocka_unit_test(jobs_the_cpu_ends_before_a_device_starts),
		cmocka_unit_test(devices_that_cannot_lead_stay_unprobed),
		cmocka_unit_test(profile_changes_ranking),
		cmocka_unit_test(profile_load),
		cmocka_unit_test(plugins_load_with_reasons),
		cmocka_unit_test(print_route),
	};
	return cmocka_run_group_tests_name("route", tests, NULL, NULL);
}
