/*
 * fft-direct.c - the peer of tests/bench/fft.sh: FFTW called directly on
 * the same plan and batch as accel-fft's fftw engine (fftwf_plan_many_dft of
 * accel_fft_batch_frames frames of N cf32 samples, FFTW_MEASURE, the same
 * wisdom file), over a file held in memory, one thread, no window, no
 * output. Prints "SECONDS FRAMES BATCH": the time of the transforms alone,
 * the best of three passes over the data.
 * Usage: fft-direct N FILE
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fftw3.h>
#include "accel.h"

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	struct accel_fft f = { .n = strtoul(argv[1], NULL, 10), .type = ACCEL_SAMPLE_CF32 };
	char err[200];
	if (accel_fft_setup(&f, err, sizeof err) < 0) {
		fprintf(stderr, "fft-direct: %s\n", err);
		return 2;
	}
	FILE *in = fopen(argv[2], "rb");
	if (!in)
		return 1;
	fseek(in, 0, SEEK_END);
	long bytes = ftell(in);
	rewind(in);
	size_t n = f.n, frames = (size_t)bytes / (8 * n), batch = accel_fft_batch_frames(&f);
	fftwf_complex *data = fftwf_malloc(frames * n * sizeof *data);
	fftwf_complex *buf = fftwf_malloc(batch * n * sizeof *buf), *out = fftwf_malloc(batch * n * sizeof *out);
	if (!data || !buf || !out || fread(data, 8 * n, frames, in) != frames)
		return 1;
	fclose(in);
	char path[PATH_MAX];
	const char *x = getenv("XDG_CACHE_HOME");
	snprintf(path, sizeof path, "%s/accel/fftw3f.wisdom", x ? x : ".");
	fftwf_import_wisdom_from_filename(path);
	int nn = (int)n;
	fftwf_plan p = fftwf_plan_many_dft(1, &nn, (int)batch, buf, NULL, 1, nn, out, NULL, 1, nn, FFTW_FORWARD,
					   FFTW_MEASURE);
	/* The best of three passes: the first also pays for the pages of
	 * `data` the kernel maps on first touch (costly in a VM). */
	double t = 0;
	size_t b = 0;
	for (int pass = 0; pass < 3; pass++) {
		double t0 = accel_now();
		for (b = 0; b + batch <= frames; b += batch)
			fftwf_execute_dft(p, data + b * n, out);
		double dt = accel_now() - t0;
		if (!pass || dt < t)
			t = dt;
	}
	printf("%.6f %zu %zu\n", t, b, batch);
	fftwf_destroy_plan(p);
	accel_fft_free(&f);
	return 0;
}
