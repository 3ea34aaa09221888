/*
 * mp4.c - whether an MP4 (ISO BMFF) can be read from a pipe: its
 * top-level boxes (ISO/IEC 14496-12, 4.2: a 32-bit big-endian size, a
 * four-character type, a 64-bit size after it when the size is 1, to the
 * end of the file when it is 0) are walked in the first bytes of the input.
 * No size read here is trusted: every box is checked against the n bytes
 * given.
 */
#include <string.h>
#include <accel/ops/video.h>

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int accel_mp4_index_at_end(const uint8_t *p, size_t n)
{
	if (n < 8 || memcmp(p + 4, "ftyp", 4))
		return 0;
	size_t pos = 0;
	while (pos <= n - 8) {
		uint64_t size = be32(p + pos);
		const uint8_t *type = p + pos + 4;
		if (!memcmp(type, "moov", 4))
			return 0;
		if (!memcmp(type, "mdat", 4))
			return 1;
		if (size == 1) {
			if (pos + 16 > n)
				return 0;
			size = (uint64_t)be32(p + pos + 8) << 32 | be32(p + pos + 12);
		}
		if (size < 8 || size > n - pos)
			return 0;
		pos += (size_t)size;
	}
	return 0;
}
