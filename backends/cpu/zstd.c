/*
 * zstd.c - zstd frames (RFC 8878) with libzstd: one frame per unit when
 * compressing (content size and checksum in the frame header), one frame per
 * unit or a sequential stream when decompressing.
 */
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "cpu.h"

struct zc {
	ZSTD_CCtx *cctx;
};

static int zc_open(const struct accel_op *op, void **ctx)
{
	struct zc *z = calloc(1, sizeof *z);
	if (!z || !(z->cctx = ZSTD_createCCtx())) {
		free(z);
		return ACCEL_ENOMEM;
	}
	if (ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel, op->level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_checksumFlag, op->checksum)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_contentSizeFlag, 1))) {
		ZSTD_freeCCtx(z->cctx);
		free(z);
		return ACCEL_EINVAL;
	}
	*ctx = z;
	return 0;
}

static int zc_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	struct zc *z = ctx;
	size_t bound = ZSTD_compressBound(u->in.len);
	if (accel_buf_reserve(&u->out, bound))
		return ACCEL_ENOMEM;
	size_t n = ZSTD_compress2(z->cctx, u->out.data, bound, u->in.data, u->in.len);
	if (ZSTD_isError(n)) {
		snprintf(err, len, "zstd: %s", ZSTD_getErrorName(n));
		return ACCEL_EDEVICE;
	}
	u->out.len = n;
	return 0;
}

static void zc_close(void *ctx)
{
	struct zc *z = ctx;
	if (z)
		ZSTD_freeCCtx(z->cctx);
	free(z);
}

struct zd {
	ZSTD_DCtx *dctx;
	uint8_t *buf;
	size_t cap;
};

static int zd_open(const struct accel_op *op, void **ctx)
{
	(void)op;
	struct zd *z = calloc(1, sizeof *z);
	if (!z || !(z->dctx = ZSTD_createDCtx())) {
		free(z);
		return ACCEL_ENOMEM;
	}
	/* Frames from other tools may use windows up to 2 GiB (zstd --long=31). */
	ZSTD_DCtx_setParameter(z->dctx, ZSTD_d_windowLogMax, 31);
	*ctx = z;
	return 0;
}

static int zd_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	struct zd *z = ctx;
	if (accel_buf_reserve(&u->out, u->out_hint ? u->out_hint : 1))
		return ACCEL_ENOMEM;
	size_t n = ZSTD_decompressDCtx(z->dctx, u->out.data, u->out_hint, u->in.data, u->in.len);
	if (ZSTD_isError(n)) {
		snprintf(err, len, "zstd frame: %s", ZSTD_getErrorName(n));
		return ACCEL_EDATA;
	}
	if (n != u->out_hint) {
		snprintf(err, len, "zstd frame: %zu bytes decoded, header says %zu", n, u->out_hint);
		return ACCEL_EDATA;
	}
	u->out.len = n;
	return 0;
}

/* One frame whose size is unknown or too large to hold: decoded with
 * bounded memory straight to the output. */
static int zd_stream(void *ctx, struct accel_input *in, struct accel_output *out, char *err, size_t len)
{
	struct zd *z = ctx;
	if (!z->buf) {
		z->cap = ZSTD_DStreamOutSize();
		if (!(z->buf = malloc(z->cap)))
			return ACCEL_ENOMEM;
	}
	ZSTD_DCtx_reset(z->dctx, ZSTD_reset_session_only);
	uint64_t start = in->offset;
	for (;;) {
		const uint8_t *p;
		ssize_t n = accel_input_peek(in, ZSTD_DStreamInSize(), &p);
		if (n < 0)
			return (int)n;
		if (n == 0) {
			snprintf(err, len, "zstd frame at byte offset %llu is truncated at byte offset %llu",
				 (unsigned long long)start, (unsigned long long)in->offset);
			return ACCEL_EDATA;
		}
		ZSTD_inBuffer ib = { p, (size_t)n, 0 };
		size_t rc;
		for (;;) {
			ZSTD_outBuffer ob = { z->buf, z->cap, 0 };
			rc = ZSTD_decompressStream(z->dctx, &ob, &ib);
			if (ZSTD_isError(rc)) {
				snprintf(err, len, "zstd frame: %s at byte offset %llu", ZSTD_getErrorName(rc),
					 (unsigned long long)(in->offset + ib.pos));
				return ACCEL_EDATA;
			}
			int w = accel_output_write(out, z->buf, ob.pos);
			if (w < 0)
				return w;
			if (rc == 0 || (ib.pos == ib.size && ob.pos < ob.size))
				break;
		}
		accel_input_consume(in, ib.pos);
		if (rc == 0)
			return 0;
	}
}

static void zd_close(void *ctx)
{
	struct zd *z = ctx;
	if (z) {
		ZSTD_freeDCtx(z->dctx);
		free(z->buf);
	}
	free(z);
}

const struct cpu_codec cpu_zstd_compress = {
	"zstd.compress", 250, "libzstd", zc_open, zc_run, NULL, zc_close,
};
const struct cpu_codec cpu_zstd_decompress = {
	"zstd.decompress", 700, "libzstd", zd_open, zd_run, zd_stream, zd_close,
};
