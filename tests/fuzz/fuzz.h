/*
 * fuzz.h - what the fuzz targets share: the libFuzzer entry point, inputs
 * and outputs held in memory files, and the reference decoders (libzstd,
 * zlib, liblz4, one frame or member after another) that accel's
 * decompression is compared against.
 */
#ifndef ACCEL_FUZZ_H
#define ACCEL_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Output of a decoder: bytes, and whether it accepted the whole input. */
struct fuzz_out {
	uint8_t *data;
	size_t len, cap;
	int ok;          /* 1: the whole input decoded without error */
	int garbage;     /* 1: gzip: members decoded, then trailing garbage
	                  * ignored (gzip -d's warning; ok is 0) */
	int too_big;     /* 1: output passed FUZZ_OUT_MAX; not compared */
};

/* Reference output is compared only up to this size. */
#define FUZZ_OUT_MAX ((size_t)64 << 20)

/* A memory file holding data[0..size), rewound; -1 on failure. */
int fuzz_memfd(const char *name, const void *data, size_t size);
/* Read back all of memory file fd into o (o->ok untouched). */
void fuzz_slurp(int fd, struct fuzz_out *o);
void fuzz_out_free(struct fuzz_out *o);

/* Reference decoders: the whole input, frame after frame, as `zstd -d`,
 * `gzip -d` and `lz4 -d` read it (lz4's legacy frames too), strict about
 * trailing bytes but as gzip -d is about those after a member. */
void fuzz_ref_zstd(const uint8_t *p, size_t n, struct fuzz_out *o);
void fuzz_ref_gzip(const uint8_t *p, size_t n, struct fuzz_out *o);
void fuzz_ref_lz4(const uint8_t *p, size_t n, struct fuzz_out *o);

/* Abort with a line on stderr: the fuzzer keeps the input as a crash. */
void fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
