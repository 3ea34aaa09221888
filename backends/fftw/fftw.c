/*
 * fftw.c - the "fftw" backend: fft.c2c, fft.r2c and fft.c2r on the CPU device
 * (engine fftw:cpu0) with FFTW's single-precision library. A transform has
 * one batched plan (accel_fft_batch_frames frames, sized to stay in cache;
 * a unit is run as several batches) and a one-frame plan for a short last
 * batch, made by the first worker context that opens it and shared by the
 * others, each with its own buffers; the stream engine's workers are the
 * threads, so FFTW's own threads are not used. Plans are kept as FFTW
 * wisdom in $XDG_CACHE_HOME/accel/fftw3f.wisdom, so measured plans are
 * measured once per machine. Conversion, windows and everything after the
 * transform are libaccel's (accel_fft_load, accel_fft_emit). libfftw3f.so.3
 * is dlopen'ed by the probe (its entry points typed from fftw3.h), so
 * loading the plugin maps no FFTW.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <fftw3.h>
#include <accel/ops/fft.h>

static const char *const fftw_ops[] = { "fft.c2c", "fft.r2c", "fft.c2r", NULL };

/* FFTW's entry points, from libfftw3f.so.3 loaded by the first probe
 * (under load_lock); engines exist only after it. */
#define FFTW_FN(name) __typeof__(fftwf_##name) *name
static struct {
	FFTW_FN(plan_many_dft);
	FFTW_FN(plan_many_dft_r2c);
	FFTW_FN(plan_many_dft_c2r);
	FFTW_FN(execute_dft);
	FFTW_FN(execute_dft_r2c);
	FFTW_FN(execute_dft_c2r);
	FFTW_FN(destroy_plan);
	FFTW_FN(malloc);
	FFTW_FN(free);
	FFTW_FN(alignment_of);
	FFTW_FN(import_wisdom_from_filename);
	FFTW_FN(export_wisdom_to_filename);
	const char *version;
} fw;
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static int loaded;            /* 1: fw is set; -1: load failed (load_why) */
static char load_why[200];

/* Load FFTW once: 0, or -1 with load_why set. */
static int load_fftw(void)
{
	pthread_mutex_lock(&load_lock);
	if (!loaded) {
		void *lib = accel_dlopen("libfftw3f.so.3", load_why, sizeof load_why);
		int missing = 0;
#define SYM(name) (missing |= !(*(void **)&fw.name = dlsym(lib, "fftwf_" #name)))
		if (lib) {
			SYM(plan_many_dft);
			SYM(plan_many_dft_r2c);
			SYM(plan_many_dft_c2r);
			SYM(execute_dft);
			SYM(execute_dft_r2c);
			SYM(execute_dft_c2r);
			SYM(destroy_plan);
			SYM(malloc);
			SYM(free);
			SYM(alignment_of);
			SYM(import_wisdom_from_filename);
			SYM(export_wisdom_to_filename);
			SYM(version);
		}
#undef SYM
		if (lib && missing) {
			snprintf(load_why, sizeof load_why, "libfftw3f.so.3 lacks an entry point this plugin uses");
			dlclose(lib);
		}
		loaded = lib && !missing ? 1 : -1;
	}
	int rc = loaded > 0 ? 0 : -1;
	pthread_mutex_unlock(&load_lock);
	return rc;
}

/* FFTW's planner is not thread-safe: every planner call (plans, wisdom)
 * holds this lock; fftwf_execute* may run on any thread at once. */
static pthread_mutex_t planner = PTHREAD_MUTEX_INITIALIZER;
static int wisdom_read;  /* the wisdom file was imported (under the lock) */

/* A transform's plans, shared by the contexts of every worker that runs
 * it: FFTW's new-array execute functions take any thread's buffers of the
 * plan's alignment at once, so one process plans each transform once, as
 * a program calling FFTW directly does. */
struct plans {
	struct plans *next;
	size_t n, frame, batch;
	int kind;                /* 0 c2c, 1 r2c, 2 c2r */
	int inverse;
	unsigned flags;
	fftwf_plan many, one;
	int refs;
};
static struct plans *shared_plans;  /* under the planner lock */

struct fftw_ctx {
	const struct accel_fft *f;
	size_t batch;            /* frames of the batched plan */
	float *in;
	fftwf_complex *out;
	fftwf_plan many, one;    /* of p */
	struct plans *p;
};

static int fftw_probe(struct accel_probe *p)
{
	if (load_fftw() < 0)
		return accel_probe_fail(p, "%s", load_why);
	int cpu = accel_probe_cpu_device(p);
	if (cpu < 0)
		return accel_probe_fail(p, "no CPU device");
	accel_probe_note(p, "fftw %s", fw.version);
	if (accel_probe_add_engine(p, cpu, NULL) < 0)
		return accel_probe_fail(p, "cannot add the fftw engine");
	return 0;
}

static int fftw_supports(const struct accel_engine *e, const struct accel_op *op, double *prior_mbps,
			 char *reason, size_t len)
{
	if (strcmp(op->name, "fft.c2c") && strcmp(op->name, "fft.r2c") && strcmp(op->name, "fft.c2r")) {
		snprintf(reason, len, "only fft.c2c, fft.r2c and fft.c2r");
		return ACCEL_ENOTSUP;
	}
	/* About 1000 MB/s a core (c2c at N = 1024: 1.0-1.1 GB/s a core on 2
	 * cores of a shared VM, 1.5-2.3 on the 16 of an H100's host), all of
	 * them weighed against a GPU as the cpu backend does. */
	int n = accel_cpu_count();
	*prior_mbps = 1000.0 * n;
	snprintf(reason, len, "FFTW %s on %d core%s", fw.version, n, n == 1 ? "" : "s");
	return 0;
}

/* The wisdom file's path into buf: $XDG_CACHE_HOME/accel/fftw3f.wisdom,
 * else $HOME/.cache/accel/fftw3f.wisdom. -1 when neither is set. */
static int wisdom_path(char *buf, size_t len, int dir_only)
{
	const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	int n;
	if (x && *x)
		n = snprintf(buf, len, "%s/accel%s", x, dir_only ? "" : "/fftw3f.wisdom");
	else if (h && *h)
		n = snprintf(buf, len, "%s/.cache/accel%s", h, dir_only ? "" : "/fftw3f.wisdom");
	else
		return -1;
	return n > 0 && (size_t)n < len ? 0 : -1;
}

/* Write the planner's wisdom: a temporary beside the file, renamed into
 * place, so a reader sees the old file or the new one. A cache that cannot
 * be written is not an error (the plans are remade next time). Lock held. */
static void wisdom_save(void)
{
	char dir[PATH_MAX], path[PATH_MAX], tmp[PATH_MAX + 32];
	if (wisdom_path(dir, sizeof dir, 1) < 0 || wisdom_path(path, sizeof path, 0) < 0)
		return;
	char parent[PATH_MAX];
	snprintf(parent, sizeof parent, "%s", dir);
	char *slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = 0;
		mkdir(parent, 0777);
	}
	mkdir(dir, 0777);
	snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
	if (fw.export_wisdom_to_filename(tmp))
		rename(tmp, path);
	else
		unlink(tmp);
}

static unsigned rigor(const struct accel_fft *f)
{
	return f->plan == ACCEL_PLAN_ESTIMATE ? FFTW_ESTIMATE : f->plan == ACCEL_PLAN_PATIENT ? FFTW_PATIENT : FFTW_MEASURE;
}

/* A plan of `howmany` frames over c->in and c->out: from wisdom when it
 * holds one, else planned (and the wisdom saved). Lock held. */
static fftwf_plan make_plan(struct fftw_ctx *c, int howmany, unsigned extra)
{
	const struct accel_fft *f = c->f;
	int n = (int)f->n, bins = (int)f->bins;
	unsigned flags = rigor(f) | extra;
	for (int pass = flags & FFTW_ESTIMATE ? 1 : 0; pass < 2; pass++) {
		unsigned fl = pass ? flags : flags | FFTW_WISDOM_ONLY;
		fftwf_plan p;
		if (f->r2c)
			p = fw.plan_many_dft_r2c(1, &n, howmany, c->in, NULL, 1, n, c->out, NULL, 1, bins, fl);
		else if (f->c2r)
			/* FFTW_DESTROY_INPUT is c2r's default: c->in is scratch. */
			p = fw.plan_many_dft_c2r(1, &n, howmany, (fftwf_complex *)c->in, NULL, 1, (int)f->frame,
						    (float *)c->out, NULL, 1, n, fl);
		else
			p = fw.plan_many_dft(1, &n, howmany, (fftwf_complex *)c->in, NULL, 1, n, c->out, NULL, 1, n,
						f->inverse ? FFTW_BACKWARD : FFTW_FORWARD, fl);
		if (p) {
			if (pass && !(flags & FFTW_ESTIMATE))
				wisdom_save();
			return p;
		}
	}
	return NULL;
}

/* c's plans: those another context of the same transform made, else
 * made now and shared. 0, ACCEL_ENOTSUP (FFTW made none) or ACCEL_ENOMEM.
 * Lock held. */
static int share_plans(struct fftw_ctx *c)
{
	const struct accel_fft *f = c->f;
	int kind = f->r2c ? 1 : f->c2r ? 2 : 0;
	unsigned flags = rigor(f);
	struct plans *p = shared_plans;
	while (p && (p->n != f->n || p->frame != f->frame || p->batch != c->batch || p->kind != kind ||
		     p->inverse != f->inverse || p->flags != flags))
		p = p->next;
	if (!p) {
		if (!(p = calloc(1, sizeof *p)))
			return ACCEL_ENOMEM;
		*p = (struct plans){ .n = f->n, .frame = f->frame, .batch = c->batch, .kind = kind,
				     .inverse = f->inverse, .flags = flags };
		p->many = make_plan(c, (int)c->batch, 0);
		p->one = p->many && c->batch > 1 ? make_plan(c, 1, FFTW_UNALIGNED) : NULL;
		if (!p->many || (c->batch > 1 && !p->one)) {
			if (p->many)
				fw.destroy_plan(p->many);
			free(p);
			return ACCEL_ENOTSUP;
		}
		p->next = shared_plans;
		shared_plans = p;
	}
	p->refs++;
	c->p = p;
	c->many = p->many;
	c->one = p->one;
	return 0;
}

static void fftw_close(void *ctx)
{
	struct fftw_ctx *c = ctx;
	if (!c)
		return;
	pthread_mutex_lock(&planner);
	if (c->p && --c->p->refs == 0) {
		struct plans **at = &shared_plans;
		while (*at != c->p)
			at = &(*at)->next;
		*at = c->p->next;
		fw.destroy_plan(c->p->many);
		if (c->p->one)
			fw.destroy_plan(c->p->one);
		free(c->p);
	}
	fw.free(c->in);
	fw.free(c->out);
	pthread_mutex_unlock(&planner);
	free(c);
}

static int fftw_open(const struct accel_engine *e, const struct accel_op *op, void **ctx)
{
	const struct accel_fft *f = op->ext;
	if (!f || f->n > INT_MAX || f->unit_frames > INT_MAX)
		return ACCEL_ENOTSUP;
	struct fftw_ctx *c = calloc(1, sizeof *c);
	if (!c)
		return ACCEL_ENOMEM;
	c->f = f;
	c->batch = accel_fft_batch_frames(f);
	size_t per_in = f->r2c ? f->n : 2 * f->frame;
	c->in = fw.malloc(c->batch * per_in * sizeof(float));
	c->out = fw.malloc(c->batch * f->bins * sizeof(fftwf_complex));
	if (!c->in || !c->out) {
		fftw_close(c);
		return ACCEL_ENOMEM;
	}
	pthread_mutex_lock(&planner);
	if (!wisdom_read) {
		char path[PATH_MAX];
		wisdom_read = 1;
		if (wisdom_path(path, sizeof path, 0) == 0)
			fw.import_wisdom_from_filename(path);
	}
	int rc = share_plans(c);
	pthread_mutex_unlock(&planner);
	if (rc < 0) {
		fftw_close(c);
		return rc;
	}
	*ctx = c;
	return 0;
}

/* Whether a unit's samples are already the transform's input, so a batch
 * of them is copied as it is (no conversion, no window): cf32 (c2c, and
 * c2r's half spectra) or f32 (r2c) samples on a little-endian host, no
 * window, frames back to back (hop: a frame) and every frame kept (no
 * --decimate). */
static int direct_in(const struct accel_fft *f)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (f->window != ACCEL_WINDOW_RECT || f->hop != f->frame || f->decimate != 1)
		return 0;
	return f->r2c ? f->type == ACCEL_SAMPLE_F32 : f->type == ACCEL_SAMPLE_CF32;
#else
	(void)f;
	return 0;
#endif
}

/* Whether the spectra are the output rows as they are (complex binary
 * rows, or c2r's real ones, no --shift), so FFTW writes them straight into
 * the unit's output (scaled there for --norm), as accel_fft_emit would
 * copy them. */
static int direct_out(const struct accel_fft *f)
{
	return f->out == ACCEL_FFT_COMPLEX && f->format != ACCEL_FFT_TEXT && !f->shift;
}

static int fftw_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	struct fftw_ctx *c = ctx;
	const struct accel_fft *f = c->f;
	size_t frames = accel_fft_unit_frames(f, u->in.len);
	if (frames > f->unit_frames) {
		snprintf(err, len, "unit of %zu frames, planned for %zu", frames, f->unit_frames);
		return ACCEL_EDATA;
	}
	/* The whole unit's output at once: growing it batch by batch would
	 * copy it and touch fresh pages again at each step. */
	if (u->out_hint && accel_buf_reserve_fill(&u->out, u->out.len + u->out_hint) < 0)
		return ACCEL_ENOMEM;
	size_t kept = accel_fft_kept_frames(f, u->seq, frames), per_in = f->r2c ? f->n : 2 * f->frame;
	size_t per_out = f->c2r ? f->n : 2 * f->bins;  /* floats of one transformed frame */
	int din = direct_in(f), dout = direct_out(f);
	/* c2r destroys its input (FFTW_DESTROY_INPUT): it runs on the unit's
	 * own samples only where nothing can fail once a batch has run (a
	 * retry on another engine needs them): the whole output reserved
	 * first and written straight into the unit. Else they are copied. */
	if (din && f->c2r &&
	    !(dout && u->in.cap && accel_buf_reserve_fill(&u->out, u->out.len + kept * per_out * sizeof(float)) == 0))
		din = 0;
	for (size_t first = 0; first < kept; first += c->batch) {
		size_t k = kept - first < c->batch ? kept - first : c->batch;
		/* A unit's samples in its own buffer (read into it by the
		 * thread now running it, or by the reader: warm in this core's
		 * cache, or in the shared one) are transformed where they lie.
		 * Borrowed from a mapped file they are cold: a full batch is
		 * then copied once into the context's buffer, so that FFTW's
		 * passes over it hit L2, as a program that preads each batch
		 * into a buffer it reuses works (transformed where they lay,
		 * every pass missed: FFTW's time was 1.5 times as long). A
		 * short batch, one-frame plans, reads them in place. The
		 * output goes straight into the unit where its alignment is
		 * that of fftwf_malloc, which the batched plan wants. */
		float *in = c->in, *uin = (float *)(u->in.data + first * f->hop * f->sample_bytes);
		float *out = (float *)c->out, *uout = NULL;
		size_t vals = per_out * k;
		if (din && (k < c->batch || (u->in.cap && fw.alignment_of(uin) == 0)))
			in = uin;
		if (dout) {
			if (accel_buf_reserve(&u->out, u->out.len + vals * sizeof(float)) < 0)
				return ACCEL_ENOMEM;
			uout = (float *)(u->out.data + u->out.len);
			if (k < c->batch || fw.alignment_of(uout) == 0)
				out = uout;
		}
		if (in == c->in && din)
			memcpy(c->in, uin, k * per_in * sizeof(float));
		else if (in == c->in)
			accel_fft_load(f, u->seq, u->in.data, u->in.len, frames, first, k, c->in);
		for (size_t j = 0; j < k; j += k == c->batch ? k : 1) {
			fftwf_plan p = k == c->batch ? c->many : c->one;
			float *i = in + j * per_in, *o = out + j * per_out;
			if (f->r2c)
				fw.execute_dft_r2c(p, i, (fftwf_complex *)o);
			else if (f->c2r)
				fw.execute_dft_c2r(p, (fftwf_complex *)i, o);
			else
				fw.execute_dft(p, (fftwf_complex *)i, (fftwf_complex *)o);
		}
		if (!dout) {
			int rc = accel_fft_emit(f, (const float *)c->out, k, &u->out);
			if (rc < 0)
				return rc;
			continue;
		}
		/* Scaled as accel_fft_emit scales: each float times (float)scale. */
		float *o = uout, sc = (float)f->scale;
		if (out != uout)
			memcpy(o, out, vals * sizeof(float));
		if (f->scale != 1)
			accel_fft_scale(o, o, vals, sc);
		u->out.len += vals * sizeof(float);
	}
	return 0;
}

/* --version: FFTW's own string without its "fftw-" ("3.3.10-sse2-avx"). */
static void fftw_versions(char *buf, size_t len)
{
	if (load_fftw() < 0)
		snprintf(buf, len, "fftw (%s)\n", load_why);
	else
		snprintf(buf, len, "fftw %s\n", strncmp(fw.version, "fftw-", 5) ? fw.version : fw.version + 5);
}

ACCEL_PLUGIN_EXPORT const struct accel_backend accel_backend_fftw = {
	.abi = ACCEL_BACKEND_ABI,
	.name = "fftw",
	.description = "FFTW 3 single precision on the CPU (batched, planned once, wisdom cached)",
	.ops = fftw_ops,
	.probe = fftw_probe,
	.supports = fftw_supports,
	.open = fftw_open,
	.run = fftw_run,
	.close = fftw_close,
	.priority = 50,
	.versions = fftw_versions,
};
