/*
 * test_decompress.c - accel_frame_read and accel_decompress with a small
 * parallel limit: a frame whose content fits the limit but which is longer
 * itself gives back what it read and is decoded sequentially, frames on both
 * sides of the switch come out in order, skippable-only input decodes to
 * nothing, and a zstd window over the limit is refused; the gzip 'AC'
 * member header our writers and the frame walker share.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <zstd.h>
#include <accel/ops/compress.h>
#include "core.h"

#define LIMIT 4096

struct bytes {
	uint8_t *data;
	size_t len;
};

static void append(struct bytes *b, const void *p, size_t n)
{
	b->data = realloc(b->data, b->len + n);
	assert_non_null(b->data);
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

/* Append the zstd frame of n pseudo-random bytes (incompressible: the frame
 * is longer than its content); the content goes to `plain`. */
static size_t add_frame(struct bytes *z, struct bytes *plain, size_t n, unsigned seed)
{
	uint8_t *src = malloc(n ? n : 1), *dst = malloc(ZSTD_compressBound(n));
	assert_non_null(src);
	assert_non_null(dst);
	srand(seed);
	for (size_t i = 0; i < n; i++)
		src[i] = (uint8_t)rand();
	size_t c = ZSTD_compress(dst, ZSTD_compressBound(n), src, n, 1);
	assert_false(ZSTD_isError(c));
	append(z, dst, c);
	append(plain, src, n);
	free(src);
	free(dst);
	return c;
}

/* A file holding b, opened as input. */
static void open_input(struct accel_input *in, const struct bytes *b, char *path)
{
	strcpy(path, "/tmp/test_decompress.XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b->data, b->len), (ssize_t)b->len);
	close(fd);
	assert_int_equal(accel_input_open(in, path), 0);
}

static void frame_read_enotsup_consumes_nothing(void **state)
{
	struct bytes z = { 0 }, plain = { 0 };
	size_t first = add_frame(&z, &plain, LIMIT - 4, 1);
	add_frame(&z, &plain, 100, 2);
	assert_true(first > LIMIT);
	struct accel_input in;
	char path[64], err[256];
	open_input(&in, &z, path);
	struct accel_buf dst = { 0 };
	struct accel_frame f;
	assert_int_equal(accel_frame_read(&in, LIMIT, &dst, &f, err, sizeof err), ACCEL_ENOTSUP);
	assert_int_equal(in.offset, 0);
	const uint8_t *p;
	assert_int_equal(accel_input_peek(&in, z.len, &p), (ssize_t)z.len);
	assert_memory_equal(p, z.data, z.len);
	/* with room, the same frame is read whole */
	assert_int_equal(accel_frame_read(&in, 1 << 20, &dst, &f, err, sizeof err), 0);
	assert_int_equal(dst.len, first);
	assert_int_equal(f.content_size, LIMIT - 4);
	assert_memory_equal(dst.data, z.data, first);
	assert_int_equal(in.offset, first);
	accel_buf_free(&dst);
	accel_input_close(&in);
	unlink(path);
	free(z.data);
	free(plain.data);
}

/* A mapped file input: frames are handed out in place (dst borrows them,
 * cap 0), the 4 bytes peeked before mapping are not lost, a frame over the
 * limit consumes nothing, and a borrowed buffer that grows owns a copy. */
static void mapped_frames_are_borrowed(void **state)
{
	struct bytes z = { 0 }, plain = { 0 };
	size_t first = add_frame(&z, &plain, 1000, 3);
	size_t second = add_frame(&z, &plain, LIMIT - 4, 4);
	struct accel_input in;
	char path[64], err[256];
	open_input(&in, &z, path);
	const uint8_t *p;
	assert_int_equal(accel_input_peek(&in, 4, &p), 4);
	assert_int_equal(accel_input_map(&in), 1);
	struct accel_buf dst = { 0 };
	assert_int_equal(accel_buf_reserve(&dst, 100), 0);  /* an owned buffer first: freed, not leaked */
	struct accel_frame f;
	assert_int_equal(accel_frame_read(&in, LIMIT, &dst, &f, err, sizeof err), 0);
	assert_int_equal(dst.cap, 0);
	assert_int_equal(dst.len, first);
	assert_memory_equal(dst.data, z.data, first);
	assert_int_equal(accel_frame_read(&in, LIMIT, &dst, &f, err, sizeof err), ACCEL_ENOTSUP);
	assert_int_equal(in.offset, first);
	assert_int_equal(accel_frame_read(&in, 1 << 20, &dst, &f, err, sizeof err), 0);
	assert_int_equal(dst.len, second);
	assert_memory_equal(dst.data, z.data + first, second);
	const uint8_t *borrowed = dst.data;
	assert_int_equal(accel_buf_reserve(&dst, second + 10), 0);
	assert_true(dst.cap >= second + 10);
	assert_ptr_not_equal(dst.data, borrowed);
	assert_memory_equal(dst.data, z.data + first, second);
	accel_buf_free(&dst);
	assert_int_equal(accel_input_peek(&in, 1, &p), 0);
	accel_input_close(&in);
	/* not a regular file: left as it was */
	struct accel_input mem;
	assert_int_equal(accel_input_mem(&mem, z.data, z.len, NULL), 0);
	assert_int_equal(accel_input_map(&mem), 0);
	accel_input_close(&mem);
	unlink(path);
	free(z.data);
	free(plain.data);
}

/* A mapped file cut short under the reader: exit status 1 (the message on
 * stderr), not a crash. In a child, SIGBUS at its default (cmocka's
 * handler set aside). */
static void mapped_file_shrinking_is_exit_1(void **state)
{
	struct bytes z = { 0 }, plain = { 0 };
	add_frame(&z, &plain, 3 * 4096, 5);
	char path[64];
	struct accel_input in;
	open_input(&in, &z, path);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGBUS, SIG_DFL);
		if (accel_input_map(&in) != 1 || truncate(path, 0) < 0)
			_exit(3);
		volatile uint8_t x = in.buf[in.map_len - 1];
		(void)x;
		_exit(4);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 1);
	accel_input_close(&in);
	unlink(path);
	free(z.data);
	free(plain.data);
}

/* Decompress z with the parallel limit LIMIT; returns the result, output in *got. */
static int decompress(const struct bytes *z, int window_log_max, struct bytes *got, char *err, size_t len)
{
	struct accel_ctx *ctx = accel_ctx_new();
	assert_non_null(ctx);
	struct accel_input in;
	char ipath[64], opath[64];
	open_input(&in, z, ipath);
	strcpy(opath, "/tmp/test_decompress_out.XXXXXX");
	int fd = mkstemp(opath);
	assert_true(fd >= 0);
	close(fd);
	struct accel_output out;
	assert_int_equal(accel_output_open(&out, opath, 1, 0), 0);
	struct accel_decompress_cfg cfg = {
		.backend = "cpu",
		.stream = { .threads = 2, .fallback = ACCEL_FALLBACK_NONE, .total_size = -1, .prog = "test" },
		.window_log_max = window_log_max,
		.parallel_max = LIMIT,
	};
	struct accel_stream_stats stats;
	int rc = accel_decompress(ctx, &cfg, &in, &out, &stats, err, len);
	accel_input_close(&in);
	if (rc == 0) {
		assert_int_equal(accel_output_commit(&out), 0);
		FILE *f = fopen(opath, "rb");
		assert_non_null(f);
		uint8_t buf[4096];
		size_t n;
		got->len = 0;
		while ((n = fread(buf, 1, sizeof buf, f)) > 0)
			append(got, buf, n);
		fclose(f);
	} else {
		accel_output_abort(&out);
	}
	unlink(ipath);
	unlink(opath);
	accel_ctx_free(ctx);
	return rc;
}

static void frames_across_the_limit_in_order(void **state)
{
	struct bytes z = { 0 }, plain = { 0 }, got = { 0 };
	static const uint8_t skip[] = { 0x50, 0x2a, 0x4d, 0x18, 2, 0, 0, 0, 'h', 'i' };
	add_frame(&z, &plain, 1000, 3);           /* parallel */
	add_frame(&z, &plain, LIMIT - 4, 4);     /* content fits, frame does not */
	append(&z, skip, sizeof skip);
	add_frame(&z, &plain, 0, 5);              /* parallel, empty */
	add_frame(&z, &plain, 3 * LIMIT, 6);      /* content over the limit */
	add_frame(&z, &plain, 2000, 7);           /* parallel */
	char err[256] = "";
	assert_int_equal(decompress(&z, 0, &got, err, sizeof err), 0);
	assert_int_equal(got.len, plain.len);
	assert_memory_equal(got.data, plain.data, plain.len);
	free(z.data);
	free(plain.data);
	free(got.data);
}

static void skippable_only_is_empty(void **state)
{
	struct bytes z = { 0 }, got = { 0 };
	static const uint8_t skip[] = { 0x5f, 0x2a, 0x4d, 0x18, 1, 0, 0, 0, 'x' };
	append(&z, skip, sizeof skip);
	append(&z, skip, sizeof skip);
	char err[256] = "";
	assert_int_equal(decompress(&z, 0, &got, err, sizeof err), 0);
	assert_int_equal(got.len, 0);
	free(z.data);
	free(got.data);
}

static void window_over_the_limit_is_refused(void **state)
{
	/* windowLog 28, no content size: one RLE block of 10 bytes */
	static const uint8_t frame[] = { 0x28, 0xb5, 0x2f, 0xfd, 0x00, 18 << 3, (10 << 3 | 2 | 1) & 0xff, 0, 0, 'A' };
	struct bytes z = { 0 }, got = { 0 };
	append(&z, frame, sizeof frame);
	char err[256] = "";
	assert_int_equal(decompress(&z, 0, &got, err, sizeof err), ACCEL_ENOMEM);
	assert_non_null(strstr(err, "Frame requires too much memory for decoding"));
	assert_non_null(strstr(err, "--long=28"));
	assert_int_equal(decompress(&z, 28, &got, err, sizeof err), 0);
	assert_int_equal(got.len, 10);
	assert_memory_equal(got.data, "AAAAAAAAAA", 10);
	free(z.data);
	free(got.data);
}

/* The 'AC' member header: its bytes as RFC 1952 lays them out, the sizes
 * read back, another subfield before it skipped, one whose LEN runs past
 * XLEN ending the search. */
static void gzip_ac_header_bytes_and_find(void **state)
{
	uint8_t h[ACCEL_GZIP_AC_HEADER];
	accel_gzip_ac_header(h, 2, 0x01020304);
	accel_gzip_ac_set_size(h, 0x0a0b0c0d);
	static const uint8_t want[ACCEL_GZIP_AC_HEADER] = {
		0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 2, 3, 12, 0, 'A', 'C', 8, 0,
		0x0d, 0x0c, 0x0b, 0x0a, 0x04, 0x03, 0x02, 0x01,
	};
	assert_memory_equal(h, want, sizeof want);
	uint32_t member = 0, isize = 0;
	assert_int_equal(accel_gzip_ac_find(h + 12, 12, &member, &isize), 1);
	assert_int_equal(member, 0x0a0b0c0d);
	assert_int_equal(isize, 0x01020304);

	uint8_t x[18] = { 'B', 'C', 2, 0, 0x10, 0x00 };
	memcpy(x + 6, h + 12, 12);
	member = isize = 0;
	assert_int_equal(accel_gzip_ac_find(x, sizeof x, &member, &isize), 1);
	assert_int_equal(member, 0x0a0b0c0d);
	assert_int_equal(accel_gzip_ac_find(x, sizeof x - 1, &member, &isize), 0);
	x[2] = 200;  /* the first subfield's LEN lies */
	assert_int_equal(accel_gzip_ac_find(x, sizeof x, &member, &isize), 0);
	x[2] = 2;
	x[6 + 2] = 4;  /* 'AC' of another length: not ours */
	assert_int_equal(accel_gzip_ac_find(x, sizeof x, &member, &isize), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(frame_read_enotsup_consumes_nothing),
		cmocka_unit_test(mapped_frames_are_borrowed),
		cmocka_unit_test(mapped_file_shrinking_is_exit_1),
		cmocka_unit_test(frames_across_the_limit_in_order),
		cmocka_unit_test(skippable_only_is_empty),
		cmocka_unit_test(window_over_the_limit_is_refused),
		cmocka_unit_test(gzip_ac_header_bytes_and_find),
	};
	return cmocka_run_group_tests_name("decompress", tests, NULL, NULL);
}
