/*
 * io.c - buffered input with byte offsets, and output that is complete or
 * absent: a FILE is written beside its final name and renamed when done.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core.h"

#define INPUT_BUF (1u << 20)
#define WRITE_MAX (1u << 18)

int accel_input_open(struct accel_input *in, const char *path)
{
	memset(in, 0, sizeof *in);
	in->size = -1;
	if (!path || !strcmp(path, "-")) {
		in->fd = 0;
		in->name = "stdin";
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
	}
	in->buf = malloc(INPUT_BUF);
	if (!in->buf) {
		if (in->fd > 0)
			close(in->fd);
		return ACCEL_ENOMEM;
	}
	in->cap = INPUT_BUF;
	return 0;
}

void accel_input_close(struct accel_input *in)
{
	if (in->fd > 0)
		close(in->fd);
	free(in->buf);
	in->buf = NULL;
	in->fd = -1;
}

static ssize_t read_full(int fd, uint8_t *dst, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, dst + got, n - got);
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

ssize_t accel_input_peek(struct accel_input *in, size_t n, const uint8_t **p)
{
	size_t have = in->end - in->start;
	if (have < n && !in->eof) {
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
		while (in->end < n && !in->eof) {
			ssize_t r = read(in->fd, in->buf + in->end, in->cap - in->end);
			if (r < 0 && errno == EINTR)
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

void accel_input_consume(struct accel_input *in, size_t n)
{
	in->start += n;
	in->offset += n;
}

ssize_t accel_input_read(struct accel_input *in, void *dst, size_t n)
{
	size_t have = in->end - in->start;
	if (have < n && n - have < in->cap / 4 && !in->eof) {
		/* Small reads go through the buffer: one large read() serves many. */
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
	ssize_t r = read_full(in->fd, (uint8_t *)dst + take, n - take);
	if (r < 0)
		return r;
	if ((size_t)r < n - take)
		in->eof = 1;
	in->offset += (uint64_t)r;
	return (ssize_t)(take + (size_t)r);
}

int accel_read_chunk(struct accel_input *in, struct accel_unit *u, size_t size)
{
	if (accel_buf_reserve(&u->in, size))
		return ACCEL_ENOMEM;
	u->offset = in->offset;
	ssize_t r = accel_input_read(in, u->in.data, size);
	if (r < 0)
		return (int)r;
	u->in.len = (size_t)r;
	if (r == 0 && u->seq > 0)
		return 0;
	const uint8_t *p;
	ssize_t more = (size_t)r < size ? 0 : accel_input_peek(in, 1, &p);
	if (more < 0)
		return (int)more;
	u->last = more == 0;
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

/* Catch sig only while its disposition is the default: a signal the parent
 * ignored (nohup) stays ignored, one the program handles keeps its handler. */
static void catch_signal(int sig)
{
	struct sigaction old, sa;
	if (sigaction(sig, NULL, &old) < 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
		return;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigfillset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static void install_handlers(void)
{
	for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++)
		catch_signal(fatal_signals[i]);
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		catch_signal(sig);
}

static pthread_once_t handlers_once = PTHREAD_ONCE_INIT;

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

/* The process's umask, read without changing it where the kernel says it
 * (Linux 4.7+), else by setting it and putting it back. */
static mode_t current_umask(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[128];
	unsigned mask;
	if (f) {
		while (fgets(line, sizeof line, f))
			if (sscanf(line, "Umask: %o", &mask) == 1) {
				fclose(f);
				return (mode_t)mask & 0777;
			}
		fclose(f);
	}
	mode_t m = umask(022);
	umask(m);
	return m;
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
		out->fd = 1;
		if (binary && !force && isatty(1))
			return ACCEL_EINVAL;
		return 0;
	}
	struct stat st;
	if (!force && lstat(path, &st) == 0) {
		errno = EEXIST;
		return ACCEL_EEXIST;
	}
	out->path = strdup(path);
	if (!out->path)
		return open_failed(out, ACCEL_ENOMEM);
	/* A device or FIFO (or a link to one) is written into, never replaced. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode)) {
			errno = EISDIR;
			return open_failed(out, ACCEL_EIO);
		}
		int rc = open_special(out, path);
		if (rc < 0)
			return open_failed(out, rc);
		if (rc == 0)
			return 0;
	}
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
	out->fd = mkostemp(out->tmp, O_CLOEXEC);
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
	fchmod(out->fd, 0666 & ~current_umask());
	return 0;
}

int accel_output_write(struct accel_output *out, const void *data, size_t len)
{
	const uint8_t *p = data;
	if (out->broken)
		return ACCEL_EPIPE;
	while (len) {
		ssize_t w = write(out->fd, p, len > WRITE_MAX ? WRITE_MAX : len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			if (errno == EPIPE) {
				out->broken = 1;
				return ACCEL_EPIPE;
			}
			out->error = errno;
			return ACCEL_EIO;
		}
		p += w;
		len -= (size_t)w;
		out->written += (uint64_t)w;
	}
	return 0;
}

/* Stop removing the temporary on a signal (it is renamed or removed now). */
static void clear_pending(void)
{
	pending_set = 0;
}

int accel_output_commit(struct accel_output *out)
{
	int rc = 0;
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
