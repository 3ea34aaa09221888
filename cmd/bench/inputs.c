/*
 * inputs.c - accel-bench's inputs (a corpus of this machine's files, tones and
 * noise for FFTs) in a temporary folder removed at the end, on a signal too.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bench.h"

/* End the progress line before a message. */
void clear_progress(const struct bench *b)
{
	if (b->progress)
		fputs("\r\033[K", stderr);
}

/* A path in the temporary folder, remembered for removal (NULL when out
 * of memory or of slots). */
char *temp_path(struct bench *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *temp_path(struct bench *b, const char *fmt, ...)
{
	char name[256], *p;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof name, fmt, ap);
	va_end(ap);
	for (int i = 0; i < b->nfiles; i++)
		if (!strcmp(strrchr(b->files[i], '/') + 1, name))
			return b->files[i];
	if (b->nfiles == (int)(sizeof b->files / sizeof b->files[0]) ||
	    asprintf(&p, "%s/%s", b->dir, name) < 0)
		return NULL;
	return b->files[b->nfiles++] = p;
}

/* The inputs go when a signal ends the run: the handler removes them,
 * then hands the signal on to the handler it replaced (accel_output's,
 * for its own temporary) or to the default action. */
static const int end_signals[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU, SIGXFSZ };
#define NSIG_END (sizeof end_signals / sizeof end_signals[0])
static struct sigaction old_action[NSIG_END];
static struct bench *volatile running;

static void on_signal(int sig)
{
	struct bench *b = running;
	if (b) {
		for (int i = 0; i < b->nfiles; i++)
			unlink(b->files[i]);
		rmdir(b->dir);
	}
	for (size_t i = 0; i < NSIG_END; i++)
		if (end_signals[i] == sig) {
			sigaction(sig, &old_action[i], NULL);
			if (old_action[i].sa_handler != SIG_DFL && old_action[i].sa_handler != SIG_IGN &&
			    !(old_action[i].sa_flags & SA_SIGINFO)) {
				old_action[i].sa_handler(sig);
				return;
			}
		}
	raise(sig);
}

/* Install on_signal for the signals whose action is not to ignore them
 * (a signal the parent ignored, as under nohup, stays ignored). */
void catch_signals(struct bench *b)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigfillset(&sa.sa_mask);
	running = b;
	for (size_t i = 0; i < NSIG_END; i++)
		if (sigaction(end_signals[i], NULL, &old_action[i]) == 0 && old_action[i].sa_handler != SIG_IGN)
			sigaction(end_signals[i], &sa, NULL);
}

void cleanup(struct bench *b)
{
	onnx_end();
	for (int i = 0; i < b->nfiles; i++) {
		unlink(b->files[i]);
		free(b->files[i]);
	}
	if (b->dir[0])
		rmdir(b->dir);
	b->nfiles = 0;
	b->dir[0] = 0;
}


/* The corpus walk (nftw has no user pointer). */
static struct {
	int fd;
	uint64_t left;
	int error;
} walk;

static int walk_file(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	if (flag != FTW_F || !S_ISREG(st->st_mode) || st->st_size == 0)
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return 0;
	static uint8_t buf[1 << 16];
	ssize_t n;
	while (walk.left && (n = read(fd, buf, walk.left < sizeof buf ? walk.left : sizeof buf)) > 0) {
		if (write(walk.fd, buf, (size_t)n) != n) {
			walk.error = errno ? errno : EIO;
			break;
		}
		walk.left -= (uint64_t)n;
	}
	close(fd);
	return walk.left == 0 || walk.error;
}

/* The corpus of `size` bytes: the files under /usr/share/doc and the
 * system's library folder, concatenated in the order of the walk (as
 * tests/bench/corpus.sh's tar), repeated when they hold fewer bytes.
 * 0, or -1 after the message. */
int make_corpus(const char *path, uint64_t size)
{
	static const char *const roots[] = { "/usr/share/doc", "/usr/lib/x86_64-linux-gnu", "/usr/lib" };
	walk.fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	walk.left = size;
	walk.error = 0;
	if (walk.fd < 0) {
		accel_msg_error("cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < sizeof roots / sizeof roots[0] && walk.left && !walk.error; i++)
		if (i != 2 || access(roots[1], F_OK) != 0)
			nftw(roots[i], walk_file, 16, FTW_PHYS | FTW_MOUNT);
	uint64_t have = size - walk.left;
	if (!walk.error && walk.left && !have)
		walk.error = ENOENT;
	/* Too few files: the corpus again from its start. */
	static uint8_t buf[1 << 16];
	for (uint64_t off = 0; !walk.error && walk.left;) {
		size_t want = walk.left < sizeof buf ? (size_t)walk.left : sizeof buf;
		ssize_t n = pread(walk.fd, buf, want < have - off ? want : (size_t)(have - off), (off_t)off);
		if (n <= 0 || write(walk.fd, buf, (size_t)n) != n) {
			walk.error = n < 0 ? errno : EIO;
			break;
		}
		walk.left -= (uint64_t)n;
		off = (off + (uint64_t)n) % have;
	}
	if (close(walk.fd) < 0 && !walk.error)
		walk.error = errno;
	if (walk.error) {
		accel_msg_error("cannot make the input %s from this machine's files: %s", path,
				walk.error == ENOENT ? "no readable file under /usr/share/doc or /usr/lib" :
				strerror(walk.error));
		return -1;
	}
	return 0;
}

/* FFT input: `frames` frames of `frame` samples of tones plus noise,
 * complex (cf32) or real (f32). 0, or -1 after the message. */
int make_tones(const char *path, uint64_t frames, size_t frame, int complex)
{
	FILE *f = fopen(path, "we");
	if (!f) {
		accel_msg_error("cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	static const double tone[3][2] = { { 0.0123, 0.5 }, { 0.1789, 0.25 }, { 0.3301, 0.125 } };
	uint64_t x = 0x9e3779b97f4a7c15u, n = frames * frame;
	for (uint64_t j = 0; j < n; j++) {
		float v[2] = { 0, 0 };
		for (int t = 0; t < 3; t++) {
			double ph = 2 * M_PI * tone[t][0] * (double)j;
			v[0] += (float)(tone[t][1] * cos(ph));
			v[1] += (float)(tone[t][1] * sin(ph));
		}
		for (int k = 0; k < 2; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			v[k] += (float)(0.1 * ((double)(x >> 11) / 9007199254740992.0 - 0.5));
		}
		fwrite(v, sizeof(float), complex ? 2 : 1, f);
	}
	if (ferror(f) | (fclose(f) != 0)) {
		accel_msg_error("cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int64_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) < 0 ? -1 : st.st_size;
}
