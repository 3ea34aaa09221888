/*
 * accel/io.h - inputs and outputs: files and pipes read in pieces, outputs written whole
 * through a temporary or removed.
 * Part of libaccel's public API; <accel.h> includes every such header.
 */
#ifndef ACCEL_IO_H
#define ACCEL_IO_H

#include <accel/errors.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Buffered input from a file descriptor or memory, with the byte offset
 * consumed. Not thread-safe: one thread reads an input at a time (the
 * stream engine's reader is the calling thread). */
struct accel_input {
	int fd;
	const char *name;    /* "stdin" or the file name, for messages */
	uint8_t *buf;
	size_t start, end, cap;
	uint64_t offset;     /* bytes consumed so far */
	int eof;
	int64_t size;        /* total size when known (regular file, memory), else -1 */
	/* A memory input (accel_input_mem): fd is -1 and bytes come from here. */
	const uint8_t *mem;
	size_t mem_len, mem_pos;
	/* accel_input_map: buf is the file mapped whole (map_len bytes). */
	size_t map_len;
};
/* Open FILE ("-" or NULL: stdin) with a 1 MiB buffer; in->size is the
 * bytes left in a regular file, else -1. Returns 0; ACCEL_EIO with errno
 * set (EISDIR for a folder; EBADF for a stdin that is closed or open only
 * for writing, as accel_common_init leaves a closed one); ACCEL_ENOMEM. */
int accel_input_open(struct accel_input *in, const char *path);
/* An input over the caller's `len` bytes at `data` (no fd), named `name`
 * in messages (NULL: "memory"): it reads as a regular file of that size
 * does, through the same buffering (a window of at most 1 MiB is copied at
 * a time), so an operation runs on it exactly as on a file. data must stay
 * valid and unchanged until accel_input_close(). ACCEL_ENOMEM. */
int accel_input_mem(struct accel_input *in, const void *data, size_t len, const char *name);
/* Map the rest of a regular-file input into memory (read-only), so that
 * peeks see the file itself and accel_frame_read and accel_read_chunk
 * hand out units that point into it: no read() copy, no unit buffer filled
 * and no fresh memory faulted in for the input (the stream engine
 * drops the pages of each unit written from the mapping: RSS stays near
 * the units in flight, the page cache keeps the file). Bytes already peeked stay where they are in
 * the stream. Returns 1 mapped, 0 left as it was (not a regular file,
 * empty, or the mapping failed: reads go on through the buffer). A file
 * that shrinks while mapped ends the process (SIGBUS) with the one-line
 * error "input file shrank while being read" and exit status 1, the
 * temporary output removed. */
int accel_input_map(struct accel_input *in);
/* Close an input (stdin and memory are not closed, only the buffer freed).
 * Only after a successful open. */
void accel_input_close(struct accel_input *in);
/* Make at least `n` bytes visible at *p (fewer only at end of input),
 * growing the buffer to n when needed; blocks until they come. Returns
 * the number visible (at most n), ACCEL_EIO (errno kept) or ACCEL_ENOMEM.
 * Does not consume; *p is valid until the next call on `in`. */
ssize_t accel_input_peek(struct accel_input *in, size_t n, const uint8_t **p);
/* Like accel_input_peek, but waits for input only until `deadline`, in
 * seconds on the clock of accel_now() (an absolute time: accel_now() +
 * max_wait): returns the number of bytes visible, fewer than `n` when the
 * input ended (in->eof set) or the deadline passed first (in->eof 0),
 * possibly 0. Waits in poll(), never busy; a deadline already passed
 * returns what is buffered without reading. Memory inputs never wait.
 * ACCEL_EIO (errno kept) or ACCEL_ENOMEM. Not thread-safe (one reader). */
ssize_t accel_input_peek_until(struct accel_input *in, size_t n, double deadline, const uint8_t **p);
/* Consume `n` bytes already visible through accel_input_peek (not
 * checked: n must not exceed what the last peek returned). */
void accel_input_consume(struct accel_input *in, size_t n);
/* Read up to `n` bytes into dst (short only at end of input); returns the
 * count, ACCEL_EIO (errno kept) or ACCEL_ENOMEM. */
ssize_t accel_input_read(struct accel_input *in, void *dst, size_t n);
/* Move a regular-file or memory input (in->size >= 0) to byte `offset`,
 * counted as in->offset is, from where the input began: what is buffered
 * is dropped and in->offset becomes `offset`. Returns 0; ACCEL_ENOTSUP for
 * a pipe or terminal; ACCEL_EINVAL for an offset past in->size; ACCEL_EIO
 * (errno kept). */
int accel_input_seek(struct accel_input *in, uint64_t offset);
/* Read up to `n` bytes at byte `offset` (counted as accel_input_seek
 * counts it) of a regular-file or memory input into dst, without moving
 * it (pread(2)): for reading an index at the end of a file. Returns the
 * count (short only at the end), ACCEL_ENOTSUP for a pipe or terminal, or
 * ACCEL_EIO (errno kept). */
ssize_t accel_input_pread(struct accel_input *in, uint64_t offset, void *dst, size_t n);

/* Output to stdout or to a file that appears only when complete: a FILE is
 * written as a temporary beside it and renamed on accel_output_commit();
 * accel_output_abort() removes it, so a failed run leaves no partial file.
 * The temporary has its final permissions from the start: those of the
 * existing FILE it replaces, else 0666 less the umask (or what
 * accel_output_mode sets). A FILE that is a symlink stays one: the file it
 * leads to is what is replaced (or made, for a link that leads nowhere
 * yet), the temporary beside that file. An existing FILE that is not a
 * regular file (a device such as /dev/null, a FIFO) is written into in
 * place, never replaced (when force allows an existing FILE at all).
 *
 * Signals: while a temporary exists, a signal that would end the process
 * (SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM,
 * SIGPROF, SIGXCPU, SIGXFSZ, SIGPOLL, SIGPWR, the real-time signals) removes
 * it before the process dies of that signal. The handlers are installed once,
 * by accel_common_init (at start-up, before any library a program loads
 * installs handlers of its own, which then hand the signal on to ours) or
 * else on the first FILE opened, and only for signals whose disposition is
 * still the default: a signal the parent ignored (nohup) stays ignored. The fault
 * signals (SIGSEGV, SIGBUS, SIGABRT ...) are not caught. The name of the
 * temporary is kept in one process-wide slot (the handler is
 * async-signal-safe): only the FILE output opened last is covered, and
 * committing or aborting any FILE output clears the slot, so open FILE
 * outputs one after another, not several at once.
 * SIGPIPE: accel_output_open() sets it to ignored when its disposition is
 * the default, so a reader that goes away makes writes fail with EPIPE,
 * which accel_output_write() returns as ACCEL_EPIPE (a quiet end, exit 0).
 *
 * Threads: these functions change process-wide signal dispositions (once)
 * and may be called from any thread, but one thread at a time uses an
 * output (the stream engine's worker writing units, then the caller after
 * the run). */
struct accel_output {
	int fd;
	char *path;          /* final path (where FILE's symlinks lead), NULL for stdout */
	char *tmp;           /* temporary path while writing, NULL for stdout
	                      * and for a device or FIFO written in place */
	uint64_t written;    /* bytes written (bytes written again after a seek count again) */
	int broken;          /* EPIPE seen */
	int error;           /* errno of the write or close that failed, 0 */
	int null;            /* 1: accel_output_null: bytes counted, nothing written */
	int borrowed;        /* 1: accel_output_fd: the caller's fd, never closed here */
	uint64_t pos, size;  /* null output: position and size, for seeks */
	/* accel_output_window: bytes still to drop, bytes still to write
	 * (UINT64_MAX: no end); window 1 while set, 2 once full. */
	uint64_t window_skip, window_left;
	int window;
};
/* Open FILE ("-" or NULL: stdout) for writing. A regular FILE is written
 * as a temporary renamed on commit; a character device or FIFO (/dev/null,
 * a named pipe) is written in place, as zstd does. force: allow replacing
 * an existing FILE, writing into a block device, and binary data (binary
 * = 1) to a terminal. Returns 0; ACCEL_EEXIST (FILE exists and is not a
 * character device or FIFO, without force); ACCEL_EINVAL (binary to a terminal
 * refused); ACCEL_EIO with errno set (EISDIR for a folder, ENAMETOOLONG
 * for a name over PATH_MAX - 16, EBADF for a stdout that is closed or open
 * only for reading, as accel_common_init leaves a closed one); ACCEL_ENOMEM. */
int accel_output_open(struct accel_output *out, const char *path, int force, int binary);
/* Give the FILE being written the permission bits mode & 0777 instead of
 * those accel_output_open chose (as zstd and lz4 give their output the
 * mode of the file they read): set on the temporary now, so the file never
 * appears with other bits. Nothing to do (0) for stdout, a device or FIFO
 * written in place, null and fd outputs. Returns 0, or ACCEL_EIO
 * (out->error). */
int accel_output_mode(struct accel_output *out, unsigned mode);
struct stat;
/* Give the FILE being written what `st` (the stat of the file it was made
 * from) records, as zstd and lz4 do: the owner and group (best
 * effort: only root may give a file away, so a failure leaves ours, and
 * the group alone is tried), the permission bits (set-id bits only when
 * the owner was copied too), then the modification time (the access time:
 * now, as zstd and lz4 set it). Set
 * on the temporary, so call it when the last byte is written, before
 * accel_output_commit. Nothing to do (0) for stdout, a device or FIFO
 * written in place, null and fd outputs. Returns 0, or ACCEL_EIO
 * (out->error) when the mode or the times cannot be set. */
int accel_output_attrs(struct accel_output *out, const struct stat *st);
/* Write all `len` bytes of data (retrying short writes and EINTR).
 * Returns 0; ACCEL_EPIPE when the reader went away (and on every later
 * call); ACCEL_EIO (out->error holds the errno: ENOSPC for a full disk). */
int accel_output_write(struct accel_output *out, const void *data, size_t len);
/* From now on write only a window of what is given to accel_output_write:
 * the next `skip` bytes are dropped, the `length` bytes after them written
 * (UINT64_MAX: all of them), the rest dropped; once those are written
 * (out->window is then 2) every later write returns ACCEL_EPIPE without setting out->broken, so
 * a producer stops as for a reader that went away while the output stays
 * good to commit (accel-compress -d --range). out->written counts only the
 * bytes written. Works on every kind of output. */
void accel_output_window(struct accel_output *out, uint64_t skip, uint64_t length);
/* Grow the pipe (or FIFO) on fd to 1 MiB, or /proc/sys/fs/pipe-max-size
 * when that is less, so that reads and writes move more per call; never
 * shrinks it, and does nothing to an fd that is no pipe. The process at the
 * other end shares the larger buffer. A refusal only costs speed, so none is
 * reported. accel_input_open and accel_output_open do it for their pipes;
 * this is for an fd read or written another way. */
void accel_pipe_grow(int fd);
/* A null output: accel_output_write counts the bytes in out->written and
 * writes nothing (accel-compress -t, benchmarks). Seeks move a virtual
 * position (a muxer that seeks back runs as on a file). Returns 0. */
int accel_output_null(struct accel_output *out);
/* An output writing to the caller's open fd (a pipe, a memfd, a socket):
 * no temporary, commit and abort never close fd, seeks are refused. SIGPIPE
 * is set to ignored as accel_output_open() does. ACCEL_EINVAL (errno EBADF)
 * for an fd that is not open. */
int accel_output_fd(struct accel_output *out, int fd);
/* Move the write position of an output as lseek(2) does (whence SEEK_SET,
 * SEEK_CUR or SEEK_END), for muxers that write a header last (mp4): works
 * on the temporary of a FILE output (renamed into place only by a
 * successful accel_output_commit, as ever) and on a null output. Returns
 * the new offset in bytes from the start; ACCEL_ENOTSUP for stdout, pipes,
 * devices written in place and accel_output_fd outputs; ACCEL_EINVAL for a
 * bad whence or a negative result; ACCEL_EIO (out->error). Not thread-safe:
 * call it where the output is written (the stream engine's workers write
 * units in order; call it from ops->end, or before accel_stream_run). */
int64_t accel_output_seek(struct accel_output *out, int64_t offset, int whence);
/* Close (checking errors: a full disk is an error) and rename the
 * temporary into place; stdout and a device are closed. For null and fd
 * outputs nothing is closed. Returns 0, or ACCEL_EIO (out->error and errno
 * set; the temporary is removed; a null or fd output whose earlier write
 * failed). Call once, after the last write. */
int accel_output_commit(struct accel_output *out);
/* Give up an output: the temporary is closed and removed, a device
 * closed; stdout, null and fd outputs are left alone. Never fails. */
void accel_output_abort(struct accel_output *out);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
