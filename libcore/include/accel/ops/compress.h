/*
 * accel/ops/compress.h - compressed frames (zstd, gzip, lz4): detection, walking, compression and
 * decompression through the stream engine.
 * Part of libaccel's public API; <accel.h> includes every such header.
 */
#ifndef ACCEL_OPS_COMPRESS_H
#define ACCEL_OPS_COMPRESS_H

#include <accel/stream.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

struct accel_report;

enum accel_format {
	ACCEL_FORMAT_NONE,       /* end of input */
	ACCEL_FORMAT_UNKNOWN,
	ACCEL_FORMAT_ZSTD,
	ACCEL_FORMAT_GZIP,
	ACCEL_FORMAT_LZ4,
	ACCEL_FORMAT_SKIPPABLE,  /* zstd/lz4 skippable frame: no content */
};

/* The functions of this section use only their arguments: safe from any
 * thread, one thread per input. */

/* "zstd", "gzip", "lz4", "skippable", "unknown" (static strings). */
const char *accel_format_name(enum accel_format f);
/* lz4's legacy frame (magic 0x184C2102, written by lz4 -l; ACCEL_FORMAT_LZ4):
 * blocks decode to at most ACCEL_LZ4_LEGACY_BLOCK bytes each, and a block
 * size over ACCEL_LZ4_LEGACY_BOUND (LZ4_compressBound of that) is the magic
 * of the next frame, ending the legacy one, as lz4 -d reads it. */
#define ACCEL_LZ4_LEGACY_BLOCK ((size_t)8 << 20)
#define ACCEL_LZ4_LEGACY_BOUND (ACCEL_LZ4_LEGACY_BLOCK + ACCEL_LZ4_LEGACY_BLOCK / 255 + 16)
/* Format named by its magic bytes at p[0..n): 2 bytes for gzip, 4 for
 * the others; UNKNOWN when n is too short or nothing matches. */
enum accel_format accel_format_detect(const uint8_t *p, size_t n);

/* Our gzip members (RFC 1952, 2.3) carry FEXTRA (XLEN 12) with one
 * subfield, SI1 'A' SI2 'C', LEN 8: the member's total size in bytes and its
 * uncompressed size (ISIZE), both 32-bit little-endian, so that a reader
 * finds member boundaries without inflating, as BGZF does with its 'B','C'
 * subfield (SAM/BAM format specification, 4.1). gzip, pigz and zlib skip
 * unknown subfields. ACCEL_GZIP_AC_HEADER is the bytes of the header before
 * the deflate data. */
#define ACCEL_GZIP_AC_HEADER 24
/* Write the member header at h[0..ACCEL_GZIP_AC_HEADER): deflate, FEXTRA,
 * no time, OS 3 (Unix), XFL `xfl` (2: slowest, 4: fastest, 0: other) and
 * the 'AC' subfield with ISIZE `isize` and a member size of 0, which
 * accel_gzip_ac_set_size fills once the deflate data and the trailer are
 * written. */
void accel_gzip_ac_header(uint8_t *h, unsigned xfl, uint32_t isize);
/* Store the member's total size (header, deflate data and the 8-byte
 * trailer, in bytes) in the header at h. */
void accel_gzip_ac_set_size(uint8_t *h, uint32_t member_size);
/* Find an 'AC' subfield in a member's extra field x[0..xlen) (the bytes
 * after XLEN): 1 with *member and *isize set, 0 when there is none (or it
 * is not 8 bytes long). Subfields whose LEN runs past xlen end the search. */
int accel_gzip_ac_find(const uint8_t *x, size_t xlen, uint32_t *member, uint32_t *isize);

/* What is known of one frame (a gzip member, a zstd or lz4 frame) without
 * decoding it. */
struct accel_frame {
	enum accel_format format;
	int64_t content_size;    /* decompressed bytes, -1 unknown */
	int64_t frame_size;      /* compressed bytes of the whole frame, -1 unknown */
	int checksum;            /* 1: the frame carries a content checksum */
	int blocks;              /* number of blocks walked (zstd, lz4) */
};

/*
 * Inspect the frame at the current position of `in` and find its end
 * without decoding: from the zstd (RFC 8878) and lz4 (LZ4 Frame Format)
 * block headers, or from the 'A','C' FEXTRA subfield of our gzip members.
 * consume = 0: peek only, and stop with ACCEL_ENOTSUP (nothing consumed)
 * when the frame or its stated content is longer than `max` bytes, or its
 * end cannot be found without inflating (a gzip member of another tool, or
 * one whose 'A','C' sizes do not match its trailer's ISIZE and the start of
 * the next member, or an lz4 legacy frame, whose content size is never
 * stated); the frame is then
 * whole at the input's peek pointer. consume = 1: consume the frame while
 * walking (for --list; memory stays bounded). Returns 0 (f->format NONE at
 * end of input), ACCEL_ENOTSUP, ACCEL_EDATA (an unknown format included)
 * with a message naming the byte offset in err[len], ACCEL_EIO (errno
 * kept) or ACCEL_ENOMEM.
 */
int accel_frame_scan(struct accel_input *in, uint64_t max, int consume, struct accel_frame *f,
		     char *err, size_t len);

/* Like accel_frame_scan in peek mode, but once the frame is known to fit
 * `max` it is read whole into dst (dst->len = f->frame_size), straight from
 * the file for its large blocks. ACCEL_ENOTSUP still consumes nothing: bytes
 * already read (at most `max`) are given back to the input's buffer, so the
 * frame can be decoded sequentially from its first byte. A skippable frame
 * is walked past instead (consumed whatever its size, dst->len 0). Returns
 * as accel_frame_scan; dst may trade buffers with the input. */
int accel_frame_read(struct accel_input *in, uint64_t max, struct accel_buf *dst, struct accel_frame *f,
		     char *err, size_t len);

/* Read the header of the zstd frame at p[0..n) (RFC 8878 3.1.1.1): its
 * stated content size in *content (-1: not stated) and whether it ends
 * with a content checksum. Returns the header's length in bytes; 0 when
 * n is too short to hold it; ACCEL_EDATA for a header that is not a zstd
 * frame's (magic, reserved bit). Pure. */
int accel_zstd_frame_header(const uint8_t *p, size_t n, int64_t *content, int *checksum);

/* accel_unit.part of an lz4.decompress unit that is part of one lz4 frame
 * rather than whole frames (LZ4 Frame Format Description 1.6.x): a frame
 * of independent blocks (FLG's B.Indep. set) and no dictionary ID, which
 * accel_decompress cuts at block boundaries so that its blocks decode in
 * parallel, as lz4 -d decodes them one after another. `in` holds whole
 * blocks, each its 4-byte little-endian size (the high bit set: the data
 * is stored uncompressed), its data, and when FLG's B.Checksum is set its
 * XXH32 (seed 0) of the data as stored; the first part starts with the
 * frame's header (7 bytes, 15 with FLG's C.Size), the last ends with the
 * end mark (a size of 0) and the content checksum (with FLG's C.Checksum),
 * so that the parts hold every byte of the frame. Bits 0-7 are the
 * frame's FLG byte and 8-15 its BD byte (a block decodes to at most BD's
 * Block Maximum Size); ACCEL_LZ4_PART is set in every part, _FIRST in the
 * frame's first and _LAST in its last (the end mark followed it). An
 * engine decodes the blocks in order into `out` (out_hint: the sum of their
 * most) and checks each block's checksum; the content size and checksum
 * of the frame are checked as its parts are written, in order. */
#define ACCEL_LZ4_PART ((uint64_t)1 << 16)
#define ACCEL_LZ4_PART_FIRST ((uint64_t)1 << 17)
#define ACCEL_LZ4_PART_LAST ((uint64_t)1 << 18)
/* Set with ACCEL_LZ4_PART in a part of a legacy frame (lz4 -l), whose
 * blocks are a 4-byte compressed size and its data, each decoding to at
 * most ACCEL_LZ4_LEGACY_BLOCK bytes; the first part starts with the magic;
 * no descriptor (bits 0-15 are 0), no checksums, no end mark. */
#define ACCEL_LZ4_PART_LEGACY ((uint64_t)1 << 19)

/* ------------------------------------------------------ seekable format */

/* zstd's seekable format ("Zstandard Seekable Format" 0.1.0, zstd's
 * contrib/seekable_format/zstd_seekable_compression_format.md): frames
 * compressed independently, then a skippable frame (magic
 * ACCEL_SEEK_TABLE_MAGIC) holding one entry per frame - its compressed and
 * decompressed sizes, 32-bit little-endian, and with the descriptor's bit
 * 7 the low 32 bits of the XXH64 of its content - and a 9-byte footer: the
 * number of frames, the descriptor, ACCEL_SEEKABLE_MAGIC last in the file. */
#define ACCEL_SEEK_TABLE_MAGIC 0x184D2A5Eu
#define ACCEL_SEEKABLE_MAGIC 0x8F92EAB1u
#define ACCEL_SEEK_FOOTER 9

/* A seek table, zero-initialised: empty. Frame k is bytes coff[k] to
 * coff[k + 1] of the stream, decompressing to bytes doff[k] to doff[k + 1]
 * (arrays of nframes + 1 once a frame is in). check[k]: the entry's
 * checksum when `checksums`. */
struct accel_seek_table {
	uint64_t nframes, cap;
	uint64_t *coff, *doff;
	uint32_t *check;
	int checksums;
	uint64_t frame_size;  /* bytes of the seek table frame (parsed tables) */
};
/* Add a frame of `csize` compressed and `dsize` decompressed bytes (and
 * its checksum, kept when t->checksums). Returns 0; ACCEL_EINVAL for a
 * size over 4 GiB - 1 or a 2^32nd frame, which the format cannot hold;
 * ACCEL_ENOMEM. Memory: 20 bytes a frame. */
int accel_seek_table_add(struct accel_seek_table *t, uint64_t csize, uint64_t dsize, uint32_t check);
/* Write t as a seek table frame to out. Returns as accel_output_write. */
int accel_seek_table_write(const struct accel_seek_table *t, struct accel_output *out);
/* From the footer f[0..ACCEL_SEEK_FOOTER) at the end of a stream of
 * `size` bytes: the bytes of the whole seek table frame in *frame_size.
 * Returns 0; ACCEL_ENOTSUP when the footer has not the seekable magic (not
 * a seekable stream); ACCEL_EDATA (err[len]) for reserved descriptor bits
 * set or a table longer than the stream. Pure. */
int accel_seek_footer(const uint8_t *f, uint64_t size, uint64_t *frame_size, char *err, size_t len);
/* Parse the seek table frame p[0..n) that ends a stream of `size` bytes
 * into t (emptied first). Every size must add up: the skippable frame's
 * size, the entries and the footer's count, and the frames' compressed
 * sizes (each at least 8 bytes) with the stream's bytes before the table.
 * Returns 0; ACCEL_ENOTSUP (no seekable footer); ACCEL_EDATA with one line
 * in err[len]; ACCEL_ENOMEM. Memory: about 20 bytes a frame, bounded by
 * the table's own size. Pure apart from t. */
int accel_seek_table_parse(const uint8_t *p, size_t n, uint64_t size, struct accel_seek_table *t,
			   char *err, size_t len);
/* Read and parse the seek table at the end of a regular-file or memory
 * input (through accel_input_pread: the input does not move), its size
 * in->size. Returns as accel_seek_table_parse, ACCEL_ENOTSUP also for a
 * pipe and for input shorter than a footer; ACCEL_EIO. */
int accel_seek_table_read(struct accel_input *in, struct accel_seek_table *t, char *err, size_t len);
/* Free t's arrays and leave it empty. */
void accel_seek_table_free(struct accel_seek_table *t);

/* --------------------------------------------------------- decompression */

/* Frames (and their stated content) up to this many bytes are decoded in
 * parallel, one unit each; larger ones, and frames whose end or content
 * size is not stated, are decoded sequentially in bounded memory, but
 * for lz4 frames of independent blocks and legacy frames, decoded in
 * parallel in parts of about 4 MiB of content, or a legacy block each
 * (ACCEL_LZ4_PART). */
#define ACCEL_DECOMPRESS_PARALLEL_MAX ((uint64_t)64 << 20)

/* How accel_decompress runs. */
struct accel_decompress_cfg {
	const char *backend;          /* --backend list; NULL: $ACCEL_BACKEND, else auto */
	struct accel_stream_config stream;
	uint64_t memory_limit;        /* bytes a frame's window may take; raises the window limit, 0: none */
	int window_log_max;           /* zstd windows up to 2^N bytes are decoded (--long=N); 0: 27 */
	int verbose;                  /* > 0: print the route on stderr */
	uint64_t parallel_max;        /* parallel limit in bytes; 0: ACCEL_DECOMPRESS_PARALLEL_MAX */
	struct accel_report *report;  /* non-NULL: the route goes to this report
	                               * (accel_report_route) instead of stderr */
	/* range 1: write only decompressed bytes [range_offset, range_offset +
	 * range_length) (length UINT64_MAX: to the end). */
	int range;
	uint64_t range_offset, range_length;
};

/*
 * Decompress every frame of `in` to `out` as accel-compress -d does: format
 * from the first non-skippable frame, frames in parallel on the route's
 * engines when their end is known and they fit the parallel limit, else
 * sequentially; the switch happens only at frame boundaries. Sizes stated
 * in frame headers are hints, checked against what decoding finds. Input
 * holding only skippable frames writes nothing and returns 0. A zstd frame
 * whose window is over max(2^window_log_max, memory_limit) is refused.
 * Memory: at most 2 * workers + 2 units in flight, each at most
 * parallel_max bytes of input and as much output, plus one sequential
 * decoder (its window, within the limit above).
 * After gzip members only members may follow, as gzip -d takes them: zero
 * bytes are ignored; other bytes (two or more) end the decoding with
 * ACCEL_DECOMPRESS_GARBAGE (everything before them written). After zstd and
 * lz4 frames anything but a frame is corrupt input, as zstd and lz4 say.
 * With cfg->range, only the bytes of the range are written (fewer when the
 * content ends first, none for a length of 0) and decoding stops once
 * they are: from a regular file or memory input ending in a seek table
 * (accel_seek_table_read) it starts at the first frame the range needs,
 * after checking the table against the stream (its sizes adding up, and
 * the header of every frame before the range: a zstd or skippable frame
 * where the table says, its stated content size and checksum the
 * table's, a frame that states no size decoded to measure it) and each
 * frame decoded against its entry; without one (a pipe, another file) it
 * reads from the start, skipping undecoded the zstd frames before the
 * range whose headers state their content size. A table that fails a
 * check is ACCEL_EDATA, never a guess (the boundaries between frames
 * before the range are checked by the frame header found there, not by
 * walking every block); cfg->verbose > 0 prints on stderr which way was
 * taken.
 * Returns 0; ACCEL_DECOMPRESS_GARBAGE (err: "decompression OK, trailing
 * garbage ignored", gzip's words); ACCEL_EDATA (corrupt, truncated, empty,
 * not a known format or failed a check: err names the byte offset);
 * ACCEL_ENOMEM (out of memory, or a window over the limit); ACCEL_EIO;
 * ACCEL_EPIPE; ACCEL_EINVAL (malformed backend list or $ACCEL_FAULT);
 * ACCEL_ENOENGINE; ACCEL_EDEVICE. One line in err[len]; stats may be NULL.
 * Threads as accel_stream_run (it routes, so it may probe ctx).
 */
#define ACCEL_DECOMPRESS_GARBAGE 1
int accel_decompress(struct accel_ctx *ctx, const struct accel_decompress_cfg *cfg, struct accel_input *in,
		     struct accel_output *out, struct accel_stream_stats *stats, char *err, size_t len);

/*
 * Decode the one frame (zstd or lz4 frame, gzip member) at the position of
 * `in` sequentially into nothing, consuming it, and give its decompressed
 * size in *content: for listing frames whose size is not stated (a gzip
 * member of another tool). Runs on the CPU engine in the calling thread,
 * memory bounded by the decoder's window. Returns 0; ACCEL_EDATA (corrupt:
 * err names the byte offset); ACCEL_EIO; ACCEL_ENOMEM; ACCEL_EINVAL for a
 * format that is not a compressed one. Probes the cpu backend if needed
 * (under ctx's lock); then thread-safe for distinct inputs.
 */
int accel_frame_measure(struct accel_ctx *ctx, enum accel_format format, struct accel_input *in,
			uint64_t *content, char *err, size_t len);

/* ----------------------------------------------------------- compression */

/* gzip's levels are 1 to ACCEL_GZIP_LEVEL_MAX: 1-3 ISA-L's igzip (fast),
 * 4-12 libdeflate's (4-9 about zlib's ratio, 10-12 slower and smaller). */
#define ACCEL_GZIP_LEVEL_MAX 12

/* Level used when none is given: zstd 3, gzip 6, lz4 1; ACCEL_EINVAL for a
 * format other than "zstd", "gzip" or "lz4". Pure, as is the next one. */
int accel_compress_default_level(const char *format);
/* Bytes of input per parallel chunk when none is given, by format and
 * level: gzip 1 MiB for levels 1-3, 2 MiB above, lz4 4 MiB, zstd 4, 8, 16 or 32 MiB for levels up to
 * 2, 8, 16 and above (about four times the level's window, as zstd -T
 * does). 0 for an unknown format. */
uint64_t accel_compress_default_chunk(const char *format, int level);

/* How accel_compress runs. */
struct accel_compress_cfg {
	const char *backend;          /* --backend list; NULL: $ACCEL_BACKEND, else auto */
	struct accel_stream_config stream;
	const char *format;           /* "zstd", "gzip" or "lz4"; NULL: zstd */
	int level;                    /* in the format's scale; 0: accel_compress_default_level */
	int checksum;                 /* 1: write content checksums */
	uint64_t chunk_size;          /* bytes per unit; 0: accel_compress_default_chunk */
	uint64_t memory_limit;        /* bytes a codec context may use, 0: default */
	int verbose;                  /* > 0: print the route on stderr */
	struct accel_report *report;  /* non-NULL: the route goes to this report
	                               * (accel_report_route) instead of stderr */
	/* Non-NULL (zstd only): each frame written is added to this table
	 * (its checksum when cfg->checksum), which the caller writes after
	 * the last frame with accel_seek_table_write. */
	struct accel_seek_table *seek;
};

/*
 * Compress `in` to `out` as accel-compress does: the input cut into chunks
 * of cfg->chunk_size bytes (an empty input is one empty chunk), each
 * compressed in parallel on the route's engines into a frame (zstd, lz4) or
 * member (gzip) of its own, written in input order; the output is what the
 * format's standard tool reads. Routed for in->size (-v: the route printed
 * when cfg->verbose > 0). Returns 0; ACCEL_EINVAL (unknown format, or a
 * malformed backend list or $ACCEL_FAULT); ACCEL_ENOENGINE; ACCEL_EIO;
 * ACCEL_EPIPE; ACCEL_ENOMEM; ACCEL_EDEVICE. One line in err[len]; stats
 * may be NULL. Memory and threads as accel_stream_run.
 */
int accel_compress(struct accel_ctx *ctx, const struct accel_compress_cfg *cfg, struct accel_input *in,
		   struct accel_output *out, struct accel_stream_stats *stats, char *err, size_t len);
/* Several inputs as accel_compress does each, routed once (for
 * cfg->stream.total_size, the sum of their sizes or -1) and run as the
 * jobs of one accel_stream_run_jobs: the same engine contexts serve every
 * input. The jobs' `user` is ignored. Returns as accel_compress; a route
 * failure is returned before any job starts. */
int accel_compress_jobs(struct accel_ctx *ctx, const struct accel_compress_cfg *cfg,
			const struct accel_stream_jobs *jobs, char *err, size_t len);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
