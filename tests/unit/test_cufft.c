/*
 * test_cufft.c - the cufft backend's device chain without a GPU:
 * chain.cu's kernels compiled as C for the host (one thread running each
 * grid-stride loop) against libcore's host chain (accel_fft_load,
 * accel_fft_emit) on the same transformed frames, for every sample type
 * (all 22 of enum accel_sample),
 * window, output kind, averaging, decimation, shift and padding; and
 * chain.cu compiled by NVRTC (the toolkit's, when installed) for
 * compute_80, its PTX checked by ptxas when there is one. What cannot run
 * here is the driver: cuModuleLoadData, the launches and cuFFT.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <accel/ops/fft.h>
#include "core.h"
#include "chain.cu"
#include "chain_src.c"
#include "nvrtc.c"

/* The unscaled DFT of each of `kept` frames of n complex floats, in double
 * (exp(-2 pi i jk/n) forward, + inverse), in place. */
static void dft(float2 *x, size_t kept, size_t n, int inverse)
{
	double *re = malloc(n * sizeof *re), *im = malloc(n * sizeof *im);
	assert_non_null(re);
	assert_non_null(im);
	for (size_t f = 0; f < kept; f++) {
		float2 *v = x + f * n;
		for (size_t k = 0; k < n; k++) {
			double sr = 0, si = 0;
			for (size_t j = 0; j < n; j++) {
				double a = (inverse ? 2 : -2) * M_PI * (double)((j * k) % n) / (double)n;
				sr += v[j].x * cos(a) - v[j].y * sin(a);
				si += v[j].x * sin(a) + v[j].y * cos(a);
			}
			re[k] = sr;
			im[k] = si;
		}
		for (size_t k = 0; k < n; k++)
			v[k] = make_float2((float)re[k], (float)im[k]);
	}
	free(re);
	free(im);
}

/* Input of `len` bytes of type t: values in [-1, 1) for float types,
 * every bit pattern for integers. */
static uint8_t *make_input(enum accel_sample t, size_t len, unsigned seed)
{
	uint8_t *in = malloc(len + 16);
	assert_non_null(in);
	srand(seed);
	size_t sb = accel_sample_bytes(t), half = accel_sample_is_complex(t) ? sb / 2 : sb;
	int be = strstr(accel_sample_name(t), "_be") != NULL;
	int fl = accel_sample_name(t)[accel_sample_is_complex(t)] == 'f';
	for (size_t i = 0; i + half <= len; i += half) {
		double v = (double)rand() / RAND_MAX * 2 - 1;
		if (fl) {
			float fv = (float)v;
			memcpy(in + i, half == 4 ? (void *)&fv : (void *)&v, half);
			for (size_t b = 0; be && b < half / 2; b++) {
				uint8_t x = in[i + b];
				in[i + b] = in[i + half - 1 - b];
				in[i + half - 1 - b] = x;
			}
		} else {
			for (size_t b = 0; b < half; b++)
				in[i + b] = (uint8_t)rand();
		}
	}
	return in;
}

struct chain_case {
	const char *what;
	enum accel_sample type;
	size_t n, hop, frames, extra;   /* extra: frames past the input's end (--pad) */
	uint64_t seq;
	unsigned average, decimate;
	enum accel_fft_window window;
	enum accel_fft_out out;
	enum accel_fft_norm norm;
	int inverse, full, shift, text;
};

/* Run one case both ways and compare the bytes written. */
static void run_case(const struct chain_case *k)
{
	struct accel_fft f;
	char err[200];
	memset(&f, 0, sizeof f);
	f.n = k->n;
	f.hop = k->hop;
	f.type = k->type;
	f.average = k->average;
	f.decimate = k->decimate;
	f.window = k->window;
	f.kaiser_beta = 8.6;
	f.out = k->out;
	f.norm = k->norm;
	f.inverse = k->inverse;
	f.full = k->full;
	f.shift = k->shift;
	f.db_offset = k->out == ACCEL_FFT_DB ? -3.5 : 0;
	f.format = k->text ? ACCEL_FFT_TEXT : ACCEL_FFT_BINARY;
	size_t avg = k->average ? k->average : 1;
	f.unit_frames = (k->frames + k->extra + avg - 1) / avg * avg;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	size_t frames = k->frames + k->extra;
	size_t len = ((k->frames - 1) * f.hop + f.n) * f.sample_bytes;
	uint8_t *in = make_input(f.type, len, (unsigned)(f.n * 31 + f.type));

	/* Load: the kernel's frames are the host's, bit for bit. */
	uint32_t *idx = malloc(frames * sizeof *idx);
	assert_non_null(idx);
	size_t kept = accel_fft_kept_index(&f, k->seq, frames, idx);
	assert_int_equal(kept, accel_fft_kept_frames(&f, k->seq, frames));
	assert_true(kept > 0);
	float2 *dev = calloc(kept * f.n, sizeof *dev), *host = calloc(kept * f.n, sizeof *host);
	assert_non_null(dev);
	assert_non_null(host);
	chain_load(in, len / f.sample_bytes, idx, kept, f.n, f.hop, (int)f.type, f.win, dev);
	struct accel_fft lf = f;
	lf.r2c = 0;
	assert_int_equal(accel_fft_load(&lf, k->seq, in, len, frames, 0, kept, (float *)host), kept);
	if (memcmp(dev, host, kept * f.n * sizeof *dev))
		fail_msg("%s: chain_load differs from accel_fft_load", k->what);

	/* The same spectra through both reductions. */
	dft(dev, kept, f.n, f.inverse);
	float2 *half = calloc(kept * f.bins, sizeof *half);
	assert_non_null(half);
	for (size_t j = 0; j < kept; j++)
		memcpy(half + j * f.bins, dev + j * f.n, f.bins * sizeof *half);
	struct accel_buf want = { 0 }, got = { 0 };
	assert_int_equal(accel_fft_emit(&f, (const float *)half, kept, &want), 0);
	size_t nrows = accel_fft_rows(&f, kept), vals = f.out == ACCEL_FFT_COMPLEX ? 2 * f.bins : f.bins;
	float *rows = calloc(nrows * vals, sizeof *rows);
	assert_non_null(rows);
	chain_reduce(dev, kept, f.n, f.bins, avg, f.shift ? f.bins - f.bins / 2 : 0, (int)f.out, f.scale,
		     f.db_offset, rows);
	assert_int_equal(accel_fft_put_rows(&f, rows, nrows, &got), 0);
	assert_int_equal(got.len, want.len);
	if (!k->text) {
		/* Complex rows may round differently: the host's fast path
		 * scales in float, chain_reduce in double. */
		const float *a = (const float *)want.data, *b = (const float *)got.data;
		for (size_t i = 0; i < want.len / 4; i++)
			if (a[i] != b[i] && !(f.out == ACCEL_FFT_COMPLEX && fabsf(a[i] - b[i]) <= 1e-6f * fabsf(a[i])))
				fail_msg("%s: value %zu: chain_reduce %.9g, accel_fft_emit %.9g", k->what, i, b[i], a[i]);
	} else if (memcmp(want.data, got.data, want.len)) {
		fail_msg("%s: the CSV rows differ", k->what);
	}
	accel_buf_free(&want);
	accel_buf_free(&got);
	free(rows);
	free(half);
	free(dev);
	free(host);
	free(idx);
	free(in);
	accel_fft_free(&f);
}

static void chain_matches_host(void **state)
{
	static const struct chain_case cases[] = {
		{ "cf32", ACCEL_SAMPLE_CF32, 16, 16, 3, 0, 0, 1, 1, ACCEL_WINDOW_RECT, ACCEL_FFT_COMPLEX, ACCEL_NORM_BACKWARD, 0, 0, 0, 0 },
		{ "ci16 hann db", ACCEL_SAMPLE_CI16, 16, 8, 5, 0, 0, 1, 1, ACCEL_WINDOW_HANN, ACCEL_FFT_DB, ACCEL_NORM_BACKWARD, 0, 0, 0, 0 },
		{ "ci8 mag", ACCEL_SAMPLE_CI8, 10, 10, 4, 0, 0, 1, 1, ACCEL_WINDOW_HAMMING, ACCEL_FFT_MAG, ACCEL_NORM_ORTHO, 0, 0, 0, 0 },
		{ "cu8 average 3 db shift decimate 2, unit 1", ACCEL_SAMPLE_CU8, 12, 5, 20, 0, 1, 3, 2, ACCEL_WINDOW_BLACKMAN_HARRIS, ACCEL_FFT_DB, ACCEL_NORM_BACKWARD, 0, 0, 1, 0 },
		{ "f32 r2c power", ACCEL_SAMPLE_F32, 15, 15, 4, 0, 0, 1, 1, ACCEL_WINDOW_BLACKMAN, ACCEL_FFT_POWER, ACCEL_NORM_FORWARD, 0, 0, 0, 0 },
		{ "i16 full mag shift", ACCEL_SAMPLE_I16, 9, 4, 6, 0, 0, 1, 1, ACCEL_WINDOW_FLATTOP, ACCEL_FFT_MAG, ACCEL_NORM_BACKWARD, 0, 1, 1, 0 },
		{ "u8 r2c db, a partial last row", ACCEL_SAMPLE_U8, 8, 8, 7, 0, 0, 3, 1, ACCEL_WINDOW_KAISER, ACCEL_FFT_DB, ACCEL_NORM_NONE, 0, 0, 0, 0 },
		{ "cf64 inverse complex shift", ACCEL_SAMPLE_CF64, 12, 12, 3, 0, 0, 1, 1, ACCEL_WINDOW_RECT, ACCEL_FFT_COMPLEX, ACCEL_NORM_BACKWARD, 1, 0, 1, 0 },
		{ "f64 r2c complex", ACCEL_SAMPLE_F64, 7, 7, 3, 0, 0, 1, 1, ACCEL_WINDOW_HANN, ACCEL_FFT_COMPLEX, ACCEL_NORM_ORTHO, 0, 0, 0, 0 },
		{ "cf32 padded frames past the end", ACCEL_SAMPLE_CF32, 16, 6, 3, 2, 0, 1, 1, ACCEL_WINDOW_HANN, ACCEL_FFT_POWER, ACCEL_NORM_BACKWARD, 0, 0, 0, 0 },
		{ "ci16 decimate 3 text", ACCEL_SAMPLE_CI16, 8, 8, 10, 0, 2, 1, 3, ACCEL_WINDOW_RECT, ACCEL_FFT_DB, ACCEL_NORM_BACKWARD, 0, 0, 0, 1 },
		{ "i8 hann power", ACCEL_SAMPLE_I8, 10, 10, 3, 0, 0, 1, 1, ACCEL_WINDOW_HANN, ACCEL_FFT_POWER, ACCEL_NORM_BACKWARD, 0, 0, 0, 0 },
		{ "ci32 db", ACCEL_SAMPLE_CI32, 16, 8, 4, 0, 0, 1, 1, ACCEL_WINDOW_RECT, ACCEL_FFT_DB, ACCEL_NORM_BACKWARD, 0, 0, 0, 0 },
		{ "i32 r2c mag", ACCEL_SAMPLE_I32, 9, 9, 3, 0, 0, 1, 1, ACCEL_WINDOW_HAMMING, ACCEL_FFT_MAG, ACCEL_NORM_ORTHO, 0, 0, 0, 0 },
		{ "ci24 complex", ACCEL_SAMPLE_CI24, 12, 6, 4, 0, 0, 1, 1, ACCEL_WINDOW_RECT, ACCEL_FFT_COMPLEX, ACCEL_NORM_BACKWARD, 0, 0, 0, 0 },
		{ "i24 r2c db average 2", ACCEL_SAMPLE_I24, 8, 8, 6, 0, 0, 2, 1, ACCEL_WINDOW_HANN, ACCEL_FFT_DB, ACCEL_NORM_BACKWARD, 0, 0, 0, 0 },
		{ "cf32_be power", ACCEL_SAMPLE_CF32_BE, 16, 16, 3, 0, 0, 1, 1, ACCEL_WINDOW_BLACKMAN, ACCEL_FFT_POWER, ACCEL_NORM_BACKWARD, 0, 0, 0, 0 },
		{ "ci16_be mag", ACCEL_SAMPLE_CI16_BE, 10, 10, 3, 0, 0, 1, 1, ACCEL_WINDOW_RECT, ACCEL_FFT_MAG, ACCEL_NORM_BACKWARD, 0, 0, 0, 0 },
		{ "f32_be r2c complex", ACCEL_SAMPLE_F32_BE, 12, 12, 3, 0, 0, 1, 1, ACCEL_WINDOW_RECT, ACCEL_FFT_COMPLEX, ACCEL_NORM_BACKWARD, 0, 0, 0, 0 },
		{ "i16_be r2c power", ACCEL_SAMPLE_I16_BE, 8, 8, 3, 0, 0, 1, 1, ACCEL_WINDOW_FLATTOP, ACCEL_FFT_POWER, ACCEL_NORM_BACKWARD, 0, 0, 0, 0 },
		{ "cf64_be complex", ACCEL_SAMPLE_CF64_BE, 8, 8, 3, 0, 0, 1, 1, ACCEL_WINDOW_RECT, ACCEL_FFT_COMPLEX, ACCEL_NORM_BACKWARD, 0, 0, 0, 0 },
		{ "f64_be r2c db", ACCEL_SAMPLE_F64_BE, 8, 8, 3, 0, 0, 1, 1, ACCEL_WINDOW_HANN, ACCEL_FFT_DB, ACCEL_NORM_BACKWARD, 0, 0, 0, 0 },
		{ "ci32_be mag", ACCEL_SAMPLE_CI32_BE, 8, 8, 3, 0, 0, 1, 1, ACCEL_WINDOW_RECT, ACCEL_FFT_MAG, ACCEL_NORM_BACKWARD, 0, 0, 0, 0 },
		{ "i32_be r2c power", ACCEL_SAMPLE_I32_BE, 8, 8, 3, 0, 0, 1, 1, ACCEL_WINDOW_RECT, ACCEL_FFT_POWER, ACCEL_NORM_BACKWARD, 0, 0, 0, 0 },
		{ "cf32 complex text", ACCEL_SAMPLE_CF32, 6, 6, 2, 0, 0, 1, 1, ACCEL_WINDOW_RECT, ACCEL_FFT_COMPLEX, ACCEL_NORM_NONE, 0, 0, 0, 1 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		run_case(&cases[i]);
}

/* NVRTC compiles chain.cu for compute_80; ptxas, when there is one,
 * accepts the PTX for sm_80. */
static void nvrtc_compiles(void **state)
{
	struct nvrtc_lib nv;
	char err[200];
	if (cufft_nvrtc_load(&nv, err, sizeof err) < 0) {
		print_message("skipped: %s (no CUDA toolkit)\n", err);
		skip();
	}
	int major = 0, minor = 0;
	nv.version(&major, &minor);
	char *ptx = NULL;
	if (cufft_nvrtc_compile(&nv, 8, 0, &ptx, err, sizeof err) < 0)
		fail_msg("NVRTC %d.%d: %s", major, minor, err);
	print_message("NVRTC %d.%d compiled chain.cu for compute_80: %zu bytes of PTX\n", major, minor, strlen(ptx));
	assert_non_null(strstr(ptx, ".target sm_80"));
	assert_non_null(strstr(ptx, ".entry chain_load("));
	assert_non_null(strstr(ptx, ".entry chain_reduce("));
	/* A device newer than this NVRTC knows gets the newest it does. */
	char *ptx2 = NULL;
	assert_int_equal(cufft_nvrtc_compile(&nv, 99, 9, &ptx2, err, sizeof err), 0);
	assert_non_null(strstr(ptx2, ".target sm_"));
	assert_null(strstr(ptx2, ".target sm_999"));
	free(ptx2);

	const char *ptxas = "/usr/local/cuda/bin/ptxas";
	if (access(ptxas, X_OK)) {
		print_message("skipped: no %s to assemble the PTX\n", ptxas);
		free(ptx);
		return;
	}
	char path[] = "/tmp/accel-cufft-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	size_t len = strlen(ptx);
	assert_int_equal(write(fd, ptx, len), (ssize_t)len);
	close(fd);
	char cmd[512];
	snprintf(cmd, sizeof cmd, "%s -arch=sm_80 -o /dev/null %s", ptxas, path);
	int rc = system(cmd);
	unlink(path);
	free(ptx);
	assert_int_equal(rc, 0);
	print_message("ptxas -arch=sm_80 accepted it\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(chain_matches_host),
		cmocka_unit_test(nvrtc_compiles),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
