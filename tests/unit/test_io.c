/*
 * test_io.c - inputs and outputs of the core: memory input, null and fd
 * outputs, several inputs as jobs of one run through the same engine
 * contexts, reads with a deadline and the timed flush of a partial unit,
 * progress in the operation's unit, overlapping units counted once, an
 * -o file that can seek and is still complete or absent, and one that keeps
 * the permissions of the file it replaces and the symlinks that lead to it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <accel/cli.h>
#include <accel/ops/compress.h>
#include "core.h"

#define CHUNK 10

/* ------------------------------------------------ a fake device engine */

static const char *const upper_ops[] = { "upper", NULL };
static atomic_int opens, closes;

static int fio_probe(struct accel_probe *p)
{
	struct accel_device d;
	memset(&d, 0, sizeof d);
	d.cls = ACCEL_CLASS_GPU;
	d.numa_node = -1;
	strcpy(d.id, "gpu0");
	int dev = accel_probe_add_device(p, &d);
	return dev < 0 || accel_probe_add_engine(p, dev, NULL) < 0 ? ACCEL_ENOMEM : 0;
}

static int upper_supports(const struct accel_engine *e, const struct accel_op *op, double *prior, char *reason,
			  size_t len)
{
	*prior = 1000;
	return 0;
}

static int upper_open(const struct accel_engine *e, const struct accel_op *op, void **ctx)
{
	atomic_fetch_add(&opens, 1);
	*ctx = NULL;
	return 0;
}

static int upper_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	if (accel_buf_reserve(&u->out, u->in.len + 1) < 0)
		return ACCEL_ENOMEM;
	for (size_t i = 0; i < u->in.len; i++)
		u->out.data[i] = (uint8_t)toupper(u->in.data[i]);
	u->out.len = u->in.len;
	return 0;
}

static void upper_close(void *ctx) { atomic_fetch_add(&closes, 1); }

static const struct accel_backend fio_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "fio", .ops = upper_ops, .probe = fio_probe,
	.supports = upper_supports, .open = upper_open, .run = upper_run, .close = upper_close,
};

static struct accel_op upper_op = { .name = "upper", .chunk_size = CHUNK };

static struct accel_ctx *fake_ctx(struct accel_route *route)
{
	unsetenv("ACCEL_FAULT");
	unsetenv("ACCEL_BACKEND_PATH");
	assert_int_equal(core_fault_parse(""), 0);
	struct accel_ctx *ctx = accel_ctx_new();
	assert_non_null(ctx);
	struct accel_backend_status *s = core_backend_add(ctx, "fio", "test_io.c");
	assert_non_null(s);
	s->backend = &fio_backend;
	struct accel_route_req req = { &upper_op, "fio", -1, "/nonexistent" };
	assert_int_equal(accel_route(ctx, &req, route), 0);
	assert_int_equal(route->nranked, 1);
	atomic_store(&opens, 0);
	atomic_store(&closes, 0);
	return ctx;
}

static struct accel_stream_config quiet_cfg(void)
{
	struct accel_stream_config cfg = {
		.threads = 2, .fallback = ACCEL_FALLBACK_NONE, .total_size = -1, .prog = "test", .verbose = -1,
	};
	return cfg;
}

static int next_chunk(void *user, struct accel_input *in, struct accel_unit *u, char *err, size_t len)
{
	return accel_read_chunk(in, u, CHUNK);
}

static int begin(void *user, struct accel_output *out) { return accel_output_write(out, "<", 1); }
static int end(void *user, struct accel_output *out) { return accel_output_write(out, ">", 1); }

/* Everything written to fd from its start. */
static char *slurp_fd(int fd, size_t *n)
{
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	char *buf = calloc(1, (size_t)st.st_size + 1);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, (size_t)st.st_size, 0), st.st_size);
	*n = (size_t)st.st_size;
	return buf;
}

/* ------------------------------------------------ memory input, outputs */

static void test_memory_input_reads_as_a_file(void **state)
{
	const char text[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	struct accel_input in;
	assert_int_equal(accel_input_mem(&in, text, sizeof text - 1, "text"), 0);
	assert_int_equal(in.fd, -1);
	assert_int_equal(in.size, (int64_t)(sizeof text - 1));
	assert_string_equal(in.name, "text");
	const uint8_t *p;
	assert_int_equal(accel_input_peek(&in, 4, &p), 4);
	assert_memory_equal(p, "0123", 4);
	accel_input_consume(&in, 4);
	char buf[64];
	assert_int_equal(accel_input_read(&in, buf, 6), 6);
	assert_memory_equal(buf, "456789", 6);
	assert_int_equal(in.offset, 10);
	/* A read past the end is short; then the input is at its end. */
	assert_int_equal(accel_input_read(&in, buf, sizeof buf), 26);
	assert_memory_equal(buf, "abcdefghijklmnopqrstuvwxyz", 26);
	assert_int_equal(accel_input_peek(&in, 1, &p), 0);
	assert_true(in.eof);
	/* A memory input never waits for a deadline. */
	assert_int_equal(accel_input_peek_until(&in, 1, accel_now() + 10, &p), 0);
	accel_input_close(&in);
	/* The caller's buffer is untouched and an empty one is an empty input. */
	assert_string_equal(text, "0123456789abcdefghijklmnopqrstuvwxyz");
	assert_int_equal(accel_input_mem(&in, "", 0, NULL), 0);
	assert_string_equal(in.name, "memory");
	assert_int_equal(accel_input_peek(&in, 1, &p), 0);
	accel_input_close(&in);
}

static void test_null_and_fd_outputs(void **state)
{
	struct accel_output out;
	assert_int_equal(accel_output_null(&out), 0);
	assert_int_equal(accel_output_write(&out, "hello", 5), 0);
	assert_int_equal(accel_output_write(&out, " world", 6), 0);
	assert_int_equal(out.written, 11);
	/* A muxer may seek back in a null output as in a file. */
	assert_int_equal(accel_output_seek(&out, 0, SEEK_SET), 0);
	assert_int_equal(accel_output_write(&out, "HE", 2), 0);
	assert_int_equal(accel_output_seek(&out, 0, SEEK_CUR), 2);
	assert_int_equal(accel_output_seek(&out, 0, SEEK_END), 11);
	assert_int_equal(accel_output_seek(&out, -12, SEEK_END), ACCEL_EINVAL);
	assert_int_equal(accel_output_commit(&out), 0);

	int fd = memfd_create("out", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(accel_output_fd(&out, fd), 0);
	assert_int_equal(accel_output_write(&out, "abc", 3), 0);
	assert_int_equal(accel_output_seek(&out, 0, SEEK_SET), ACCEL_ENOTSUP);
	assert_int_equal(accel_output_commit(&out), 0);
	/* The caller's fd is still open. */
	assert_true(fcntl(fd, F_GETFD) >= 0);
	size_t n;
	char *got = slurp_fd(fd, &n);
	assert_int_equal(n, 3);
	assert_memory_equal(got, "abc", 3);
	free(got);
	assert_int_equal(accel_output_fd(&out, fd), 0);
	accel_output_abort(&out);
	assert_true(fcntl(fd, F_GETFD) >= 0);
	close(fd);
	assert_int_equal(accel_output_fd(&out, fd), ACCEL_EINVAL);
	assert_int_equal(accel_output_fd(&out, -1), ACCEL_EINVAL);
}

/* accel_compress from memory and from a file gives the same bytes, and
 * accel_decompress from memory gives the text back, through fd and null
 * outputs: the path a benchmark runs is the program's. */
static void test_compress_memory_equals_file(void **state)
{
	size_t len = 300000;
	char *text = malloc(len);
	assert_non_null(text);
	for (size_t i = 0; i < len; i++)
		text[i] = "the quick brown fox "[i % 20] + (char)(i / 4096 % 3);
	struct accel_ctx *ctx = accel_ctx_new();
	assert_non_null(ctx);
	unsetenv("ACCEL_FAULT");
	struct accel_compress_cfg cfg = {
		.backend = "cpu", .stream = quiet_cfg(), .format = "zstd", .checksum = 1, .chunk_size = 65536,
	};
	char err[512];
	const char *formats[] = { "zstd", "gzip", "lz4" };
	for (int f = 0; f < 3; f++) {
		cfg.format = formats[f];
		/* From memory, to a memfd. */
		struct accel_input in;
		struct accel_output out;
		struct accel_stream_stats st;
		int mfd = memfd_create("mem", MFD_CLOEXEC);
		assert_true(mfd >= 0);
		assert_int_equal(accel_input_mem(&in, text, len, "text"), 0);
		assert_int_equal(accel_output_fd(&out, mfd), 0);
		assert_int_equal(accel_compress(ctx, &cfg, &in, &out, &st, err, sizeof err), 0);
		accel_input_close(&in);
		assert_int_equal(st.bytes_in, len);
		assert_int_equal(st.units, (len + 65535) / 65536);
		size_t zn;
		char *z = slurp_fd(mfd, &zn);
		assert_int_equal(st.bytes_out, zn);
		/* From a file, to a null output: the same count. */
		int ffd = memfd_create("file", MFD_CLOEXEC);
		assert_int_equal(write(ffd, text, len), (ssize_t)len);
		char path[64];
		snprintf(path, sizeof path, "/proc/self/fd/%d", ffd);
		assert_int_equal(accel_input_open(&in, path), 0);
		assert_int_equal(accel_output_null(&out), 0);
		assert_int_equal(accel_compress(ctx, &cfg, &in, &out, &st, err, sizeof err), 0);
		accel_input_close(&in);
		assert_int_equal(out.written, zn);
		/* From a file, to a memfd: the same bytes. */
		int ofd = memfd_create("file-out", MFD_CLOEXEC);
		assert_int_equal(accel_input_open(&in, path), 0);
		assert_int_equal(accel_output_fd(&out, ofd), 0);
		assert_int_equal(accel_compress(ctx, &cfg, &in, &out, &st, err, sizeof err), 0);
		accel_input_close(&in);
		size_t fn;
		char *fz = slurp_fd(ofd, &fn);
		assert_int_equal(fn, zn);
		assert_memory_equal(fz, z, zn);
		free(fz);
		/* Back from memory: the text, to a memfd and to a count. */
		struct accel_decompress_cfg dcfg = { .backend = "cpu", .stream = quiet_cfg() };
		int dfd = memfd_create("dec", MFD_CLOEXEC);
		assert_int_equal(accel_input_mem(&in, z, zn, "z"), 0);
		assert_int_equal(accel_output_fd(&out, dfd), 0);
		assert_int_equal(accel_decompress(ctx, &dcfg, &in, &out, &st, err, sizeof err), 0);
		accel_input_close(&in);
		size_t dn;
		char *d = slurp_fd(dfd, &dn);
		assert_int_equal(dn, len);
		assert_memory_equal(d, text, len);
		free(d);
		/* One frame measured into nothing: the first chunk's size. */
		uint64_t content;
		assert_int_equal(accel_input_mem(&in, z, zn, "z"), 0);
		assert_int_equal(accel_frame_measure(ctx, accel_format_detect((const uint8_t *)z, zn), &in, &content,
						     err, sizeof err), 0);
		assert_int_equal(content, 65536);
		assert_true(in.offset > 0 && in.offset < zn);
		accel_input_close(&in);
		free(z);
		close(mfd);
		close(ffd);
		close(ofd);
		close(dfd);
	}
	/* Unknown formats are refused; the defaults are the program's. */
	cfg.format = "brotli";
	struct accel_input in;
	struct accel_output out;
	accel_input_mem(&in, text, 10, NULL);
	accel_output_null(&out);
	assert_int_equal(accel_compress(ctx, &cfg, &in, &out, NULL, err, sizeof err), ACCEL_EINVAL);
	assert_string_equal(err, "--format: 'brotli' is not one of zstd, gzip, lz4");
	accel_input_close(&in);
	/* gzip's levels stop at libdeflate's 12 */
	cfg.format = "gzip";
	cfg.level = ACCEL_GZIP_LEVEL_MAX + 1;
	accel_input_mem(&in, text, 10, NULL);
	assert_int_equal(accel_compress(ctx, &cfg, &in, &out, NULL, err, sizeof err), ACCEL_EINVAL);
	assert_string_equal(err, "gzip level 13 is out of range (1-12)");
	accel_input_close(&in);
	cfg.level = 0;
	assert_int_equal(accel_compress_default_level("zstd"), 3);
	assert_int_equal(accel_compress_default_level("gzip"), 6);
	assert_int_equal(accel_compress_default_level("lz4"), 1);
	assert_int_equal(accel_compress_default_level("xz"), ACCEL_EINVAL);
	assert_int_equal(accel_compress_default_chunk("zstd", 3), 8u << 20);
	assert_int_equal(accel_compress_default_chunk("zstd", 19), 32u << 20);
	assert_int_equal(accel_compress_default_chunk("gzip", 3), 1u << 20);
	assert_int_equal(accel_compress_default_chunk("gzip", 4), 2u << 20);
	assert_int_equal(accel_compress_default_chunk("gzip", 12), 2u << 20);
	assert_int_equal(accel_compress_default_chunk("lz4", 1), 4u << 20);
	assert_int_equal(accel_compress_default_chunk(NULL, 1), 0);
	accel_ctx_free(ctx);
	free(text);
}

/* ------------------------------------------------ several inputs as jobs */

struct jobs_state {
	const char *texts[3];
	struct accel_input in;
	struct accel_output *out;
	int fail_at;             /* start fails for this job, -1: none */
	int skip_at;             /* start skips this job, -1: none */
	int started, finished;
	int rcs[3];
	struct accel_stream_stats stats[3];
	int opens_at_finish[3];
};

static int jobs_start(void *arg, size_t k, struct accel_input **in, struct accel_output **out, void **user,
		      char *err, size_t len)
{
	struct jobs_state *j = arg;
	j->started++;
	if ((int)k == j->fail_at) {
		snprintf(err, len, "cannot read job%zu: No such file or directory", k);
		return ACCEL_EIO;
	}
	if ((int)k == j->skip_at)
		return 1;
	assert_int_equal(accel_input_mem(&j->in, j->texts[k], strlen(j->texts[k]), "job"), 0);
	*in = &j->in;
	*out = j->out;
	*user = NULL;
	return 0;
}

static void jobs_finish(void *arg, size_t k, int rc, const struct accel_stream_stats *st, const char *err)
{
	struct jobs_state *j = arg;
	j->rcs[k] = rc;
	j->stats[k] = *st;
	j->opens_at_finish[k] = atomic_load(&opens);
	j->finished++;
	accel_input_close(&j->in);
}

static void test_jobs_share_engine_contexts(void **state)
{
	struct accel_route route;
	struct accel_ctx *ctx = fake_ctx(&route);
	int fd = memfd_create("jobs", MFD_CLOEXEC);
	struct accel_output out;
	assert_int_equal(accel_output_fd(&out, fd), 0);
	struct jobs_state j = { { "abc", "", "hello world, several units" }, .out = &out, .fail_at = -1, .skip_at = -1 };
	struct accel_stream_jobs jobs = { 3, &j, jobs_start, jobs_finish };
	struct accel_stream_ops ops = { next_chunk, begin, end, NULL };
	struct accel_stream_config cfg = quiet_cfg();
	char err[256];
	assert_int_equal(accel_stream_run_jobs(ctx, &cfg, &route, &upper_op, &ops, &jobs, err, sizeof err), 0);
	size_t n;
	char *got = slurp_fd(fd, &n);
	/* In job order, each between its own header and trailer. */
	assert_string_equal(got, "<ABC><><HELLO WORLD, SEVERAL UNITS>");
	free(got);
	assert_int_equal(j.finished, 3);
	/* One engine context for the whole run, opened by the first job. */
	for (int k = 0; k < 3; k++)
		assert_int_equal(j.opens_at_finish[k], 1);
	assert_int_equal(atomic_load(&opens), 1);
	assert_int_equal(atomic_load(&closes), 1);
	/* Each job's own statistics: units numbered from 0 per job (an
	 * empty input is one empty unit). */
	uint64_t units[3] = { 1, 1, 3 }, bytes[3] = { 3, 0, 26 };
	for (int k = 0; k < 3; k++) {
		assert_int_equal(j.rcs[k], 0);
		assert_int_equal(j.stats[k].units, units[k]);
		assert_int_equal(j.stats[k].bytes_in, bytes[k]);
		assert_int_equal(j.stats[k].bytes_out, bytes[k]);
		assert_int_equal(j.stats[k].engines[0].units, units[k]);
		assert_int_equal(j.stats[k].engines[0].bytes_in, bytes[k]);
	}
	close(fd);

	/* A job that cannot start ends the run with its line; those after it
	 * never start. */
	fd = memfd_create("jobs", MFD_CLOEXEC);
	assert_int_equal(accel_output_fd(&out, fd), 0);
	struct jobs_state j2 = { { "abc", "def", "ghi" }, .out = &out, .fail_at = 1, .skip_at = -1 };
	jobs.arg = &j2;
	assert_int_equal(accel_stream_run_jobs(ctx, &cfg, &route, &upper_op, &ops, &jobs, err, sizeof err), ACCEL_EIO);
	assert_string_equal(err, "cannot read job1: No such file or directory");
	assert_int_equal(j2.started, 2);
	assert_int_equal(j2.finished, 1);
	got = slurp_fd(fd, &n);
	assert_string_equal(got, "<ABC>");
	free(got);
	close(fd);

	/* A job its start skips (1) runs nothing and is not finished; the
	 * jobs after it go on. */
	fd = memfd_create("jobs", MFD_CLOEXEC);
	assert_int_equal(accel_output_fd(&out, fd), 0);
	struct jobs_state j3 = { { "abc", "def", "ghi" }, .out = &out, .fail_at = -1, .skip_at = 1 };
	jobs.arg = &j3;
	assert_int_equal(accel_stream_run_jobs(ctx, &cfg, &route, &upper_op, &ops, &jobs, err, sizeof err), 0);
	assert_int_equal(j3.started, 3);
	assert_int_equal(j3.finished, 2);
	assert_int_equal(j3.stats[2].units, 1);
	got = slurp_fd(fd, &n);
	assert_string_equal(got, "<ABC><GHI>");
	free(got);
	close(fd);
	accel_ctx_free(ctx);
}

/* ------------------------------------------------ overlapping units */

/* Units of 8 new bytes that also hold the previous unit's last 4. */
struct overlap {
	uint8_t tail[4];
	int have_tail;
};

static int next_overlap(void *user, struct accel_input *in, struct accel_unit *u, char *err, size_t len)
{
	struct overlap *o = user;
	if (accel_buf_reserve(&u->in, 12) < 0)
		return ACCEL_ENOMEM;
	size_t keep = o->have_tail ? 4 : 0;
	memcpy(u->in.data, o->tail, keep);
	u->offset = in->offset - keep;
	ssize_t r = accel_input_read(in, u->in.data + keep, 8);
	if (r < 0)
		return (int)r;
	if (r == 0)
		return 0;
	u->in.len = keep + (size_t)r;
	u->in_overlap = keep;
	memcpy(o->tail, u->in.data + u->in.len - 4, 4);
	o->have_tail = 1;
	return 1;
}

static void test_overlap_counted_once(void **state)
{
	struct accel_route route;
	struct accel_ctx *ctx = fake_ctx(&route);
	const char text[] = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"; /* 40 bytes: 5 units */
	struct accel_input in;
	struct accel_output out;
	assert_int_equal(accel_input_mem(&in, text, 40, NULL), 0);
	accel_output_null(&out);
	struct overlap o = { .have_tail = 0 };
	struct accel_stream_ops ops = { next_overlap, NULL, NULL, NULL };
	struct accel_stream_config cfg = quiet_cfg();
	struct accel_stream_stats st;
	char err[256];
	assert_int_equal(accel_stream_run(ctx, &cfg, &route, &upper_op, &ops, &o, &in, &out, &st, err, sizeof err), 0);
	accel_input_close(&in);
	assert_int_equal(st.units, 5);
	/* 56 bytes were processed, 40 of them new: the input is 40 bytes. */
	assert_int_equal(out.written, 56);
	assert_int_equal(st.bytes_out, 56);
	assert_int_equal(st.bytes_in, 40);
	assert_int_equal(st.engines[0].bytes_in, 40);
	accel_ctx_free(ctx);
}

/* ------------------------------------------------ progress */

static void test_progress_in_the_operations_unit(void **state)
{
	char line[256];
	/* Bytes, with ETA. */
	struct accel_progress *p = accel_progress_new("zstd.compress", 2048);
	assert_non_null(p);
	accel_progress_update(p, 1024);
	accel_progress_format(p, 1.0, line, sizeof line);
	assert_string_equal(line, "zstd.compress: 1.0 KiB ( 50%) 1.0 KiB/s ETA 00:01");
	accel_progress_end(p);
	/* Samples: 4 bytes each (16-bit stereo), 1000 in all. */
	p = accel_progress_new_unit("fft", "samples", 0.25, 1000);
	accel_progress_update(p, 2000);
	accel_progress_format(p, 2.0, line, sizeof line);
	assert_string_equal(line, "fft: 500 samples ( 50%) 250 samples/s ETA 00:02");
	accel_progress_end(p);
	/* Seconds of media: a speed, and the ETA in wall-clock time. */
	p = accel_progress_new_unit("transcode", "s", 0.5, 3600);
	accel_progress_update(p, 1800);
	accel_progress_format(p, 300.0, line, sizeof line);
	assert_string_equal(line, "transcode: 15:00 ( 25%) 3.00x ETA 15:00");
	accel_progress_set(p, 3661);
	accel_progress_format(p, 3661.0, line, sizeof line);
	assert_string_equal(line, "transcode: 1:01:01 (102%) 1.00x ETA 00:00");
	accel_progress_end(p);
	/* Frames, total unknown: no ETA. */
	p = accel_progress_new_unit("infer", "frames", 1, 0);
	accel_progress_set(p, 3000);
	accel_progress_format(p, 2.0, line, sizeof line);
	assert_string_equal(line, "infer: 3.0k frames 1.5k frames/s");
	accel_progress_end(p);
	/* "B" is bytes. */
	p = accel_progress_new_unit("x", "B", 0, -1);
	accel_progress_update(p, 3 << 20);
	accel_progress_format(p, 3.0, line, sizeof line);
	assert_string_equal(line, "x: 3.0 MiB 1.0 MiB/s");
	accel_progress_end(p);
}

/* ------------------------------------------------ timed flush */

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void open_pipe_input(struct accel_input *in, int fd)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	assert_int_equal(accel_input_open(in, path), 0);
	close(fd);
}

static void test_peek_until_returns_at_the_deadline(void **state)
{
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	assert_int_equal(write(pfd[1], "0123456789", 10), 10);
	struct accel_input in;
	open_pipe_input(&in, pfd[0]);
	const uint8_t *p;
	double t0 = accel_now(), c0 = cpu_seconds();
	assert_int_equal(accel_input_peek_until(&in, 100, t0 + 0.3, &p), 10);
	double dt = accel_now() - t0, cpu = cpu_seconds() - c0;
	assert_false(in.eof);
	assert_memory_equal(p, "0123456789", 10);
	assert_true(dt >= 0.29);
	assert_true(dt < 1.5);
	/* Waiting is in poll(), not a spin. */
	assert_true(cpu < 0.1);
	/* A deadline already passed: what is buffered, at once. */
	t0 = accel_now();
	assert_int_equal(accel_input_peek_until(&in, 100, t0 - 1, &p), 10);
	assert_true(accel_now() - t0 < 0.1);
	/* The end of the input ends the wait long before the deadline. */
	close(pfd[1]);
	t0 = accel_now();
	assert_int_equal(accel_input_peek_until(&in, 100, t0 + 30, &p), 10);
	assert_true(in.eof);
	assert_true(accel_now() - t0 < 1.0);
	accel_input_close(&in);
}

struct paused_writer {
	int fd;
	double wrote_first;
};

/* 100 bytes, a pause of a second, 50 more, the end. */
static void *write_with_pause(void *arg)
{
	struct paused_writer *w = arg;
	char a[100], b[50];
	memset(a, 'a', sizeof a);
	memset(b, 'b', sizeof b);
	w->wrote_first = accel_now();
	if (write(w->fd, a, sizeof a) != sizeof a)
		abort();
	usleep(1000000);
	if (write(w->fd, b, sizeof b) != sizeof b)
		abort();
	close(w->fd);
	return NULL;
}

struct output_reader {
	int fd;
	char data[512];
	size_t n;
	double got_first;        /* when the first 100 bytes had come */
};

static void *read_output(void *arg)
{
	struct output_reader *r = arg;
	ssize_t k;
	while ((k = read(r->fd, r->data + r->n, sizeof r->data - 1 - r->n)) > 0) {
		r->n += (size_t)k;
		if (r->n >= 100 && !r->got_first)
			r->got_first = accel_now();
	}
	return NULL;
}

static int next_timed(void *user, struct accel_input *in, struct accel_unit *u, char *err, size_t len)
{
	return accel_read_chunk_until(in, u, 4096, *(const double *)user);
}

static void test_timed_flush_emits_a_partial_unit(void **state)
{
	struct accel_route route;
	struct accel_ctx *ctx = fake_ctx(&route);
	int ip[2], op[2];
	assert_int_equal(pipe(ip), 0);
	assert_int_equal(pipe(op), 0);
	struct accel_input in;
	open_pipe_input(&in, ip[0]);
	struct accel_output out;
	assert_int_equal(accel_output_fd(&out, op[1]), 0);
	struct paused_writer w = { ip[1], 0 };
	struct output_reader r = { .fd = op[0] };
	pthread_t wt, rt;
	assert_int_equal(pthread_create(&rt, NULL, read_output, &r), 0);
	assert_int_equal(pthread_create(&wt, NULL, write_with_pause, &w), 0);
	double max_wait = 0.2;
	struct accel_stream_ops ops = { next_timed, NULL, NULL, NULL };
	struct accel_stream_config cfg = quiet_cfg();
	struct accel_stream_stats st;
	char err[256];
	assert_int_equal(accel_stream_run(ctx, &cfg, &route, &upper_op, &ops, &max_wait, &in, &out, &st, err,
					  sizeof err), 0);
	close(op[1]);
	pthread_join(wt, NULL);
	pthread_join(rt, NULL);
	accel_input_close(&in);
	close(op[0]);
	/* The first 100 bytes went out as a unit of their own once the
	 * deadline passed, while the writer still paused. */
	double latency = r.got_first - w.wrote_first;
	assert_true(r.got_first > 0);
	assert_true(latency >= 0.19);
	assert_true(latency < 0.8);
	assert_int_equal(r.n, 150);
	char want[151];
	memset(want, 'A', 100);
	memset(want + 100, 'B', 50);
	assert_memory_equal(r.data, want, 150);
	assert_int_equal(st.units, 2);
	assert_int_equal(st.bytes_in, 150);
	accel_ctx_free(ctx);
}

/* ------------------------------------------------ an -o file that seeks */

/* Writes len bytes of a pattern into fd, then closes it. */
struct pattern_writer {
	int fd;
	size_t len;
};

static uint8_t pattern_byte(size_t i)
{
	return (uint8_t)(i * 2654435761u >> 13);
}

static void *write_pattern(void *arg)
{
	struct pattern_writer *w = arg;
	uint8_t buf[4096];
	for (size_t done = 0; done < w->len;) {
		size_t n = w->len - done < sizeof buf ? w->len - done : sizeof buf;
		for (size_t i = 0; i < n; i++)
			buf[i] = pattern_byte(done + i);
		ssize_t k = write(w->fd, buf, n);
		if (k <= 0)
			abort();
		done += (size_t)k;
	}
	close(w->fd);
	return NULL;
}

/* Chunks of a pipe, around the first piece accel_read_chunk reads of an
 * input's first chunk (64 KiB): every byte once, in order, whole chunks
 * but the last, the last one marked; a short input gets a short buffer. */
static void test_read_chunk_first_piece(void **state)
{
	(void)state;
	const size_t chunk = 256 << 10;
	const size_t lens[] = { 0, 1, 1000, 65535, 65536, 65537, 65538, 200000, chunk - 1, chunk, chunk + 1,
				2 * chunk, 600000 };
	for (size_t t = 0; t < sizeof lens / sizeof lens[0]; t++) {
		int pfd[2];
		assert_int_equal(pipe(pfd), 0);
		struct pattern_writer w = { pfd[1], lens[t] };
		pthread_t th;
		assert_int_equal(pthread_create(&th, NULL, write_pattern, &w), 0);
		struct accel_input in;
		open_pipe_input(&in, pfd[0]);
		struct accel_unit u;
		memset(&u, 0, sizeof u);
		size_t got = 0;
		for (int k = 0;; k++) {
			u.seq = (uint64_t)k;
			int rc = accel_read_chunk(&in, &u, chunk);
			assert_true(rc == 0 || rc == 1);
			if (rc == 0)
				break;
			assert_int_equal(u.offset, got);
			assert_true(u.in.len <= chunk);
			if (!u.last)
				assert_int_equal(u.in.len, chunk);
			for (size_t i = 0; i < u.in.len; i++)
				if (u.in.data[i] != pattern_byte(got + i))
					fail_msg("input of %zu bytes: byte %zu differs", lens[t], got + i);
			got += u.in.len;
			if (u.last)
				break;
		}
		assert_int_equal(got, lens[t]);
		assert_true(u.last || lens[t] % chunk == 0);
		if (lens[t] <= 1000)
			assert_true(u.in.cap < chunk / 2);
		accel_buf_free(&u.in);
		accel_input_close(&in);
		pthread_join(th, NULL);
	}
}

static void test_output_seek_complete_or_absent(void **state)
{
	char dir[] = "/tmp/test_io.XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/out.mp4", dir);
	struct accel_output out;
	/* A muxer writes a placeholder, the data, then seeks back for the
	 * header: the file appears only on commit, with the header in place. */
	assert_int_equal(accel_output_open(&out, path, 0, 1), 0);
	assert_int_equal(accel_output_write(&out, "XXXX", 4), 0);
	assert_int_equal(accel_output_write(&out, "media", 5), 0);
	assert_int_equal(accel_output_seek(&out, 0, SEEK_SET), 0);
	assert_int_equal(accel_output_write(&out, "HEAD", 4), 0);
	assert_int_equal(accel_output_seek(&out, 0, SEEK_END), 9);
	assert_int_equal(accel_output_seek(&out, 0, 42), ACCEL_EINVAL);
	assert_int_equal(accel_output_seek(&out, -100, SEEK_CUR), ACCEL_EINVAL);
	struct stat st;
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(accel_output_commit(&out), 0);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char buf[32] = "";
	assert_int_equal(fread(buf, 1, sizeof buf, f), 9);
	fclose(f);
	assert_string_equal(buf, "HEADmedia");
	unlink(path);
	/* Aborted after a seek: no file, no temporary. */
	assert_int_equal(accel_output_open(&out, path, 0, 1), 0);
	assert_int_equal(accel_output_write(&out, "partial", 7), 0);
	assert_int_equal(accel_output_seek(&out, 2, SEEK_SET), 2);
	accel_output_abort(&out);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(rmdir(dir), 0);
	/* stdout (here a pipe) cannot seek. */
	int pfd[2], saved = dup(1);
	assert_int_equal(pipe(pfd), 0);
	dup2(pfd[1], 1);
	assert_int_equal(accel_output_open(&out, NULL, 1, 1), 0);
	assert_int_equal(accel_output_seek(&out, 0, SEEK_SET), ACCEL_ENOTSUP);
	dup2(saved, 1);
	close(saved);
	close(pfd[0]);
	close(pfd[1]);
}

/* ------------------------------------- permissions and symlinks of -o */

/* Write "data" to path through an output (force): the mode the temporary
 * had before commit (from its fd), or -1. */
static int write_file(const char *path, int set_mode)
{
	struct accel_output out;
	struct stat st;
	if (accel_output_open(&out, path, 1, 1) < 0)
		return -1;
	if (set_mode >= 0)
		assert_int_equal(accel_output_mode(&out, (unsigned)set_mode), 0);
	assert_int_equal(fstat(out.fd, &st), 0);
	assert_int_equal(accel_output_write(&out, "data", 4), 0);
	assert_int_equal(accel_output_commit(&out), 0);
	return (int)(st.st_mode & 07777);
}

/* accel_output_attrs: mode, times (and owner as root) of the source on
 * the committed file; nothing for stdout or a null output. */
static void test_output_attrs(void **state)
{
	char dir[] = "/tmp/test_io.XXXXXX", file[64];
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof file, "%s/out", dir);
	struct stat src = { 0 }, st;
	src.st_mode = S_IFREG | 0604;
	src.st_uid = getuid() == 0 ? 4321 : getuid();
	src.st_gid = getuid() == 0 ? 1234 : getgid();
	src.st_atim.tv_sec = 1000000000;
	src.st_atim.tv_nsec = 250;
	src.st_mtim.tv_sec = 981173106;
	src.st_mtim.tv_nsec = 500000000;
	struct accel_output out;
	assert_int_equal(accel_output_open(&out, file, 0, 1), 0);
	assert_int_equal(accel_output_write(&out, "data", 4), 0);
	assert_int_equal(accel_output_attrs(&out, &src), 0);
	assert_int_equal(accel_output_commit(&out), 0);
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0604);
	assert_int_equal(st.st_mtim.tv_sec, 981173106);
	assert_int_equal(st.st_mtim.tv_nsec, 500000000);
	/* accessed now, as zstd and lz4 set it */
	assert_true(st.st_atim.tv_sec > 1000000000 + 365 * 86400);
	assert_int_equal(st.st_uid, src.st_uid);
	assert_int_equal(st.st_gid, src.st_gid);
	assert_int_equal(accel_output_null(&out), 0);
	assert_int_equal(accel_output_attrs(&out, &src), 0);
	unlink(file);
	rmdir(dir);
	(void)state;
}

static int mode_of(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

static void test_output_keeps_mode_and_links(void **state)
{
	char dir[] = "/tmp/test_io.XXXXXX", file[64], link[64], sub[64], rel[64], dangling[64];
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof file, "%s/file", dir);
	snprintf(link, sizeof link, "%s/link", dir);
	snprintf(sub, sizeof sub, "%s/sub", dir);
	snprintf(rel, sizeof rel, "%s/sub/rel", dir);
	snprintf(dangling, sizeof dangling, "%s/dangling", dir);
	mode_t old = umask(022);
	/* New: 0666 less the umask, from the start. */
	assert_int_equal(write_file(file, -1), 0644);
	assert_int_equal(mode_of(file), 0644);
	/* Replaced: the old file's mode, never more open. */
	assert_int_equal(chmod(file, 0600), 0);
	assert_int_equal(write_file(file, -1), 0600);
	assert_int_equal(mode_of(file), 0600);
	/* accel_output_mode: the bits asked for (0777 of them), at once. */
	assert_int_equal(write_file(file, 04640), 0640);
	assert_int_equal(mode_of(file), 0640);
	/* A symlink (relative, from another folder) stays; its target is
	 * replaced and keeps its mode. */
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(symlink("../file", rel), 0);
	assert_int_equal(symlink("sub/rel", link), 0);
	assert_int_equal(write_file(link, -1), 0640);
	struct stat st;
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(lstat(rel, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(lstat(file, &st), 0);
	assert_int_equal(st.st_size, 4);
	/* A link to nothing yet makes its target. */
	assert_int_equal(symlink("made", dangling), 0);
	assert_int_equal(write_file(dangling, -1), 0644);
	snprintf(file, sizeof file, "%s/made", dir);
	assert_int_equal(mode_of(file), 0644);
	/* A loop of links is ELOOP. */
	struct accel_output out;
	unlink(dangling);
	assert_int_equal(symlink("dangling", dangling), 0);
	assert_int_equal(accel_output_open(&out, dangling, 1, 1), ACCEL_EIO);
	assert_int_equal(errno, ELOOP);
	umask(old);
	unlink(dangling);
	unlink(file);
	snprintf(file, sizeof file, "%s/file", dir);
	unlink(file);
	unlink(link);
	unlink(rel);
	assert_int_equal(rmdir(sub), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memory_input_reads_as_a_file),
		cmocka_unit_test(test_null_and_fd_outputs),
		cmocka_unit_test(test_compress_memory_equals_file),
		cmocka_unit_test(test_jobs_share_engine_contexts),
		cmocka_unit_test(test_overlap_counted_once),
		cmocka_unit_test(test_progress_in_the_operations_unit),
		cmocka_unit_test(test_peek_until_returns_at_the_deadline),
		cmocka_unit_test(test_timed_flush_emits_a_partial_unit),
		cmocka_unit_test(test_read_chunk_first_piece),
		cmocka_unit_test(test_output_seek_complete_or_absent),
		cmocka_unit_test(test_output_keeps_mode_and_links),
		cmocka_unit_test(test_output_attrs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
