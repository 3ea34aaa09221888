/*
 * lz4.c - LZ4 frames (the LZ4 Frame Format Description, v1.6.x) with liblz4:
 * one frame per unit with content size and content checksum, independent
 * 4 MiB blocks; decompression one frame per unit, a part of a frame of
 * independent blocks per unit (ACCEL_LZ4_PART) or sequentially, and of the
 * legacy frame of lz4 -l (its "Legacy frame" section) a part per unit or
 * sequentially.
 */
#include <stdlib.h>
#include <string.h>
#include <lz4.h>
#include <lz4frame.h>
#include <accel/ops/compress.h>
#include "codec_dl.h"
#include "cpu.h"

/* liblz4's functions (codec_dl.h), loaded by lz4_load before an open. */
static const struct core_lz4 *const lz = &core_lz4_fns;

static int lz4_load(const struct accel_op *op, char *why, size_t len)
{
	(void)op;
	return core_lz4(why, len) ? 0 : ACCEL_ENOTSUP;
}

/* accel level to lz4's: below 0 the fast compressor's acceleration (-N:
 * --fast=N, as the lz4 command line), 1-2 the fast compressor, 3-12 LZ4HC
 * levels, above 12 capped at 12. */
static int lz4_level(int level)
{
	return level < 0 ? level : level < 3 ? 0 : level > 12 ? 12 : level;
}

struct lc {
	LZ4F_cctx *cctx;
	LZ4F_preferences_t prefs;
};

static int lc_open(const struct accel_op *op, void **ctx)
{
	struct lc *l = calloc(1, sizeof *l);
	if (!l || lz->LZ4F_isError(lz->LZ4F_createCompressionContext(&l->cctx, LZ4F_VERSION))) {
		free(l);
		return ACCEL_ENOMEM;
	}
	l->prefs.compressionLevel = lz4_level(op->level);
	l->prefs.frameInfo.blockSizeID = LZ4F_max4MB;
	l->prefs.frameInfo.blockMode = LZ4F_blockIndependent;
	l->prefs.frameInfo.contentChecksumFlag = op->checksum ? LZ4F_contentChecksumEnabled : LZ4F_noContentChecksum;
	/* Each block compressed from the unit as LZ4F_compressUpdate gets
	 * it, the last one too: the same blocks (independent ones, cut every
	 * 4 MiB) and bytes as buffering gives, without the buffer. Buffered,
	 * liblz4 (1.9.4) copies a unit's tail into a block-sized buffer that
	 * LZ4F_compressEnd gives up and the next LZ4F_compressBegin callocs
	 * again: 4 MiB zeroed per unit, 200 us, most of a 64 KiB unit's time. */
	l->prefs.autoFlush = 1;
	*ctx = l;
	return 0;
}

static int lc_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	struct lc *l = ctx;
	LZ4F_preferences_t prefs = l->prefs;
	prefs.frameInfo.contentSize = u->in.len;
	size_t bound = lz->LZ4F_compressFrameBound(u->in.len, &prefs);
	if (accel_buf_reserve(&u->out, bound))
		return ACCEL_ENOMEM;
	/* The streaming calls reuse the context's tables across units. */
	size_t h = lz->LZ4F_compressBegin(l->cctx, u->out.data, bound, &prefs);
	size_t b = lz->LZ4F_isError(h) ? h : lz->LZ4F_compressUpdate(l->cctx, u->out.data + h, bound - h,
							    u->in.data, u->in.len, NULL);
	size_t e = lz->LZ4F_isError(b) ? b : lz->LZ4F_compressEnd(l->cctx, u->out.data + h + b, bound - h - b, NULL);
	if (lz->LZ4F_isError(e)) {
		snprintf(err, len, "lz4: %s", lz->LZ4F_getErrorName(e));
		return ACCEL_EDEVICE;
	}
	size_t n = h + b + e;
	u->out.len = n;
	return 0;
}

static void lc_close(void *ctx)
{
	struct lc *l = ctx;
	if (l)
		lz->LZ4F_freeCompressionContext(l->cctx);
	free(l);
}

struct ld {
	LZ4F_dctx *dctx;
	uint8_t *buf;
	size_t cap;
};

static int ld_open(const struct accel_op *op, void **ctx)
{
	(void)op;
	struct ld *l = calloc(1, sizeof *l);
	if (!l || lz->LZ4F_isError(lz->LZ4F_createDecompressionContext(&l->dctx, LZ4F_VERSION))) {
		free(l);
		return ACCEL_ENOMEM;
	}
	*ctx = l;
	return 0;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A part of a frame (ACCEL_LZ4_PART): its blocks decoded one by one where
 * they lie, each into out at most the frame's block size, stored ones
 * copied; block checksums checked first. The header before the first
 * block and what follows the end mark are the reader's and the writer's. */
static int ld_part_legacy(struct accel_unit *u, char *err, size_t len)
{
	const uint8_t *p = u->in.data, *end = p + u->in.len;
	if (u->part & ACCEL_LZ4_PART_FIRST)
		p += 4;  /* the magic */
	while (p < end) {
		unsigned long long at = u->offset + (unsigned long long)(p - u->in.data);
		size_t size = end - p >= 4 ? le32(p) : SIZE_MAX;
		if (size > ACCEL_LZ4_LEGACY_BOUND || (size_t)(end - p) - 4 < size) {
			snprintf(err, len, "lz4 legacy frame: the block at byte offset %llu is not whole, in the unit", at);
			return ACCEL_EDATA;
		}
		if (accel_buf_reserve(&u->out, u->out.len + ACCEL_LZ4_LEGACY_BLOCK))
			return ACCEL_ENOMEM;
		int got = lz->LZ4_decompress_safe((const char *)p + 4, (char *)u->out.data + u->out.len, (int)size,
						  (int)ACCEL_LZ4_LEGACY_BLOCK);
		if (got < 0) {
			snprintf(err, len, "lz4 legacy frame: the block at byte offset %llu is corrupt, in the unit", at);
			return ACCEL_EDATA;
		}
		u->out.len += (size_t)got;
		p += 4 + size;
	}
	return 0;
}

static int ld_part(struct accel_unit *u, char *err, size_t len)
{
	if (u->part & ACCEL_LZ4_PART_LEGACY)
		return u->in.len ? ld_part_legacy(u, err, len) : 0;
	unsigned flg = (unsigned)(u->part & 0xff), bd = (unsigned)(u->part >> 8 & 0xff);
	size_t block_max = (size_t)1 << (8 + 2 * (bd >> 4 & 7));
	int ck = !!(flg & 0x10);
	const struct core_xxhash *x = ck ? core_xxhash(err, len) : NULL;
	if (ck && !x)
		return ACCEL_EDEVICE;
	if (!u->in.len)
		return 0;
	const uint8_t *p = u->in.data, *end = p + u->in.len;
	if (u->part & ACCEL_LZ4_PART_FIRST)
		p += flg & 0x08 ? 15 : 7;  /* the frame's header, its content size with C.Size */
	/* The stream adds the unit's offset to a message: "..., in the unit
	 * at byte offset N (unit K)". */
	while (p < end) {
		unsigned long long at = u->offset + (unsigned long long)(p - u->in.data);
		uint32_t bs = end - p >= 4 ? le32(p) : 0;
		size_t size = bs & 0x7fffffffu;
		int stored = (int)(bs >> 31);
		if (end - p >= 4 && !bs && (u->part & ACCEL_LZ4_PART_LAST))
			break;  /* the end mark; the content checksum is the writer's */
		if (end - p < 4 || size > block_max || (size_t)(end - p) - 4 < size + (ck ? 4 : 0)) {
			snprintf(err, len, "lz4 frame: the block at byte offset %llu is not whole, in the unit", at);
			return ACCEL_EDATA;
		}
		const uint8_t *data = p + 4;
		p = data + size + (ck ? 4 : 0);
		if (ck && x->XXH32(data, size, 0) != le32(data + size)) {
			snprintf(err, len, "lz4 frame: the block at byte offset %llu fails its checksum, in the unit", at);
			return ACCEL_EDATA;
		}
		size_t room = stored ? size : block_max;
		if (accel_buf_reserve(&u->out, u->out.len + room))
			return ACCEL_ENOMEM;
		if (stored) {
			memcpy(u->out.data + u->out.len, data, size);
			u->out.len += size;
			continue;
		}
		int got = lz->LZ4_decompress_safe((const char *)data, (char *)u->out.data + u->out.len, (int)size,
						  (int)block_max);
		if (got < 0) {
			snprintf(err, len, "lz4 frame: the block at byte offset %llu is corrupt, in the unit", at);
			return ACCEL_EDATA;
		}
		u->out.len += (size_t)got;
	}
	return 0;
}

static int ld_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	struct ld *l = ctx;
	if (accel_buf_reserve_fill(&u->out, u->out_hint ? u->out_hint : 1))
		return ACCEL_ENOMEM;
	if (u->part & ACCEL_LZ4_PART)
		return ld_part(u, err, len);
	lz->LZ4F_resetDecompressionContext(l->dctx);
	size_t src = u->in.len, dst = u->out_hint;
	size_t rc = lz->LZ4F_decompress(l->dctx, u->out.data, &dst, u->in.data, &src, NULL);
	if (lz->LZ4F_isError(rc)) {
		snprintf(err, len, "lz4 frame: %s", lz->LZ4F_getErrorName(rc));
		return ACCEL_EDATA;
	}
	if (rc != 0 || src != u->in.len || dst != u->out_hint) {
		if (dst == u->out_hint)
			snprintf(err, len, "lz4 frame: more data than the header's content size, %zu bytes", u->out_hint);
		else
			snprintf(err, len, "lz4 frame: %zu bytes decoded, header says %zu", dst, u->out_hint);
		return ACCEL_EDATA;
	}
	u->out.len = dst;
	return 0;
}

/* The output buffer of a sequential decode: at least `cap` bytes. */
static int ld_buffer(struct ld *l, size_t cap)
{
	if (l->cap >= cap)
		return 0;
	free(l->buf);
	l->cap = 0;
	if (!(l->buf = malloc(cap)))
		return ACCEL_ENOMEM;
	l->cap = cap;
	return 0;
}

/* A legacy frame, magic first: each block decoded on its own (at most
 * ACCEL_LZ4_LEGACY_BLOCK bytes) until the input ends or a block size over
 * ACCEL_LZ4_LEGACY_BOUND, the next frame's magic, which is left unread. */
static int ld_legacy(struct ld *l, struct accel_input *in, struct accel_output *out, char *err, size_t len)
{
	int rc = ld_buffer(l, ACCEL_LZ4_LEGACY_BLOCK);
	if (rc < 0)
		return rc;
	accel_input_consume(in, 4);
	for (;;) {
		const uint8_t *p;
		uint64_t at = in->offset;
		ssize_t n = accel_input_peek(in, 4, &p);
		if (n < 0)
			return (int)n;
		if (n == 0 || (n == 4 && le32(p) > ACCEL_LZ4_LEGACY_BOUND))
			return 0;
		size_t size = n == 4 ? le32(p) : 0;
		if (n == 4)
			n = accel_input_peek(in, 4 + size, &p);
		if (n < 0)
			return (int)n;
		if ((size_t)n < 4 + size) {
			snprintf(err, len, "lz4 legacy block at byte offset %llu is truncated at byte offset %llu",
				 (unsigned long long)at, (unsigned long long)(at + (uint64_t)n));
			return ACCEL_EDATA;
		}
		int got = lz->LZ4_decompress_safe((const char *)p + 4, (char *)l->buf, (int)size,
					      (int)ACCEL_LZ4_LEGACY_BLOCK);
		if (got < 0) {
			snprintf(err, len, "lz4 legacy block at byte offset %llu: corrupt", (unsigned long long)at);
			return ACCEL_EDATA;
		}
		accel_input_consume(in, 4 + size);
		if ((rc = accel_output_write(out, l->buf, (size_t)got)) < 0)
			return rc;
	}
}

/* Read where the bytes lie, also in a mapped input: a read() view
 * (core_input_view) cost more in copies than it saved (a frame of linked
 * 4 MiB blocks, 64 MiB of a tar: 119 -> 161 ms). */
static int ld_stream(void *ctx, struct accel_input *in, struct accel_output *out, char *err, size_t len)
{
	struct ld *l = ctx;
	const uint8_t *magic;
	ssize_t have = accel_input_peek(in, 4, &magic);
	if (have < 0)
		return (int)have;
	if (have == 4 && le32(magic) == 0x184C2102u)
		return ld_legacy(l, in, out, err, len);
	int rc = ld_buffer(l, 4u << 20);
	if (rc < 0)
		return rc;
	lz->LZ4F_resetDecompressionContext(l->dctx);
	uint64_t start = in->offset;
	size_t hint = 4;
	for (;;) {
		const uint8_t *p;
		ssize_t n = accel_input_peek(in, hint > (1u << 16) ? hint : (1u << 16), &p);
		if (n < 0)
			return (int)n;
		if (n == 0) {
			snprintf(err, len, "lz4 frame at byte offset %llu is truncated at byte offset %llu",
				 (unsigned long long)start, (unsigned long long)in->offset);
			return ACCEL_EDATA;
		}
		size_t src = (size_t)n, dst = l->cap;
		hint = lz->LZ4F_decompress(l->dctx, l->buf, &dst, p, &src, NULL);
		if (lz->LZ4F_isError(hint)) {
			snprintf(err, len, "lz4 frame at byte offset %llu: %s", (unsigned long long)start,
				 lz->LZ4F_getErrorName(hint));
			return ACCEL_EDATA;
		}
		accel_input_consume(in, src);
		int w = accel_output_write(out, l->buf, dst);
		if (w < 0)
			return w;
		if (hint == 0)
			return 0;
	}
}

static void ld_close(void *ctx)
{
	struct ld *l = ctx;
	if (l) {
		lz->LZ4F_freeDecompressionContext(l->dctx);
		free(l->buf);
	}
	free(l);
}

const struct cpu_codec cpu_lz4_compress = {
	"lz4.compress", 400, "liblz4", lc_open, lc_run, NULL, lc_close, NULL, lz4_load,
};
const struct cpu_codec cpu_lz4_decompress = {
	"lz4.decompress", 1200, "liblz4", ld_open, ld_run, ld_stream, ld_close, NULL, lz4_load,
};
