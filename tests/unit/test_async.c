/*
 * test_async.c - asynchronous device work: a backend's queue depth is the
 * number of units its engine has in flight at once, each in a context of
 * its own; and under auto a device engine and the CPU workers serve one
 * stream together when the profile ($ACCEL_PROFILE) says both help.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <accel/stream.h>
#include "core.h"

static const char *const ops_list[] = { "copy", "zstd.compress", NULL };

static int fake_probe(struct accel_probe *p, const char *pci)
{
	struct accel_device d;
	memset(&d, 0, sizeof d);
	d.cls = ACCEL_CLASS_GPU;
	d.numa_node = -1;
	strcpy(d.model, "Fake");
	strcpy(d.pci_address, pci);
	int dev = accel_probe_add_device(p, &d);
	return dev < 0 || accel_probe_add_engine(p, dev, NULL) < 0 ? ACCEL_ENOMEM : 0;
}
static int deep_probe(struct accel_probe *p) { return fake_probe(p, "0000:77:00.0"); }
static int flat_probe(struct accel_probe *p) { return fake_probe(p, "0000:78:00.0"); }

static int fake_supports(const struct accel_engine *e, const struct accel_op *op, double *prior,
			 char *reason, size_t len)
{
	*prior = 10;
	return 0;
}

/* Units in the backend's run() now, the most seen, contexts opened. */
static atomic_int inflight, inflight_max, opened;

struct fctx {
	void *cpu;            /* the CPU backend's context, for zstd.compress */
	int copy;
};

static int fake_open(const struct accel_engine *e, const struct accel_op *op, void **ctx)
{
	struct fctx *c = calloc(1, sizeof *c);
	if (!c)
		return ACCEL_ENOMEM;
	c->copy = !strcmp(op->name, "copy");
	if (!c->copy && accel_backend_cpu.open(e, op, &c->cpu) < 0) {
		free(c);
		return ACCEL_EDEVICE;
	}
	atomic_fetch_add(&opened, 1);
	*ctx = c;
	return 0;
}

/* "copy" copies the unit; zstd.compress is the CPU's. Each unit takes at
 * least 3 ms, as a device's upload, compute and download would. */
static int fake_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	struct fctx *c = ctx;
	int now = atomic_fetch_add(&inflight, 1) + 1;
	for (int m = atomic_load(&inflight_max); now > m && !atomic_compare_exchange_weak(&inflight_max, &m, now);)
		;
	usleep(3000);
	int rc = 0;
	if (c->copy) {
		rc = accel_buf_reserve(&u->out, u->in.len + 1);
		if (!rc) {
			memcpy(u->out.data, u->in.data, u->in.len);
			u->out.len = u->in.len;
		}
	} else {
		rc = accel_backend_cpu.run(c->cpu, u, err, len);
	}
	atomic_fetch_sub(&inflight, 1);
	return rc;
}

static void fake_close(void *ctx)
{
	struct fctx *c = ctx;
	if (c->cpu)
		accel_backend_cpu.close(c->cpu);
	free(c);
}

static const struct accel_backend deep_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "deep", .description = "fake, 3 units in flight",
	.ops = ops_list, .probe = deep_probe, .supports = fake_supports, .open = fake_open,
	.run = fake_run, .close = fake_close, .queue_depth = 3,
};
static const struct accel_backend flat_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "flat", .description = "fake, no queue depth declared",
	.ops = ops_list, .probe = flat_probe, .supports = fake_supports, .open = fake_open,
	.run = fake_run, .close = fake_close,
};

static struct accel_ctx *new_ctx(void)
{
	unsetenv("ACCEL_BACKEND");
	unsetenv("ACCEL_PROFILE");
	unsetenv("ACCEL_BACKEND_PATH");
	unsetenv("ACCEL_FAULT");
	struct accel_ctx *ctx = accel_ctx_new();
	assert_non_null(ctx);
	while (ctx->nbackends > 1 && strcmp(ctx->backends[ctx->nbackends - 1].origin, "built-in"))
		ctx->nbackends--;
	const struct accel_backend *b[] = { &deep_backend, &flat_backend };
	for (int i = 0; i < 2; i++) {
		struct accel_backend_status *s = core_backend_add(ctx, b[i]->name, "test_async.c");
		assert_non_null(s);
		s->backend = b[i];
	}
	return ctx;
}

/* n bytes of text that compresses somewhat, in a temporary file. */
static char in_path[64];
static char *make_input(size_t n)
{
	char *t = malloc(n);
	assert_non_null(t);
	unsigned x = 12345;
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245 + 12345;
		t[i] = (x >> 16) % 4 ? (char)('a' + i % 26) : (char)('a' + (x >> 20) % 26);
	}
	strcpy(in_path, "/tmp/accel-async-in-XXXXXX");
	int fd = mkstemp(in_path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, t, n), (ssize_t)n);
	close(fd);
	return t;
}

static size_t chunk;

static int next_chunk(void *user, struct accel_input *in, struct accel_unit *u, char *err, size_t len)
{
	return accel_read_chunk(in, u, chunk);
}

/* Run op over in_path on route r; the output in *out (malloc'd, *n bytes). */
static int run(struct accel_ctx *ctx, const struct accel_route *r, const struct accel_op *op,
	       struct accel_stream_stats *st, char **out, size_t *n)
{
	struct accel_input in;
	assert_int_equal(accel_input_open(&in, in_path), 0);
	struct accel_output o;
	memset(&o, 0, sizeof o);
	char out_path[64] = "/tmp/accel-async-out-XXXXXX";
	o.fd = mkstemp(out_path);
	assert_true(o.fd >= 0);
	struct accel_stream_config cfg = { .threads = 2, .fallback = ACCEL_FALLBACK_NONE, .total_size = -1,
					   .prog = "test_async", .verbose = -1 };
	struct accel_stream_ops ops = { next_chunk, NULL, NULL, NULL };
	char err[256];
	atomic_store(&inflight_max, 0);
	atomic_store(&opened, 0);
	chunk = op->chunk_size;
	int rc = accel_stream_run(ctx, &cfg, r, op, &ops, NULL, &in, &o, st, err, sizeof err);
	accel_input_close(&in);
	off_t size = lseek(o.fd, 0, SEEK_END);
	*out = malloc((size_t)size + 1);
	assert_int_equal(pread(o.fd, *out, (size_t)size, 0), size);
	*n = (size_t)size;
	close(o.fd);
	unlink(out_path);
	return rc;
}

static const struct accel_engine_stats *stats_of(const struct accel_stream_stats *st, const char *backend)
{
	for (int i = 0; i < st->nengines; i++)
		if (!strncmp(st->engines[i].name, backend, strlen(backend)))
			return &st->engines[i];
	fail_msg("no engine of %s in the statistics", backend);
	return NULL;
}

static struct accel_op copy_op = { .name = "copy", .chunk_size = 1000 };

static void queue_depth_units_in_flight(void **state)
{
	struct accel_ctx *ctx = new_ctx();
	char *text = make_input(30000), *out;
	size_t n;
	struct accel_route r;
	struct accel_stream_stats st;
	/* Depth 3: three units at once, never more, three contexts. */
	struct accel_route_req req = { &copy_op, "deep", -1, "/nonexistent/profile.json" };
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_int_equal(run(ctx, &r, &copy_op, &st, &out, &n), 0);
	assert_int_equal(n, 30000);
	assert_memory_equal(out, text, n);
	free(out);
	assert_int_equal(atomic_load(&inflight_max), 3);
	assert_int_equal(atomic_load(&opened), 3);
	assert_int_equal(stats_of(&st, "deep")->workers, 3);
	assert_int_equal(stats_of(&st, "deep")->units, 30);
	/* No depth declared: one at a time. */
	req.backend = "flat";
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_int_equal(run(ctx, &r, &copy_op, &st, &out, &n), 0);
	assert_memory_equal(out, text, n);
	free(out);
	assert_int_equal(atomic_load(&inflight_max), 1);
	assert_int_equal(stats_of(&st, "flat")->workers, 1);
	free(text);
	unlink(in_path);
	accel_ctx_free(ctx);
}

static struct accel_op zstd_op = { .name = "zstd.compress", .level = 1, .checksum = 1, .chunk_size = 64 << 10 };

/* Save a profile measuring deep at `dev` MB/s and the CPU at `cpu` MB/s
 * for zstd.compress on `cls` jobs, and point $ACCEL_PROFILE at it. */
static char prof_path[64];
static void profile(struct accel_ctx *ctx, double dev, double cpu, const char *cls)
{
	accel_discover(ctx, "zstd.compress");
	struct accel_profile_entry *e = NULL;
	int n = 0;
	const struct accel_engine *deep = NULL;
	for (int i = 0; i < accel_engine_count(ctx); i++)
		if (accel_engine_at(ctx, i)->backend == &deep_backend)
			deep = accel_engine_at(ctx, i);
	assert_non_null(deep);
	assert_int_equal(accel_profile_put(ctx, &e, &n, "zstd.compress", deep, cls, dev), 0);
	assert_int_equal(accel_profile_put(ctx, &e, &n, "zstd.compress", accel_cpu_engine(ctx), cls, cpu), 0);
	char err[256];
	strcpy(prof_path, "/tmp/accel-async-profile-XXXXXX");
	close(mkstemp(prof_path));
	assert_int_equal(accel_profile_save(ctx, prof_path, e, n, err, sizeof err), 0);
	free(e);
	setenv("ACCEL_PROFILE", prof_path, 1);
}

static void coexecution_when_profile_says_both_help(void **state)
{
	struct accel_ctx *ctx = new_ctx();
	char *text = make_input(4 << 20), *ref, *out;
	size_t nref, n;
	struct accel_route r;
	struct accel_stream_stats st;
	/* The reference: the CPU alone. */
	struct accel_route_req req = { &zstd_op, "cpu", -1, NULL };
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_int_equal(run(ctx, &r, &zstd_op, &st, &ref, &nref), 0);

	/* deep 800 MB/s, the CPU 400: together under auto. */
	profile(ctx, 800, 400, "large");
	req.backend = "auto";
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_string_equal(r.profile_note, "");
	assert_ptr_equal(r.entries[0].engine->backend, &deep_backend);
	assert_ptr_equal(r.entries[1].engine, accel_cpu_engine(ctx));
	assert_int_equal(r.nserving, 2);
	assert_true(r.shared);
	assert_int_equal(run(ctx, &r, &zstd_op, &st, &out, &n), 0);
	assert_int_equal(n, nref);
	assert_memory_equal(out, ref, n);
	free(out);
	const struct accel_engine_stats *dev = stats_of(&st, "deep"), *cpu = stats_of(&st, "cpu");
	assert_int_equal(dev->workers, 3);
	assert_int_equal(cpu->workers, 2);
	assert_true(dev->units > 0);
	assert_true(cpu->units > 0);
	assert_int_equal(dev->units + cpu->units, 64);
	unlink(prof_path);

	/* deep 8000 MB/s, the CPU 400: the CPU would add too little. */
	profile(ctx, 8000, 400, "large");
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_int_equal(r.nserving, 1);
	assert_false(r.shared);
	assert_int_equal(run(ctx, &r, &zstd_op, &st, &out, &n), 0);
	assert_memory_equal(out, ref, n);
	free(out);
	assert_int_equal(stats_of(&st, "deep")->units, 64);
	assert_int_equal(stats_of(&st, "cpu")->units, 0);
	unlink(prof_path);

	/* Measured only for medium jobs: no say for this (large) one. */
	profile(ctx, 800, 400, "medium");
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_int_equal(r.nserving, 1);
	unlink(prof_path);
	/* No profile: priors rank, one engine serves. */
	unsetenv("ACCEL_PROFILE");
	req.profile = "/nonexistent/profile.json";
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_int_equal(r.nserving, 1);
	assert_false(r.shared);
	free(ref);
	free(text);
	unlink(in_path);
	accel_ctx_free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(queue_depth_units_in_flight),
		cmocka_unit_test(coexecution_when_profile_says_both_help),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
