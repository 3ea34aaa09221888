/*
 * test_gzip_index.c - the deflate block boundary finder and the speculative
 * 16-bit decoder of libcore/ops/gzip_index.c against zlib: every block
 * boundary zlib reports (inflate with Z_BLOCK) of a dynamic or stored
 * non-final block is one the finder takes; decoding from it, with the
 * markers replaced from the 32 KiB of output before it, gives zlib's
 * output; data without blocks has no boundary.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <zlib.h>
#include "ops/gzip_index.h"

#define PLAIN (600u << 10)

struct stream {
	uint8_t *plain, *z;
	size_t zlen;
	size_t nb;
	uint64_t bit[4096];   /* block boundaries, in bits */
	size_t out[4096];     /* output before each */
	int last[4096];       /* the block at that boundary is the final one */
};

/* Text with repeats far and near, and some noise: dynamic blocks. */
static void make_plain(uint8_t *p, size_t n)
{
	uint32_t x = 12345;
	size_t i = 0;
	while (i < n) {
		x = x * 1103515245u + 12345u;
		int k = snprintf((char *)p + i, n - i, "line %u of the text, word %u\n", (x >> 8) % 5000, (x >> 3) % 97);
		if (k <= 0)
			break;
		i += (size_t)k < n - i ? (size_t)k : n - i;
	}
}

static void deflate_raw(struct stream *s, int level)
{
	z_stream z = { 0 };
	assert_int_equal(deflateInit2(&z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
	size_t cap = deflateBound(&z, PLAIN);
	s->z = malloc(cap);
	assert_non_null(s->z);
	z.next_in = s->plain;
	z.avail_in = PLAIN;
	z.next_out = s->z;
	z.avail_out = (uInt)cap;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	s->zlen = z.total_out;
	deflateEnd(&z);
}

/* The boundaries, as zlib's Z_BLOCK finds them (bits and output). */
static void boundaries(struct stream *s)
{
	z_stream z = { 0 };
	uint8_t *out = malloc(PLAIN);
	assert_int_equal(inflateInit2(&z, -15), Z_OK);
	z.next_in = s->z;
	z.avail_in = (uInt)s->zlen;
	z.next_out = out;
	z.avail_out = PLAIN;
	s->nb = 0;
	s->bit[s->nb] = 0;
	s->out[s->nb] = 0;
	s->last[s->nb] = s->z[0] & 1;
	s->nb++;
	for (;;) {
		int rc = inflate(&z, Z_BLOCK);
		if (rc == Z_STREAM_END)
			break;
		assert_int_equal(rc, Z_OK);
		if ((z.data_type & 128) && !(z.data_type & 64) && s->nb < 4096) {
			uint64_t at = (uint64_t)z.total_in * 8 - (z.data_type & 7);
			s->bit[s->nb] = at;
			s->out[s->nb] = z.total_out;
			s->last[s->nb] = (s->z[at / 8] >> (at % 8)) & 1;
			s->nb++;
		}
	}
	assert_int_equal(z.total_out, PLAIN);
	assert_memory_equal(out, s->plain, PLAIN);
	inflateEnd(&z);
	free(out);
}

/* Decode from boundary k and compare with the plain text after it. */
static void decode_from(struct stream *s, size_t k, int *markers)
{
	uint16_t *sym = malloc((PLAIN + 512) * sizeof *sym);
	uint64_t end;
	ptrdiff_t n = accel_gzip_decode_symbols(s->z, s->zlen, s->bit[k], sym, PLAIN + 512, &end);
	assert_int_equal(n, PLAIN - s->out[k]);
	assert_true(end <= (uint64_t)s->zlen * 8);
	for (ptrdiff_t i = 0; i < n; i++) {
		uint8_t b;
		if (sym[i] < 256) {
			b = (uint8_t)sym[i];
		} else {
			unsigned w = sym[i] - 256u;
			assert_true(w < 32768);
			size_t from = s->out[k] - 32768 + w;
			assert_true(s->out[k] >= 32768 - w);
			b = s->plain[from];
			++*markers;
		}
		if (b != s->plain[s->out[k] + (size_t)i])
			fail_msg("boundary %zu: byte %td differs", k, i);
	}
	free(sym);
}

static void check_level(int level, int expect_markers)
{
	struct stream *s = calloc(1, sizeof *s);
	s->plain = malloc(PLAIN);
	make_plain(s->plain, PLAIN);
	deflate_raw(s, level);
	boundaries(s);
	assert_true(s->nb >= 3);
	int taken = 0, markers = 0;
	for (size_t k = 1; k < s->nb; k++) {
		if (s->last[k])
			continue;
		uint64_t b = s->bit[k];
		unsigned type = ((s->z[(b + 1) / 8] >> ((b + 1) % 8)) & 1) | (((s->z[(b + 2) / 8] >> ((b + 2) % 8)) & 1) << 1);
		if (type == 1)
			continue; /* fixed Huffman: never taken */
		assert_int_equal(accel_gzip_find_block(s->z, s->zlen, b, b + 1, 2), b);
		/* From the byte before it, the finder stops at or before it. */
		uint64_t from = b >= 8 ? b - 8 : 0;
		assert_true(accel_gzip_find_block(s->z, s->zlen, from, b + 1, 2) <= b);
		decode_from(s, k, &markers);
		taken++;
	}
	assert_true(taken >= 1);
	if (expect_markers)
		assert_true(markers > 0);
	free(s->z);
	free(s->plain);
	free(s);
}

static void test_dynamic_blocks(void **state)
{
	(void)state;
	check_level(6, 1);
	check_level(1, 1);
}

static void test_stored_blocks(void **state)
{
	(void)state;
	/* Level 0: stored blocks only, copies without references. */
	check_level(0, 0);
}

static void test_no_boundary(void **state)
{
	(void)state;
	static uint8_t zero[65536];
	assert_true(accel_gzip_find_block(zero, sizeof zero, 0, sizeof zero * 8, 1) == UINT64_MAX);
	/* LEN 5, NLEN not its complement: no stored block. */
	uint8_t bad[16] = { 0, 5, 0, 0xfa, 0xfe, 'a', 'b', 'c', 'd', 'e' };
	assert_true(accel_gzip_find_block(bad, sizeof bad, 0, 8, 1) == UINT64_MAX);
	/* A good one: LEN 5, NLEN 0xfffa, then a final empty stored block. */
	uint8_t good[16] = { 0, 5, 0, 0xfa, 0xff, 'a', 'b', 'c', 'd', 'e', 1, 0, 0, 0xff, 0xff };
	assert_int_equal(accel_gzip_find_block(good, 15, 0, 8, 2), 0);
	uint16_t sym[300];
	uint64_t end;
	assert_int_equal(accel_gzip_decode_symbols(good, 15, 0, sym, 300, &end), 5);
	assert_int_equal(sym[0], 'a');
	assert_int_equal(end, 15 * 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dynamic_blocks),
		cmocka_unit_test(test_stored_blocks),
		cmocka_unit_test(test_no_boundary),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
