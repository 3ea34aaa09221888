/*
 * io.c - buffered input with byte offsets (from a file descriptor or a
 * caller's memory, with reads that can wait until a deadline), and output
 * that is complete or absent: a FILE is written beside its final name (and
 * may seek in it) and renamed when done; also output to a caller's fd and a
 * null output that only counts.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <accel/cli.h>
#include <accel/stream.h>
#include "core.h"

#define INPUT_BUF (1u << 20)
/* Least bytes one read of a regular file into the buffer takes. */
#define FILE_READ_MIN ((size_t)64 << 10)
/* A regular file this small is read, not mapped (core_input_map_large):
 * with 1000 files of 4 KiB compressed or decompressed beside themselves,
 * mapping each was 0.02-0.03 s of a 0.1 s run. */
#define MAP_MIN ((int64_t)128 << 10)
/* Room past a small file's size in its buffer (accel_input_open). */
#define SMALL_SLACK ((size_t)4096)

/* Mapped inputs (accel_input_map), for the SIGBUS handler: a fault inside
 * one is a file that shrank while being read. */
#define BUS_MAPS 16
static struct { void *volatile at; volatile size_t len; } bus_maps[BUS_MAPS];
static pthread_mutex_t bus_lock = PTHREAD_MUTEX_INITIALIZER;

static void bus_note(void *at, size_t len)
{
	pthread_mutex_lock(&bus_lock);
	for (int i = 0; i < BUS_MAPS; i++)
		if (!bus_maps[i].at) {
			bus_maps[i].len = len;
			bus_maps[i].at = at;
			break;
		}
	pthread_mutex_unlock(&bus_lock);
}

/* A mapping this thread reads that a file may cut short (core_bus_guard):
 * a SIGBUS inside it jumps back to the reader. Initial-exec: the handler
 * must not be the first to touch it on a thread (that may allocate). */
static __thread struct {
	sigjmp_buf *jb;
	const uint8_t *at;
	size_t len;
} bus_guard __attribute__((tls_model("initial-exec")));

static void bus_forget(void *at)
{
	pthread_mutex_lock(&bus_lock);
	for (int i = 0; i < BUS_MAPS; i++)
		if (bus_maps[i].at == at)
			bus_maps[i].at = NULL;
	pthread_mutex_unlock(&bus_lock);
}
/* The buffer a pipe on our input or output grows to, and the most one
 * write() is given: one write fills such a pipe, one read drains it. A
 * piece with a short tail (under a quarter more) goes out whole, so a unit
 * and its few bytes more (age's tags) is one write, not a second one of
 * 64 bytes that wakes the reader of a pipe for nothing. */
#define PIPE_WANT (1u << 20)
#define WRITE_MAX PIPE_WANT

/* The largest pipe buffer an unprivileged process may ask for
 * (/proc/sys/fs/pipe-max-size), read once; 0 when unknown. */
static long pipe_max;
static pthread_once_t pipe_max_once = PTHREAD_ONCE_INIT;

static void read_pipe_max(void)
{
	FILE *f = fopen("/proc/sys/fs/pipe-max-size", "re");
	if (f) {
		if (fscanf(f, "%ld", &pipe_max) != 1)
			pipe_max = 0;
		fclose(f);
	}
}

/* A pipe already as large (set so by whoever made it) is never shrunk. A
 * refusal (EPERM past the user's pipe pages, EBUSY when it holds more than
 * fits) leaves the pipe as it was. */
void accel_pipe_grow(int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode))
		return;
	pthread_once(&pipe_max_once, read_pipe_max);
	long want = pipe_max > 0 && pipe_max < PIPE_WANT ? pipe_max : PIPE_WANT;
	int cur = fcntl(fd, F_GETPIPE_SZ);
	if (cur >= 0 && cur < want)
		fcntl(fd, F_SETPIPE_SZ, (int)want);
}

int accel_input_open(struct accel_input *in, const char *path)
{
	memset(in, 0, sizeof *in);
	in->size = -1;
	if (!path || !strcmp(path, "-")) {
		in->fd = 0;
		in->name = "stdin";
		/* A stdin that was closed (held on /dev/null, write-only, by
		 * the start-up) cannot be read. */
		int fl = fcntl(0, F_GETFL);
		if (fl < 0 || (fl & O_ACCMODE) == O_WRONLY) {
			errno = EBADF;
			return ACCEL_EIO;
		}
	} else {
		in->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (in->fd < 0)
			return ACCEL_EIO;
		in->name = path;
	}
	struct stat st;
	if (fstat(in->fd, &st) == 0 && S_ISREG(st.st_mode)) {
		off_t pos = lseek(in->fd, 0, SEEK_CUR);
		in->size = st.st_size - (pos > 0 ? pos : 0);
	} else if (fstat(in->fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (in->fd > 0)
			close(in->fd);
		errno = EISDIR;
		return ACCEL_EIO;
	} else {
		accel_pipe_grow(in->fd);
	}
	/* A small file's buffer holds all of it and a page more (room for
	 * the read that finds the end): no 1 MiB mmap and munmap per file.
	 * The buffer grows if the file does (make_room). */
	in->cap = INPUT_BUF;
	if (in->size >= 0 && (uint64_t)in->size + SMALL_SLACK < INPUT_BUF)
		in->cap = (size_t)in->size + SMALL_SLACK;
	in->buf = malloc(in->cap);
	if (!in->buf) {
		in->cap = 0;
		if (in->fd > 0)
			close(in->fd);
		return ACCEL_ENOMEM;
	}
	return 0;
}

int accel_input_mem(struct accel_input *in, const void *data, size_t len, const char *name)
{
	memset(in, 0, sizeof *in);
	in->fd = -1;
	in->name = name ? name : "memory";
	in->mem = data;
	in->mem_len = len;
	in->size = len > INT64_MAX ? -1 : (int64_t)len;
	/* The window buffer is the library's own, as for a file: a frame
	 * reader may trade it for a unit's buffer (accel_frame_read). */
	in->cap = len < INPUT_BUF ? (len ? len : 1) : INPUT_BUF;
	in->buf = malloc(in->cap);
	if (!in->buf) {
		in->cap = 0;
		return ACCEL_ENOMEM;
	}
	return 0;
}

static void catch_sigbus(void);

int accel_input_map(struct accel_input *in)
{
	struct stat st;
	if (in->map_len || in->fd < 0 || fstat(in->fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > SIZE_MAX)
		return 0;
	/* Where the stream is in the file: the fd's position less what the
	 * buffer holds unconsumed. */
	off_t pos = lseek(in->fd, 0, SEEK_CUR);
	size_t held = in->end - in->start;
	if (pos < 0 || (uint64_t)pos < held || pos > st.st_size)
		return 0;
	size_t at = (size_t)pos - held, len = (size_t)st.st_size;
	catch_sigbus();
	void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, in->fd, 0);
	if (map == MAP_FAILED)
		return 0;
	madvise(map, len, MADV_SEQUENTIAL);
	madvise((uint8_t *)map + (at & ~(size_t)4095), len - (at & ~(size_t)4095), MADV_WILLNEED);
	free(in->buf);
	in->buf = map;
	in->cap = in->end = in->map_len = len;
	in->start = at;
	in->eof = 1;
	bus_note(map, len);
	return 1;
}

int core_input_map_large(struct accel_input *in)
{
	return in->size >= MAP_MIN ? accel_input_map(in) : 0;
}

void core_input_drop(struct accel_input *in, const uint8_t *data, size_t len)
{
	/* Whole pages inside [data, data + len) only: a page the next unit
	 * shares stays. The file's pages stay in the page cache. */
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = ((uintptr_t)data + pg - 1) & ~(pg - 1), b = ((uintptr_t)data + len) & ~(pg - 1);
	if (!in->map_len || data < in->buf || data + len > in->buf + in->map_len || b <= a)
		return;
	madvise((void *)a, b - a, MADV_DONTNEED);
}

/* A view's buffer: what it reads ahead of its decoder's peeks (gzip's
 * 256 KiB, zstd's 128 KiB grow it to theirs), and all that a region
 * shorter than it costs beyond its bytes. */
#define VIEW_BUF ((size_t)128 << 10)

int core_input_view(struct accel_input *in, struct accel_input *view)
{
	if (!in->map_len || in->fd < 0 || in->start >= in->end)
		return 0;
	memset(view, 0, sizeof *view);
	view->fd = fcntl(in->fd, F_DUPFD_CLOEXEC, 0);
	if (view->fd < 0)
		return 0;
	/* The duplicate shares the file position, which a mapped input
	 * never uses (its units are pread at their offsets). */
	if (lseek(view->fd, (off_t)in->start, SEEK_SET) < 0 || !(view->buf = malloc(VIEW_BUF))) {
		close(view->fd);
		return 0;
	}
	view->cap = VIEW_BUF;
	view->name = in->name;
	view->offset = in->offset;
	view->size = in->size;
	return 1;
}

void core_input_view_end(struct accel_input *in, struct accel_input *view)
{
	/* Not past the mapping's end: a file that grew after it was mapped
	 * ends where the mapping does, as its other readers see it. */
	uint64_t used = view->offset - in->offset, have = in->end - in->start;
	accel_input_consume(in, (size_t)(used < have ? used : have));
	accel_input_close(view);
}

int core_input_viewed(struct accel_input *in, core_stream_fn fn, void *ctx, struct accel_output *out, char *err,
		      size_t len)
{
	struct accel_input view;
	if (!core_input_view(in, &view))
		return fn(ctx, in, out, err, len);
	int rc = fn(ctx, &view, out, err, len);
	int e = errno;
	core_input_view_end(in, &view);
	errno = e;
	return rc;
}

void accel_input_close(struct accel_input *in)
{
	if (in->fd > 0)
		close(in->fd);
	if (in->map_len) {
		bus_forget(in->buf);
		munmap(in->buf, in->map_len);
		in->map_len = 0;
	} else {
		free(in->buf);
	}
	in->buf = NULL;
	in->fd = -1;
}

/* One read from the input's source: its fd, or the caller's memory. */
static ssize_t raw_read(struct accel_input *in, uint8_t *dst, size_t n)
{
	if (in->fd >= 0)
		return read(in->fd, dst, n);
	size_t left = in->mem_len - in->mem_pos;
	if (n > left)
		n = left;
	if (n)
		memcpy(dst, in->mem + in->mem_pos, n);
	in->mem_pos += n;
	return (ssize_t)n;
}

static ssize_t read_full(struct accel_input *in, uint8_t *dst, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = raw_read(in, dst + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return ACCEL_EIO;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* Room for n bytes from in->start on, what is held moved to the front.
 * Returns 0 or ACCEL_ENOMEM. */
static int make_room(struct accel_input *in, size_t n)
{
	size_t have = in->end - in->start;
	if (n > in->cap) {
		size_t cap = in->cap * 2 > n ? in->cap * 2 : n;
		uint8_t *nb = malloc(cap);
		if (!nb)
			return ACCEL_ENOMEM;
		memcpy(nb, in->buf + in->start, have);
		free(in->buf);
		in->buf = nb;
		in->cap = cap;
	} else if (in->start) {
		memmove(in->buf, in->buf + in->start, have);
	}
	in->start = 0;
	in->end = have;
	return 0;
}

/* Wait until in->fd is readable or the deadline (accel_now() clock)
 * passes: 1 readable (or at end, or an error to read), 0 deadline passed
 * and nothing to read at once, ACCEL_EIO. */
static int wait_readable(struct accel_input *in, double deadline)
{
	for (;;) {
		/* Rounded up, so the wait never ends just before the deadline
		 * and turns into a spin of zero-timeout polls; past it, one
		 * poll that does not wait says whether bytes are there now. */
		double left = deadline - accel_now();
		double ms = left > 0 ? ceil(left * 1000.0) : 0;
		struct pollfd pfd = { .fd = in->fd, .events = POLLIN };
		int r = poll(&pfd, 1, ms > INT_MAX ? INT_MAX : (int)ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return ACCEL_EIO;
		if (r > 0)
			return 1;
		if (ms == 0)
			return 0;
	}
}

/* Bytes fill reads into in's buffer when the caller asks for n held: the
 * buffer's room, except from a regular file, which gives all that is asked
 * at once: what is asked, at least FILE_READ_MIN. A peek at a header then
 * reads a little of a file the stream maps next, not a whole buffer of
 * fresh pages it throws away (a 1 MiB read: 1 ms of accel-fft's start on a
 * 64 MiB job). */
static size_t read_size(const struct accel_input *in, size_t n)
{
	size_t room = in->cap - in->end;
	if (in->size < 0 || in->fd < 0)
		return room;
	size_t want = n > in->end ? n - in->end : 0;
	if (want < FILE_READ_MIN)
		want = FILE_READ_MIN;
	return want < room ? want : room;
}

/* Make n bytes visible at *p, reading as needed; with `timed`, read an fd
 * only when poll() says it will not block, and stop at `deadline`. */
static ssize_t fill(struct accel_input *in, size_t n, int timed, double deadline, const uint8_t **p)
{
	size_t have = in->end - in->start;
	if (have < n && !in->eof) {
		if (make_room(in, n) < 0)
			return ACCEL_ENOMEM;
		while (in->end < n && !in->eof) {
			/* Memory is always ready. */
			if (timed && in->fd >= 0) {
				int w = wait_readable(in, deadline);
				if (w < 0)
					return w;
				if (w == 0)
					break;
			}
			ssize_t r = raw_read(in, in->buf + in->end, read_size(in, n));
			if (r < 0 && (errno == EINTR || (timed && errno == EAGAIN)))
				continue;
			if (r < 0)
				return ACCEL_EIO;
			if (r == 0)
				in->eof = 1;
			in->end += (size_t)r;
		}
		have = in->end - in->start;
	}
	*p = in->buf + in->start;
	return (ssize_t)(have < n ? have : n);
}

ssize_t accel_input_peek(struct accel_input *in, size_t n, const uint8_t **p)
{
	return fill(in, n, 0, 0, p);
}

ssize_t accel_input_peek_until(struct accel_input *in, size_t n, double deadline, const uint8_t **p)
{
	return fill(in, n, 1, deadline, p);
}

void accel_input_consume(struct accel_input *in, size_t n)
{
	in->start += n;
	in->offset += n;
}

ssize_t accel_input_read(struct accel_input *in, void *dst, size_t n)
{
	size_t have = in->end - in->start;
	if (have < n && n < in->cap / 4 && !in->eof) {
		/* Small reads go through the buffer: one large read() serves
		 * many. A large one takes what the buffer holds and reads the
		 * rest straight into dst, never through the buffer. */
		const uint8_t *p;
		ssize_t r = accel_input_peek(in, n, &p);
		if (r < 0)
			return r;
		have = in->end - in->start;
	}
	size_t take = have < n ? have : n;
	memcpy(dst, in->buf + in->start, take);
	accel_input_consume(in, take);
	if (take == n || in->eof)
		return (ssize_t)take;
	ssize_t r = read_full(in, (uint8_t *)dst + take, n - take);
	if (r < 0)
		return r;
	if ((size_t)r < n - take)
		in->eof = 1;
	in->offset += (uint64_t)r;
	return (ssize_t)(take + (size_t)r);
}

/* Put back the one byte just read (the last of an accel_input_read): the
 * next read starts with it. */
static void unread_byte(struct accel_input *in, uint8_t b)
{
	if (in->map_len) {
		/* Mapped: the byte is still there, read-only. */
		in->start--;
		in->offset--;
		return;
	}
	if (in->start == 0) {
		/* Read straight into the caller's memory: the buffer is empty. */
		in->start = in->end = 0;
		in->buf[in->end++] = b;
	} else {
		in->buf[--in->start] = b;
	}
	in->offset--;
}

/* Where the input began in its file: the fd's position less what was
 * consumed and what is buffered. */
static int64_t input_base(struct accel_input *in)
{
	off_t pos = lseek(in->fd, 0, SEEK_CUR);
	if (pos < 0)
		return ACCEL_EIO;
	return (int64_t)pos - (int64_t)in->offset - (int64_t)(in->end - in->start);
}

int accel_input_seek(struct accel_input *in, uint64_t offset)
{
	if (in->size < 0)
		return ACCEL_ENOTSUP;
	if (offset > (uint64_t)in->size)
		return ACCEL_EINVAL;
	if (in->map_len) {
		/* Mapped: the file is in buf, the stream begins where
		 * start less offset is. */
		int64_t base = (int64_t)in->start - (int64_t)in->offset;
		if (base < 0 || (uint64_t)base + offset > in->map_len)
			return ACCEL_EINVAL;
		in->start = (size_t)base + (size_t)offset;
		in->offset = offset;
		return 0;
	}
	if (in->fd >= 0) {
		int64_t base = input_base(in);
		if (base < 0 || lseek(in->fd, (off_t)(base + (int64_t)offset), SEEK_SET) < 0)
			return ACCEL_EIO;
	} else {
		in->mem_pos = (size_t)offset;
	}
	in->start = in->end = 0;
	in->offset = offset;
	in->eof = 0;
	return 0;
}

ssize_t accel_input_pread(struct accel_input *in, uint64_t offset, void *dst, size_t n)
{
	if (in->size < 0)
		return ACCEL_ENOTSUP;
	if (in->fd < 0) {
		if (offset >= in->mem_len)
			return 0;
		size_t take = in->mem_len - (size_t)offset < n ? in->mem_len - (size_t)offset : n;
		memcpy(dst, in->mem + offset, take);
		return (ssize_t)take;
	}
	if (in->map_len) {
		int64_t base = (int64_t)in->start - (int64_t)in->offset;
		if (base < 0 || (uint64_t)base + offset >= in->map_len)
			return 0;
		size_t avail = in->map_len - (size_t)base - (size_t)offset;
		size_t take = avail < n ? avail : n;
		memcpy(dst, in->buf + base + offset, take);
		return (ssize_t)take;
	}
	int64_t base = input_base(in);
	if (base < 0)
		return ACCEL_EIO;
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(in->fd, (uint8_t *)dst + got, n - got, (off_t)(base + (int64_t)(offset + got)));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return ACCEL_EIO;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* What accel_read_chunk reads first of an input's first chunk. */
#define FIRST_PIECE ((size_t)64 << 10)

int accel_read_chunk(struct accel_input *in, struct accel_unit *u, size_t size)
{
	if (in->map_len) {
		/* Mapped (accel_input_map): the unit borrows its slice of the
		 * mapping (cap 0), read-only; nothing is copied. */
		size_t have = in->end - in->start, n = have < size ? have : size;
		accel_buf_free(&u->in);
		u->offset = in->offset;
		u->in.data = in->buf + in->start;
		u->in.len = n;
		u->last = have <= size;
		accel_input_consume(in, n);
		return n == 0 && u->seq > 0 ? 0 : 1;
	}
	/* One byte past the chunk says whether the input goes on: read with
	 * it, straight into the unit, and put it back. Peeking through the
	 * input's buffer instead would fill the buffer (1 MiB) and copy it
	 * into the next unit: every byte read once and copied once more.
	 * The input's first chunk is read FIRST_PIECE bytes first: a short
	 * input (a line, a small file through a pipe) gets a small buffer,
	 * not a chunk's megabytes made present (lz4's 4 MiB: 0.5 ms to
	 * populate and 0.8 to unmap, of a 9 ms run on 1000 bytes). */
	size_t want = in->offset == 0 && size > FIRST_PIECE ? FIRST_PIECE : size;
	u->offset = in->offset;
	u->in.len = 0;
	for (;;) {
		if (accel_buf_reserve_fill(&u->in, want + 1))
			return ACCEL_ENOMEM;
		ssize_t k = accel_input_read(in, u->in.data + u->in.len, want + 1 - u->in.len);
		if (k < 0)
			return (int)k;
		u->in.len += (size_t)k;
		/* A full piece is all of this chunk (want + 1 <= size). */
		if (u->in.len < want + 1 || want == size)
			break;
		want = size;
	}
	ssize_t r = (ssize_t)u->in.len;
	u->last = (size_t)r <= size;
	if (!u->last)
		unread_byte(in, u->in.data[--r]);
	u->in.len = (size_t)r;
	if (r == 0 && u->seq > 0)
		return 0;
	return 1;
}

int accel_read_chunk_claim(struct accel_input *in, struct accel_unit *u, size_t size)
{
	if (!in->map_len || size == 0 || (size_t)(in->end - in->start) <= size)
		return accel_read_chunk(in, u, size);
	/* Whole chunks with more after them: u->last stays 0. */
	if (u->in.cap)
		u->in.len = 0;
	else
		u->in.data = NULL;
	u->offset = in->offset;
	u->in_at = (int64_t)in->start;
	u->in.len = size;
	u->last = 0;
	accel_input_consume(in, size);
	return 1;
}

int accel_read_chunk_until(struct accel_input *in, struct accel_unit *u, size_t size, double max_wait)
{
	if (!(max_wait > 0))
		return accel_read_chunk(in, u, size);
	if (accel_buf_reserve(&u->in, size))
		return ACCEL_ENOMEM;
	u->offset = in->offset;
	u->in.len = 0;
	u->last = 0;
	/* Wait as long as it takes for the unit's first byte (a stream that
	 * pauses between batches is not a partial batch), then at most
	 * max_wait for the rest. */
	const uint8_t *p;
	ssize_t n = accel_input_peek(in, 1, &p);
	if (n < 0)
		return (int)n;
	double deadline = accel_now() + max_wait;
	while (u->in.len < size) {
		size_t want = size - u->in.len;
		size_t step = want < in->cap ? want : in->cap;
		n = accel_input_peek_until(in, step, deadline, &p);
		if (n < 0)
			return (int)n;
		memcpy(u->in.data + u->in.len, p, (size_t)n);
		accel_input_consume(in, (size_t)n);
		u->in.len += (size_t)n;
		if ((size_t)n < step)
			break;
	}
	if (u->in.len == 0 && u->seq > 0)
		return 0;
	/* Whether this is the last unit is known only when the input ended;
	 * after a pause the next call finds out (0 at end of input). */
	u->last = in->eof && in->end == in->start;
	return 1;
}

/*
 * The temporary output being written, removed if a signal ends the run. The
 * name is copied into static storage, so the handler never reads memory that
 * another thread frees; pending_set says whether it is valid.
 */
static char pending_tmp[PATH_MAX];
static volatile sig_atomic_t pending_set;

/* Signals that end the process by default and can be caught, besides the
 * real-time ones. The fault signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGABRT, SIGTRAP, SIGSYS) are left to the sanitizers and core dumps, and
 * SIGPIPE is ignored (see accel.h). */
static const int fatal_signals[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM,
	SIGPROF, SIGXCPU, SIGXFSZ, SIGPOLL, SIGPWR,
#ifdef SIGSTKFLT
	SIGSTKFLT,
#endif
};

/* Async-signal-safe: unlink the temporary, then die of the same signal,
 * which stays blocked until the handler returns. */
static void on_signal(int sig)
{
	struct sigaction sa;
	if (pending_set)
		unlink(pending_tmp);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	raise(sig);
}

/* SIGBUS inside a mapped input: the file shrank under us. The temporary
 * output goes, one line says why, exit status 1. Any other SIGBUS takes
 * its default course. Async-signal-safe. */
static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	uint8_t *a = si->si_addr;
	sigjmp_buf *jb = bus_guard.jb;
	if (jb && a >= bus_guard.at && a < bus_guard.at + bus_guard.len) {
		bus_guard.jb = NULL;
		siglongjmp(*jb, 1);
	}
	for (int i = 0; i < BUS_MAPS; i++) {
		uint8_t *m = bus_maps[i].at;
		if (m && a >= m && a < m + bus_maps[i].len) {
			static const char msg[] = ": input file shrank while being read\n";
			const char *name = program_invocation_short_name;
			if (pending_set)
				unlink(pending_tmp);
			if (write(2, name, strlen(name)) < 0 || write(2, msg, sizeof msg - 1) < 0)
				_exit(1);
			_exit(1);
		}
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/* Installed while SIGBUS has its default disposition (a handler of the
 * program's or a sanitizer's is left alone); again after a fork. */
static void catch_sigbus(void)
{
	struct sigaction old, sa;
	if (sigaction(SIGBUS, NULL, &old) < 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
		return;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigfillset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

int core_bus_guard(sigjmp_buf *jb, const void *at, size_t len)
{
	if (!jb) {
		bus_guard.jb = NULL;
		return 1;
	}
	catch_sigbus();
	struct sigaction cur;
	if (sigaction(SIGBUS, NULL, &cur) < 0 || !(cur.sa_flags & SA_SIGINFO) || cur.sa_sigaction != on_sigbus)
		return 0;
	bus_guard.at = at;
	bus_guard.len = len;
	bus_guard.jb = jb;
	return 1;
}

/* Catch sig only while its disposition is the default: a signal the parent
 * ignored (nohup) stays ignored, one the program handles keeps its handler.
 * One call sets ours and reads the old one, which is put back where it was
 * not the default (signals blocked by the caller meanwhile, so none meets
 * ours there): one system call a signal, not two (45 signals). */
static void catch_signal(int sig)
{
	struct sigaction old, sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigfillset(&sa.sa_mask);
	if (sigaction(sig, &sa, &old) == 0 && ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL))
		sigaction(sig, &old, NULL);
}

static void install_handlers(void)
{
	sigset_t all, mask;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &mask);
	for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++)
		catch_signal(fatal_signals[i]);
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		catch_signal(sig);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
}

static pthread_once_t handlers_once = PTHREAD_ONCE_INIT;

/* Open /dev/null on each of fds 0, 1 and 2 that is closed, so that no
 * descriptor opened later (a pipe, a temporary, a library's file) takes its
 * number. Opened in the mode opposite to the fd's use (stdin write-only,
 * stdout and stderr read-only), as gnulib's stdopen does: reading stdin or
 * writing stdout still fails with EBADF, as on the closed fd. The lowest
 * free number is the one open() returns, so each lands on its own fd. */
void core_guard_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF)
			open("/dev/null", (fd == 0 ? O_WRONLY : O_RDONLY) | O_NOCTTY);
}

void core_io_startup(void)
{
	core_guard_std_fds();
	pthread_once(&handlers_once, install_handlers);
}

/* Writes to a reader that went away fail with EPIPE (accel_output_write
 * returns ACCEL_EPIPE) instead of killing the process. */
static void ignore_sigpipe(void)
{
	struct sigaction old, sa;
	if (sigaction(SIGPIPE, NULL, &old) < 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
		return;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPIPE, &sa, NULL);
}

/* Create the temporary `tmp` (a name ending in XXXXXX, replaced here by
 * six random letters and digits, tried again on a clash) with O_EXCL and
 * the given mode, as open() applies it: the umask and a folder's default
 * ACL act on a new file here as they do on one made by a shell's >,
 * without reading the umask (the kernel makes /proc/self/status anew on
 * each read, tens of microseconds a file of FILE...). The fd, or -1 with
 * errno. */
static int create_temp(char *tmp, mode_t mode)
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	char *x = tmp + strlen(tmp) - 6;
	for (int attempt = 0; attempt < 100; attempt++) {
		uint8_t r[6];
		if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
			/* No entropy yet (early boot): the clock and a
			 * counter only need to differ, not to be secret, as
			 * O_EXCL refuses a name taken. */
			static unsigned counter;
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			uint64_t v = (uint64_t)ts.tv_nsec * 2654435761u ^ (uint64_t)getpid() << 20 ^
				     __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) * 40503u;
			for (int i = 0; i < 6; i++, v >>= 8)
				r[i] = (uint8_t)v;
		}
		for (int i = 0; i < 6; i++)
			x[i] = letters[r[i] % (sizeof letters - 1)];
		int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, mode);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

/* Open an existing PATH that is not a regular file (a device, a FIFO) for
 * writing in place. 0 with out->fd set, 1 when PATH turns out to be a
 * regular file after all (written through a temporary then), or ACCEL_EIO. */
static int open_special(struct accel_output *out, const char *path)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return ACCEL_EIO;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		close(fd);
		return 1;
	}
	out->fd = fd;
	return 0;
}

/* The file that the chain of symlinks at `path` ends on (a copy of path
 * when it is no link, or names nothing yet): a relative link is read from
 * the link's folder, as the kernel does. malloc'd; NULL with errno set
 * (ELOOP past 40 links, ENAMETOOLONG, ENOMEM). */
static char *follow_links(const char *path)
{
	char *cur = strdup(path);
	for (int hops = 0; cur; hops++) {
		struct stat st;
		char target[PATH_MAX];
		if (lstat(cur, &st) < 0 || !S_ISLNK(st.st_mode))
			return cur;
		if (hops == 40) {
			errno = ELOOP;
			break;
		}
		ssize_t n = readlink(cur, target, sizeof target);
		if (n < 0 || (size_t)n == sizeof target) {
			if (n >= 0)
				errno = ENAMETOOLONG;
			break;
		}
		const char *slash = strrchr(cur, '/');
		size_t dirlen = target[0] == '/' || !slash ? 0 : (size_t)(slash - cur + 1);
		char *next = malloc(dirlen + (size_t)n + 1);
		if (next) {
			memcpy(next, cur, dirlen);
			memcpy(next + dirlen, target, (size_t)n);
			next[dirlen + (size_t)n] = 0;
		}
		free(cur);
		cur = next;
	}
	int e = cur ? errno : ENOMEM;
	free(cur);
	errno = e;
	return NULL;
}

/* Undo a failed accel_output_open, keeping errno; returns rc. */
static int open_failed(struct accel_output *out, int rc)
{
	int e = errno;
	if (out->fd > 2)
		close(out->fd);
	free(out->path);
	free(out->tmp);
	out->path = out->tmp = NULL;
	out->fd = -1;
	errno = e;
	return rc;
}

int accel_output_open(struct accel_output *out, const char *path, int force, int binary)
{
	memset(out, 0, sizeof *out);
	out->fd = -1;
	ignore_sigpipe();
	if (!path || !strcmp(path, "-")) {
		/* A stdout that was closed (held on /dev/null, read-only, by
		 * the start-up) cannot be written. */
		int fl = fcntl(1, F_GETFL);
		if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY) {
			errno = EBADF;
			return ACCEL_EIO;
		}
		out->fd = 1;
		if (binary && !force && isatty(1))
			return ACCEL_EINVAL;
		accel_pipe_grow(1);
		return 0;
	}
	/* An existing file is not replaced without force; a character device
	 * or a FIFO (/dev/null, a named pipe) is written into, as zstd does:
	 * nothing there is lost. A block device needs force. */
	struct stat st;
	if (!force && lstat(path, &st) == 0 &&
	    !(stat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))) {
		errno = EEXIST;
		return ACCEL_EEXIST;
	}
	/* A device, FIFO or socket, or a link to one, is written into where
	 * it is, never replaced, by the name given: /dev/stdout's link to a
	 * pipe names "pipe:[N]", no file. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode)) {
			errno = EISDIR;
			return open_failed(out, ACCEL_EIO);
		}
		if (!(out->path = strdup(path)))
			return open_failed(out, ACCEL_ENOMEM);
		int rc = open_special(out, path);
		if (rc < 0)
			return open_failed(out, rc);
		if (rc == 0) {
			accel_pipe_grow(out->fd);
			return 0;
		}
		free(out->path);
		out->path = NULL;
	}
	/* A symlink stays: its target is what is replaced (or made), as age,
	 * lz4 and a shell's > do. */
	out->path = follow_links(path);
	if (!out->path)
		return open_failed(out, errno == ENOMEM ? ACCEL_ENOMEM : ACCEL_EIO);
	path = out->path;
	mode_t mode = 0;
	int kept = 0;
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		/* The file replaced keeps its permissions, as one opened with
		 * O_TRUNC does: what was private stays so. */
		mode = st.st_mode & 0777;
		kept = 1;
	}
	/* A new file gets what open() would give it (create_temp); one that
	 * replaces a file, that file's permissions. */
	size_t n = strlen(path) + 16;
	out->tmp = malloc(n);
	if (!out->tmp)
		return open_failed(out, ACCEL_ENOMEM);
	/* The temporary sits in the same folder so rename() is atomic. */
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	snprintf(out->tmp, n, "%.*s.%s.XXXXXX", dirlen, path, slash ? slash + 1 : path);
	if (n > sizeof pending_tmp) {
		errno = ENAMETOOLONG;
		return open_failed(out, ACCEL_EIO);
	}
	pthread_once(&handlers_once, install_handlers);
	/* Signals are blocked between creating the temporary and recording its
	 * name, so no signal can leave it behind. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	out->fd = create_temp(out->tmp, kept ? 0600 : 0666);
	if (out->fd >= 0) {
		memcpy(pending_tmp, out->tmp, strlen(out->tmp) + 1);
		pending_set = 1;
	}
	int e = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (out->fd < 0) {
		errno = e;
		return open_failed(out, ACCEL_EIO);
	}
	if (kept)
		fchmod(out->fd, mode);
	return 0;
}

int accel_output_mode(struct accel_output *out, unsigned mode)
{
	if (!out->tmp || out->fd < 0)
		return 0;
	if (fchmod(out->fd, (mode_t)(mode & 0777)) < 0) {
		out->error = errno;
		return ACCEL_EIO;
	}
	return 0;
}

int accel_output_attrs(struct accel_output *out, const struct stat *st)
{
	if (!out->tmp || out->fd < 0)
		return 0;
	/* The owner first, as a change of owner clears the set-id bits. */
	mode_t keep = 07777;
	if (fchown(out->fd, st->st_uid, st->st_gid) < 0)
		/* Not root: the group alone, when the user is in it; else
		 * the file stays ours, as zstd leaves it. */
		keep = fchown(out->fd, (uid_t)-1, st->st_gid) == 0 ? 02777 : 0777;
	if (fchmod(out->fd, st->st_mode & keep) < 0) {
		out->error = errno;
		return ACCEL_EIO;
	}
	/* Accessed now (zstd and lz4 set it so; gzip copies it). */
	struct timespec times[2] = { { 0, UTIME_NOW }, st->st_mtim };
	if (futimens(out->fd, times) < 0) {
		out->error = errno;
		return ACCEL_EIO;
	}
	return 0;
}

void accel_output_window(struct accel_output *out, uint64_t skip, uint64_t length)
{
	out->window_skip = skip;
	out->window_left = length;
	out->window = length ? 1 : 2;
}

static int write_all(struct accel_output *out, const void *data, size_t len);

int accel_output_write(struct accel_output *out, const void *data, size_t len)
{
	if (!out->window)
		return write_all(out, data, len);
	if (out->window == 2)
		return ACCEL_EPIPE;
	const uint8_t *p = data;
	size_t drop = out->window_skip < len ? (size_t)out->window_skip : len;
	out->window_skip -= drop;
	p += drop;
	len -= drop;
	size_t n = out->window_left < len ? (size_t)out->window_left : len;
	int rc = write_all(out, p, n);
	if (rc < 0)
		return rc;
	if (out->window_left != UINT64_MAX)
		out->window_left -= n;
	if (!out->window_left)
		out->window = 2;
	return 0;
}

/* len bytes of p to out's fd: at its position (at < 0: write(2), each
 * byte counted in out->written) or at byte `at` (pwrite(2), the position
 * left alone, nothing counted), WRITE_MAX at a time, EINTR retried. 0,
 * ACCEL_EPIPE (the reader went away: out->broken set), or ACCEL_EIO with
 * out->error set. */
static int fd_write_all(struct accel_output *out, const uint8_t *p, size_t len, int64_t at)
{
	while (len) {
		size_t n = len > WRITE_MAX + WRITE_MAX / 4 ? WRITE_MAX : len;
		ssize_t w = at < 0 ? write(out->fd, p, n) : pwrite(out->fd, p, n, (off_t)at);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			if (errno == EPIPE) {
				out->broken = 1;
				return ACCEL_EPIPE;
			}
			out->error = errno;
			return ACCEL_EIO;
		}
		p += w;
		len -= (size_t)w;
		if (at < 0)
			out->written += (uint64_t)w;
		else
			at += w;
	}
	return 0;
}

static int write_all(struct accel_output *out, const void *data, size_t len)
{
	const uint8_t *p = data;
	if (out->broken)
		return ACCEL_EPIPE;
	if (out->null) {
		out->written += len;
		out->pos += len;
		if (out->pos > out->size)
			out->size = out->pos;
		return 0;
	}
	return fd_write_all(out, p, len, -1);
}

/* Whether fd is /dev/null: the character device that /dev/null is. */
static int dev_null(int fd)
{
	struct stat st, null;
	return fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && stat("/dev/null", &null) == 0 &&
	       S_ISCHR(null.st_mode) && st.st_rdev == null.st_rdev;
}

int core_output_positioned(struct accel_output *out, uint64_t *base)
{
	if (out->window || out->broken || out->error)
		return 0;
	if (out->null) {
		*base = out->pos;
		return 1;
	}
	if (out->fd < 0 || out->borrowed)
		return 0;
	if (out->tmp) {
		off_t at = lseek(out->fd, 0, SEEK_CUR);
		if (at < 0)
			return 0;
		*base = (uint64_t)at;
		return 1;
	}
	if (dev_null(out->fd)) {
		*base = 0;
		return 1;
	}
	return 0;
}

int core_output_pwrite(struct accel_output *out, const void *data, size_t len, uint64_t at)
{
	return out->null ? 0 : fd_write_all(out, data, len, (int64_t)at);
}

int core_output_place(struct accel_output *out, uint64_t end, uint64_t len)
{
	out->written += len;
	if (out->null) {
		out->pos = end;
		if (out->pos > out->size)
			out->size = out->pos;
		return 0;
	}
	if (!out->tmp)
		return 0;   /* /dev/null */
	if (ftruncate(out->fd, (off_t)end) < 0 || lseek(out->fd, (off_t)end, SEEK_SET) < 0) {
		out->error = errno;
		return ACCEL_EIO;
	}
	return 0;
}

/* Stop removing the temporary on a signal (it is renamed or removed now). */
static void clear_pending(void)
{
	pending_set = 0;
}

int accel_output_null(struct accel_output *out)
{
	memset(out, 0, sizeof *out);
	out->fd = -1;
	out->null = 1;
	return 0;
}

int accel_output_fd(struct accel_output *out, int fd)
{
	memset(out, 0, sizeof *out);
	out->fd = -1;
	if (fd < 0 || fcntl(fd, F_GETFL) < 0) {
		errno = fd < 0 ? EBADF : errno;
		return ACCEL_EINVAL;
	}
	ignore_sigpipe();
	out->fd = fd;
	out->borrowed = 1;
	return 0;
}

int64_t accel_output_seek(struct accel_output *out, int64_t offset, int whence)
{
	if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END)
		return ACCEL_EINVAL;
	if (out->null) {
		int64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? (int64_t)out->pos : (int64_t)out->size;
		if ((offset > 0 && base > INT64_MAX - offset) || base + offset < 0)
			return ACCEL_EINVAL;
		out->pos = (uint64_t)(base + offset);
		return (int64_t)out->pos;
	}
	/* Only the temporary file is ours to seek in: stdout, a pipe, a
	 * device or a caller's fd may hold what others wrote. */
	if (!out->tmp || out->fd < 0)
		return ACCEL_ENOTSUP;
	off_t r = lseek(out->fd, (off_t)offset, whence);
	if (r < 0) {
		if (errno == EINVAL)
			return ACCEL_EINVAL;
		out->error = errno;
		return ACCEL_EIO;
	}
	return (int64_t)r;
}

int accel_output_commit(struct accel_output *out)
{
	int rc = 0;
	if (out->null || out->borrowed) {
		/* Nothing to close: the caller keeps its fd. */
		out->fd = -1;
		return out->error ? ACCEL_EIO : 0;
	}
	if (!out->tmp) {
		/* stdout or a device: a failed close means lost data (full
		 * disk, EIO). */
		if (out->fd >= 0 && close(out->fd) < 0 && errno != EPIPE && errno != EBADF &&
		    errno != EINTR) {
			out->error = errno;
			rc = ACCEL_EIO;
		}
		out->fd = -1;
		free(out->path);
		out->path = NULL;
		return rc;
	}
	if (close(out->fd) < 0)
		rc = ACCEL_EIO;
	out->fd = -1;
	clear_pending();
	if (!rc && rename(out->tmp, out->path) < 0)
		rc = ACCEL_EIO;
	if (rc) {
		int e = errno;
		out->error = e;
		unlink(out->tmp);
		errno = e;
	}
	free(out->tmp);
	free(out->path);
	out->tmp = out->path = NULL;
	return rc;
}

void accel_output_abort(struct accel_output *out)
{
	if (out->null || out->borrowed) {
		out->fd = -1;
		return;
	}
	if (out->tmp) {
		clear_pending();
		if (out->fd >= 0)
			close(out->fd);
		unlink(out->tmp);
		free(out->tmp);
		out->tmp = NULL;
	} else if (out->path && out->fd >= 0) {
		close(out->fd);
	}
	free(out->path);
	out->path = NULL;
	out->fd = -1;
}
