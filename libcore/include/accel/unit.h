/*
 * accel/unit.h - buffers and units: the pieces of a stream an engine works on.
 * Part of libaccel's public API; <accel.h> includes every such header.
 */
#ifndef ACCEL_UNIT_H
#define ACCEL_UNIT_H

#include <accel/errors.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

struct accel_engine;

/* A growable byte buffer (zero-initialised: empty). One thread at a time.
 * With cap 0 and data set it borrows len bytes it does not own (a frame in
 * a mapped input, accel_input_map): reserve copies them into a buffer of
 * its own, free forgets them. */
struct accel_buf {
	uint8_t *data;
	size_t len, cap;
};
/* Make room for `cap` bytes in total (grows by at least half; from 64 KiB
 * the data starts on a 64-byte cache line, from 2 MiB it is 2 MiB-aligned,
 * marked for huge pages); keeps the content (b->len bytes). Returns 0, or
 * ACCEL_ENOMEM with b unchanged. */
int accel_buf_reserve(struct accel_buf *b, size_t cap);
/* accel_buf_reserve for a caller about to write all `cap` bytes (a read
 * into the buffer, a transform's known output): a buffer of 64 KiB or more
 * that is allocated has its pages made present at once, in one call
 * (Linux's MADV_POPULATE_WRITE), rather than faulted in one by one as
 * they are written. Where a page fault is dear (a VM's shadow page
 * tables: 10.7 us a page on the 2-core VM, 5.5 populated) that is most of
 * a small run's extra time. Same returns. */
int accel_buf_reserve_fill(struct accel_buf *b, size_t cap);
/* Free the data and leave b empty (reusable). */
void accel_buf_free(struct accel_buf *b);

/* A unit of work in the stream engine: a chunk, a frame, a batch. */
struct accel_unit {
	uint64_t seq;        /* index in the stream, from 0 (a STREAM nonce counter) */
	uint64_t offset;     /* byte offset of the unit's input in the stream */
	int last;            /* 1: the final unit of the stream */
	size_t out_hint;     /* expected output size in bytes, 0 unknown */
	struct accel_buf in;
	struct accel_buf out;
	const struct accel_engine *engine; /* the engine that produced out */
	/* Bytes at the start of `in` that the previous unit held too
	 * (overlapping FFT frames, a model's context window): statistics
	 * count only in.len - in_overlap as input, so overlap is not counted
	 * twice. Set by ops->next; 0 before each call. */
	size_t in_overlap;
	/* Where in's bytes are still to be read from (-1: in is filled; set
	 * to -1 before each ops->next call). With a mapped input, ops->next
	 * may set in.len (in.data NULL or its own buffer, never borrowed) and
	 * leave its bytes in the file at this byte offset of the input's fd:
	 * the stream preads them outside its lock, on the thread that runs
	 * the unit, before any engine sees it, into that worker's own buffer,
	 * lent to the unit until its run ends (engines keep no pointer into
	 * in.data past run(); the writer sees in.len only). The page cache
	 * is copied straight into the unit and no page of the mapping is
	 * touched: faulting the mapping in costs more than the copy for an
	 * engine that copies its input anyway (FFT batches, uploads to a
	 * device), and where faults are dear (a VM) for one that reads each
	 * byte once too (ciphers, codecs: accel_read_chunk_claim). The
	 * mapping's pages that cutting the unit touched are dropped once it
	 * is written. A file that shrank meanwhile fails the run
	 * (ACCEL_EIO). */
	int64_t in_at;
	/* An engine that fails the unit with ACCEL_EDATA (bad input, never
	 * run again elsewhere) and knows that the first out_good bytes of
	 * out are good output of the input before the bad part sets them
	 * (age: the chunks that authenticated before the one that did not):
	 * they are written, as the peer tool writes them, before the run
	 * fails. 0 before each run: nothing of a failed unit is written. */
	size_t out_good;
	/* With ACCEL_EDATA: the unit's data of its format ended in_end bytes
	 * into in, and what follows is no data of the format rather than
	 * damaged data (gzip: bytes after a member that are not a member,
	 * which gzip -d calls trailing garbage and stops at). Then the run is
	 * not failed: out's first out_good bytes are written as the unit's,
	 * no later unit is, and a run of one job (accel_stream_run) ends with
	 * 0, its stats' data_end set, for the operation to judge the rest of
	 * the input as its peer does. 0 before each run: none (data ends
	 * one byte in at the earliest). */
	size_t in_end;
	/* Set by ops->next (0 before each call) when `in` holds a part of a
	 * frame rather than whole frames: what the engine decodes the part
	 * with, as the operation defines it (lz4.decompress: whole blocks of
	 * one frame, ACCEL_LZ4_PART_* in accel/ops/compress.h). 0: the
	 * operation's usual unit. */
	uint64_t part;
};

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
