/*
 * accel-bench-fftw - accel-bench's peer for fft.c2c, fft.r2c and fft.c2r:
 * FFTW called directly, without the stream engine, on the plans accel-fft's
 * fftw engine makes (fftwf_plan_many_dft* of accel_fft_batch_frames frames
 * for full batches, one frame for the rest; FFTW_MEASURE; the wisdom file
 * $XDG_CACHE_HOME/accel/fftw3f.wisdom read, never written). It reads FILE
 * (cf32 for c2c and for c2r's half spectra of N/2+1 bins, f32 for r2c) a
 * batch at a time with pread, transforms it and writes the rows (N cf32,
 * N/2+1 cf32, or N f32 scaled by 1/N) to stdout at their offsets (in order
 * to a pipe); with -T N (0: all cores; stdout then a file or /dev/null), N
 * threads take batches in turn. No window, hop N, whole frames only.
 * Usage: accel-bench-fftw [-T N] c2c|r2c|c2r N FILE
 * Exit status: 0, 1 failure (a line on stderr), 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fftw3.h>
#include "accel.h"

#define PROG "accel-bench-fftw"

struct peer {
	struct accel_fft f;
	int in_fd;
	size_t frames, batch;
	size_t in_floats, out_floats;  /* floats of one frame in and out */
	fftwf_plan many, one;
	pthread_mutex_t lock;
	size_t next;                   /* the next batch's first frame (under lock) */
	int seekable;                  /* 1: stdout takes pwrite (else one thread writes in order) */
	int error;                     /* errno of the first failed read or write */
	const char *what;
};

/* Transform the k frames of `in` into `out`. */
static void transform(struct peer *p, float *in, float *out, size_t k)
{
	for (size_t j = 0; j < k; j += k == p->batch ? k : 1) {
		fftwf_plan pl = k == p->batch ? p->many : p->one;
		float *i = in + j * p->in_floats, *o = out + j * p->out_floats;
		if (p->f.r2c)
			fftwf_execute_dft_r2c(pl, i, (fftwf_complex *)o);
		else if (p->f.c2r)
			fftwf_execute_dft_c2r(pl, (fftwf_complex *)i, o);
		else
			fftwf_execute_dft(pl, (fftwf_complex *)i, (fftwf_complex *)o);
	}
}

/* All of buf read (write_it 0) or written at off of fd (off < 0: written
 * at fd's position): 0, or an errno. */
static int full_io(int write_it, int fd, void *buf, size_t len, off_t off)
{
	for (size_t done = 0; done < len;) {
		char *b = (char *)buf + done;
		ssize_t n = !write_it ? pread(fd, b, len - done, off + (off_t)done) :
			    off < 0 ? write(fd, b, len - done) : pwrite(fd, b, len - done, off + (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : EIO;
		done += (size_t)n;
	}
	return 0;
}

static void *worker(void *arg)
{
	struct peer *p = arg;
	float *in = fftwf_malloc(p->batch * p->in_floats * sizeof(float));
	float *out = fftwf_malloc(p->batch * p->out_floats * sizeof(float));
	float sc = (float)p->f.scale;
	for (;;) {
		pthread_mutex_lock(&p->lock);
		size_t first = p->next;
		p->next += p->batch;
		if (!in || !out)
			p->error = p->error ? p->error : ENOMEM;
		int stop = p->error || first >= p->frames;
		pthread_mutex_unlock(&p->lock);
		if (stop)
			break;
		size_t k = p->frames - first < p->batch ? p->frames - first : p->batch;
		const char *what = "read";
		int e = full_io(0, p->in_fd, in, k * p->in_floats * sizeof(float),
				(off_t)(first * p->in_floats * sizeof(float)));
		if (!e) {
			transform(p, in, out, k);
			if (sc != 1)
				for (size_t i = 0; i < k * p->out_floats; i++)
					out[i] *= sc;
			what = "write";
			e = full_io(1, 1, out, k * p->out_floats * sizeof(float),
				    p->seekable ? (off_t)(first * p->out_floats * sizeof(float)) : -1);
		}
		if (e) {
			pthread_mutex_lock(&p->lock);
			if (!p->error)
				p->error = e, p->what = what;
			pthread_mutex_unlock(&p->lock);
		}
	}
	fftwf_free(in);
	fftwf_free(out);
	return NULL;
}

/* The plan of `howmany` frames over in and out (FFTW_MEASURE). */
static fftwf_plan plan(struct peer *p, int howmany, float *in, float *out, unsigned extra)
{
	int n = (int)p->f.n, bins = (int)p->f.bins;
	unsigned fl = FFTW_MEASURE | extra;
	if (p->f.r2c)
		return fftwf_plan_many_dft_r2c(1, &n, howmany, in, NULL, 1, n, (fftwf_complex *)out, NULL, 1, bins, fl);
	if (p->f.c2r)
		return fftwf_plan_many_dft_c2r(1, &n, howmany, (fftwf_complex *)in, NULL, 1, (int)p->f.frame, out, NULL,
					       1, n, fl);
	return fftwf_plan_many_dft(1, &n, howmany, (fftwf_complex *)in, NULL, 1, n, (fftwf_complex *)out, NULL, 1, n,
				   FFTW_FORWARD, fl);
}

static int usage(const char *why)
{
	fprintf(stderr, PROG ": %s\nusage: " PROG " [-T N] c2c|r2c|c2r N FILE\n", why);
	return 2;
}

int main(int argc, char **argv)
{
	long threads = 1;
	int opt;
	while ((opt = getopt(argc, argv, "T:")) != -1) {
		char *end;
		if (opt != 'T')
			return usage("unknown option");
		threads = strtol(optarg, &end, 10);
		if (*end || threads < 0 || threads > 1024)
			return usage("-T: a thread count from 0 (all cores) to 1024");
	}
	if (argc - optind != 3)
		return usage("three operands: the transform, N and the file");
	const char *kind = argv[optind], *path = argv[optind + 2];
	char *end;
	unsigned long n = strtoul(argv[optind + 1], &end, 10);
	if (*end || n < 2 || n > INT_MAX)
		return usage("N: a transform size from 2");
	struct peer p = { .in_fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER };
	p.f.n = n;
	p.f.plan = ACCEL_PLAN_MEASURE;
	if (!strcmp(kind, "c2c"))
		p.f.type = ACCEL_SAMPLE_CF32;
	else if (!strcmp(kind, "r2c"))
		p.f.type = ACCEL_SAMPLE_F32;
	else if (!strcmp(kind, "c2r"))
		p.f.type = ACCEL_SAMPLE_CF32, p.f.inverse = p.f.real = 1;
	else
		return usage("the transform is one of c2c, r2c, c2r");
	if ((p.in_fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		fprintf(stderr, PROG ": cannot read %s: %s\n", path, strerror(errno));
		return 1;
	}
	struct stat st;
	if (fstat(p.in_fd, &st) < 0) {
		fprintf(stderr, PROG ": cannot read %s: %s\n", path, strerror(errno));
		return 1;
	}
	p.f.input_bytes = st.st_size;
	char err[256];
	if (accel_fft_setup(&p.f, err, sizeof err) < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return 2;
	}
	p.in_floats = p.f.r2c ? p.f.n : 2 * p.f.frame;
	p.out_floats = p.f.c2r ? p.f.n : 2 * p.f.bins;
	p.frames = (size_t)st.st_size / (p.in_floats * sizeof(float));
	p.batch = accel_fft_batch_frames(&p.f);
	if (threads == 0)
		threads = accel_cpu_count();
	p.seekable = lseek(1, 0, SEEK_CUR) >= 0;
	if (threads > 1 && !p.seekable) {
		accel_fft_free(&p.f);
		return usage("with -T above 1, stdout is a file or /dev/null (rows are written at their offsets)");
	}
	char wisdom[PATH_MAX];
	const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	if ((x && *x) || (h && *h)) {
		snprintf(wisdom, sizeof wisdom, x && *x ? "%s/accel/fftw3f.wisdom" : "%s/.cache/accel/fftw3f.wisdom",
			 x && *x ? x : h);
		fftwf_import_wisdom_from_filename(wisdom);
	}
	float *in = fftwf_malloc(p.batch * p.in_floats * sizeof(float));
	float *out = fftwf_malloc(p.batch * p.out_floats * sizeof(float));
	int rc = 1;
	if (!in || !out) {
		fprintf(stderr, PROG ": out of memory\n");
		goto done;
	}
	p.many = plan(&p, (int)p.batch, in, out, 0);
	p.one = p.batch > 1 ? plan(&p, 1, in, out, FFTW_UNALIGNED) : p.many;
	if (!p.many || !p.one) {
		fprintf(stderr, PROG ": FFTW made no plan for %s of N=%lu\n", kind, n);
		goto done;
	}
	pthread_t tid[1024];
	long started = 0;
	for (; started < threads; started++)
		if (pthread_create(&tid[started], NULL, worker, &p))
			break;
	if (!started)
		worker(&p);
	for (long i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	if (p.error)
		fprintf(stderr, PROG ": cannot %s %s: %s\n", p.what ? p.what : "run", !p.what || p.what[0] == 'r' ?
			path : "stdout", strerror(p.error));
	else
		rc = 0;
done:
	if (p.one && p.one != p.many)
		fftwf_destroy_plan(p.one);
	if (p.many)
		fftwf_destroy_plan(p.many);
	fftwf_free(in);
	fftwf_free(out);
	close(p.in_fd);
	accel_fft_free(&p.f);
	return rc;
}
