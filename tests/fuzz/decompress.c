/*
 * decompress.c - differential fuzz target for accel-compress -d: the input
 * goes through accel_decompress(), the path the program uses (frame walker,
 * parallel units, sequential regions), with a small parallel limit so that
 * small inputs cross it, and through the reference decoder of its format.
 * accel must either write exactly the reference's bytes and succeed, or
 * fail; it must never succeed where the reference fails, nor fail on a
 * valid input for any reason but a memory limit; gzip data followed by
 * trailing garbage is decoded with the warning where the reference finds it.
 * Built once per format: FUZZ_FORMAT is ACCEL_FORMAT_ZSTD, _GZIP or _LZ4.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "accel.h"
#include "fuzz.h"

/* Frames larger than this (compressed or not) are decoded sequentially. */
#define FUZZ_MAX_FRAME 2048

static struct accel_ctx *ctx;

/* Format of the first frame that is not a skippable one, as the program
 * finds it. */
static enum accel_format first_format(const uint8_t *p, size_t n)
{
	size_t pos = 0;
	for (;;) {
		enum accel_format f = accel_format_detect(p + pos, n - pos);
		if (f != ACCEL_FORMAT_SKIPPABLE)
			return n - pos ? f : ACCEL_FORMAT_NONE;
		if (n - pos < 8)
			return ACCEL_FORMAT_UNKNOWN;
		uint64_t len = (uint64_t)p[pos + 4] | (uint64_t)p[pos + 5] << 8 | (uint64_t)p[pos + 6] << 16 |
			       (uint64_t)p[pos + 7] << 24;
		if (len > n - pos - 8)
			return ACCEL_FORMAT_UNKNOWN;
		pos += 8 + (size_t)len;
	}
}

static int run_accel(const uint8_t *data, size_t size, int threads, struct fuzz_out *o, char *err, size_t len)
{
	char path[64];
	int infd = fuzz_memfd("in", data, size), outfd = fuzz_memfd("out", "", 0);
	if (infd < 0 || outfd < 0)
		fuzz_fail("memfd_create failed");
	struct accel_input in;
	snprintf(path, sizeof path, "/proc/self/fd/%d", infd);
	if (accel_input_open(&in, path) < 0)
		fuzz_fail("cannot open the memory file");
	struct accel_output out;
	if (accel_output_fd(&out, outfd) < 0)
		fuzz_fail("cannot write the memory file");
	struct accel_decompress_cfg cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.backend = "cpu";
	cfg.stream.threads = threads;
	cfg.stream.fallback = ACCEL_FALLBACK_CPU;
	cfg.stream.total_size = -1;
	cfg.stream.prog = "fuzz";
	cfg.stream.verbose = -1;
	cfg.parallel_max = FUZZ_MAX_FRAME;
	int rc = accel_decompress(ctx, &cfg, &in, &out, NULL, err, len);
	accel_input_close(&in);
	fuzz_slurp(outfd, o);
	close(infd);
	close(outfd);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (first_format(data, size) != FUZZ_FORMAT)
		return 0;
	if (!ctx && !(ctx = accel_ctx_new()))
		fuzz_fail("out of memory");
	struct fuzz_out ref = { 0 };
	switch (FUZZ_FORMAT) {
	case ACCEL_FORMAT_ZSTD: fuzz_ref_zstd(data, size, &ref); break;
	case ACCEL_FORMAT_GZIP: fuzz_ref_gzip(data, size, &ref); break;
	default: fuzz_ref_lz4(data, size, &ref); break;
	}
	for (int threads = 1; threads <= 2; threads++) {
		struct fuzz_out got = { 0 };
		char err[512] = "";
		int rc = run_accel(data, size, threads, &got, err, sizeof err);
		if (rc == 0 && !ref.ok)
			fuzz_fail("accel decoded %zu bytes with success; the reference rejects the input", got.len);
		if ((rc == ACCEL_DECOMPRESS_GARBAGE) != ref.garbage && !ref.too_big &&
		    (rc >= 0 || (rc != ACCEL_ENOMEM && !strstr(err, "memory"))))
			fuzz_fail("accel returned %d (%s); the reference %s trailing garbage", rc, err,
				  ref.garbage ? "ignores" : "finds no");
		if (rc >= 0 && !ref.too_big && !got.too_big &&
		    (got.len != ref.len || (got.len && memcmp(got.data, ref.data, got.len))))
			fuzz_fail("accel decoded %zu bytes, the reference %zu, and they differ", got.len, ref.len);
		if (rc < 0 && ref.ok && !ref.too_big && rc != ACCEL_ENOMEM && !strstr(err, "memory"))
			fuzz_fail("accel failed (%s: %s) on input the reference decodes (%zu bytes)",
				  accel_strerror(rc), err, ref.len);
		fuzz_out_free(&got);
	}
	fuzz_out_free(&ref);
	return 0;
}
