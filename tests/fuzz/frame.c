/*
 * frame.c - fuzz target for the frame walker (libcore/ops/frame.c): walking
 * frames by consuming them and reading them whole must agree with each
 * other and with libzstd's frame sizes, never claim bytes past the input,
 * and a frame the parallel path declines (ACCEL_ENOTSUP) must leave the
 * input where it was, so the sequential decoder starts at a frame boundary.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include "accel.h"
#include "fuzz.h"

#define MAX_FRAMES 4096

struct walk {
	int n;
	uint64_t off[MAX_FRAMES], size[MAX_FRAMES];
	int stop_rc;          /* what ended the walk */
};

static int open_input(struct accel_input *in, int fd)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	return accel_input_open(in, path);
}

/* Walk every frame with accel_frame_scan in consume mode. */
static void walk_consume(int fd, const uint8_t *data, size_t size, struct walk *w)
{
	struct accel_input in;
	char err[256];
	w->n = 0;
	if (open_input(&in, fd) < 0)
		fuzz_fail("cannot open the memory file");
	for (;;) {
		struct accel_frame f;
		uint64_t off = in.offset;
		int rc = accel_frame_scan(&in, 0, 1, &f, err, sizeof err);
		if (rc < 0 || f.format == ACCEL_FORMAT_NONE) {
			w->stop_rc = rc;
			break;
		}
		if (f.frame_size < 0 || off + (uint64_t)f.frame_size > size || in.offset != off + (uint64_t)f.frame_size)
			fuzz_fail("consume walk: frame at %llu of %lld bytes, input now at %llu, input is %zu bytes",
				  (unsigned long long)off, (long long)f.frame_size, (unsigned long long)in.offset, size);
		if (f.format == ACCEL_FORMAT_ZSTD) {
			size_t ref = ZSTD_findFrameCompressedSize(data + off, size - off);
			if (!ZSTD_isError(ref) && ref != (uint64_t)f.frame_size)
				fuzz_fail("zstd frame at %llu: walker says %lld bytes, libzstd %zu",
					  (unsigned long long)off, (long long)f.frame_size, ref);
		}
		if (w->n == MAX_FRAMES)
			break;
		w->off[w->n] = off;
		w->size[w->n++] = (uint64_t)f.frame_size;
	}
	accel_input_close(&in);
}

/* Read frames whole with accel_frame_read under a parallel limit `max`,
 * stepping over declined frames in consume mode. */
static void walk_read(int fd, const uint8_t *data, size_t size, uint64_t max, const struct walk *w)
{
	struct accel_input in;
	struct accel_buf buf = { 0 };
	char err[256];
	if (open_input(&in, fd) < 0)
		fuzz_fail("cannot open the memory file");
	for (int i = 0; i < MAX_FRAMES; i++) {
		struct accel_frame f;
		uint64_t off = in.offset;
		int rc = accel_frame_read(&in, max, &buf, &f, err, sizeof err);
		if (rc == 0 && f.format == ACCEL_FORMAT_NONE)
			break;
		if (rc == ACCEL_ENOTSUP) {
			const uint8_t *p;
			ssize_t n = accel_input_peek(&in, 4, &p);
			if (in.offset != off)
				fuzz_fail("declined frame at %llu: input moved to %llu", (unsigned long long)off,
					  (unsigned long long)in.offset);
			if (n > 0 && memcmp(p, data + off, (size_t)n))
				fuzz_fail("declined frame at %llu: the input's bytes changed", (unsigned long long)off);
			rc = accel_frame_scan(&in, 0, 1, &f, err, sizeof err);
			if (rc < 0 || f.format == ACCEL_FORMAT_NONE)
				break;
			continue;
		}
		if (rc < 0)
			break;
		if (f.format == ACCEL_FORMAT_SKIPPABLE) {
			if (buf.len || f.frame_size < 8 || in.offset != off + (uint64_t)f.frame_size)
				fuzz_fail("skippable frame at %llu: %zu bytes read, frame %lld bytes, input at %llu",
					  (unsigned long long)off, buf.len, (long long)f.frame_size,
					  (unsigned long long)in.offset);
			continue;
		}
		if (f.frame_size < 0 || (uint64_t)f.frame_size > max || buf.len != (size_t)f.frame_size ||
		    off + buf.len > size || memcmp(buf.data, data + off, buf.len) || in.offset != off + buf.len)
			fuzz_fail("frame read at %llu: %zu bytes read, frame %lld bytes, limit %llu",
				  (unsigned long long)off, buf.len, (long long)f.frame_size, (unsigned long long)max);
		if (i < w->n && (w->off[i] != off || w->size[i] != buf.len))
			fuzz_fail("frame %d: read at %llu (%zu bytes), walked at %llu (%llu bytes)", i,
				  (unsigned long long)off, buf.len, (unsigned long long)w->off[i],
				  (unsigned long long)w->size[i]);
	}
	accel_buf_free(&buf);
	accel_input_close(&in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_memfd("frame", data, size);
	if (fd < 0)
		fuzz_fail("memfd_create failed");
	struct walk *w = calloc(1, sizeof *w);
	if (!w)
		fuzz_fail("out of memory");
	walk_consume(fd, data, size, w);
	walk_read(fd, data, size, 64, w);
	walk_read(fd, data, size, 4096, w);
	free(w);
	close(fd);
	return 0;
}
