/*
 * measure.c - measuring a case: its set-up run, warm-up and measured runs, ours
 * (the library call, and with --vs our program) and the peer's interleaved,
 * and the statistics of the times.
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "bench.h"

int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double tv(struct timeval t)
{
	return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

/* CPU seconds of this process and of its children waited for (our runs
 * of accel-transcode). */
static double cpu_self(void)
{
	struct rusage ru, ch;
	getrusage(RUSAGE_SELF, &ru);
	getrusage(RUSAGE_CHILDREN, &ch);
	return tv(ru.ru_utime) + tv(ru.ru_stime) + tv(ch.ru_utime) + tv(ch.ru_stime);
}

static int add_sample(struct series *s, double t)
{
	if (!(s->n & (s->n - 1)) || !s->t) {
		double *nt = realloc(s->t, (size_t)(s->n ? 2 * s->n : 1) * sizeof *nt);
		if (!nt)
			return -1;
		s->t = nt;
	}
	s->t[s->n++] = t;
	return 0;
}

/* The engines that ran units in a run, joined by '+', into buf[len]. */
static void engines_ran(const struct accel_stream_stats *st, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (int i = 0; i < st->nengines && used < len; i++)
		if (st->engines[i].units)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "+" : "", st->engines[i].name);
}

/* The inputs of case c (made once per operation family and size). 0, or
 * -1 after the message. */
static int prepare(struct bench *b, struct kase *c)
{
	const struct opdef *op = c->op;
	char err[512];
	uint64_t w;
	struct accel_stream_stats st;
	if (op->fam == FAM_ONNX)
		return onnx_prepare(b, c);
	if (IS_VIDEO(op->fam))
		return video_prepare(b, c);
	if (op->fam == FAM_FFT) {
		size_t frame = op->fft == FFT_C2R ? (size_t)c->size / 2 + 1 : (size_t)c->size;
		int complex = op->fft != FFT_R2C;
		uint64_t want = b->job->vs ? DEFAULT_VS_BYTES : FFT_BYTES;
		uint64_t fb = frame * (complex ? 8 : 4), frames = want / fb ? want / fb : 1;
		const char *kind = op->name + 4;
		char *in = temp_path(b, "%s-%llu", kind, (unsigned long long)c->size);
		char *one = temp_path(b, "%s-%llu-one", kind, (unsigned long long)c->size);
		if (!in || !one)
			goto oom;
		if ((file_size(in) < 0 && make_tones(in, frames, frame, complex) < 0) ||
		    (file_size(one) < 0 && make_tones(one, 1, frame, complex) < 0))
			return -1;
		c->input = in;
		c->tiny = one;
		c->in_bytes = c->bytes = frames * fb;
		c->transforms = (double)frames;
		return 0;
	}
	char *corpus = temp_path(b, "corpus-%llu", (unsigned long long)c->size), *empty = temp_path(b, "empty");
	if (!corpus || !empty)
		goto oom;
	if (file_size(corpus) < 0 && make_corpus(corpus, c->size) < 0)
		return -1;
	if (file_size(empty) < 0 && make_corpus(empty, 0) < 0)
		return -1;
	c->input = corpus;
	c->tiny = empty;
	c->in_bytes = c->bytes = c->size;
	if (op->fam != FAM_DECOMPRESS && op->fam != FAM_AGE_DECRYPT)
		return 0;
	/* What the decoder reads: our own output (the peer reads the same
	 * file, but for age, which reads its own). */
	struct kase enc = *c;
	char kind[32];
	snprintf(kind, sizeof kind, "%s", op->fam == FAM_AGE_DECRYPT ? "age" : op->format);
	enc.op = opdef(op->fam == FAM_AGE_DECRYPT ? "age.encrypt" : op->format[0] == 'z' ? "zstd.compress" :
		       op->format[0] == 'g' ? "gzip.compress" : "lz4.compress");
	snprintf(enc.engine, sizeof enc.engine, "auto");
	char *big = temp_path(b, "%s-%llu-%d", kind, (unsigned long long)c->size, c->level);
	char *small = temp_path(b, "%s-empty-%d", kind, c->level);
	if (!big || !small)
		goto oom;
	int rc = 0;
	if (file_size(big) < 0)
		rc = run_op(b, &enc, corpus, big, &st, &w, err, sizeof err);
	if (!rc && file_size(small) < 0)
		rc = run_op(b, &enc, empty, small, &st, &w, err, sizeof err);
	if (rc < 0) {
		accel_msg_error("%s: cannot make its input: %s", op->name, err);
		return -1;
	}
	c->input = big;
	c->tiny = small;
	c->in_bytes = (uint64_t)file_size(big);
	return 0;
oom:
	accel_msg_error("out of memory");
	return -1;
}

/* Reset the peak resident set of this process (Linux: clear_refs 5), so
 * that ru_maxrss after a case is the case's own; where that is refused it
 * stays the peak so far. */
static void reset_peak_rss(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = write(fd, "5", 1);
		(void)n;
		close(fd);
	}
}

/* One run of the program argv (ours or the peer's) on the case's input,
 * its wall time and CPU time added to s: 0, its exit status, -1 when it
 * did not run or died of a signal, or ACCEL_ENOMEM. */
static int child_run(struct series *s, char *const argv[])
{
	struct rusage ru;
	double t0 = accel_now();
	int st = spawn(argv, NULL, &ru);
	double dt = accel_now() - t0;
	if (st)
		return st;
	s->cpu += tv(ru.ru_utime) + tv(ru.ru_stime);
	return add_sample(s, dt) < 0 ? ACCEL_ENOMEM : 0;
}

/* One run of case c's peer, added to s as child_run adds it: for onnx.run
 * a request to the running infer-direct, its own time of the run. */
static int peer_run(struct kase *c, struct series *s)
{
	double dt, cpu;
	if (c->op->fam != FAM_ONNX)
		return child_run(s, c->peer_argv);
	if (onnx_peer_run(c, &dt, &cpu) < 0)
		return -1;
	s->cpu += cpu;
	return add_sample(s, dt) < 0 ? ACCEL_ENOMEM : 0;
}

/* Measure case c: the set-up run, the warm-up, then the measured runs
 * (ours, our program's and the peer's in turn; for video, ours are our
 * program's: accel-transcode). 0, or -1 after the message. */
int measure(struct bench *b, struct kase *c)
{
	const struct job *job = b->job;
	char err[512];
	uint64_t w = 0;
	struct accel_stream_stats st;
	if (prepare(b, c) < 0)
		return -1;
	const char *peer_in = c->input;
	if (job->vs && c->op->fam == FAM_AGE_DECRYPT) {
		/* age decrypts a file of its own, of the same plaintext. */
		char *theirs = temp_path(b, "age-%llu.age", (unsigned long long)c->size);
		char *plain = temp_path(b, "corpus-%llu", (unsigned long long)c->size);
		char *enc[] = { "age", "-r", b->age_recipient, "-o", theirs, plain, NULL };
		peer_in = NULL;
		if (theirs && plain && on_path("age") && age_keys(b) == 0 &&
		    (file_size(theirs) >= 0 || spawn(enc, NULL, NULL) == 0))
			peer_in = theirs;
	}
	if (job->vs && peer_in && peer_command(b, c, peer_in) < 0)
		c->peer_cmd[0] = 0;
	if (job->vs && peer_in && program_command(b, c, peer_in) < 0)
		c->prog_cmd[0] = 0;
	reset_peak_rss();
	b->child_rss_kib = 0;
	double t0 = accel_now();
	int rc = run_op(b, c, c->tiny, NULL, &st, &w, err, sizeof err);
	c->setup = accel_now() - t0;
	if (rc == ACCEL_ENOTSUP && IS_VIDEO(c->op->fam)) {
		/* A device that cannot run the stage: the case is left out. */
		clear_progress(b);
		accel_msg_warn("%s: %s: not measured", c->op->name, err);
		c->failed = 1;
		return 0;
	}
	int peer = c->peer_cmd[0] != 0, prog = c->prog_cmd[0] != 0, video = IS_VIDEO(c->op->fam);
	char input[64] = "its start-up input", why[256] = "it failed";
	/* onnx.run's peer starts once: its start-up is its model load. */
	if (!rc && peer && (c->op->fam == FAM_ONNX ? onnx_peer_start(c) :
			    start_up(b, c, c->peer_argv, c->peer_in, &c->peer.start, input, sizeof input, why,
				     sizeof why)) < 0) {
		clear_progress(b);
		accel_msg_warn("%s: the peer '%s' failed on %s (%s): no ratio", c->op->name, c->peer_cmd, input, why);
		peer = 0;
	}
	if (!rc && prog &&
	    start_up(b, c, c->prog_argv, -1, &c->prog.start, input, sizeof input, why, sizeof why) < 0) {
		clear_progress(b);
		accel_msg_warn("%s: our program '%s' failed on %s (%s): no ratio", c->op->name, c->prog_cmd, input, why);
		prog = 0;
	}
	struct series spare = { 0 };
	for (int i = 0; !rc && i < job->warmup; i++) {
		rc = run_op(b, c, c->input, NULL, &st, &w, err, sizeof err);
		int ps = prog && !video ? child_run(&spare, c->prog_argv) : 0;
		if (ps > 0 || ps == -1) {
			clear_progress(b);
			accel_msg_warn("%s: our program '%s' failed (exit %d): no ratio", c->op->name, c->prog_cmd, ps);
			prog = 0;
		}
		ps = peer ? peer_run(c, &spare) : 0;
		if (ps > 0 || ps == -1) {
			clear_progress(b);
			accel_msg_warn("%s: the peer '%s' failed (exit %d): no ratio", c->op->name, c->peer_cmd, ps);
			peer = 0;
		}
	}
	free(spare.t);
	double spent = 0;
	for (int i = 0; !rc && (job->repeat ? i < job->repeat : i < 3 || spent < job->time) && i < MAX_SAMPLES; i++) {
		double cpu0 = cpu_self();
		t0 = accel_now();
		rc = run_op(b, c, c->input, NULL, &st, &w, err, sizeof err);
		double dt = accel_now() - t0, cpu = cpu_self() - cpu0;
		c->ours.cpu += cpu;
		spent += dt;
		if (!rc && add_sample(&c->ours, dt) < 0)
			rc = ACCEL_ENOMEM;
		if (!rc && prog && video) {
			/* The same run, as our program's. */
			c->prog.cpu += cpu;
			if (add_sample(&c->prog, dt) < 0)
				rc = ACCEL_ENOMEM;
		}
		int ps = !rc && prog && !video ? child_run(&c->prog, c->prog_argv) : 0;
		if (ps > 0 || ps == -1) {
			clear_progress(b);
			accel_msg_warn("%s: our program '%s' failed (exit %d): no ratio", c->op->name, c->prog_cmd, ps);
			prog = 0;
		} else if (ps < 0) {
			rc = ps;
		}
		ps = !rc && peer ? peer_run(c, &c->peer) : 0;
		if (ps > 0 || ps == -1) {
			clear_progress(b);
			accel_msg_warn("%s: the peer '%s' failed (exit %d): no ratio", c->op->name, c->peer_cmd, ps);
			peer = 0;
		} else if (ps < 0) {
			rc = ps;
		}
	}
	onnx_peer_close();
	if (!peer)
		c->peer_cmd[0] = 0;
	if (!prog)
		c->prog_cmd[0] = 0;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	c->ours.rss_kib = video ? b->child_rss_kib : ru.ru_maxrss;
	c->out_bytes = w;
	if (rc == 0)
		engines_ran(&st, c->ran, sizeof c->ran);
	if (rc == 0 && job->vs)
		reference(b, c);
	if (rc == 0 && job->common.verbose) {
		clear_progress(b);
		fprintf(stderr, "%s: %s on %s, %d runs; the last: ", cli.prog, c->op->name, c->engine, c->ours.n);
		accel_stream_stats_print(&st, stderr);
	}
	if (rc < 0) {
		char sz[32];
		size_text(c, sz, sizeof sz);
		clear_progress(b);
		accel_msg_error("%s on %s, size %s: %s", c->op->name, c->engine, sz, err[0] ? err : accel_strerror(rc));
		return -1;
	}
	return 0;
}

/* min, median and max of `per / t` over the series' times (whole runs:
 * a program's start-up is not taken off). */
struct stats3 rate(const struct series *s, double per)
{
	struct stats3 r = { 0, 0, 0 };
	if (!s->n)
		return r;
	double *t = malloc((size_t)s->n * sizeof *t);
	if (!t)
		return r;
	memcpy(t, s->t, (size_t)s->n * sizeof *t);
	qsort(t, (size_t)s->n, sizeof *t, cmp_double);
	double med = s->n % 2 ? t[s->n / 2] : (t[s->n / 2 - 1] + t[s->n / 2]) / 2;
	r.min = per / t[s->n - 1];
	r.median = per / med;
	r.max = per / t[0];
	free(t);
	return r;
}

/* The 50th, 90th and 99th percentiles of the series' times, by nearest
 * rank: the time of rank ceil(p / 100 * n) in ascending order (zeros for
 * no runs or no memory). */
struct latency percentiles(const struct series *s)
{
	struct latency l = { 0, 0, 0 };
	double *t = s->n ? malloc((size_t)s->n * sizeof *t) : NULL;
	if (!t)
		return l;
	memcpy(t, s->t, (size_t)s->n * sizeof *t);
	qsort(t, (size_t)s->n, sizeof *t, cmp_double);
	l.p50 = t[(50 * s->n + 99) / 100 - 1];
	l.p90 = t[(90 * s->n + 99) / 100 - 1];
	l.p99 = t[(99 * s->n + 99) / 100 - 1];
	free(t);
	return l;
}

double flops_per_transform(const struct kase *c)
{
	double n = (double)c->size;
	/* 5 N log2 N for a complex transform; half of it for a real one
	 * (benchFFT's convention). */
	return (c->op->fft == FFT_C2C ? 5 : 2.5) * n * log2(n);
}
