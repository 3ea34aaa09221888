/*
 * lz4_parts.h - an lz4 frame of independent blocks decoded in parallel, in
 * parts cut at block boundaries (ACCEL_LZ4_PART, accel/ops/compress.h), its
 * content size and checksum checked in order as the parts are written.
 * Internal to libaccel: accel_decompress's reader and write hook call it.
 */
#ifndef ACCEL_LZ4_PARTS_H
#define ACCEL_LZ4_PARTS_H

#include <stddef.h>
#include <stdint.h>
#include <accel/io.h>
#include <accel/unit.h>

/* Content bytes a part holds at most: blocks are grouped up to it (one
 * block of lz4's default 4 MiB, 64 of 64 KiB). */
#define ACCEL_LZ4_PART_CONTENT ((size_t)4 << 20)

struct lz4_parts;

/* The state of one decompression run; NULL when libxxhash (the checksums)
 * cannot be loaded or no memory: lz4 frames then decode sequentially. */
struct lz4_parts *lz4_parts_new(void);
void lz4_parts_free(struct lz4_parts *p);

/* At the lz4 frame (or legacy frame) that starts at in's position
 * (nothing consumed): 1 when it is cut into parts (lz4_parts_next to
 * follow until its last part), 0 when it is one for the sequential
 * decoder (linked blocks, a dictionary ID, a header lz4 -d refuses), or
 * ACCEL_EIO / ACCEL_ENOMEM. */
int lz4_parts_begin(struct lz4_parts *p, struct accel_input *in);
/* 1 while a frame is being cut (lz4_parts_begin said 1, its last part not
 * cut yet). */
int lz4_parts_active(const struct lz4_parts *p);
/* The next part of the frame into u (in, offset, out_hint, part): its
 * blocks borrowed from a mapped input, else read into u->in. Returns 1;
 * ACCEL_EDATA with a line in err[len] for a block larger than the frame's
 * maximum or input that ends inside the frame; ACCEL_EIO, ACCEL_ENOMEM. */
int lz4_parts_next(struct lz4_parts *p, struct accel_input *in, struct accel_unit *u, char *err, size_t len);
/* The write hook's part (accel_stream_config.write): u's output to out,
 * its frame's content checksum and size taken over the parts in order
 * and, at the last part, checked before it is written: ACCEL_EDATA with a
 * line in err[len] when they do not match. Units that are no part are
 * written as they are. 0, or out's error. */
int lz4_parts_write(struct lz4_parts *p, struct accel_output *out, const struct accel_unit *u, char *err,
		    size_t len);

#endif
