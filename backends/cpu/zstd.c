/*
 * zstd.c - zstd frames (RFC 8878) with libzstd: one frame per unit when
 * compressing (content size and checksum in the frame header), one frame per
 * unit or a sequential stream when decompressing.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "codec_dl.h"
#include "core.h"
#include "cpu.h"

/* libzstd's functions (codec_dl.h), loaded by zstd_load before an open. */
static const struct core_zstd *const zs = &core_zstd_fns;

static int zstd_load(const struct accel_op *op, char *why, size_t len)
{
	(void)op;
	return core_zstd(why, len) ? 0 : ACCEL_ENOTSUP;
}

struct zc {
	ZSTD_CCtx *cctx;
};

static int zc_open(const struct accel_op *op, void **ctx)
{
	struct zc *z = calloc(1, sizeof *z);
	if (!z || !(z->cctx = zs->ZSTD_createCCtx())) {
		free(z);
		return ACCEL_ENOMEM;
	}
	if (zs->ZSTD_isError(zs->ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel, op->level)) ||
	    zs->ZSTD_isError(zs->ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_checksumFlag, op->checksum)) ||
	    zs->ZSTD_isError(zs->ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_contentSizeFlag, 1))) {
		zs->ZSTD_freeCCtx(z->cctx);
		free(z);
		return ACCEL_EINVAL;
	}
	*ctx = z;
	return 0;
}

static int zc_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	struct zc *z = ctx;
	size_t bound = zs->ZSTD_compressBound(u->in.len);
	if (accel_buf_reserve(&u->out, bound))
		return ACCEL_ENOMEM;
	size_t n = zs->ZSTD_compress2(z->cctx, u->out.data, bound, u->in.data, u->in.len);
	if (zs->ZSTD_isError(n)) {
		snprintf(err, len, "zstd: %s", zs->ZSTD_getErrorName(n));
		return ACCEL_EDEVICE;
	}
	u->out.len = n;
	return 0;
}

static void zc_close(void *ctx)
{
	struct zc *z = ctx;
	if (z)
		zs->ZSTD_freeCCtx(z->cctx);
	free(z);
}

/* Largest window decoded when the operation states no memory limit: zstd's
 * own default (windowLog 27). */
#define WINDOW_DEFAULT ((uint64_t)1 << 27)
/* Largest window libzstd decodes on 64-bit machines (ZSTD_WINDOWLOG_MAX_64). */
#define WINDOW_LOG_MAX 31
/* Longest zstd frame header (ZSTD_FRAMEHEADERSIZE_MAX). */
#define FRAME_HEADER_MAX 18

struct zd {
	ZSTD_DCtx *dctx;
	uint64_t window_max;  /* frames needing a larger window are refused */
	uint8_t *buf;
	size_t cap;
};

/* Decompression contexts zd_close let go of, kept for the next zd_open
 * in this process: a run per FILE (accel-compress -d FILE...) made and
 * freed one each time, and ZSTD_createDCtx with glibc giving the heap's
 * top back and taking it again was a fifth of the CPU time of 1000 files
 * of 4 KiB. At most DCTX_KEEP are kept, each of at most DCTX_KEEP_BYTES
 * (ZSTD_sizeof_DCtx: one that streamed a large window is freed). */
#define DCTX_KEEP 4
#define DCTX_KEEP_BYTES ((size_t)1 << 20)
static pthread_mutex_t dctx_lock = PTHREAD_MUTEX_INITIALIZER;
static ZSTD_DCtx *dctx_kept[DCTX_KEEP];
static int ndctx_kept;

static ZSTD_DCtx *dctx_take(void)
{
	ZSTD_DCtx *d = NULL;
	pthread_mutex_lock(&dctx_lock);
	if (ndctx_kept)
		d = dctx_kept[--ndctx_kept];
	pthread_mutex_unlock(&dctx_lock);
	if (d && zs->ZSTD_isError(zs->ZSTD_DCtx_reset(d, ZSTD_reset_session_and_parameters))) {
		zs->ZSTD_freeDCtx(d);
		d = NULL;
	}
	return d ? d : zs->ZSTD_createDCtx();
}

static void dctx_give(ZSTD_DCtx *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&dctx_lock);
	if (ndctx_kept < DCTX_KEEP && zs->ZSTD_sizeof_DCtx(d) <= DCTX_KEEP_BYTES) {
		dctx_kept[ndctx_kept++] = d;
		d = NULL;
	}
	pthread_mutex_unlock(&dctx_lock);
	zs->ZSTD_freeDCtx(d);
}

__attribute__((destructor)) static void dctx_free_kept(void)
{
	while (ndctx_kept)
		zs->ZSTD_freeDCtx(dctx_kept[--ndctx_kept]);
}

static int zd_open(const struct accel_op *op, void **ctx)
{
	struct zd *z = calloc(1, sizeof *z);
	if (!z || !(z->dctx = dctx_take())) {
		free(z);
		return ACCEL_ENOMEM;
	}
	z->window_max = op->memory_limit ? op->memory_limit : WINDOW_DEFAULT;
	int log = 10;
	while (log < WINDOW_LOG_MAX && ((uint64_t)1 << log) < z->window_max)
		log++;
	zs->ZSTD_DCtx_setParameter(z->dctx, ZSTD_d_windowLogMax, log);
	*ctx = z;
	return 0;
}

/* Window a zstd frame header at p[0..n) asks for (RFC 8878 3.1.1.1.2; the
 * content size for a single-segment frame), or 0 when the header is not
 * all there: the decoder then says what is wrong. */
static uint64_t frame_window(const uint8_t *p, size_t n)
{
	if (n < 6)
		return 0;
	uint8_t fhd = p[4];
	if (!(fhd & 0x20)) {
		uint64_t base = (uint64_t)1 << (10 + (p[5] >> 3));
		return base + base / 8 * (p[5] & 7);
	}
	static const size_t did_size[4] = { 0, 1, 2, 4 };
	size_t fcs_len = fhd >> 6 == 0 ? 1 : (size_t)1 << (fhd >> 6), at = 5 + did_size[fhd & 3];
	if (n < at + fcs_len)
		return 0;
	uint64_t v = 0;
	for (size_t i = fcs_len; i-- > 0;)
		v = v << 8 | p[at + i];
	return fcs_len == 2 ? v + 256 : v;
}

/* ACCEL_ENOMEM with zstd -d's words when the frame at p needs a window over
 * the limit, as zstd -d refuses it (--long=N or --memory=SIZE raise it). */
static int check_window(const struct zd *z, const uint8_t *p, size_t n, const char *where, char *err, size_t len)
{
	uint64_t w = frame_window(p, n);
	if (w <= z->window_max)
		return 0;
	int log = 10;
	while (log < 63 && ((uint64_t)1 << log) < w)
		log++;
	uint64_t mib = (w + (1u << 20) - 1) >> 20;
	if (log > WINDOW_LOG_MAX)
		snprintf(err, len, "%s: Frame requires too much memory for decoding (a window of %llu MiB; "
			 "zstd decodes windows up to 2048 MiB)", where, (unsigned long long)mib);
	else
		snprintf(err, len, "%s: Frame requires too much memory for decoding (a window of %llu MiB, "
			 "limit %llu MiB; use --long=%d or --memory=%lluM)", where, (unsigned long long)mib,
			 (unsigned long long)(z->window_max >> 20), log, (unsigned long long)mib);
	return ACCEL_ENOMEM;
}

static int zd_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	struct zd *z = ctx;
	int rc = check_window(z, u->in.data, u->in.len, "zstd frame", err, len);
	if (rc < 0)
		return rc;
	if (accel_buf_reserve_fill(&u->out, u->out_hint ? u->out_hint : 1))
		return ACCEL_ENOMEM;
	size_t n = zs->ZSTD_decompressDCtx(z->dctx, u->out.data, u->out_hint, u->in.data, u->in.len);
	if (zs->ZSTD_isError(n)) {
		snprintf(err, len, "zstd frame: %s", zs->ZSTD_getErrorName(n));
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
static int zd_stream_in(void *ctx, struct accel_input *in, struct accel_output *out, char *err, size_t len)
{
	struct zd *z = ctx;
	if (!z->buf) {
		z->cap = zs->ZSTD_DStreamOutSize();
		if (!(z->buf = malloc(z->cap)))
			return ACCEL_ENOMEM;
	}
	zs->ZSTD_DCtx_reset(z->dctx, ZSTD_reset_session_only);
	uint64_t start = in->offset;
	const uint8_t *h;
	ssize_t hn = accel_input_peek(in, FRAME_HEADER_MAX, &h);
	if (hn < 0)
		return (int)hn;
	char where[64];
	snprintf(where, sizeof where, "zstd frame at byte offset %llu", (unsigned long long)start);
	int crc = check_window(z, h, (size_t)hn, where, err, len);
	if (crc < 0)
		return crc;
	for (;;) {
		const uint8_t *p;
		ssize_t n = accel_input_peek(in, zs->ZSTD_DStreamInSize(), &p);
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
			rc = zs->ZSTD_decompressStream(z->dctx, &ob, &ib);
			if (zs->ZSTD_isError(rc)) {
				snprintf(err, len, "zstd frame: %s at byte offset %llu", zs->ZSTD_getErrorName(rc),
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

/* Through a read() view of a mapped input (core_input_view). */
static int zd_stream(void *ctx, struct accel_input *in, struct accel_output *out, char *err, size_t len)
{
	return core_input_viewed(in, zd_stream_in, ctx, out, err, len);
}

static void zd_close(void *ctx)
{
	struct zd *z = ctx;
	if (z) {
		dctx_give(z->dctx);
		free(z->buf);
	}
	free(z);
}

const struct cpu_codec cpu_zstd_compress = {
	"zstd.compress", 250, "libzstd", zc_open, zc_run, NULL, zc_close, NULL, zstd_load,
};
const struct cpu_codec cpu_zstd_decompress = {
	"zstd.decompress", 700, "libzstd", zd_open, zd_run, zd_stream, zd_close, NULL, zstd_load,
};
