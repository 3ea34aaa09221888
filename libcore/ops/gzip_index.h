/*
 * gzip_index.h - parallel decompression of gzip members of any tool
 * (libcore/ops/gzip_index.c). Internal to libaccel: the CPU backend's
 * sequential gzip decoder calls it, unit tests and the fuzz target too.
 */
#ifndef ACCEL_GZIP_INDEX_H
#define ACCEL_GZIP_INDEX_H

#include <stddef.h>
#include <stdint.h>
#include <accel/io.h>

/* Members shorter than this (compressed bytes, with what follows them in
 * the input) are left to the serial decoder. */
#define ACCEL_GZIP_PARALLEL_MIN (1u << 20)

/* What the gzip.decompress operation's op->ext points to. */
/* The fewest threads (-T) the parallel decoder is used with: with one,
 * one ISA-L inflate (see accel_decompress). */
#define ACCEL_GZIP_PAR_MIN_THREADS 2

struct accel_gzip_dec_ext {
	int threads;          /* decoding threads for one member; < 2: serial */
	uint64_t memory;      /* bytes the parallel decoder may take */
};

/*
 * Bytes of compressed input per chunk for `threads` threads within
 * `memory` bytes (batch input, a margin, each chunk's 16-bit symbols, for
 * *sets sets of chunks): at most 8 MiB; with *sets 2 (one batch decoding
 * while the one before is written) when they fit in chunks of 256 KiB or
 * more, else 1; 0 (*sets 0) when threads < 2 or memory holds no 256 KiB
 * chunks.
 */
size_t accel_gzip_chunk_size(int threads, uint64_t memory, int *sets);

/*
 * Decode the gzip member at the position of `in` (RFC 1952 header, deflate
 * data, trailer) to `out` on `threads` threads, consuming it. Returns 0;
 * ACCEL_ENOTSUP, nothing consumed, when the member is one for the serial
 * decoder (fewer than ACCEL_GZIP_PARALLEL_MIN bytes left in the input, a
 * header with reserved flags, a bad header CRC, a method other than
 * deflate, or too little memory); ACCEL_EDATA with err naming the member's
 * byte offset (damaged deflate data, "crc error", "length error",
 * truncated), written output then being what came before the damage;
 * ACCEL_EIO, ACCEL_EPIPE (from out), ACCEL_ENOMEM.
 */
int accel_gzip_inflate_parallel(struct accel_input *in, struct accel_output *out, int threads, uint64_t memory,
				char *err, size_t len);

/*
 * The block boundary finder: the first bit in [from, to) of p[n] (bits
 * counted from p's first byte, least significant first, RFC 1951 3.1.1)
 * where a non-final dynamic Huffman block with valid complete codes or a
 * non-final stored block with matching LEN and NLEN (and zero padding)
 * starts, and from which `blocks` blocks (or up to the end of the input
 * or a final block) decode without error. Returns that bit, or UINT64_MAX
 * when there is none. For tests and the fuzz target.
 */
/* Bytes of the gzip member header (RFC 1952, 2.3) that p[0..n) starts
 * with, 0 when it is not whole there or not a deflate member with valid
 * flags; with FHCRC, its stored CRC16 and the one its bytes give in
 * *stored and *computed (else both 0). ISA-L is loaded first (core_isal,
 * as the gzip engine's load does). */
size_t accel_gzip_header_crc(const uint8_t *p, size_t n, uint32_t *stored, uint32_t *computed);
uint64_t accel_gzip_find_block(const uint8_t *p, size_t n, uint64_t from, uint64_t to, unsigned blocks);

/*
 * The speculative decoder: deflate blocks from bit `start` of p[n] up to
 * the end of the final block or of the input, into out[cap] as 16-bit
 * symbols (< 256 a byte; 256 + i a byte of the 32 KiB window before start,
 * i counted from its oldest byte). Returns the symbols written, or -1 for
 * invalid data or more than cap symbols; *end: the bit where decoding
 * stopped. For tests and the fuzz target.
 */
ptrdiff_t accel_gzip_decode_symbols(const uint8_t *p, size_t n, uint64_t start, uint16_t *out, size_t cap,
				    uint64_t *end);

#endif
