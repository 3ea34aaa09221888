/*
 * seektable.c - fuzz target for the seek table of zstd's seekable format
 * (libcore/ops/seekable.c) and -d --range (libcore/ops/compress.c): the
 * input as a file. A table that parses adds up (every compressed size at
 * least 8 bytes, their sum the bytes before the table, the table's own
 * size from its count) and writes back to the same bytes; a range decoded
 * from the input, where libzstd decodes the whole input, is exactly that
 * slice of libzstd's output, or an error (a table that lies) - never other
 * bytes with success.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "accel.h"
#include "fuzz.h"

static struct accel_ctx *ctx;

static void check_table(const uint8_t *data, size_t size, const struct accel_seek_table *t)
{
	uint64_t entry = t->checksums ? 12 : 8;
	if (t->frame_size != 8 + t->nframes * entry + ACCEL_SEEK_FOOTER || t->frame_size > size)
		fuzz_fail("seek table of %llu frames is %llu bytes", (unsigned long long)t->nframes,
			  (unsigned long long)t->frame_size);
	if ((t->nframes ? t->coff[t->nframes] : 0) != size - t->frame_size)
		fuzz_fail("seek table frames add up to %llu, %llu bytes before the table",
			  (unsigned long long)(t->nframes ? t->coff[t->nframes] : 0),
			  (unsigned long long)(size - t->frame_size));
	for (uint64_t k = 0; k < t->nframes; k++)
		if (t->coff[k + 1] < t->coff[k] + 8 || t->doff[k + 1] < t->doff[k])
			fuzz_fail("seek table entry %llu goes backwards", (unsigned long long)k);
	/* Written back: the same bytes, but for the descriptor's unused bits. */
	int fd = fuzz_memfd("table", "", 0);
	struct accel_output out;
	if (fd < 0 || accel_output_fd(&out, fd) < 0 || accel_seek_table_write(t, &out) < 0)
		fuzz_fail("cannot write the seek table");
	struct fuzz_out w = { 0 };
	fuzz_slurp(fd, &w);
	close(fd);
	const uint8_t *tail = data + size - t->frame_size;
	if (w.len != t->frame_size || memcmp(w.data, tail, w.len - 5) ||
	    (w.data[w.len - 5] & 0xFC) != (tail[w.len - 5] & 0xFC) || memcmp(w.data + w.len - 4, tail + w.len - 4, 4))
		fuzz_fail("seek table written back differs from the one read");
	fuzz_out_free(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ctx && !(ctx = accel_ctx_new()))
		fuzz_fail("out of memory");
	struct accel_input in;
	struct accel_seek_table t = { 0 };
	char err[512] = "";
	if (accel_input_mem(&in, data, size, "fuzz") < 0)
		fuzz_fail("out of memory");
	int rc = accel_seek_table_read(&in, &t, err, sizeof err);
	accel_input_close(&in);
	if (rc == 0)
		check_table(data, size, &t);
	else if (rc != ACCEL_ENOTSUP && rc != ACCEL_EDATA && rc != ACCEL_ENOMEM)
		fuzz_fail("accel_seek_table_read returned %d (%s)", rc, err);
	else if (rc == ACCEL_EDATA && !err[0])
		fuzz_fail("accel_seek_table_read: an error without a message");
	accel_seek_table_free(&t);

	if (size < 4 || accel_format_detect(data, size) != ACCEL_FORMAT_ZSTD)
		return 0;
	struct fuzz_out ref = { 0 };
	fuzz_ref_zstd(data, size, &ref);
	if (!ref.ok || ref.too_big) {
		fuzz_out_free(&ref);
		return 0;
	}
	/* A range picked from the input's size: anywhere, to past the end. */
	uint64_t from = (uint64_t)size * 7919 % (ref.len + 2), length = ref.len / 3 + (size & 7);
	int outfd = fuzz_memfd("out", "", 0);
	struct accel_output out;
	if (outfd < 0 || accel_output_fd(&out, outfd) < 0 || accel_input_mem(&in, data, size, "fuzz") < 0)
		fuzz_fail("cannot set up the range decoding");
	struct accel_decompress_cfg cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.backend = "cpu";
	cfg.stream.threads = 2;
	cfg.stream.fallback = ACCEL_FALLBACK_CPU;
	cfg.stream.total_size = -1;
	cfg.stream.prog = "fuzz";
	cfg.stream.verbose = -1;
	cfg.parallel_max = 2048;
	cfg.range = 1;
	cfg.range_offset = from;
	cfg.range_length = length;
	rc = accel_decompress(ctx, &cfg, &in, &out, NULL, err, sizeof err);
	accel_input_close(&in);
	struct fuzz_out got = { 0 };
	fuzz_slurp(outfd, &got);
	close(outfd);
	size_t want = from >= ref.len ? 0 : ref.len - from < length ? ref.len - (size_t)from : (size_t)length;
	if (rc == 0 && (got.len != want || (want && memcmp(got.data, ref.data + from, want))))
		fuzz_fail("--range %llu:%llu: %zu bytes with success, the reference's slice is %zu and differs",
			  (unsigned long long)from, (unsigned long long)length, got.len, want);
	if (rc < 0 && rc != ACCEL_EDATA && rc != ACCEL_ENOMEM)
		fuzz_fail("--range %llu:%llu failed (%s: %s) on input libzstd decodes", (unsigned long long)from,
			  (unsigned long long)length, accel_strerror(rc), err);
	fuzz_out_free(&got);
	fuzz_out_free(&ref);
	return 0;
}
