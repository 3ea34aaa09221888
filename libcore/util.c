/*
 * util.c - error texts, exit statuses, buffers, number parsing, clocks and the
 * one-line messages every program prints.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <accel/cli.h>
#include "core.h"

static const char *prog_name = "accel";
/* Whose --help a usage error points at: a subcommand's ("accel-crypt
 * keygen"); NULL: prog_name. */
static const char *help_name;

const char *accel_strerror(int err)
{
	switch (err) {
	case ACCEL_OK: return "success";
	case ACCEL_EINVAL: return "invalid argument";
	case ACCEL_ENOMEM: return "out of memory";
	case ACCEL_EIO: return "input/output error";
	case ACCEL_ENOTSUP: return "not supported";
	case ACCEL_EDEVICE: return "engine failed";
	case ACCEL_EDATA: return "input is corrupt or truncated";
	case ACCEL_EPIPE: return "broken pipe";
	case ACCEL_ENOENGINE: return "no engine left to run the operation";
	case ACCEL_EEXIST: return "file exists";
	case ACCEL_EUNMET: return "requirement not met";
	}
	return "unknown error";
}

int accel_exit_status(int err)
{
	switch (err) {
	case ACCEL_OK: case ACCEL_EPIPE: return ACCEL_EXIT_OK;
	case ACCEL_EINVAL: return ACCEL_EXIT_USAGE;
	case ACCEL_EDATA: return ACCEL_EXIT_DATA;
	case ACCEL_EUNMET: return ACCEL_EXIT_UNMET;
	}
	return ACCEL_EXIT_FAILURE;
}

void core_strlcpy(char *dst, const char *src, size_t len)
{
	if (!len)
		return;
	size_t n = strlen(src);
	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

int core_edit_distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b), d[48][48];
	if (la > 47 || lb > 47)
		return 99;
	for (int i = 0; i <= la; i++)
		for (int j = 0; j <= lb; j++) {
			if (!i || !j) {
				d[i][j] = i + j;
				continue;
			}
			int c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < c)
				c = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < c)
				c = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < c)
				c = d[i - 2][j - 2] + 1;
			d[i][j] = c;
		}
	return d[la][lb];
}

/* Buffers of 2 MiB and more are aligned to 2 MiB and marked for
 * transparent huge pages: a unit's buffers are touched once per run, and
 * with 4 KiB pages their first-touch faults cost as much as the decoding. */
#define HUGE_BUF (2u << 20)
/* Buffers of 64 KiB and more (a unit's input and output) start on a cache
 * line, as fftwf_malloc's do: malloc gives 16 bytes past a line, where
 * every other 32-byte vector an engine loads or stores spans two lines.
 * FFTW's plans run on a unit's buffers took 1.08 (c2c) and 1.15 (c2r)
 * times the CPU time (N=1024, 64 MiB, one thread, perf samples). */
#define LINE_BUF ((size_t)64 << 10)

static int reserve(struct accel_buf *b, size_t cap, int fill);

int accel_buf_reserve(struct accel_buf *b, size_t cap)
{
	return reserve(b, cap, 0);
}

int accel_buf_reserve_fill(struct accel_buf *b, size_t cap)
{
	return reserve(b, cap, 1);
}

static int reserve(struct accel_buf *b, size_t cap, int fill)
{
	if (cap <= b->cap)
		return 0;
	/* Borrowed data (cap 0: a frame in a mapped input) is copied, never
	 * resized or freed. */
	if (!b->cap && b->data) {
		struct accel_buf own = { NULL, 0, 0 };
		if (reserve(&own, cap < b->len ? b->len : cap, fill))
			return ACCEL_ENOMEM;
		memcpy(own.data, b->data, b->len);
		own.len = b->len;
		*b = own;
		return 0;
	}
	size_t c = b->cap + b->cap / 2;
	if (c < cap)
		c = cap;
	if (c < LINE_BUF) {
		uint8_t *p = realloc(b->data, c);
		if (!p)
			return ACCEL_ENOMEM;
		b->data = p;
		b->cap = c;
		return 0;
	}
	size_t align = c < HUGE_BUF ? 64 : HUGE_BUF;
	c = (c + align - 1) & ~(align - 1);
	void *p;
	if (posix_memalign(&p, align, c))
		return ACCEL_ENOMEM;
	if (align == HUGE_BUF)
		madvise(p, c, MADV_HUGEPAGE);
	if (fill)
		core_populate((uint8_t *)p + b->len, (uint8_t *)p + cap);
	if (b->len)
		memcpy(p, b->data, b->len);
	free(b->data);
	b->data = p;
	b->cap = c;
	return 0;
}

void accel_buf_free(struct accel_buf *b)
{
	if (b->cap)
		free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

int accel_parse_int(const char *s, int min, int max, int *out)
{
	char *end;
	if (!s || ((*s < '0' || *s > '9') && *s != '-'))
		return ACCEL_EINVAL;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return ACCEL_EINVAL;
	*out = (int)v;
	return 0;
}

int accel_parse_size(const char *s, uint64_t *out)
{
	char *end;
	if (!s || *s < '0' || *s > '9')
		return ACCEL_EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return ACCEL_EINVAL;
	unsigned shift = 0;
	switch (*end) {
	case 0: break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: return ACCEL_EINVAL;
	}
	if (shift && (*end == 'i' || *end == 'I'))
		end++;
	if (shift && (*end == 'b' || *end == 'B'))
		end++;
	if (*end || (shift && v > (~0ULL >> shift)))
		return ACCEL_EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

double accel_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* cgroup v2 cpu.max "quota period", rounded up; 0 when unlimited/unknown. */
static int cgroup_cpus(void)
{
	FILE *f = fopen("/sys/fs/cgroup/cpu.max", "r");
	if (!f)
		return 0;
	char q[32] = "";
	long period = 0;
	int n = fscanf(f, "%31s %ld", q, &period);
	fclose(f);
	if (n != 2 || !strcmp(q, "max") || period <= 0)
		return 0;
	long quota = atol(q);
	return quota > 0 ? (int)((quota + period - 1) / period) : 0;
}

/* cpu.max's quota in CPUs, kept for a second: each route, run and
 * engine asks, and a FILE... of small files made it a file read each
 * (5% of 1000 files' decompression). `stamp`: accel_now() * 1000 of the
 * read, 0 none; `quota`: its answer. */
static _Atomic long long cgroup_stamp;
static _Atomic int cgroup_quota;

static int cgroup_cpus_kept(void)
{
	long long now = (long long)(accel_now() * 1000), at = cgroup_stamp;
	if (at > 0 && now - at < 1000)
		return cgroup_quota;
	int q = cgroup_cpus();
	cgroup_quota = q;
	cgroup_stamp = now > 0 ? now : 1;
	return q;
}

int accel_cpu_count(void)
{
	cpu_set_t set;
	int n = 0;
	if (sched_getaffinity(0, sizeof set, &set) == 0)
		n = CPU_COUNT(&set);
	if (n <= 0)
		n = (int)sysconf(_SC_NPROCESSORS_ONLN);
	int q = cgroup_cpus_kept();
	if (q > 0 && q < n)
		n = q;
	return n > 0 ? n : 1;
}

void accel_msg_prog(const char *prog)
{
	prog_name = prog;
	help_name = NULL;
}

void core_msg_help_name(const char *name)
{
	help_name = name;
}

/* Copy s into out[len] with what a terminal would act on written as \xHH,
 * byte by byte (as ls quotes names): C0 controls and DEL, C1 controls,
 * U+2028, U+2029, the direction overrides and bytes of no valid UTF-8
 * sequence. Other UTF-8 is kept. */
static void escape_text(const char *s, char *out, size_t len)
{
	const unsigned char *r = (const unsigned char *)s;
	size_t w = 0;
	while (*r && w + 5 < len) {
		unsigned c = *r;
		size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 :
			   c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		uint32_t cp = n == 1 ? c : c & (0x7f >> n);
		size_t i = 1;
		for (; i < n && (r[i] & 0xc0) == 0x80; i++)
			cp = cp << 6 | (r[i] & 0x3f);
		int bad = !n || i < n || (n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
			  (cp >= 0xd800 && cp <= 0xdfff);
		if (bad)
			n = 1;
		if (bad || cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || cp == 0x2028 || cp == 0x2029 ||
		    (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)) {
			for (size_t k = 0; k < n && w + 5 < len; k++)
				w += (size_t)snprintf(out + w, len - w, "\\x%02x", r[k]);
		} else if (w + n < len) {
			memcpy(out + w, r, n);
			w += n;
		} else {
			break;
		}
		r += n;
	}
	out[w] = 0;
}

static void vmsg(const char *kind, const char *fmt, va_list ap)
{
	char line[1024], safe[1024];
	vsnprintf(line, sizeof line, fmt, ap);
	escape_text(line, safe, sizeof safe);
	fprintf(stderr, "%s: %s%s\n", prog_name, kind, safe);
}

void accel_msg_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void accel_msg_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void accel_msg_usage(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help' for more information.\n", help_name ? help_name : prog_name);
}

void accel_exit(int status)
{
	if (!accel_abandoned_calls())
		exit(status);
	/* A probe's thread is still inside a driver: the exit handlers of its
	 * libraries would free what it is using. Finish the outputs by hand. */
	int err = 0;
	if (fflush(stdout) == EOF)
		err = errno;
	if (close(STDOUT_FILENO) < 0 && errno != EBADF && !err)
		err = errno;
	if (err && err != EPIPE && status == ACCEL_EXIT_OK) {
		accel_msg_error("cannot write stdout: %s", strerror(err));
		status = ACCEL_EXIT_FAILURE;
	}
	fflush(stderr);
	close(STDERR_FILENO);
	_exit(status);
}

void core_cond_init_monotonic(pthread_cond_t *c)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(c, &ca);
	pthread_condattr_destroy(&ca);
}

void core_deadline(struct timespec *ts, double seconds)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	double end = (double)ts->tv_sec + ts->tv_nsec / 1e9 + seconds;
	ts->tv_sec = (time_t)end;
	ts->tv_nsec = (long)((end - (double)ts->tv_sec) * 1e9);
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}
