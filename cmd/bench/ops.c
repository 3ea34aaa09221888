/*
 * ops.c - the operations accel-bench measures, each with its peer tools in
 * order of preference (the first installed runs, or the one --peer names).
 */
#include <stdlib.h>
#include <string.h>
#include "bench.h"

const struct opdef ops[] = {
	{ "zstd.compress", FAM_COMPRESS, "zstd", 0, { { "zstd", "-q", "-%L", "-T%T", "-c" } } },
	{ "zstd.decompress", FAM_DECOMPRESS, "zstd", 0, { { "zstd", "-q", "-d", "-c" } } },
	{ "gzip.compress", FAM_COMPRESS, "gzip", 0,
	  { { "pigz", "-%L", "-p", "%T", "-c" }, { "igzip", "-%G", "-T", "%T", "-c" } } },
	{ "gzip.decompress", FAM_DECOMPRESS, "gzip", 0,
	  { { "pigz", "-d", "-p", "%T", "-c" }, { "igzip", "-d", "-c" }, { "rapidgzip", "-d", "-c", "-P", "%T" } } },
	{ "lz4.compress", FAM_COMPRESS, "lz4", 0, { { "lz4", "-q", "-%L", "-c" } } },
	{ "lz4.decompress", FAM_DECOMPRESS, "lz4", 0, { { "lz4", "-q", "-d", "-c" } } },
	{ "age.encrypt", FAM_AGE_ENCRYPT, NULL, 0, { { "age", "-r", "%R" } } },
	{ "age.decrypt", FAM_AGE_DECRYPT, NULL, 0, { { "age", "-d", "-i", "%I" } } },
	{ "sha256", FAM_HASH, NULL, 0, { { "sha256sum" } } },
	{ "sha512", FAM_HASH, NULL, 0, { { "sha512sum" } } },
	{ "sha3-256", FAM_HASH, NULL, 0, { { NULL } } },
	{ "blake2b512", FAM_HASH, NULL, 0, { { "b2sum" } } },
	{ "sha1", FAM_HASH, NULL, 0, { { "sha1sum" } } },
	{ "md5", FAM_HASH, NULL, 0, { { "md5sum" } } },
	{ "fft.c2c", FAM_FFT, NULL, FFT_C2C, { { "accel-bench-fftw", "-T", "%T", "c2c", "%N" } } },
	{ "fft.r2c", FAM_FFT, NULL, FFT_R2C, { { "accel-bench-fftw", "-T", "%T", "r2c", "%N" } } },
	{ "fft.c2r", FAM_FFT, NULL, FFT_C2R, { { "accel-bench-fftw", "-T", "%T", "c2r", "%N" } } },
	/* Their peers are programs of their own: onnx.c, video.c. */
	{ "onnx.run", FAM_ONNX, NULL, 0, { { NULL } } },
	{ "onnx.stream", FAM_ONNX, NULL, 0, { { NULL } } },
	{ "h264.decode", FAM_DECODE, "h264", 0, { { NULL } } },
	{ "hevc.decode", FAM_DECODE, "hevc", 0, { { NULL } } },
	{ "h264.encode", FAM_ENCODE, "h264", 0, { { NULL } } },
	{ "hevc.encode", FAM_ENCODE, "hevc", 0, { { NULL } } },
	{ "av1.encode", FAM_ENCODE, "av1", 0, { { NULL } } },
	{ "vp9.encode", FAM_ENCODE, "vp9", 0, { { NULL } } },
};
const size_t nops = sizeof ops / sizeof ops[0];

const struct opdef *opdef(const char *name)
{
	for (size_t i = 0; i < nops; i++)
		if (!strcmp(ops[i].name, name))
			return &ops[i];
	return NULL;
}

/* The operations of the toolkit: ours, then any other a loaded backend
 * lists (not measured yet). */
int all_ops(struct accel_ctx *ctx, const char **names)
{
	int n = 0;
	for (size_t i = 0; i < nops; i++)
		names[n++] = ops[i].name;
	for (int i = 0; i < accel_backend_count(ctx); i++) {
		const struct accel_backend_status *s = accel_backend_status(ctx, i);
		if (!s->backend || !s->backend->ops)
			continue;
		for (const char *const *o = s->backend->ops; *o && n < MAX_NAMES; o++) {
			int dup = 0;
			for (int k = 0; k < n && !dup; k++)
				dup = !strcmp(names[k], *o);
			if (!dup)
				names[n++] = *o;
		}
	}
	return n;
}

int size_word(const char *word, uint64_t *v)
{
	char *end;
	if (!strchr(word, 'x'))
		return accel_parse_size(word, v) == 0 && *v >= 1 ? 0 : -1;
	long w = strtol(word, &end, 10), h = *end == 'x' ? strtol(end + 1, &end, 10) : 0;
	if (*end || w < 16 || h < 16 || w > 8192 || h > 8192 || w % 2 || h % 2)
		return -1;
	*v = VIDEO_SIZE(w, h);
	return 0;
}
