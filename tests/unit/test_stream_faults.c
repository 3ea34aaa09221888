/*
 * test_stream_faults.c - the stream engine under faults: threads that cannot
 * be created, an engine dropped mid-stream (its units shared by all the CPU
 * workers), --fallback next in a shared route, and the memory cap on units
 * in flight, inline units (one CPU worker on the calling thread),
 * workers writing the units that are next in order, and workers reading
 * the units of a mapped input (worker_reads).
 * pthread_create and ZSTD_compress2 are interposed here: libaccel
 * calls them through the executable's definitions, which count the calls
 * and fail or time them as a test asks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include <cmocka.h>
#include <accel/stream.h>
#include "core.h"

#define CHUNK 10

/* ------------------------------------------------------------ interposers */

static atomic_int create_calls;     /* pthread_create calls since armed */
static atomic_int create_fail_at;   /* fail call number N with EAGAIN; 0: never */

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "pthread_create");
	int n = atomic_fetch_add(&create_calls, 1) + 1;
	if (atomic_load(&create_fail_at) == n)
		return EAGAIN;
	return real(t, attr, fn, arg);
}

static void fail_create(int n)
{
	atomic_store(&create_calls, 0);
	atomic_store(&create_fail_at, n);
}

/* Threads that ran ZSTD_compress2 and how many ran it at once. */
#define MAX_THREADS 16
static pthread_mutex_t zlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t zthreads[MAX_THREADS];
static int nzthreads, zrunning, zmax;

size_t ZSTD_compress2(ZSTD_CCtx *cctx, void *dst, size_t cap, const void *src, size_t len)
{
	static size_t (*real)(ZSTD_CCtx *, void *, size_t, const void *, size_t);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "ZSTD_compress2");
	pthread_mutex_lock(&zlock);
	int known = 0;
	for (int i = 0; i < nzthreads; i++)
		known |= pthread_equal(zthreads[i], pthread_self());
	if (!known && nzthreads < MAX_THREADS)
		zthreads[nzthreads++] = pthread_self();
	if (++zrunning > zmax)
		zmax = zrunning;
	pthread_mutex_unlock(&zlock);
	usleep(20000);  /* long enough for the other workers to overlap */
	size_t n = real(cctx, dst, cap, src, len);
	pthread_mutex_lock(&zlock);
	zrunning--;
	pthread_mutex_unlock(&zlock);
	return n;
}

/* --------------------------------------------- fake engines, "upper" op */

static const char *const upper_ops[] = { "upper", NULL };

static int fake_probe_class(struct accel_probe *p, const char *id, enum accel_device_class cls)
{
	struct accel_device d;
	memset(&d, 0, sizeof d);
	d.cls = cls;
	d.numa_node = -1;
	strcpy(d.id, id);
	int dev = accel_probe_add_device(p, &d);
	return dev < 0 || accel_probe_add_engine(p, dev, NULL) < 0 ? ACCEL_ENOMEM : 0;
}
static int fake_probe(struct accel_probe *p, const char *id) { return fake_probe_class(p, id, ACCEL_CLASS_GPU); }
static int fa_probe(struct accel_probe *p) { return fake_probe(p, "gpu0"); }
static int fb_probe(struct accel_probe *p) { return fake_probe(p, "gpu1"); }
static int fc_probe(struct accel_probe *p) { return fake_probe(p, "gpu2"); }
/* fk: an engine on the CPU device, as a plugin's (FFTW, ONNX Runtime) is. */
static int fk_probe(struct accel_probe *p) { return fake_probe_class(p, "cpu9", ACCEL_CLASS_CPU); }

static int upper_supports(const struct accel_engine *e, const struct accel_op *op,
			  double *prior, char *reason, size_t len)
{
	*prior = 1000;
	return 0;
}

static int upper_open(const struct accel_engine *e, const struct accel_op *op, void **ctx)
{
	*ctx = (void *)e;
	return 0;
}

/* Per unit (seq below MAX_SEQ): the thread that ran it last, where its
 * input lay then, and how long it takes in microseconds (0: 200). */
#define MAX_SEQ 256
static pthread_t ran_on[MAX_SEQ];
static const uint8_t *ran_in[MAX_SEQ];
static unsigned run_usec[MAX_SEQ];
static int run_fast;   /* 1: no unit sleeps */

/* Upper-cases the unit, a little slowly so that every engine gets units. */
static int upper_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	if (!run_fast)
		usleep(u->seq < MAX_SEQ && run_usec[u->seq] ? run_usec[u->seq] : 200);
	if (u->seq < MAX_SEQ) {
		ran_on[u->seq] = pthread_self();
		ran_in[u->seq] = u->in.data;
	}
	if (accel_buf_reserve(&u->out, u->in.len + 1) < 0)
		return ACCEL_ENOMEM;
	for (size_t i = 0; i < u->in.len; i++)
		u->out.data[i] = (uint8_t)toupper(u->in.data[i]);
	u->out.len = u->in.len;
	return 0;
}

static void upper_close(void *ctx) { }

#define FAKE(var, nm, probefn) \
	static const struct accel_backend var = { \
		.abi = ACCEL_BACKEND_ABI, .name = nm, .ops = upper_ops, .probe = probefn, \
		.supports = upper_supports, .open = upper_open, .run = upper_run, .close = upper_close, \
	}
FAKE(fa_backend, "fa", fa_probe);
FAKE(fb_backend, "fb", fb_probe);
FAKE(fc_backend, "fc", fc_probe);
FAKE(fk_backend, "fk", fk_probe);

/* The reader: CHUNK-byte units; remembers the distinct units it filled
 * and counts its calls. Also the job's `user` for write_hook. */
struct reader {
	struct accel_unit *seen[256];
	int nseen;
	size_t chunk;
	int calls;
	/* write_hook: the thread that called the run, the units written on
	 * it and on other threads, and the write (1-based) that fails with
	 * fail_rc (0: none). */
	pthread_t caller;
	int on_caller, elsewhere, writes, fail_at, fail_rc;
	/* write_hook: the sequence numbers in the order written, and the
	 * thread that wrote each (seq below MAX_SEQ). */
	uint64_t order[256];
	pthread_t wrote_on[256];
	/* next_unit: calls made on the calling thread and on others, and
	 * the call (1-based) that fails with ACCEL_EDATA (0: none). */
	int next_on_caller, next_elsewhere, next_fail_at;
	/* next_unit on a mapped input: each unit's bytes left in the file
	 * (u->in_at) for the stream to read, its buffer the unit's own (1)
	 * or, as the FFT reader leaves it, none (2: the stream reads into
	 * the buffer of the worker that runs it). */
	int defer;
};

static int next_unit(void *user, struct accel_input *in, struct accel_unit *u, char *err, size_t len)
{
	struct reader *r = user;
	r->calls++;
	if (pthread_equal(pthread_self(), r->caller))
		r->next_on_caller++;
	else
		r->next_elsewhere++;
	if (r->calls == r->next_fail_at) {
		snprintf(err, len, "bad unit");
		return ACCEL_EDATA;
	}
	int known = 0;
	for (int i = 0; i < r->nseen; i++)
		known |= r->seen[i] == u;
	if (!known && r->nseen < 256)
		r->seen[r->nseen++] = u;
	if (r->defer && in->map_len) {
		const uint8_t *p;
		ssize_t got = accel_input_peek(in, r->chunk, &p);
		if (got <= 0)
			return (int)got;
		if (!u->in.cap)
			u->in.data = NULL;
		if (r->defer == 1 && accel_buf_reserve(&u->in, (size_t)got) < 0)
			return ACCEL_ENOMEM;
		u->in.len = (size_t)got;
		u->in_at = (int64_t)(p - in->buf);
		u->offset = in->offset;
		accel_input_consume(in, (size_t)got);
		u->last = in->start == in->end;
		return 1;
	}
	return accel_read_chunk(in, u, r->chunk);
}

struct fixture {
	struct accel_ctx *ctx;
	struct accel_route route;
	char in_path[64], out_path[64];
	struct accel_input in;
	struct accel_output out;
	struct accel_stream_stats stats;
	struct reader reader;
	struct accel_stream_config cfg;
	char err[512];
};

static struct accel_op upper_op = { "upper", 0, 0, CHUNK, NULL, 0 };

static void add_backend(struct accel_ctx *ctx, const struct accel_backend *b)
{
	struct accel_backend_status *s = &ctx->backends[ctx->nbackends++];
	memset(s, 0, sizeof *s);
	strcpy(s->name, b->name);
	strcpy(s->origin, "test_stream_faults.c");
	s->backend = b;
}

static void open_files(struct fixture *f, const void *data, size_t n)
{
	strcpy(f->in_path, "/tmp/accel-faults-in-XXXXXX");
	int fd = mkstemp(f->in_path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, n), (ssize_t)n);
	close(fd);
	assert_int_equal(accel_input_open(&f->in, f->in_path), 0);
	strcpy(f->out_path, "/tmp/accel-faults-out-XXXXXX");
	f->out.fd = mkstemp(f->out_path);
	assert_true(f->out.fd >= 0);
}

/* A context with the fake engines named in `backends` ("fa,fb"), routed in
 * that order; shared: all serve the stream at once. */
static void setup_run(struct fixture *f, const char *text, const char *backends, int shared)
{
	memset(f, 0, sizeof *f);
	memset(run_usec, 0, sizeof run_usec);
	run_fast = 0;
	memset(ran_in, 0, sizeof ran_in);
	memset(ran_on, 0, sizeof ran_on);
	fail_create(0);
	assert_int_equal(core_fault_status(), 0);
	assert_int_equal(core_fault_parse(""), 0);
	unsetenv("ACCEL_BACKEND_PATH");
	f->ctx = accel_ctx_new();
	assert_non_null(f->ctx);
	add_backend(f->ctx, &fa_backend);
	add_backend(f->ctx, &fb_backend);
	add_backend(f->ctx, &fc_backend);
	/* The CPU fake only where a test names it: accel_cpu_engine_for
	 * would take it as every run's --fallback cpu engine. */
	if (strstr(backends, "fk"))
		add_backend(f->ctx, &fk_backend);
	struct accel_route_req req = { &upper_op, backends, -1, "/nonexistent" };
	assert_int_equal(accel_route(f->ctx, &req, &f->route), 0);
	f->route.shared = shared;
	open_files(f, text, strlen(text));
	f->reader.chunk = CHUNK;
	f->cfg = (struct accel_stream_config){ .threads = 1, .fallback = ACCEL_FALLBACK_NEXT, .total_size = -1,
					       .prog = "test_stream_faults", .verbose = -1 };
}

static int run(struct fixture *f, const struct accel_op *op)
{
	struct accel_stream_ops ops = { next_unit, NULL, NULL, NULL };
	alarm(60);  /* a hang is a failure, not a stuck test run */
	int rc = accel_stream_run(f->ctx, &f->cfg, &f->route, op, &ops, &f->reader, &f->in, &f->out,
				  &f->stats, f->err, sizeof f->err);
	alarm(0);
	fail_create(0);
	return rc;
}

/* The output file's content (malloc'd, NUL-terminated), its size in *n. */
static char *output(struct fixture *f, size_t *n)
{
	struct stat st;
	assert_int_equal(fstat(f->out.fd, &st), 0);
	char *buf = malloc((size_t)st.st_size + 1);
	assert_int_equal(pread(f->out.fd, buf, (size_t)st.st_size, 0), st.st_size);
	buf[st.st_size] = 0;
	if (n)
		*n = (size_t)st.st_size;
	return buf;
}

static void assert_output(struct fixture *f, const char *want)
{
	char *got = output(f, NULL);
	assert_string_equal(got, want);
	free(got);
}

static void teardown_run(struct fixture *f)
{
	accel_input_close(&f->in);
	close(f->out.fd);
	unlink(f->in_path);
	unlink(f->out_path);
	accel_ctx_free(f->ctx);
	core_fault_parse("");
}

static char *text(size_t n, char *upper)
{
	char *t = malloc(n + 1);
	for (size_t i = 0; i < n; i++) {
		t[i] = (char)('a' + (i * 7 + i / 26) % 26);
		upper[i] = (char)toupper(t[i]);
	}
	t[n] = upper[n] = 0;
	return t;
}

static const struct accel_engine_stats *stats_of(struct fixture *f, const char *name)
{
	for (int i = 0; i < f->stats.nengines; i++)
		if (!strcmp(f->stats.engines[i].name, name))
			return &f->stats.engines[i];
	fail_msg("no statistics for %s", name);
	return NULL;
}

/* ------------------------------------------------------------------ tests */

/* Threads are created in this order: the workers of the serving engines in
 * route order (no writer thread: workers write). Each one failing ends the
 * run with one line, nothing written, no hang. */
static void thread_that_cannot_start_ends_the_run(void **state)
{
	static const struct {
		int n;
		const char *err;
	} cases[] = {
		{ 1, "cannot start a worker thread for fa:gpu0: Resource temporarily unavailable" },
		{ 2, "cannot start a worker thread for fb:gpu1: Resource temporarily unavailable" },
	};
	char want[301];
	char *t = text(300, want);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct fixture f;
		setup_run(&f, t, "fa,fb", 1);
		fail_create(cases[i].n);
		assert_int_equal(run(&f, &upper_op), ACCEL_ENOMEM);
		assert_string_equal(f.err, cases[i].err);
		assert_int_equal(f.stats.units, 0);
		assert_output(&f, "");
		teardown_run(&f);
	}
	/* The same run with every thread started is whole. */
	struct fixture f;
	setup_run(&f, t, "fa,fb", 1);
	assert_int_equal(run(&f, &upper_op), 0);
	assert_output(&f, want);
	teardown_run(&f);
	free(t);
}

/* An engine that takes over from a dropped one starts its workers then;
 * one that cannot start ends the run, never a hang. */
static void late_worker_that_cannot_start_ends_the_run(void **state)
{
	char want[301];
	char *t = text(300, want);
	struct fixture f;
	setup_run(&f, t, "fa,fb", 0);
	assert_int_equal(core_fault_parse("fa:*"), 0);
	fail_create(2);  /* fa's worker, then fb's after fa is dropped */
	assert_int_equal(run(&f, &upper_op), ACCEL_ENOMEM);
	assert_string_equal(f.err, "cannot start a worker thread for fb:gpu1: Resource temporarily unavailable");
	assert_true(stats_of(&f, "fa:gpu0")->dropped);
	assert_int_equal(stats_of(&f, "fb:gpu1")->workers, 0);
	teardown_run(&f);
	free(t);
}

/* A dropped engine's units go to the engine that takes over, with its own
 * workers, and its worker ends. */
static void dropped_engine_hands_over(void **state)
{
	char want[1001];
	char *t = text(1000, want);
	struct fixture f;
	setup_run(&f, t, "fa,fb", 0);
	assert_int_equal(core_fault_parse("fa:*"), 0);
	assert_int_equal(run(&f, &upper_op), 0);
	assert_output(&f, want);
	const struct accel_engine_stats *a = stats_of(&f, "fa:gpu0"), *b = stats_of(&f, "fb:gpu1");
	assert_true(a->dropped);
	assert_int_equal(a->failures, 3);
	assert_int_equal(b->workers, 1);
	assert_int_equal(b->units, 100);
	assert_int_equal(b->retried, 3);
	assert_int_equal(f.stats.retried, 3);
	teardown_run(&f);
	free(t);
}

/* The zstd compression of `in` (frames of CHUNK bytes) by libzstd itself. */
static void check_zstd(const char *out, size_t n, const char *in, size_t len)
{
	char *dec = malloc(len + 1);
	size_t got = ZSTD_decompress(dec, len + 1, out, n);
	assert_false(ZSTD_isError(got));
	assert_int_equal(got, len);
	assert_memory_equal(dec, in, len);
	free(dec);
}

/* The test plugin's engine fails every unit: once it is dropped, its units
 * run on all the CPU workers at once, not on the dropped engine's thread. */
static void dropped_engine_units_shared_by_all_cpu_workers(void **state)
{
	struct fixture f;
	memset(&f, 0, sizeof f);
	fail_create(0);
	setenv("ACCEL_BACKEND_PATH", "build/tests/plugins", 1);
	f.ctx = accel_ctx_new();
	unsetenv("ACCEL_BACKEND_PATH");
	assert_non_null(f.ctx);
	struct accel_op op = { "zstd.compress", 1, 1, 4096, NULL, 0 };
	struct accel_route_req req = { &op, "test:other0", -1, "/nonexistent" };
	assert_int_equal(accel_route(f.ctx, &req, &f.route), 0);
	assert_string_equal(f.route.entries[0].name, "test:other0");
	size_t len = 4096 * 24;
	char *data = malloc(len);
	for (size_t i = 0; i < len; i++)
		data[i] = (char)('a' + (i * 31 + i / 4096) % 26);
	open_files(&f, data, len);
	f.reader.chunk = 4096;
	f.cfg = (struct accel_stream_config){ .threads = 3, .fallback = ACCEL_FALLBACK_CPU, .total_size = -1,
					      .prog = "test_stream_faults", .verbose = -1 };
	assert_int_equal(core_fault_parse("test:*"), 0);
	pthread_mutex_lock(&zlock);
	nzthreads = zrunning = zmax = 0;
	pthread_mutex_unlock(&zlock);

	assert_int_equal(run(&f, &op), 0);
	size_t n;
	char *out = output(&f, &n);
	check_zstd(out, n, data, len);
	const struct accel_engine_stats *t = stats_of(&f, "test:other0"), *c = stats_of(&f, "cpu");
	assert_true(t->dropped);
	assert_int_equal(t->units, 0);
	assert_int_equal(c->units, 24);
	assert_int_equal(c->workers, 3);
	/* The 24 units ran on more than the dropped engine's one thread,
	 * several at once. */
	assert_true(nzthreads >= 2);
	assert_true(zmax >= 2);
	free(out);
	free(data);
	teardown_run(&f);
}

/* --fallback next in a shared route: the last engine of the route retries
 * on the first, never on an engine the unit failed on already. */
static void fallback_next_in_a_shared_route(void **state)
{
	char want[1001];
	char *t = text(1000, want);
	struct fixture f;
	setup_run(&f, t, "fa,fb,fc", 1);
	assert_int_equal(core_fault_parse("fc:*"), 0);
	assert_int_equal(run(&f, &upper_op), 0);
	assert_output(&f, want);
	const struct accel_engine_stats *a = stats_of(&f, "fa:gpu0"), *b = stats_of(&f, "fb:gpu1"),
		*c = stats_of(&f, "fc:gpu2");
	assert_true(c->failures >= 1);
	assert_int_equal(c->units, 0);
	assert_int_equal(a->retried + b->retried, c->failures);
	assert_int_equal(a->units + b->units, 100);
	teardown_run(&f);

	/* Every engine fails unit 5: each tries it once, then the run ends. */
	setup_run(&f, t, "fa,fb,fc", 1);
	assert_int_equal(core_fault_parse("fa:5;fb:5;fc:5"), 0);
	assert_int_equal(run(&f, &upper_op), ACCEL_EDEVICE);
	assert_non_null(strstr(f.err, ": unit 5 (byte offset 50) failed: injected fault (ACCEL_FAULT); no engine left to retry on"));
	assert_int_equal(stats_of(&f, "fa:gpu0")->failures, 1);
	assert_int_equal(stats_of(&f, "fb:gpu1")->failures, 1);
	assert_int_equal(stats_of(&f, "fc:gpu2")->failures, 1);
	teardown_run(&f);
	free(t);
}

/* A unit here holds 10 bytes in, and room for the byte read past them
 * (accel_read_chunk), + 11 out: a cap of 30 bytes runs one unit at a time,
 * 66 bytes three; the output is the same. */
static void memory_cap_lowers_units_in_flight(void **state)
{
	char want[1001];
	char *t = text(1000, want);
	struct fixture f;
	setup_run(&f, t, "fa,fb", 1);
	f.cfg.memory_limit = 30;
	assert_int_equal(run(&f, &upper_op), 0);
	assert_output(&f, want);
	assert_int_equal(f.stats.memory_limit, 30);
	assert_int_equal(f.stats.unit_bytes, 22);
	assert_int_equal(f.stats.units_in_flight, 1);
	assert_int_equal(f.reader.nseen, 1);
	teardown_run(&f);

	setup_run(&f, t, "fa,fb", 1);
	f.cfg.memory_limit = 66;
	assert_int_equal(run(&f, &upper_op), 0);
	assert_output(&f, want);
	assert_true(f.stats.units_in_flight <= 3);
	assert_true(f.reader.nseen <= 3);
	teardown_run(&f);

	/* Without a cap that matters: 2 * 2 workers + 2. */
	setup_run(&f, t, "fa,fb", 1);
	f.cfg.memory_limit = 1 << 30;
	assert_int_equal(run(&f, &upper_op), 0);
	assert_output(&f, want);
	assert_true(f.stats.units_in_flight <= 6);
	teardown_run(&f);
	free(t);
}

static void put(const char *root, const char *path, const char *text)
{
	char name[512];
	snprintf(name, sizeof name, "%s/%s", root, path);
	for (char *p = name + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		mkdir(name, 0755);
		*p = '/';
	}
	FILE *fp = fopen(name, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

/* The memory cap of a run that names none, with /proc and /sys from
 * $ACCEL_SYSROOT. */
static uint64_t default_cap(const char *root)
{
	char want[101];
	char *t = text(100, want);
	struct fixture f;
	setenv("ACCEL_SYSROOT", root, 1);
	setup_run(&f, t, "fa", 0);
	unsetenv("ACCEL_SYSROOT");
	assert_int_equal(run(&f, &upper_op), 0);
	assert_output(&f, want);
	uint64_t cap = f.stats.memory_limit;
	teardown_run(&f);
	free(t);
	return cap;
}

/* Default cap: a quarter of the smaller of MemAvailable and the cgroup's
 * limit (the lowest along its path); none when neither is known. */
static void default_memory_cap(void **state)
{
	char root[] = "/tmp/accel-faults-root-XXXXXX";
	assert_non_null(mkdtemp(root));
	assert_int_equal(default_cap(root), 0);
	put(root, "proc/meminfo", "MemTotal:       16000000 kB\nMemFree:         1000 kB\nMemAvailable:    8000000 kB\n");
	assert_int_equal(default_cap(root), 8000000ULL * 1024 / 4);
	/* cgroup v2: 1 GiB above, "max" on the process's own cgroup */
	put(root, "proc/self/cgroup", "0::/a/b\n");
	put(root, "sys/fs/cgroup/a/memory.max", "1073741824\n");
	put(root, "sys/fs/cgroup/a/b/memory.max", "max\n");
	assert_int_equal(default_cap(root), 1073741824ULL / 4);
	/* cgroup v1, unlimited: MemAvailable again */
	put(root, "proc/self/cgroup", "4:memory:/x\n0::/\n");
	put(root, "sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
	assert_int_equal(default_cap(root), 8000000ULL * 1024 / 4);
	/* cgroup v1 limit on the process's own cgroup */
	put(root, "sys/fs/cgroup/memory/x/memory.limit_in_bytes", "536870912\n");
	assert_int_equal(default_cap(root), 536870912ULL / 4);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

/* ---------------------------------------------------------- inline units */

/* cfg->write: writes the unit as it is, noting the thread it runs on; the
 * fail_at-th write returns fail_rc without writing. */
static int write_hook(void *user, struct accel_output *out, const struct accel_unit *u, char *err,
			  size_t len)
{
	(void)err;
	(void)len;
	struct reader *r = user;
	if (pthread_equal(pthread_self(), r->caller))
		r->on_caller++;
	else
		r->elsewhere++;
	if (r->writes < 256)
		r->order[r->writes] = u->seq;
	if (u->seq < 256)
		r->wrote_on[u->seq] = pthread_self();
	if (++r->writes == r->fail_at) {
		errno = ENOSPC;  /* as a write(2) that failed leaves it */
		return r->fail_rc;
	}
	return accel_output_write(out, u->out.data, u->out.len);
}

/* setup_run with the write hook on and inline_units set as asked. */
static void setup_inline(struct fixture *f, const char *text, const char *backends, int shared, int inl)
{
	setup_run(f, text, backends, shared);
	f->cfg.write = write_hook;
	f->cfg.inline_units = inl;
	f->reader.caller = pthread_self();
}

/* One worker on a CPU engine (threads 1): inline, every unit is read, run
 * and written on the calling thread, one at a time, and no thread is
 * started (the first pthread_create would fail the run); the output is
 * the threaded run's. */
static void inline_units_run_on_the_calling_thread(void **state)
{
	char want[1001];
	char *t = text(1000, want);
	struct fixture f;

	/* Threaded, the baseline: the worker thread writes. */
	setup_inline(&f, t, "fk", 0, 0);
	assert_string_equal(f.route.entries[0].name, "fk:cpu9");
	assert_int_equal(run(&f, &upper_op), 0);
	assert_output(&f, want);
	assert_int_equal(f.reader.on_caller, 0);
	assert_int_equal(f.reader.elsewhere, 100);
	teardown_run(&f);

	setup_inline(&f, t, "fk", 0, 1);
	fail_create(1);
	assert_int_equal(run(&f, &upper_op), 0);
	assert_string_equal(f.err, "");
	assert_output(&f, want);
	assert_int_equal(f.reader.on_caller, 100);
	assert_int_equal(f.reader.elsewhere, 0);
	const struct accel_engine_stats *k = stats_of(&f, "fk:cpu9");
	assert_int_equal(k->workers, 1);
	assert_int_equal(k->units, 100);
	assert_int_equal(f.stats.units, 100);
	assert_int_equal(f.stats.bytes_in, 1000);
	assert_int_equal(f.stats.bytes_out, 1000);
	/* No reading ahead: one unit, used again and again; no memory cap. */
	assert_int_equal(f.stats.units_in_flight, 1);
	assert_int_equal(f.reader.nseen, 1);
	assert_int_equal(f.stats.memory_limit, 0);
	teardown_run(&f);
	free(t);
}

/* --fallback next inline: a unit the CPU engine fails runs again on the
 * next engine of the route, on the same thread; once the engine is
 * dropped, the rest of the units go there, still with no thread started.
 * The output is whole and in order. */
static void inline_units_fall_back_on_the_calling_thread(void **state)
{
	char want[1001];
	char *t = text(1000, want);
	struct fixture f;

	setup_inline(&f, t, "fk,fa", 0, 1);
	assert_string_equal(f.route.entries[0].name, "fk:cpu9");
	assert_string_equal(f.route.entries[1].name, "fa:gpu0");
	assert_int_equal(core_fault_parse("fk:5,17"), 0);
	fail_create(1);
	assert_int_equal(run(&f, &upper_op), 0);
	assert_output(&f, want);
	assert_int_equal(f.reader.on_caller, 100);
	assert_int_equal(f.reader.elsewhere, 0);
	const struct accel_engine_stats *k = stats_of(&f, "fk:cpu9"), *a = stats_of(&f, "fa:gpu0");
	assert_int_equal(k->failures, 2);
	assert_false(k->dropped);
	assert_int_equal(k->units, 98);
	assert_int_equal(a->units, 2);
	assert_int_equal(a->retried, 2);
	assert_int_equal(f.stats.retried, 2);
	teardown_run(&f);

	/* Every unit fails on fk: dropped after 3, fa takes the rest. */
	setup_inline(&f, t, "fk,fa", 0, 1);
	assert_int_equal(core_fault_parse("fk:*"), 0);
	fail_create(1);
	assert_int_equal(run(&f, &upper_op), 0);
	assert_output(&f, want);
	assert_int_equal(f.reader.on_caller, 100);
	assert_int_equal(f.reader.elsewhere, 0);
	k = stats_of(&f, "fk:cpu9");
	a = stats_of(&f, "fa:gpu0");
	assert_true(k->dropped);
	assert_int_equal(k->failures, 3);
	assert_int_equal(k->units, 0);
	assert_int_equal(a->units, 100);
	assert_int_equal(a->retried, 3);
	teardown_run(&f);

	/* Every engine fails unit 5: the run ends there, unit 4 the last
	 * written. */
	setup_inline(&f, t, "fk,fa", 0, 1);
	assert_int_equal(core_fault_parse("fk:5;fa:5"), 0);
	assert_int_equal(run(&f, &upper_op), ACCEL_EDEVICE);
	assert_non_null(strstr(f.err, "fa:gpu0: unit 5 (byte offset 50) failed: injected fault (ACCEL_FAULT); no engine left to retry on"));
	want[50] = 0;
	assert_output(&f, want);
	assert_int_equal(f.reader.calls, 6);
	teardown_run(&f);
	free(t);
}

/* Run upper_op with the output a pipe whose reader has gone (SIGPIPE
 * ignored, as the programs do): its status. */
static int run_to_closed_pipe(struct fixture *f)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	close(p[0]);
	int file_fd = f->out.fd;
	f->out.fd = p[1];
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	sigaction(SIGPIPE, &ign, &old);
	int rc = run(f, &upper_op);
	sigaction(SIGPIPE, &old, NULL);
	close(p[1]);
	f->out.fd = file_fd;
	return rc;
}

/* A write that fails inline ends the run with its error at that unit: no
 * unit read after it, nothing written after it, no hang (alarm). */
static void inline_units_write_error_ends_the_run(void **state)
{
	char want[1001];
	char *t = text(1000, want);
	struct fixture f;

	/* The write callback fails on its 4th unit. */
	setup_inline(&f, t, "fk", 0, 1);
	f.reader.fail_at = 4;
	f.reader.fail_rc = ACCEL_EIO;
	assert_int_equal(run(&f, &upper_op), ACCEL_EIO);
	assert_string_equal(f.err, "cannot write stdout: No space left on device");
	char part[31];
	memcpy(part, want, 30);
	part[30] = 0;
	assert_output(&f, part);
	assert_int_equal(f.reader.writes, 4);
	assert_int_equal(f.reader.calls, 4);
	assert_int_equal(f.stats.units, 3);
	teardown_run(&f);

	/* The output is a pipe whose reader has gone (accel-infer | head):
	 * the first write ends the run with ACCEL_EPIPE. */
	setup_inline(&f, t, "fk", 0, 1);
	int rc = run_to_closed_pipe(&f);
	assert_int_equal(rc, ACCEL_EPIPE);
	assert_non_null(strstr(f.err, "cannot write stdout: "));
	assert_int_equal(f.reader.writes, 1);
	assert_int_equal(f.reader.calls, 1);
	assert_int_equal(f.stats.units, 0);
	teardown_run(&f);
	free(t);
}

/* inline_units applies only to one worker on a CPU engine: with threads
 * above 1, an engine on another device, or two engines serving at once,
 * the run is threaded (worker threads run and write the units). */
static void inline_units_ignored_unless_one_cpu_worker(void **state)
{
	char want[1001];
	char *t = text(1000, want);
	static const struct {
		const char *backends;
		int shared, threads;
		const char *engine;
		int workers;
	} cases[] = {
		{ "fk", 0, 2, "fk:cpu9", 2 },
		{ "fa", 0, 1, "fa:gpu0", 1 },
		{ "fk,fa", 1, 1, "fk:cpu9", 1 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct fixture f;
		setup_inline(&f, t, cases[i].backends, cases[i].shared, 1);
		f.cfg.threads = cases[i].threads;
		assert_int_equal(run(&f, &upper_op), 0);
		assert_output(&f, want);
		assert_int_equal(f.reader.on_caller, 0);
		assert_int_equal(f.reader.elsewhere, 100);
		assert_int_equal(stats_of(&f, cases[i].engine)->workers, cases[i].workers);
		teardown_run(&f);

		/* Threaded, it starts the first engine's worker first:
		 * failing that ends the run. */
		setup_inline(&f, t, cases[i].backends, cases[i].shared, 1);
		f.cfg.threads = cases[i].threads;
		fail_create(1);
		assert_int_equal(run(&f, &upper_op), ACCEL_ENOMEM);
		char want_err[128];
		snprintf(want_err, sizeof want_err,
			 "cannot start a worker thread for %s: Resource temporarily unavailable", cases[i].engine);
		assert_string_equal(f.err, want_err);
		teardown_run(&f);
	}
	free(t);
}

/* ------------------------------------------------------- workers write */

/* Units finish out of order (unit 0 takes 20 ms, the others 0.2 ms, on 3
 * CPU workers): the output is in order, and each unit is written by a
 * worker, the one that finished unit 0 writing it, none by another thread
 * (there is no writer thread). */
static void workers_write_in_order(void **state)
{
	char want[1001];
	char *t = text(1000, want);
	struct fixture f;
	setup_inline(&f, t, "fk", 0, 0);
	f.cfg.threads = 3;
	run_usec[0] = 20000;
	assert_int_equal(run(&f, &upper_op), 0);
	assert_output(&f, want);
	assert_int_equal(f.reader.writes, 100);
	for (int i = 0; i < 100; i++)
		assert_int_equal(f.reader.order[i], i);
	assert_true(pthread_equal(f.reader.wrote_on[0], ran_on[0]));
	for (int i = 0; i < 100; i++) {
		int by_worker = 0;
		for (int j = 0; j < 100; j++)
			by_worker |= pthread_equal(f.reader.wrote_on[i], ran_on[j]);
		assert_true(by_worker);
	}
	assert_int_equal(f.reader.on_caller, 0);
	assert_int_equal(f.stats.units, 100);
	assert_int_equal(f.stats.bytes_out, 1000);
	teardown_run(&f);
	free(t);
}

/* A write that fails on a worker (the 4th unit's, while later units run)
 * ends the run with its error: nothing written after it, no hang; a pipe
 * whose reader has gone ends it with ACCEL_EPIPE. */
static void worker_write_error_ends_the_run(void **state)
{
	char want[1001];
	char *t = text(1000, want);
	struct fixture f;
	setup_inline(&f, t, "fk", 0, 0);
	f.cfg.threads = 2;
	f.reader.fail_at = 4;
	f.reader.fail_rc = ACCEL_EIO;
	assert_int_equal(run(&f, &upper_op), ACCEL_EIO);
	assert_string_equal(f.err, "cannot write stdout: No space left on device");
	char part[31];
	memcpy(part, want, 30);
	part[30] = 0;
	assert_output(&f, part);
	assert_int_equal(f.reader.writes, 4);
	assert_int_equal(f.stats.units, 3);
	teardown_run(&f);

	setup_inline(&f, t, "fk", 0, 0);
	f.cfg.threads = 2;
	int rc = run_to_closed_pipe(&f);
	assert_int_equal(rc, ACCEL_EPIPE);
	assert_non_null(strstr(f.err, "cannot write stdout: "));
	assert_int_equal(f.reader.writes, 1);
	assert_int_equal(f.stats.units, 0);
	teardown_run(&f);
	free(t);
}

/* Unit 0, the next to write, fails on the CPU engine and runs again on the
 * next engine of the route (slowly: the units after it finish first); the
 * worker that ran it there writes it and the units waiting behind it, in
 * order. */
static void failed_next_unit_falls_back_before_it_is_written(void **state)
{
	char want[1001];
	char *t = text(1000, want);
	struct fixture f;
	setup_inline(&f, t, "fk,fa", 0, 0);
	f.cfg.threads = 2;
	run_usec[0] = 20000;
	assert_int_equal(core_fault_parse("fk:0"), 0);
	assert_int_equal(run(&f, &upper_op), 0);
	assert_output(&f, want);
	for (int i = 0; i < 100; i++)
		assert_int_equal(f.reader.order[i], i);
	assert_true(pthread_equal(f.reader.wrote_on[0], ran_on[0]));
	const struct accel_engine_stats *k = stats_of(&f, "fk:cpu9"), *a = stats_of(&f, "fa:gpu0");
	assert_int_equal(k->failures, 1);
	assert_int_equal(k->units, 99);
	assert_int_equal(a->units, 1);
	assert_int_equal(a->retried, 1);
	assert_int_equal(a->workers, 0);
	assert_int_equal(f.stats.units, 100);
	teardown_run(&f);

	/* --fallback none: the failed unit 0 ends the run, nothing written. */
	setup_inline(&f, t, "fk,fa", 0, 0);
	f.cfg.threads = 2;
	f.cfg.fallback = ACCEL_FALLBACK_NONE;
	assert_int_equal(core_fault_parse("fk:0"), 0);
	assert_int_equal(run(&f, &upper_op), ACCEL_EDEVICE);
	assert_non_null(strstr(f.err, "fk:cpu9: unit 0 (byte offset 0) failed: injected fault (ACCEL_FAULT); --fallback none"));
	assert_output(&f, "");
	assert_int_equal(f.reader.writes, 0);
	teardown_run(&f);
	free(t);
}

/* ---------------------------------------------------------- worker reads */

/* setup_inline (the write hook on) for worker_reads on `threads` workers,
 * the input mapped or not. */
static void setup_reads(struct fixture *f, const char *text, const char *backends, int threads, int map)
{
	setup_inline(f, text, backends, 0, 0);
	f->cfg.threads = threads;
	f->cfg.worker_reads = 1;
	if (map)
		assert_int_equal(accel_input_map(&f->in), 1);
}

/* A mapped input: the workers read the units themselves (next never runs
 * on the calling thread); units that finish out of order (a slow one) are
 * written whole and in order, each once. Not mapped, the calling thread
 * reads, as without worker_reads; with worker_reads 2 the workers do. */
static void worker_reads_units_of_a_mapped_input(void **state)
{
	char want[1001];
	char *t = text(1000, want);
	struct fixture f;

	setup_reads(&f, t, "fk", 2, 1);
	run_usec[3] = 30000;
	run_usec[40] = 30000;
	assert_int_equal(run(&f, &upper_op), 0);
	assert_string_equal(f.err, "");
	assert_output(&f, want);
	assert_int_equal(f.reader.next_on_caller, 0);
	assert_int_equal(f.reader.next_elsewhere, 100);  /* the last unit says so */
	assert_int_equal(f.reader.writes, 100);
	for (int i = 0; i < 100; i++)
		assert_int_equal(f.reader.order[i], i);
	assert_int_equal(f.stats.units, 100);
	assert_int_equal(f.stats.bytes_in, 1000);
	assert_int_equal(stats_of(&f, "fk:cpu9")->workers, 2);
	assert_true(f.stats.units_in_flight <= 6);
	teardown_run(&f);

	setup_reads(&f, t, "fk", 2, 0);
	assert_int_equal(run(&f, &upper_op), 0);
	assert_output(&f, want);
	assert_int_equal(f.reader.next_on_caller, 100);
	assert_int_equal(f.reader.next_elsewhere, 0);
	teardown_run(&f);

	/* worker_reads 2: the workers read, mapped or not (accel-crypt
	 * hash: each takes the next file name itself). */
	setup_reads(&f, t, "fk", 2, 0);
	f.cfg.worker_reads = 2;
	run_usec[7] = 30000;
	assert_int_equal(run(&f, &upper_op), 0);
	assert_string_equal(f.err, "");
	assert_output(&f, want);
	assert_int_equal(f.reader.next_on_caller, 0);
	assert_int_equal(f.reader.next_elsewhere, 100);
	for (int i = 0; i < 100; i++)
		assert_int_equal(f.reader.order[i], i);
	teardown_run(&f);
	free(t);
}

/* worker_reads 2: a job's units start on two of its workers, and the
 * others join once a unit has run long (2 ms each here): more than two
 * threads run units, every unit written once and in order. Units that
 * run at once end the same way, the workers never needed ending with the
 * run. */
static void worker_reads_workers_join_as_units_ask(void **state)
{
	char want[1001];
	char *t = text(1000, want);
	struct fixture f;
	for (int fast = 0; fast < 2; fast++) {
		setup_reads(&f, t, "fk", 8, 0);
		f.cfg.worker_reads = 2;
		run_fast = fast;
		for (int i = 0; i < 100; i++)
			run_usec[i] = 2000;
		assert_int_equal(run(&f, &upper_op), 0);
		assert_string_equal(f.err, "");
		assert_output(&f, want);
		assert_int_equal(f.reader.next_on_caller, 0);
		assert_int_equal(f.reader.writes, 100);
		for (int i = 0; i < 100; i++)
			assert_int_equal(f.reader.order[i], i);
		int threads = 0;
		for (int i = 0; i < 100; i++) {
			int seen = 0;
			for (int j = 0; j < i; j++)
				seen |= pthread_equal(ran_on[j], ran_on[i]);
			threads += !seen;
		}
		if (!fast)
			assert_true(threads > 2);
		assert_int_equal(stats_of(&f, "fk:cpu9")->workers, 8);
		teardown_run(&f);
	}
	free(t);
}

/* The output of a run stopped at unit `stop`: whole units (CHUNK bytes)
 * of `want`, none from `stop` on; with one worker all of those before it
 * (the units in flight on others are not written once the run stops). */
static void assert_output_upto(struct fixture *f, const char *want, int stop, int all)
{
	size_t n;
	char *got = output(f, &n);
	assert_true(n % CHUNK == 0);
	assert_true(n <= (size_t)stop * CHUNK);
	if (all)
		assert_int_equal(n, (size_t)stop * CHUNK);
	assert_memory_equal(got, want, n);
	free(got);
}

/* Workers reading: a unit the CPU engine fails runs again on the next
 * engine before it is written; an engine dropped hands its units over (its
 * workers started mid-run read too); every engine failing a unit ends the
 * run there, with nothing from it on written. */
static void worker_reads_fall_back(void **state)
{
	char want[1001];
	char *t = text(1000, want);
	struct fixture f;

	setup_reads(&f, t, "fk,fa", 2, 1);
	assert_int_equal(core_fault_parse("fk:5,17"), 0);
	assert_int_equal(run(&f, &upper_op), 0);
	assert_output(&f, want);
	assert_int_equal(f.reader.next_on_caller, 0);
	const struct accel_engine_stats *k = stats_of(&f, "fk:cpu9"), *a = stats_of(&f, "fa:gpu0");
	assert_int_equal(k->failures, 2);
	assert_int_equal(k->units, 98);
	assert_int_equal(a->units, 2);
	assert_int_equal(f.stats.retried, 2);
	teardown_run(&f);

	setup_reads(&f, t, "fk,fa", 2, 1);
	assert_int_equal(core_fault_parse("fk:*"), 0);
	assert_int_equal(run(&f, &upper_op), 0);
	assert_output(&f, want);
	assert_int_equal(f.reader.next_on_caller, 0);
	k = stats_of(&f, "fk:cpu9");
	a = stats_of(&f, "fa:gpu0");
	assert_true(k->dropped);
	assert_int_equal(k->units, 0);
	assert_int_equal(a->units, 100);
	teardown_run(&f);

	setup_reads(&f, t, "fk,fa", 2, 1);
	assert_int_equal(core_fault_parse("fk:5;fa:5"), 0);
	assert_int_equal(run(&f, &upper_op), ACCEL_EDEVICE);
	assert_non_null(strstr(f.err, "fa:gpu0: unit 5 (byte offset 50) failed: injected fault (ACCEL_FAULT); no engine left to retry on"));
	assert_output_upto(&f, want, 5, 0);
	teardown_run(&f);
	free(t);
}

/* Workers reading: next failing ends the run with its line naming the
 * input; the output holds whole units before the bad one, none after it
 * (on one worker, all of those before it). */
static void worker_reads_error_ends_the_run(void **state)
{
	char want[1001];
	char *t = text(1000, want);
	for (int threads = 1; threads <= 2; threads++) {
		struct fixture f;
		setup_reads(&f, t, "fk", threads, 1);
		f.reader.next_fail_at = 7;
		assert_int_equal(run(&f, &upper_op), ACCEL_EDATA);
		char line[160];
		snprintf(line, sizeof line, "%s: bad unit at byte offset 60", f.in_path);
		assert_string_equal(f.err, line);
		assert_output_upto(&f, want, 6, threads == 1);
		assert_int_equal(f.reader.calls, 7);
		assert_int_equal(f.reader.next_on_caller, 0);
		teardown_run(&f);
	}
	free(t);
}

/* Units whose bytes next_unit left in the file (u->in_at): read into
 * them before they run, by the workers that took them, or by the calling
 * thread when it reads (worker_reads off, or one worker inline); the
 * output is the borrowing run's. A file cut short after it was mapped
 * ends the run with one line, never a fault on the mapping, and leaves
 * whole units from before the cut only. */
static void deferred_reads_fill_units_from_the_file(void **state)
{
	char want[1001];
	char *t = text(1000, want);
	for (int i = 0; i < 8; i++) {
		/* 0, 1: workers reading on 1 and 2 threads; 2: the calling
		 * thread reading; 3: inline on the calling thread; 4-7: the
		 * same, the units without a buffer of their own. */
		struct fixture f;
		int mode = i % 4, defer = i < 4 ? 1 : 2;
		setup_reads(&f, t, "fk", mode == 1 ? 2 : 1, 1);
		f.reader.defer = defer;
		if (mode >= 2)
			f.cfg.worker_reads = 0;
		f.cfg.inline_units = mode == 3;
		run_usec[3] = 20000;
		assert_int_equal(run(&f, &upper_op), 0);
		assert_string_equal(f.err, "");
		assert_output(&f, want);
		assert_int_equal(f.reader.next_on_caller, mode >= 2 ? 100 : 0);
		assert_int_equal(f.stats.units, 100);
		assert_int_equal(f.stats.bytes_in, 1000);
		if (defer == 2 && mode < 2) {
			/* Each worker read its units into its one buffer. */
			const uint8_t *bufs[2] = { ran_in[0], NULL };
			for (int k = 0; k < 100; k++) {
				assert_non_null(ran_in[k]);
				if (ran_in[k] != bufs[0] && !bufs[1])
					bufs[1] = ran_in[k];
				assert_true(ran_in[k] == bufs[0] || ran_in[k] == bufs[1]);
			}
			assert_true(mode == 1 || !bufs[1]);
		}
		teardown_run(&f);

		setup_reads(&f, t, "fk", mode == 1 ? 2 : 1, 1);
		f.reader.defer = defer;
		if (mode >= 2)
			f.cfg.worker_reads = 0;
		f.cfg.inline_units = mode == 3;
		assert_int_equal(truncate(f.in_path, 505), 0);
		assert_int_equal(run(&f, &upper_op), ACCEL_EIO);
		char line[160];
		snprintf(line, sizeof line, "%s: input file shrank while being read", f.in_path);
		assert_string_equal(f.err, line);
		assert_output_upto(&f, want, 50, 0);
		teardown_run(&f);
	}
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(thread_that_cannot_start_ends_the_run),
		cmocka_unit_test(late_worker_that_cannot_start_ends_the_run),
		cmocka_unit_test(dropped_engine_hands_over),
		cmocka_unit_test(dropped_engine_units_shared_by_all_cpu_workers),
		cmocka_unit_test(fallback_next_in_a_shared_route),
		cmocka_unit_test(memory_cap_lowers_units_in_flight),
		cmocka_unit_test(default_memory_cap),
		cmocka_unit_test(inline_units_run_on_the_calling_thread),
		cmocka_unit_test(inline_units_fall_back_on_the_calling_thread),
		cmocka_unit_test(inline_units_write_error_ends_the_run),
		cmocka_unit_test(inline_units_ignored_unless_one_cpu_worker),
		cmocka_unit_test(workers_write_in_order),
		cmocka_unit_test(worker_write_error_ends_the_run),
		cmocka_unit_test(failed_next_unit_falls_back_before_it_is_written),
		cmocka_unit_test(worker_reads_units_of_a_mapped_input),
		cmocka_unit_test(worker_reads_workers_join_as_units_ask),
		cmocka_unit_test(worker_reads_fall_back),
		cmocka_unit_test(worker_reads_error_ends_the_run),
		cmocka_unit_test(deferred_reads_fill_units_from_the_file),
	};
	return cmocka_run_group_tests_name("stream_faults", tests, NULL, NULL);
}
