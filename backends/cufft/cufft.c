/*
 * cufft.c - the "cufft" backend: fft.c2c and fft.r2c with cuFFT on each
 * CUDA GPU (engine cufft:gpuN). The driver (libcuda.so.1), cuFFT
 * (libcufft.so) and NVRTC (libnvrtc.so) are dlopen'ed at probe time, so
 * the plugin loads everywhere and a machine without them has no engine and
 * a reason.
 *
 * With NVRTC the whole chain runs on the GPU: a unit's raw samples and the
 * numbers of its kept frames go up, chain_load (chain.cu) converts and
 * windows them, cuFFT transforms them in place (one C2C plan of the unit's
 * kept frames; real input with a zero imaginary part), chain_reduce makes
 * the finished rows, and only those come down. Without NVRTC (or with
 * ACCEL_CUFFT_CHAIN=host) the host converts and reduces (accel_fft_load,
 * accel_fft_emit) and the GPU only transforms.
 *
 * The engine retains the device's primary context at its first open and
 * keeps it, with chain.cu's module loaded into it once, until the engine is
 * released (accel_ctx_free): a process that runs several jobs (a library's
 * caller, accel-bench) starts the device once, not once a job. Each worker
 * context makes it current on its thread and owns a stream, pinned staging
 * buffers, device buffers and a plan, reused for every unit; run() queues
 * upload, kernels, transform and download on its stream and waits for it
 * once. The stream engine keeps queue_depth units in flight per engine.
 * Worker contexts idle after their job are kept (eight a process) for
 * the next job of the same engine and shape (struct cufft_shape), which
 * takes one rather than allocating pinned and device memory and planning
 * again.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <accel/ops/fft.h>
#include "cufft_chain.h"
#include "../common/ctx_pool.h"

#define BLOCK 256

static const char *const cufft_ops[] = { "fft.c2c", "fft.r2c", NULL };
/* The prior of an engine running the chain on the device, MB/s of input
 * (with the chain on the host: 2000). */
#define CUFFT_PRIOR_MBPS 6000
/* The most supports() says for any GPU. */
static const struct accel_prior_bound cufft_bounds[] = {
	{ "fft.c2c", CUFFT_PRIOR_MBPS },
	{ "fft.r2c", CUFFT_PRIOR_MBPS },
	{ NULL, 0 },
};

/* The libraries, loaded by the first probe that finds a GPU (under
 * load_lock) and only read after: the driver's table, cuFFT and NVRTC. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static int cufft_loaded;          /* 1: loaded; -1: failed (load_why) */
static char load_why[160];
static const struct cu_driver *cu;
static struct cufft_lib cf;
static struct nvrtc_lib nv;
static int have_nvrtc;
static char nvrtc_why[160];

/* A GPU: found by the probe, the engine's data (freed by release). Under
 * `lock`: its primary context, retained by the first open for the
 * engine's life; the PTX of chain.cu for it, compiled by the first open
 * that wants it, and the module loaded from it into that context. */
struct cufft_gpu {
	struct cu_gpu gpu;
	pthread_mutex_t lock;
	int retained;                 /* context is retained (released by release) */
	cu_context context;
	int ptx_tried;
	char *ptx;
	int module_tried;
	cu_module module;             /* NULL: the chain on the host */
	cu_function load, reduce;
	char why[200];                /* why the chain is not on the device */
};

static const char *cu_name(cu_result r)
{
	return cu_driver_error(cu, r);
}

/* cufftResult names (cuFFT API reference, cufftResult_t; 0xA, 0xC and 0xF
 * are of CUDA 11 and 12). */
static const char *cufft_name(cufft_result r)
{
	static const char *const names[] = {
		"CUFFT_SUCCESS", "CUFFT_INVALID_PLAN", "CUFFT_ALLOC_FAILED", "CUFFT_INVALID_TYPE",
		"CUFFT_INVALID_VALUE", "CUFFT_INTERNAL_ERROR", "CUFFT_EXEC_FAILED", "CUFFT_SETUP_FAILED",
		"CUFFT_INVALID_SIZE", "CUFFT_UNALIGNED_DATA", "CUFFT_INCOMPLETE_PARAMETER_LIST",
		"CUFFT_INVALID_DEVICE", "CUFFT_PARSE_ERROR", "CUFFT_NO_WORKSPACE", "CUFFT_NOT_IMPLEMENTED",
		"CUFFT_LICENSE_ERROR", "CUFFT_NOT_SUPPORTED", "CUFFT_MISSING_DEPENDENCY",
		"CUFFT_NVRTC_FAILURE", "CUFFT_NVJITLINK_FAILURE", "CUFFT_NVSHMEM_FAILURE",
	};
	return r < sizeof names / sizeof *names ? names[r] : "unknown cuFFT error";
}

static void *open_first(const char *const *names, size_t count)
{
	static const char *const dirs[] = { "", "/usr/local/cuda/lib64/" };
	for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++) {
		for (size_t i = 0; i < count; i++) {
			char path[128];
			snprintf(path, sizeof path, "%s%s", dirs[d], names[i]);
			void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
			if (lib)
				return lib;
		}
	}
	return NULL;
}

/* Keep the driver's table d, and dlopen cuFFT (needed) and NVRTC
 * (optional) once: 0, or -1 with load_why set. They are large (0.1 s
 * each): loaded only for a GPU. */
static int load_cufft(const struct cu_driver *d)
{
	pthread_mutex_lock(&load_lock);
	cu = d;
	if (cufft_loaded) {
		pthread_mutex_unlock(&load_lock);
		return cufft_loaded > 0 ? 0 : -1;
	}
	cufft_loaded = -1;
	static const char *const cufft_names[] = { "libcufft.so.12", "libcufft.so.11", "libcufft.so" };
	void *lib = open_first(cufft_names, sizeof cufft_names / sizeof *cufft_names);
	if (!lib) {
		snprintf(load_why, sizeof load_why, "libcufft.so.12, libcufft.so.11 or libcufft.so not found");
		goto out;
	}
	cf.plan_many = (cufft_plan_many_fn)dlsym(lib, "cufftPlanMany");
	cf.exec_c2c = (cufft_exec_c2c_fn)dlsym(lib, "cufftExecC2C");
	cf.set_stream = (cufft_set_stream_fn)dlsym(lib, "cufftSetStream");
	cf.destroy = (cufft_destroy_fn)dlsym(lib, "cufftDestroy");
	cf.version = (cufft_get_version_fn)dlsym(lib, "cufftGetVersion");
	if (!cf.plan_many || !cf.exec_c2c || !cf.set_stream || !cf.destroy || !cf.version) {
		snprintf(load_why, sizeof load_why, "the cuFFT library found lacks cufftPlanMany or its companions");
		goto out;
	}
	have_nvrtc = cufft_nvrtc_load(&nv, nvrtc_why, sizeof nvrtc_why) == 0;
	cufft_loaded = 1;
out:
	pthread_mutex_unlock(&load_lock);
	return cufft_loaded > 0 ? 0 : -1;
}

/* The device the cuda backend added for GPU g (the same PCI address), or
 * the one this probe adds as that backend would. -1 on failure. */
static int find_or_add(struct accel_probe *p, const struct cu_gpu *g)
{
	const struct accel_device *d;
	for (int i = 0; g->pci[0] && (d = accel_probe_device(p, i)) != NULL; i++)
		if (d->cls == ACCEL_CLASS_GPU && !strcmp(d->pci_address, g->pci))
			return i;
	struct accel_device nd;
	cu_gpu_describe(g, &nd);
	accel_pci_locality(&nd, accel_probe_sysroot(p));
	return accel_probe_add_device(p, &nd);
}

static void free_gpu(struct cufft_gpu *g)
{
	pthread_mutex_destroy(&g->lock);
	free(g->ptx);
	free(g);
}

static int cufft_probe(struct accel_probe *p)
{
	/* The driver would see this host, not the recorded tree. */
	if (accel_probe_sysroot(p)[0])
		return accel_probe_fail(p, "not run: ACCEL_SYSROOT is set");
	char why[300];
	const struct cu_driver *d = cu_driver_load(why, sizeof why);
	if (!d)
		return accel_probe_fail(p, "%s", why);
	if (!d->compute)
		return accel_probe_fail(p, "libcuda.so.1 lacks the CUDA driver API this backend needs");
	struct cu_scan *s = NULL;
	int rc = cu_driver_scan(&s, why, sizeof why);
	if (rc < 0)
		return rc == ACCEL_ENOMEM ? rc : accel_probe_fail(p, "%s", why);
	if (load_cufft(d) < 0) {
		free(s);
		return accel_probe_fail(p, "%s", load_why);
	}
	int version = 0, added = 0;
	cf.version(&version);
	for (int j = 0; j < s->n; j++) {
		struct cufft_gpu *g = calloc(1, sizeof *g);
		int i = g ? find_or_add(p, &s->gpu[j]) : -1;
		if (i < 0) {
			free(g);
			continue;
		}
		g->gpu = s->gpu[j];
		pthread_mutex_init(&g->lock, NULL);
		if (!have_nvrtc)
			snprintf(g->why, sizeof g->why, "%s", nvrtc_why);
		if (accel_probe_add_engine(p, i, g) < 0) {
			free_gpu(g);
			continue;
		}
		added++;
		accel_probe_note(p, "cuda: %s (compute capability %d.%d), cuFFT %d%s%s", g->gpu.name, g->gpu.cc_major,
				 g->gpu.cc_minor, version, have_nvrtc ? "" : "; the chain on the host: ",
				 have_nvrtc ? "" : nvrtc_why);
	}
	free(s);
	return added ? 0 : accel_probe_fail(p, "no CUDA device could be added");
}


/* ACCEL_CUFFT_CHAIN=host keeps conversion and reduction on the host. */
static int host_chain_asked(void)
{
	const char *v = getenv("ACCEL_CUFFT_CHAIN");
	return v && !strcmp(v, "host");
}

static int cufft_supports(const struct accel_engine *e, const struct accel_op *op, double *prior_mbps,
			  char *reason, size_t len)
{
	struct cufft_gpu *g = e->data;
	if (strcmp(op->name, "fft.c2c") && strcmp(op->name, "fft.r2c")) {
		snprintf(reason, len, "only fft.c2c and fft.r2c");
		return ACCEL_ENOTSUP;
	}
	const struct accel_fft *f = op->ext;
	/* cufftPlanMany takes int sizes: the unit's frames times N must fit. */
	if (f && (double)accel_fft_kept_frames(f, 0, f->unit_frames) * (double)f->n > 2147483647.0) {
		snprintf(reason, len, "a unit of %zu frames of %zu samples is beyond cufftPlanMany's int sizes",
			 f->unit_frames, f->n);
		return ACCEL_ENOTSUP;
	}
	/* NVRTC missing, or (seen by a later route of this process) the
	 * kernels that did not compile or load. */
	char why[sizeof g->why] = "";
	if (host_chain_asked()) {
		snprintf(why, sizeof why, "ACCEL_CUFFT_CHAIN=host");
	} else {
		pthread_mutex_lock(&g->lock);
		if (!have_nvrtc || (g->ptx_tried && g->why[0]))
			snprintf(why, sizeof why, "%s", g->why);
		pthread_mutex_unlock(&g->lock);
	}
	if (why[0]) {
		*prior_mbps = 2000;
		snprintf(reason, len, "cuFFT, the chain on the host: %s", why);
		return 0;
	}
	*prior_mbps = CUFFT_PRIOR_MBPS;
	snprintf(reason, len, "cuFFT, the chain on the device (NVRTC)");
	return 0;
}

/* What a worker context is made of for a job beyond its engine: the sizes
 * of its buffers and plan, whether the chain runs on the device, and the
 * window's coefficients (uploaded once at open). Two jobs of equal shapes
 * get contexts that differ in nothing, so a context idle after one job
 * serves the other as one opened for it would: what the runs read of the
 * job they read from the job served then. */
struct cufft_shape {
	size_t n, batch, unit_frames, raw_cap, rows_bytes, bins;
	int r2c, fused;               /* fused: the chain asked for on the device */
	float *win;                   /* a copy of the N coefficients */
};

/* A worker's context. */
struct cufft_ctx {
	const struct accel_engine *e;
	struct cufft_shape shape;     /* what it was opened for */
	int failed;                   /* a run failed: the device's state unknown */
	const struct cufft_gpu *g;
	const struct accel_fft *f;
	struct accel_fft lf;          /* host chain: the job, loaded as complex frames */
	size_t batch;                 /* frames of one transform: a unit's kept frames */
	int fused;                    /* 1: the whole chain on the device */
	int current;                  /* the engine's context was made current: resources to free */
	cu_context context;           /* the engine's (g->context) */
	cu_stream stream;
	cu_function load, reduce;     /* the engine's module's */
	cufft_handle plan;
	int plan_ok;
	cu_deviceptr d_spec, d_raw, d_idx, d_win, d_rows;
	void *h_spec, *h_raw, *h_idx, *h_rows;   /* pinned */
	size_t raw_cap, rows_bytes;
	float *half;                  /* host chain, r2c: the half spectra, compacted */
};

static void close_now(void *ctx)
{
	struct cufft_ctx *c = ctx;
	if (c->current) {
		cu->set_current(c->context);
		if (c->plan_ok)
			cf.destroy(c->plan);
		cu_deviceptr d[] = { c->d_spec, c->d_raw, c->d_idx, c->d_win, c->d_rows };
		for (size_t i = 0; i < sizeof d / sizeof *d; i++)
			if (d[i])
				cu->mem_free(d[i]);
		void *h[] = { c->h_spec, c->h_raw, c->h_idx, c->h_rows };
		for (size_t i = 0; i < sizeof h / sizeof *h; i++)
			if (h[i])
				cu->free_host(h[i]);
		if (c->stream)
			cu->stream_destroy(c->stream);
	}
	free(c->half);
	free(c->shape.win);
	free(c);
}

/* Worker contexts idle since their job ended (ctx_pool.h): eight, two
 * jobs' of queue_depth. accel-bench's in-process runs and a library's
 * caller running many jobs otherwise allocated pinned memory and planned
 * again for every job. */
static struct ctx_pool pool = CTX_POOL_INIT(8, close_now);

/* A context whose runs all succeeded goes to the pool; one that failed is
 * closed. */
static void cufft_close(void *ctx)
{
	struct cufft_ctx *c = ctx;
	if (c && (c->failed || !c->plan_ok))
		close_now(c);
	else if (c)
		ctx_pool_put(&pool, c->e, c);
}

/* The engine's idle contexts are closed, then its module and its hold on
 * the primary context go: every other context from open() is closed by
 * now. */
static void cufft_release(const struct accel_engine *e)
{
	struct cufft_gpu *g = e->data;
	ctx_pool_drop(&pool, e);
	if (g->module && cu->set_current(g->context) == 0)
		cu->module_unload(g->module);
	if (g->retained)
		cu->primary_release(g->gpu.dev);
	free_gpu(g);
}

/* The engine's primary context, retained by the first call: 0, or -1. */
static int engine_context(struct cufft_gpu *g, cu_context *ctx)
{
	pthread_mutex_lock(&g->lock);
	if (!g->retained && cu->primary_retain(&g->context, g->gpu.dev) == 0)
		g->retained = 1;
	*ctx = g->context;
	int ok = g->retained;
	pthread_mutex_unlock(&g->lock);
	return ok ? 0 : -1;
}

/* chain.cu's kernels for c, from the engine's module: compiled by NVRTC
 * and loaded into the engine's context (current on this thread) by the
 * first call, which sets g->why when either failed. 0, or -1 (the host
 * chain then). */
static int load_kernels(struct cufft_ctx *c, struct cufft_gpu *g)
{
	pthread_mutex_lock(&g->lock);
	if (!g->ptx_tried) {
		g->ptx_tried = 1;
		char err[sizeof g->why];
		if (cufft_nvrtc_compile(&nv, g->gpu.cc_major, g->gpu.cc_minor, &g->ptx, err, sizeof err) < 0)
			snprintf(g->why, sizeof g->why, "%s", err);
	}
	if (g->ptx && !g->module_tried) {
		g->module_tried = 1;
		cu_result r = cu->module_load(&g->module, g->ptx);
		if (!r && !(r = cu->module_function(&g->load, g->module, "chain_load")))
			r = cu->module_function(&g->reduce, g->module, "chain_reduce");
		if (r) {
			snprintf(g->why, sizeof g->why, "cuModuleLoadData failed: %s", cu_name(r));
			if (g->module)
				cu->module_unload(g->module);
			g->module = NULL;
		}
	}
	c->load = g->load;
	c->reduce = g->reduce;
	int ok = g->module != NULL;
	pthread_mutex_unlock(&g->lock);
	return ok ? 0 : -1;
}

static int dev_alloc(cu_deviceptr *d, size_t bytes)
{
	return cu->mem_alloc(d, bytes ? bytes : 1) ? -1 : 0;
}

static int host_alloc(void **h, size_t bytes)
{
	return cu->host_alloc(h, bytes ? bytes : 1, 0) ? -1 : 0;
}

/* Raw input of one unit at most: frames overlap by N - hop samples. */
static size_t unit_span(const struct accel_fft *f)
{
	return ((f->unit_frames - 1) * f->hop + f->n) * f->sample_bytes;
}

/* s for job f: 0, or ACCEL_ENOMEM. */
static int shape_of(struct cufft_shape *s, const struct accel_fft *f)
{
	size_t batch = accel_fft_kept_frames(f, 0, f->unit_frames);
	size_t vals = f->out == ACCEL_FFT_COMPLEX ? 2 * f->bins : f->bins;
	*s = (struct cufft_shape){ .n = f->n, .batch = batch, .unit_frames = f->unit_frames, .raw_cap = unit_span(f),
				   .rows_bytes = accel_fft_rows(f, batch) * vals * sizeof(float), .bins = f->bins,
				   .r2c = f->r2c, .fused = have_nvrtc && !host_chain_asked() };
	if (!(s->win = malloc(f->n * sizeof *s->win)))
		return ACCEL_ENOMEM;
	memcpy(s->win, f->win, f->n * sizeof *s->win);
	return 0;
}

/* Whether a and b are equal in every field, the window's bits included. */
static int same_shape(const struct cufft_shape *a, const struct cufft_shape *b)
{
	return a->n == b->n && a->batch == b->batch && a->unit_frames == b->unit_frames && a->raw_cap == b->raw_cap &&
	       a->rows_bytes == b->rows_bytes && a->bins == b->bins && a->r2c == b->r2c && a->fused == b->fused &&
	       !memcmp(a->win, b->win, a->n * sizeof *a->win);
}

/* ctx_pool_take's test: whether idle context ctx was made for a job of
 * the shape `job` (a struct cufft_shape). */
static int fits(void *ctx, const void *job)
{
	return same_shape(&((struct cufft_ctx *)ctx)->shape, job);
}

static int cufft_open(const struct accel_engine *e, const struct accel_op *op, void **ctx)
{
	const struct accel_fft *f = op->ext;
	if (!f)
		return ACCEL_ENOTSUP;
	struct cufft_shape shape;
	if (shape_of(&shape, f) < 0)
		return ACCEL_ENOMEM;
	/* An idle context made for a job of this shape, else a new one. */
	struct cufft_ctx *c = ctx_pool_take(&pool, e, fits, &shape);
	if (c) {
		free(shape.win);
		c->f = f;
		c->lf = *f;
		c->lf.r2c = 0;
		*ctx = c;
		return 0;
	}
	if (!(c = calloc(1, sizeof *c))) {
		free(shape.win);
		return ACCEL_ENOMEM;
	}
	c->shape = shape;
	c->e = e;
	struct cufft_gpu *g = e->data;
	c->g = g;
	c->f = f;
	c->lf = *f;
	c->lf.r2c = 0;
	c->batch = shape.batch;
	if (engine_context(g, &c->context) < 0) {
		close_now(c);
		return ACCEL_EDEVICE;
	}
	c->current = 1;
	size_t spec = c->batch * f->n * 8;
	int bad = cu->set_current(c->context) || cu->stream_create(&c->stream, CU_STREAM_FLAG_NON_BLOCKING) ||
		  dev_alloc(&c->d_spec, spec);
	c->fused = !bad && shape.fused && load_kernels(c, g) == 0;
	if (!bad && c->fused) {
		c->raw_cap = shape.raw_cap;
		c->rows_bytes = shape.rows_bytes;
		bad = dev_alloc(&c->d_raw, c->raw_cap) || host_alloc(&c->h_raw, c->raw_cap) ||
		      dev_alloc(&c->d_idx, f->unit_frames * 4) || host_alloc(&c->h_idx, f->unit_frames * 4) ||
		      dev_alloc(&c->d_rows, c->rows_bytes) || host_alloc(&c->h_rows, c->rows_bytes) ||
		      dev_alloc(&c->d_win, f->n * sizeof(float)) ||
		      cu->htod_async(c->d_win, f->win, f->n * sizeof(float), c->stream) ||
		      cu->stream_sync(c->stream);
	} else if (!bad) {
		bad = host_alloc(&c->h_spec, spec);
		if (!bad && f->r2c && !(c->half = malloc(c->batch * f->bins * 8)))
			bad = 1;
	}
	if (!bad) {
		int n = (int)f->n;
		bad = cf.plan_many(&c->plan, 1, &n, NULL, 1, n, NULL, 1, n, CUFFT_API_C2C, (int)c->batch) != 0;
		c->plan_ok = !bad;
		bad = bad || cf.set_stream(c->plan, c->stream);
	}
	if (bad) {
		close_now(c);
		return ACCEL_EDEVICE;
	}
	*ctx = c;
	return 0;
}

static struct cufft_complex *as_complex(cu_deviceptr d)
{
	return (struct cufft_complex *)(uintptr_t)d;
}

static int cu_fail(char *err, size_t len, const char *call, cu_result r)
{
	snprintf(err, len, "%s failed: %s", call, cu_name(r));
	return ACCEL_EDEVICE;
}

static int transform(struct cufft_ctx *c, char *err, size_t len)
{
	cufft_result r = cf.exec_c2c(c->plan, as_complex(c->d_spec), as_complex(c->d_spec),
				     c->f->inverse ? CUFFT_API_INVERSE : CUFFT_API_FORWARD);
	if (r) {
		snprintf(err, len, "cufftExecC2C failed: %s", cufft_name(r));
		return ACCEL_EDEVICE;
	}
	return 0;
}

static unsigned grid_for(unsigned long long total)
{
	unsigned long long b = (total + BLOCK - 1) / BLOCK;
	return b == 0 ? 1 : b > (1u << 20) ? 1u << 20 : (unsigned)b;
}

/* The whole chain on the device: raw samples up, rows down. */
static int run_fused(struct cufft_ctx *c, struct accel_unit *u, size_t frames, char *err, size_t len)
{
	const struct accel_fft *f = c->f;
	size_t kept = accel_fft_kept_index(f, u->seq, frames, c->h_idx);
	if (!kept)
		return 0;
	if (kept > c->batch) {
		/* Unit 0 keeps the most frames (its first row is always kept). */
		snprintf(err, len, "unit of %zu kept frames, planned for %zu", kept, c->batch);
		return ACCEL_EDATA;
	}
	cu_result r;
	if (u->in.len > c->raw_cap) {
		/* Longer than any unit of this job should be: grown once. */
		cu->mem_free(c->d_raw);
		cu->free_host(c->h_raw);
		c->d_raw = 0;
		c->h_raw = NULL;
		if (dev_alloc(&c->d_raw, u->in.len) || host_alloc(&c->h_raw, u->in.len)) {
			snprintf(err, len, "cannot allocate %zu bytes of staging memory", u->in.len);
			return ACCEL_EDEVICE;
		}
		c->raw_cap = u->in.len;
	}
	memcpy(c->h_raw, u->in.data, u->in.len);
	if ((r = cu->htod_async(c->d_raw, c->h_raw, u->in.len, c->stream)) ||
	    (r = cu->htod_async(c->d_idx, c->h_idx, kept * 4, c->stream)))
		return cu_fail(err, len, "cuMemcpyHtoDAsync", r);
	unsigned long long avail = u->in.len / f->sample_bytes, k = kept, n = f->n, hop = f->hop;
	int type = (int)f->type;
	void *lp[] = { &c->d_raw, &avail, &c->d_idx, &k, &n, &hop, &type, &c->d_win, &c->d_spec };
	if ((r = cu->launch(c->load, grid_for(k * n), 1, 1, BLOCK, 1, 1, 0, c->stream, lp, NULL)))
		return cu_fail(err, len, "cuLaunchKernel (chain_load)", r);
	int rc = transform(c, err, len);
	if (rc < 0)
		return rc;
	size_t nrows = accel_fft_rows(f, kept), vals = f->out == ACCEL_FFT_COMPLEX ? 2 * f->bins : f->bins;
	unsigned long long bins = f->bins, avg = f->average, rot = f->shift ? f->bins - f->bins / 2 : 0;
	int kind = (int)f->out;
	double s = f->scale, off = f->db_offset;
	void *rp[] = { &c->d_spec, &k, &n, &bins, &avg, &rot, &kind, &s, &off, &c->d_rows };
	if ((r = cu->launch(c->reduce, grid_for(nrows * bins), 1, 1, BLOCK, 1, 1, 0, c->stream, rp, NULL)))
		return cu_fail(err, len, "cuLaunchKernel (chain_reduce)", r);
	if ((r = cu->dtoh_async(c->h_rows, c->d_rows, nrows * vals * sizeof(float), c->stream)))
		return cu_fail(err, len, "cuMemcpyDtoHAsync", r);
	if ((r = cu->stream_sync(c->stream)))
		return cu_fail(err, len, "cuStreamSynchronize", r);
	return accel_fft_put_rows(f, c->h_rows, nrows, &u->out);
}

/* cuFFT only: frames converted and windowed on the host, spectra reduced
 * there. */
static int run_host(struct cufft_ctx *c, struct accel_unit *u, size_t frames, char *err, size_t len)
{
	const struct accel_fft *f = c->f;
	size_t kept = accel_fft_load(&c->lf, u->seq, u->in.data, u->in.len, frames, 0, c->batch, c->h_spec);
	if (!kept)
		return 0;
	size_t bytes = kept * f->n * 8;
	cu_result r;
	if ((r = cu->htod_async(c->d_spec, c->h_spec, bytes, c->stream)))
		return cu_fail(err, len, "cuMemcpyHtoDAsync", r);
	int rc = transform(c, err, len);
	if (rc < 0)
		return rc;
	if ((r = cu->dtoh_async(c->h_spec, c->d_spec, bytes, c->stream)))
		return cu_fail(err, len, "cuMemcpyDtoHAsync", r);
	if ((r = cu->stream_sync(c->stream)))
		return cu_fail(err, len, "cuStreamSynchronize", r);
	const float *spec = c->h_spec;
	if (f->r2c) {
		for (size_t j = 0; j < kept; j++)
			memcpy(c->half + j * f->bins * 2, spec + j * f->n * 2, f->bins * 8);
		spec = c->half;
	}
	return accel_fft_emit(f, spec, kept, &u->out);
}

static int cufft_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	struct cufft_ctx *c = ctx;
	size_t frames = accel_fft_unit_frames(c->f, u->in.len);
	if (frames > c->f->unit_frames) {
		snprintf(err, len, "unit of %zu frames, planned for %zu", frames, c->f->unit_frames);
		return ACCEL_EDATA;
	}
	cu_result r = cu->set_current(c->context);
	int rc = r ? cu_fail(err, len, "cuCtxSetCurrent", r) :
		 c->fused ? run_fused(c, u, frames, err, len) : run_host(c, u, frames, err, len);
	if (rc < 0)
		c->failed = 1;
	return rc;
}

static const struct accel_api_info cufft_apis[] = {
	{ "cuda", ACCEL_API_COMPUTE },
	{ NULL, 0 },
};

ACCEL_PLUGIN_EXPORT const struct accel_backend accel_backend_cufft = {
	.abi = ACCEL_BACKEND_ABI,
	.name = "cufft",
	.description = "cuFFT on CUDA GPUs, the chain in kernels compiled by NVRTC (libcuda.so.1, libcufft, libnvrtc loaded at run time)",
	.ops = cufft_ops,
	.probe = cufft_probe,
	.supports = cufft_supports,
	.open = cufft_open,
	.run = cufft_run,
	.close = cufft_close,
	.classes = ACCEL_CLASS_BIT(ACCEL_CLASS_GPU),
	/* After the cuda backend (10), so that it finds the GPUs that backend
	 * added rather than adding them again. */
	.priority = 15,
	.apis = cufft_apis,
	/* Each unit in flight has a worker, whose host copies (the read,
	 * into and out of pinned staging) run beside the others' transfers:
	 * on an H100 at 16 cores, 1 GiB of cf32 at N = 1024 streamed at
	 * 3.1-3.3 GB/s with 2, 3.5-4.2 with 4, 3.9-4.1 with 8. */
	.queue_depth = 4,
	.release = cufft_release,
	.prior_bounds = cufft_bounds,
};
