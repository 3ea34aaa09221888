/*
 * gzip_index.c - fuzz target for the deflate block boundary finder and the
 * speculative 16-bit decoder (libcore/ops/gzip_index.c), on untrusted
 * bytes read as raw deflate data: no read past the input (it is copied to a
 * buffer of its exact size), no write past the symbol buffer; where zlib
 * inflates the input to its final block, the decoder from bit 0 gives the
 * same bytes and no markers (no window precedes bit 0: a reference before
 * it is a marker, which zlib rejects as "too far back"); where the finder
 * names a boundary, decoding from it stays within the buffer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "fuzz.h"
/* The replay driver links libaccel.so, whose internal symbols are hidden;
 * the libFuzzer build (ACCEL_PLUGIN_DIR set) compiles libcore's sources. */
#ifndef ACCEL_PLUGIN_DIR
#include "../../libcore/ops/gzip_index.c"
#include "../../libcore/codec_dl.c"
#else
#include "ops/gzip_index.h"
#endif

#define CAP (1u << 20)

static void fail(const char *what)
{
	fprintf(stderr, "fuzz: gzip_index: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *p = malloc(size ? size : 1);
	uint16_t *sym = malloc(CAP * sizeof *sym);
	uint8_t *ref = malloc(CAP);
	if (!p || !sym || !ref)
		abort();
	memcpy(p, data, size);

	uint64_t end = 0;
	ptrdiff_t n = accel_gzip_decode_symbols(p, size, 0, sym, CAP, &end);
	if (n > (ptrdiff_t)CAP || end > (uint64_t)size * 8 + 64)
		fail("decoder past its bounds");

	/* zlib's raw inflate of the same bytes. */
	z_stream z = { 0 };
	if (inflateInit2(&z, -15) != Z_OK)
		abort();
	z.next_in = p;
	z.avail_in = (uInt)size;
	z.next_out = ref;
	z.avail_out = CAP - 512;
	int zrc = inflate(&z, Z_FINISH);
	if (zrc == Z_STREAM_END) {
		if (n < 0)
			fail("zlib decodes what the decoder refuses");
		if ((size_t)n != z.total_out)
			fail("output lengths differ from zlib's");
		for (ptrdiff_t i = 0; i < n; i++)
			if (sym[i] != ref[i])
				fail("output differs from zlib's");
		if (end != (uint64_t)z.total_in * 8 - (z.data_type & 7) &&
		    (end + 7) / 8 != z.total_in)
			fail("end bit differs from zlib's");
	}
	inflateEnd(&z);

	uint64_t to = (uint64_t)size * 8 < 8192 ? (uint64_t)size * 8 : 8192;
	uint64_t at = accel_gzip_find_block(p, size, 0, to, 2);
	if (at != UINT64_MAX) {
		if (at >= to)
			fail("boundary outside the range searched");
		n = accel_gzip_decode_symbols(p, size, at, sym, CAP, &end);
		if (n > (ptrdiff_t)CAP || (n >= 0 && end < at))
			fail("decoder from a boundary past its bounds");
	}
	free(ref);
	free(sym);
	free(p);
	return 0;
}
