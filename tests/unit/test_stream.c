/*
 * test_stream.c - the stream engine with a tiny operation ("upper": bytes to
 * upper case) on two fake device engines: output in input order, bounded
 * units in flight, per-unit fallback, engines dropped, and the errors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <accel/stream.h>
#include "core.h"

#define CHUNK 10

static const char *const upper_ops[] = { "upper", NULL };

static int fake_probe(struct accel_probe *p, const char *id)
{
	struct accel_device d;
	memset(&d, 0, sizeof d);
	d.cls = ACCEL_CLASS_GPU;
	d.numa_node = -1;
	strcpy(d.id, id);
	int dev = accel_probe_add_device(p, &d);
	return dev < 0 || accel_probe_add_engine(p, dev, NULL) < 0 ? ACCEL_ENOMEM : 0;
}
static int fa_probe(struct accel_probe *p) { return fake_probe(p, "gpu0"); }
static int fb_probe(struct accel_probe *p) { return fake_probe(p, "gpu1"); }

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

/* Upper-cases the unit; '!' in the input is bad data, and so is '?', but
 * the bytes before it are good output (out_good). Engine fa is slow on
 * every third unit, so units finish out of order. */
static int slow_bad;   /* 1: a unit holding '?' takes 20 ms, the units after it finish first */

static int upper_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	const struct accel_engine *e = ctx;
	if (!strcmp(e->backend->name, "fa") && u->seq % 3 == 0)
		usleep(2000);
	if (slow_bad && memchr(u->in.data, '?', u->in.len))
		usleep(20000);
	if (accel_buf_reserve(&u->out, u->in.len + 1) < 0)
		return ACCEL_ENOMEM;
	for (size_t i = 0; i < u->in.len; i++) {
		if (u->in.data[i] == '!' || u->in.data[i] == '?') {
			snprintf(err, len, "bad byte");
			if (u->in.data[i] == '?')
				u->out.len = u->out_good = i;
			return ACCEL_EDATA;
		}
		u->out.data[i] = (uint8_t)toupper(u->in.data[i]);
	}
	u->out.len = u->in.len;
	return 0;
}

static void upper_close(void *ctx) { }

static const struct accel_backend fa_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "fa", .ops = upper_ops, .probe = fa_probe,
	.supports = upper_supports, .open = upper_open, .run = upper_run, .close = upper_close,
};
static const struct accel_backend fb_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "fb", .ops = upper_ops, .probe = fb_probe,
	.supports = upper_supports, .open = upper_open, .run = upper_run, .close = upper_close,
};

/* The reader: CHUNK-byte units; remembers the distinct units it filled. */
struct reader {
	struct accel_unit *seen[64];
	int nseen;
};

static int next_unit(void *user, struct accel_input *in, struct accel_unit *u, char *err, size_t len)
{
	struct reader *r = user;
	int known = 0;
	for (int i = 0; i < r->nseen; i++)
		known |= r->seen[i] == u;
	if (!known && r->nseen < 64)
		r->seen[r->nseen++] = u;
	const uint8_t *p;
	ssize_t n = accel_input_peek(in, 1, &p);
	if (n > 0 && *p == '#') {
		snprintf(err, len, "bad header");
		return ACCEL_EDATA;
	}
	return accel_read_chunk(in, u, CHUNK);
}

static int begin(void *user, struct accel_output *out) { return accel_output_write(out, "<", 1); }
static int end(void *user, struct accel_output *out) { return accel_output_write(out, ">", 1); }

struct fixture {
	struct accel_ctx *ctx;
	struct accel_route route;
	char in_path[64], out_path[64];
	struct accel_input in;
	struct accel_output out;
	struct accel_stream_stats stats;
	struct reader reader;
	char err[512];
};

static struct accel_op upper_op = { .name = "upper", .chunk_size = CHUNK };

static void add_backend(struct accel_ctx *ctx, const struct accel_backend *b)
{
	struct accel_backend_status *s = &ctx->backends[ctx->nbackends++];
	memset(s, 0, sizeof *s);
	strcpy(s->name, b->name);
	strcpy(s->origin, "test_stream.c");
	s->backend = b;
}

/* A context with engines fa:gpu0 and fb:gpu1 routed in that order (shared:
 * both serve the stream), input text written to a file, output to a file. */
static void setup_run(struct fixture *f, const char *text, int shared)
{
	memset(f, 0, sizeof *f);
	unsetenv("ACCEL_FAULT");
	assert_int_equal(core_fault_status(), 0);
	assert_int_equal(core_fault_parse(""), 0);
	unsetenv("ACCEL_BACKEND_PATH");
	f->ctx = accel_ctx_new();
	assert_non_null(f->ctx);
	add_backend(f->ctx, &fa_backend);
	add_backend(f->ctx, &fb_backend);
	struct accel_route_req req = { &upper_op, "fa,fb", -1, "/nonexistent" };
	assert_int_equal(accel_route(f->ctx, &req, &f->route), 0);
	assert_int_equal(f->route.nranked, 2);
	assert_string_equal(f->route.entries[0].name, "fa:gpu0");
	assert_string_equal(f->route.entries[1].name, "fb:gpu1");
	f->route.shared = shared;

	strcpy(f->in_path, "/tmp/accel-stream-in-XXXXXX");
	int fd = mkstemp(f->in_path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(accel_input_open(&f->in, f->in_path), 0);
	strcpy(f->out_path, "/tmp/accel-stream-out-XXXXXX");
	f->out.fd = mkstemp(f->out_path);
	assert_true(f->out.fd >= 0);
}

static int run(struct fixture *f, enum accel_fallback fb, int with_header)
{
	struct accel_stream_config cfg = { .threads = 1, .fallback = fb, .total_size = -1,
					   .prog = "test_stream", .verbose = -1 };
	struct accel_stream_ops ops = { next_unit, with_header ? begin : NULL, with_header ? end : NULL, NULL };
	return accel_stream_run(f->ctx, &cfg, &f->route, &upper_op, &ops, &f->reader, &f->in, &f->out,
				&f->stats, f->err, sizeof f->err);
}

/* The output file's content (static buffer). */
static const char *output(struct fixture *f)
{
	static char buf[8192];
	ssize_t n = pread(f->out.fd, buf, sizeof buf - 1, 0);
	assert_true(n >= 0);
	buf[n] = 0;
	return buf;
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

static void output_in_input_order(void **state)
{
	struct fixture f;
	char want[1001];
	char *t = text(1000, want);
	setup_run(&f, t, 1);
	assert_int_equal(run(&f, ACCEL_FALLBACK_NEXT, 0), 0);
	assert_string_equal(output(&f), want);
	assert_int_equal(f.stats.units, 100);
	assert_int_equal(f.stats.bytes_in, 1000);
	assert_int_equal(f.stats.bytes_out, 1000);
	const struct accel_engine_stats *a = stats_of(&f, "fa:gpu0"), *b = stats_of(&f, "fb:gpu1");
	assert_int_equal(a->units + b->units, 100);
	assert_int_equal(a->workers, 1);
	assert_int_equal(b->workers, 1);
	/* Bounded: 2 workers, so at most 2 * 2 + 2 units ever filled. */
	assert_true(f.reader.nseen <= 6);
	assert_true(f.reader.nseen >= 2);
	teardown_run(&f);
	free(t);
}

static void header_trailer_and_empty_input(void **state)
{
	struct fixture f;
	setup_run(&f, "", 0);
	assert_int_equal(run(&f, ACCEL_FALLBACK_NEXT, 1), 0);
	assert_string_equal(output(&f), "<>");
	assert_int_equal(f.stats.units, 1);  /* one empty last chunk */
	teardown_run(&f);
	setup_run(&f, "abcdefghijklmnopqrstuvwxyz", 0);
	assert_int_equal(run(&f, ACCEL_FALLBACK_NEXT, 1), 0);
	assert_string_equal(output(&f), "<ABCDEFGHIJKLMNOPQRSTUVWXYZ>");
	assert_int_equal(f.stats.units, 3);
	teardown_run(&f);
}

/* cfg.write: each unit's output through the hook, in input order, with
 * the job's user pointer (accel-fft's split rows). */
static void *hook_user;

static int bracket_write(void *user, struct accel_output *out, const struct accel_unit *u, char *err,
			  size_t len)
{
	(void)err;
	(void)len;
	if (user != hook_user)
		return ACCEL_EINVAL;
	char head[32];
	int n = snprintf(head, sizeof head, "[%llu:", (unsigned long long)u->seq);
	int rc = accel_output_write(out, head, (size_t)n);
	if (!rc)
		rc = accel_output_write(out, u->out.data, u->out.len);
	if (!rc)
		rc = accel_output_write(out, "]", 1);
	return rc;
}

static void write_hook_sees_units_in_order(void **state)
{
	struct fixture f;
	setup_run(&f, "abcdefghijklmnopqrstuvwxyz", 1);
	hook_user = &f.reader;
	struct accel_stream_config cfg = { .threads = 1, .fallback = ACCEL_FALLBACK_NEXT, .total_size = -1,
					   .prog = "test_stream", .verbose = -1, .write = bracket_write };
	struct accel_stream_ops ops = { next_unit, begin, end, NULL };
	assert_int_equal(accel_stream_run(f.ctx, &cfg, &f.route, &upper_op, &ops, &f.reader, &f.in, &f.out,
					  &f.stats, f.err, sizeof f.err), 0);
	assert_string_equal(output(&f), "<[0:ABCDEFGHIJ][1:KLMNOPQRST][2:UVWXYZ]>");
	teardown_run(&f);
}

/* A hook that refuses unit 1 (as lz4's parts whose checksum fails): the
 * run ends with its line, unit 0 written, unit 1 and 2 not. */
static int refuse_second(void *user, struct accel_output *out, const struct accel_unit *u, char *err, size_t len)
{
	(void)user;
	if (u->seq == 1) {
		snprintf(err, len, "unit %llu refused by the hook", (unsigned long long)u->seq);
		return ACCEL_EDATA;
	}
	return accel_output_write(out, u->out.data, u->out.len);
}

static void write_hook_error_is_its_line(void **state)
{
	(void)state;
	for (int threads = 1; threads <= 2; threads++) {
		struct fixture f;
		setup_run(&f, "abcdefghijklmnopqrstuvwxyz", 1);
		struct accel_stream_config cfg = { .threads = threads, .fallback = ACCEL_FALLBACK_NEXT,
						   .total_size = -1, .prog = "test_stream", .verbose = -1,
						   .write = refuse_second };
		struct accel_stream_ops ops = { next_unit, NULL, NULL, NULL };
		assert_int_equal(accel_stream_run(f.ctx, &cfg, &f.route, &upper_op, &ops, &f.reader, &f.in, &f.out,
						  &f.stats, f.err, sizeof f.err),
				 ACCEL_EDATA);
		assert_string_equal(f.err, "unit 1 refused by the hook");
		assert_string_equal(output(&f), "ABCDEFGHIJ");
		teardown_run(&f);
	}
}

/* accel_stream_ops.out_at: upper's output is as long as its input, so a
 * unit's place is its input offset; shift moves unit 3's one byte on (a
 * place that does not follow from the units before it). */
static int shift_unit3;

static int64_t upper_out_at(void *user, const struct accel_unit *u)
{
	(void)user;
	return (int64_t)u->offset + (shift_unit3 && u->seq == 3);
}

/* Run upper on f's input into out (opened by the caller), header and
 * trailer around, out_at given; `threads` workers an engine. */
static int run_placed(struct fixture *f, struct accel_output *out, int threads)
{
	struct accel_stream_config cfg = { .threads = threads, .fallback = ACCEL_FALLBACK_NEXT, .total_size = -1,
					   .prog = "test_stream", .verbose = -1 };
	struct accel_stream_ops ops = { next_unit, begin, end, upper_out_at };
	return accel_stream_run(f->ctx, &cfg, &f->route, &upper_op, &ops, &f->reader, &f->in, out, &f->stats,
				f->err, sizeof f->err);
}

/* A run of input t whose output is the file path (f's output's name and
 * ".placed"), opened by accel_output_open into out: its temporary. */
static void setup_placed(struct fixture *f, const char *t, char *path, size_t len, struct accel_output *out)
{
	setup_run(f, t, 1);
	snprintf(path, len, "%s.placed", f->out_path);
	assert_int_equal(accel_output_open(out, path, 1, 1), 0);
}

/* The file at path: its bytes (static buffer), or NULL when missing. */
static const char *file_text(const char *path)
{
	static char buf[8192];
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return NULL;
	size_t n = fread(buf, 1, sizeof buf - 1, fp);
	fclose(fp);
	buf[n] = 0;
	return buf;
}

/* Units with places (out_at) written at them, out of order (engine fa is
 * slow on every third unit), into an output file's temporary: the file is
 * the units in order between header and trailer, its size exact, as into
 * a null output; a place that is not where the units before it end fails
 * the run (so the places were used), while the same places are ignored
 * for a regular file the caller opened (written in order). */
static void units_written_at_their_places(void **state)
{
	(void)state;
	char want[1001], path[96];
	char *t = text(1000, want);
	char full[1003];
	snprintf(full, sizeof full, "<%s>", want);
	for (int threads = 1; threads <= 2; threads++) {
		struct fixture f;
		struct accel_output out;
		setup_placed(&f, t, path, sizeof path, &out);
		uint64_t base = 0;
		assert_int_equal(core_output_positioned(&out, &base), 1);
		assert_int_equal(base, 0);
		/* Not a caller's fd (stdout's file: holes after a crash), nor
		 * a window; /dev/null is. */
		struct accel_output other;
		assert_int_equal(accel_output_fd(&other, f.out.fd), 0);
		assert_int_equal(core_output_positioned(&other, &base), 0);
		accel_output_window(&out, 0, 5);
		assert_int_equal(core_output_positioned(&out, &base), 0);
		out.window = 0;
		assert_int_equal(accel_output_open(&other, "/dev/null", 1, 1), 0);
		assert_int_equal(core_output_positioned(&other, &base), 1);
		assert_int_equal(accel_output_commit(&other), 0);
		assert_int_equal(run_placed(&f, &out, threads), 0);
		assert_int_equal(f.stats.units, 100);
		assert_int_equal(f.stats.bytes_out, 1000);
		assert_int_equal(out.written, 1002);
		assert_int_equal(accel_output_commit(&out), 0);
		assert_string_equal(file_text(path), full);
		unlink(path);

		struct accel_output null;
		accel_output_null(&null);
		accel_input_close(&f.in);
		assert_int_equal(accel_input_open(&f.in, f.in_path), 0);
		assert_int_equal(run_placed(&f, &null, threads), 0);
		assert_int_equal(null.written, 1002);
		assert_int_equal(null.size, 1002);

		shift_unit3 = 1;
		accel_input_close(&f.in);
		assert_int_equal(accel_input_open(&f.in, f.in_path), 0);
		assert_int_equal(accel_output_open(&out, path, 1, 1), 0);
		assert_int_equal(run_placed(&f, &out, threads), ACCEL_EDEVICE);
		assert_string_equal(f.err,
				    "internal error: unit 3's output was placed at byte 31, the units before it end at 30");
		accel_output_abort(&out);
		assert_null(file_text(path));
		accel_input_close(&f.in);
		assert_int_equal(accel_input_open(&f.in, f.in_path), 0);
		assert_int_equal(run_placed(&f, &f.out, threads), 0);
		assert_string_equal(output(&f), full);
		shift_unit3 = 0;
		teardown_run(&f);
	}
	free(t);
}

/* A data error in unit 5 with good bytes before it ('?' at byte 55), found
 * after the other worker wrote the units after it at their places: the
 * placed output ends there (they are cut off), and the run fails with the
 * unit's line. */
static void placed_output_ends_at_a_cut(void **state)
{
	(void)state;
	char want[1001], path[96];
	char *t = text(1000, want);
	t[55] = '?';
	slow_bad = 1;
	for (int threads = 1; threads <= 2; threads++) {
		struct fixture f;
		struct accel_output out;
		setup_placed(&f, t, path, sizeof path, &out);
		assert_int_equal(run_placed(&f, &out, threads), ACCEL_EDATA);
		assert_string_equal(f.err, "bad byte at byte offset 50 (unit 5)");
		struct stat st;
		assert_int_equal(fstat(out.fd, &st), 0);
		assert_int_equal(st.st_size, 56);
		char got[57] = "";
		int rfd = open(out.tmp, O_RDONLY);
		assert_true(rfd >= 0);
		assert_int_equal(pread(rfd, got, 56, 0), 56);
		close(rfd);
		assert_memory_equal(got, "<", 1);
		assert_memory_equal(got + 1, want, 55);
		assert_int_equal(lseek(out.fd, 0, SEEK_CUR), 56);
		accel_output_abort(&out);
		teardown_run(&f);
	}
	slow_bad = 0;
	free(t);
}

static void fallback_next_retries_one_unit(void **state)
{
	struct fixture f;
	char want[301];
	char *t = text(300, want);
	setup_run(&f, t, 0);
	assert_int_equal(core_fault_parse("fa:3"), 0);
	assert_int_equal(run(&f, ACCEL_FALLBACK_NEXT, 0), 0);
	assert_string_equal(output(&f), want);
	const struct accel_engine_stats *a = stats_of(&f, "fa:gpu0"), *b = stats_of(&f, "fb:gpu1");
	assert_int_equal(a->units, 29);
	assert_int_equal(a->failures, 1);
	assert_false(a->dropped);
	assert_int_equal(b->units, 1);
	assert_int_equal(b->retried, 1);
	assert_int_equal(b->workers, 0);  /* not serving: only a fallback */
	teardown_run(&f);
	free(t);
}

static void failing_engine_is_dropped(void **state)
{
	struct fixture f;
	char want[301];
	char *t = text(300, want);
	setup_run(&f, t, 0);
	assert_int_equal(core_fault_parse("fa:*"), 0);
	assert_int_equal(run(&f, ACCEL_FALLBACK_NEXT, 0), 0);
	assert_string_equal(output(&f), want);
	const struct accel_engine_stats *a = stats_of(&f, "fa:gpu0"), *b = stats_of(&f, "fb:gpu1");
	assert_int_equal(a->units, 0);
	assert_int_equal(a->failures, 3);
	assert_true(a->dropped);
	assert_int_equal(b->units, 30);
	teardown_run(&f);
	free(t);
}

static void fallback_none_fails_the_run(void **state)
{
	struct fixture f;
	char want[301];
	char *t = text(300, want);
	setup_run(&f, t, 0);
	assert_int_equal(core_fault_parse("fa:3"), 0);
	assert_int_equal(run(&f, ACCEL_FALLBACK_NONE, 0), ACCEL_EDEVICE);
	assert_string_equal(f.err, "fa:gpu0: unit 3 (byte offset 30) failed: injected fault (ACCEL_FAULT); --fallback none");
	/* What was written is a prefix of the output, nothing after unit 2. */
	assert_true(strlen(output(&f)) <= 30);
	assert_memory_equal(output(&f), want, strlen(output(&f)));
	teardown_run(&f);
	/* --fallback cpu with no CPU engine for the operation: nowhere to go. */
	setup_run(&f, t, 0);
	assert_int_equal(core_fault_parse("fa:0"), 0);
	assert_int_equal(run(&f, ACCEL_FALLBACK_CPU, 0), ACCEL_EDEVICE);
	assert_string_equal(f.err, "fa:gpu0: unit 0 (byte offset 0) failed: injected fault (ACCEL_FAULT); no engine left to retry on");
	teardown_run(&f);
	/* The last engine of the route has no next. */
	setup_run(&f, t, 0);
	assert_int_equal(core_fault_parse("fa:5;fb:5"), 0);
	assert_int_equal(run(&f, ACCEL_FALLBACK_NEXT, 0), ACCEL_EDEVICE);
	assert_string_equal(f.err, "fb:gpu1: unit 5 (byte offset 50) failed: injected fault (ACCEL_FAULT); no engine left to retry on");
	teardown_run(&f);
	free(t);
}

static void bad_data_names_the_offset(void **state)
{
	struct fixture f;
	char want[301];
	char *t = text(300, want);
	t[57] = '!';
	setup_run(&f, t, 1);
	assert_int_equal(run(&f, ACCEL_FALLBACK_NEXT, 0), ACCEL_EDATA);
	assert_string_equal(f.err, "bad byte at byte offset 50 (unit 5)");
	/* The units before the bad one are written, whole, whichever engine
	 * finished first; nothing of the bad one. */
	assert_string_equal(output(&f), (want[50] = 0, want));
	teardown_run(&f);
	for (int i = 0; i < 300; i++)
		want[i] = (char)toupper(t[i]);
	/* Two bad units: the first in the stream is reported; the good bytes
	 * an engine kept of it (out_good) are written after the others. */
	t[57] = '?';
	t[254] = '!';
	setup_run(&f, t, 1);
	assert_int_equal(run(&f, ACCEL_FALLBACK_NEXT, 0), ACCEL_EDATA);
	assert_string_equal(f.err, "bad byte at byte offset 50 (unit 5)");
	assert_string_equal(output(&f), (want[57] = 0, want));
	teardown_run(&f);
	for (int i = 0; i < 300; i++)
		want[i] = (char)toupper(t[i]);
	/* The reader's own error names where the input stopped. */
	t[57] = 'x';
	t[254] = 'x';
	t[120] = '#';
	setup_run(&f, t, 0);
	assert_int_equal(run(&f, ACCEL_FALLBACK_NEXT, 0), ACCEL_EDATA);
	char msg[128];
	snprintf(msg, sizeof msg, "%s: bad header at byte offset 120", f.in_path);
	assert_string_equal(f.err, msg);
	/* What was read before it is run and written first. */
	want[57] = 'X';
	assert_string_equal(output(&f), (want[120] = 0, want));
	teardown_run(&f);
	free(t);
}

static void input_shorter_than_a_chunk(void **state)
{
	struct fixture f;
	setup_run(&f, "abc", 0);
	assert_int_equal(run(&f, ACCEL_FALLBACK_NEXT, 0), 0);
	assert_string_equal(output(&f), "ABC");
	teardown_run(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(output_in_input_order),
		cmocka_unit_test(header_trailer_and_empty_input),
		cmocka_unit_test(write_hook_sees_units_in_order),
		cmocka_unit_test(write_hook_error_is_its_line),
		cmocka_unit_test(units_written_at_their_places),
		cmocka_unit_test(placed_output_ends_at_a_cut),
		cmocka_unit_test(fallback_next_retries_one_unit),
		cmocka_unit_test(failing_engine_is_dropped),
		cmocka_unit_test(fallback_none_fails_the_run),
		cmocka_unit_test(bad_data_names_the_offset),
		cmocka_unit_test(input_shorter_than_a_chunk),
	};
	return cmocka_run_group_tests_name("stream", tests, NULL, NULL);
}
