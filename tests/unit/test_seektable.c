/*
 * test_seektable.c - the seek table of zstd's seekable format
 * (libcore/ops/seekable.c): entries written and parsed back to the same
 * sizes and checksums, the exact bytes of a small table ("Zstandard Seekable
 * Format" 0.1.0), each size that lies refused with a line, a missing footer
 * not a table at all; the output window that --range writes through; and
 * accel_input_seek / accel_input_pread on memory inputs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <cmocka.h>
#include <accel/ops/compress.h>

/* The bytes accel_seek_table_write gives for t, in *len. */
static uint8_t *written(const struct accel_seek_table *t, size_t *len)
{
	int fd = memfd_create("table", 0);
	assert_true(fd >= 0);
	struct accel_output out;
	assert_int_equal(accel_output_fd(&out, fd), 0);
	assert_int_equal(accel_seek_table_write(t, &out), 0);
	off_t n = lseek(fd, 0, SEEK_END);
	uint8_t *p = malloc((size_t)n);
	assert_non_null(p);
	assert_int_equal(pread(fd, p, (size_t)n, 0), n);
	close(fd);
	*len = (size_t)n;
	return p;
}

static void table_bytes_and_round_trip(void **state)
{
	struct accel_seek_table t = { 0 };
	t.checksums = 1;
	assert_int_equal(accel_seek_table_add(&t, 100, 1000, 0x11223344), 0);
	assert_int_equal(accel_seek_table_add(&t, 50, 0, 0xaabbccdd), 0);
	size_t n;
	uint8_t *p = written(&t, &n);
	static const uint8_t want[] = {
		0x5e, 0x2a, 0x4d, 0x18, 33, 0, 0, 0,              /* skippable magic, 2 * 12 + 9 */
		100, 0, 0, 0, 0xe8, 0x03, 0, 0, 0x44, 0x33, 0x22, 0x11,
		50, 0, 0, 0, 0, 0, 0, 0, 0xdd, 0xcc, 0xbb, 0xaa,
		2, 0, 0, 0, 0x80, 0xb1, 0xea, 0x92, 0x8f,        /* 2 frames, checksums, seekable magic */
	};
	assert_int_equal(n, sizeof want);
	assert_memory_equal(p, want, sizeof want);
	struct accel_seek_table r = { 0 };
	char err[256] = "";
	assert_int_equal(accel_seek_table_parse(p, n, 150 + n, &r, err, sizeof err), 0);
	assert_int_equal(r.nframes, 2);
	assert_int_equal(r.checksums, 1);
	assert_int_equal(r.frame_size, n);
	assert_int_equal(r.coff[1], 100);
	assert_int_equal(r.coff[2], 150);
	assert_int_equal(r.doff[2], 1000);
	assert_int_equal(r.check[1], 0xaabbccdd);
	/* The same bytes as the end of a memory input. */
	uint8_t *file = calloc(1, 150 + n);
	assert_non_null(file);
	memcpy(file + 150, p, n);
	struct accel_input in;
	assert_int_equal(accel_input_mem(&in, file, 150 + n, "t"), 0);
	assert_int_equal(accel_seek_table_read(&in, &r, err, sizeof err), 0);
	assert_int_equal(r.nframes, 2);
	assert_int_equal(in.offset, 0);
	accel_input_close(&in);
	free(file);
	accel_seek_table_free(&r);
	accel_seek_table_free(&t);
	free(p);
}

static void sizes_that_lie_are_refused(void **state)
{
	struct accel_seek_table t = { 0 }, r = { 0 };
	assert_int_equal(accel_seek_table_add(&t, 100, 1000, 0), 0);
	assert_int_equal(accel_seek_table_add(&t, 50, 10, 0), 0);
	size_t n;
	uint8_t *p = written(&t, &n);
	char err[256] = "";
	assert_int_equal(n, 8 + 16 + 9);
	/* The frames do not add up with the bytes before the table. */
	assert_int_equal(accel_seek_table_parse(p, n, 151 + n, &r, err, sizeof err), ACCEL_EDATA);
	assert_string_equal(err, "seek table: its 2 frames add up to 150 bytes, but 151 come before the table");
	assert_int_equal(r.nframes, 0);
	/* A frame past the start of the table. */
	assert_int_equal(accel_seek_table_parse(p, n, 120 + n, &r, err, sizeof err), ACCEL_EDATA);
	assert_non_null(strstr(err, "frame 1 is 50 bytes at byte offset 100, past the start of the table"));
	/* A frame shorter than any frame. */
	p[8 + 8] = 3;
	p[8 + 8 + 1] = 0;
	assert_int_equal(accel_seek_table_parse(p, n, 103 + n, &r, err, sizeof err), ACCEL_EDATA);
	assert_non_null(strstr(err, "shorter than any frame"));
	p[8 + 8] = 50;
	/* The footer's count against the table's size. */
	p[n - 9] = 3;
	assert_int_equal(accel_seek_table_parse(p, n, 150 + n, &r, err, sizeof err), ACCEL_EDATA);
	assert_non_null(strstr(err, "its footer says 41 bytes, 33 given"));
	p[n - 9] = 200;
	assert_int_equal(accel_seek_table_parse(p, n, 150 + n, &r, err, sizeof err), ACCEL_EDATA);
	assert_non_null(strstr(err, "more than the"));
	p[n - 9] = 2;
	/* The skippable frame's size field. */
	p[4] = 32;
	assert_int_equal(accel_seek_table_parse(p, n, 150 + n, &r, err, sizeof err), ACCEL_EDATA);
	assert_non_null(strstr(err, "skippable frame header"));
	p[4] = 25;
	/* Reserved descriptor bits; the unused ones are ignored. */
	p[n - 5] = 0x40;
	assert_int_equal(accel_seek_table_parse(p, n, 150 + n, &r, err, sizeof err), ACCEL_EDATA);
	assert_non_null(strstr(err, "reserved descriptor bits"));
	p[n - 5] = 0x03;
	assert_int_equal(accel_seek_table_parse(p, n, 150 + n, &r, err, sizeof err), 0);
	/* No seekable magic: not a table. */
	p[n - 1] ^= 1;
	assert_int_equal(accel_seek_table_parse(p, n, 150 + n, &r, err, sizeof err), ACCEL_ENOTSUP);
	accel_seek_table_free(&r);
	accel_seek_table_free(&t);
	free(p);
	/* Sizes the 32-bit fields cannot hold. */
	assert_int_equal(accel_seek_table_add(&t, (uint64_t)1 << 32, 1, 0), ACCEL_EINVAL);
	assert_int_equal(accel_seek_table_add(&t, 1, (uint64_t)1 << 32, 0), ACCEL_EINVAL);
	accel_seek_table_free(&t);
}

static void output_window_cuts_and_ends(void **state)
{
	struct accel_output out;
	assert_int_equal(accel_output_null(&out), 0);
	accel_output_window(&out, 5, 10);
	assert_int_equal(accel_output_write(&out, "0123", 4), 0);
	assert_int_equal(out.written, 0);
	assert_int_equal(accel_output_write(&out, "456789abcdefghij", 16), 0);
	assert_int_equal(out.written, 10);
	assert_int_equal(out.window, 2);
	assert_int_equal(accel_output_write(&out, "x", 1), ACCEL_EPIPE);
	assert_int_equal(out.broken, 0);
	accel_output_window(&out, 0, UINT64_MAX);
	assert_int_equal(accel_output_write(&out, "xyz", 3), 0);
	assert_int_equal(out.written, 13);
	accel_output_window(&out, 0, 0);
	assert_int_equal(accel_output_write(&out, "x", 1), ACCEL_EPIPE);
}

static void input_seek_and_pread(void **state)
{
	static const char data[] = "0123456789";
	struct accel_input in;
	assert_int_equal(accel_input_mem(&in, data, 10, "m"), 0);
	uint8_t b[4];
	const uint8_t *p;
	assert_int_equal(accel_input_peek(&in, 2, &p), 2);
	assert_int_equal(accel_input_pread(&in, 7, b, 4), 3);
	assert_memory_equal(b, "789", 3);
	assert_int_equal(accel_input_seek(&in, 6), 0);
	assert_int_equal(in.offset, 6);
	assert_int_equal(accel_input_read(&in, b, 4), 4);
	assert_memory_equal(b, "6789", 4);
	assert_int_equal(accel_input_seek(&in, 11), ACCEL_EINVAL);
	accel_input_close(&in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table_bytes_and_round_trip),
		cmocka_unit_test(sizes_that_lie_are_refused),
		cmocka_unit_test(output_window_cuts_and_ends),
		cmocka_unit_test(input_seek_and_pread),
	};
	return cmocka_run_group_tests_name("seektable", tests, NULL, NULL);
}
