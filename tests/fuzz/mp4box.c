/*
 * mp4box.c - fuzz target for the MP4 top-level box walker
 * (libcore/ops/mp4.c, accel_mp4_index_at_end; accel-transcode asks it
 * whether a pipe can be read), which reads untrusted input: it must read no
 * byte past the input (ASan) and agree with a second walk written from
 * ISO/IEC 14496-12, 4.2 in 64-bit offsets.
 */
#include <stdint.h>
#include <string.h>
#include <accel/ops/video.h>
#include "fuzz.h"

/* 1 when 'mdat' is met before 'moov' walking boxes from offset 0. */
static int reference(const uint8_t *p, uint64_t n)
{
	if (n < 8 || memcmp(p + 4, "ftyp", 4))
		return 0;
	for (uint64_t off = 0; off + 8 <= n;) {
		uint64_t size = (uint64_t)p[off] << 24 | (uint64_t)p[off + 1] << 16 | (uint64_t)p[off + 2] << 8 |
				p[off + 3];
		if (!memcmp(p + off + 4, "moov", 4))
			return 0;
		if (!memcmp(p + off + 4, "mdat", 4))
			return 1;
		if (size == 1) {
			if (off + 16 > n)
				return 0;
			size = 0;
			for (int i = 0; i < 8; i++)
				size = size << 8 | p[off + 8 + i];
		}
		/* size 0 (to the end of the file) and sizes past what we
		 * have: the walk cannot go on. */
		if (size < 8 || size > n - off)
			return 0;
		off += size;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int got = accel_mp4_index_at_end(data, size), want = reference(data, size);
	if (got != want)
		fuzz_fail("mp4box: walker says %d, reference %d (%zu bytes)", got, want, size);
	return 0;
}
