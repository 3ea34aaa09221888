/*
 * vkfft.c - the "vkfft" backend: fft.c2c and fft.r2c with VkFFT, one engine
 * variant per API on each device it reaches (vkfft.opencl:gpu0,
 * vkfft.vulkan:gpu0). The whole chain runs on the device (vkfft.h): a
 * unit's raw samples go up, kernels of ours convert and window them, VkFFT
 * transforms the kept frames as one dispatch of numberBatches frames, and
 * kernels of ours reduce them to finished rows, the only thing that comes
 * down. Real input runs as a complex transform with a zero imaginary part;
 * the half spectrum is kept. Each worker context owns its queue, buffers,
 * kernels and VkFFT application, made once at open and kept idle after
 * its job for a later job of the same shape (vkfft_shape, ctx_pool.h); the
 * stream engine keeps queue_depth units in flight per engine. This file is the plugin:
 * the code that calls VkFFT lives in its companions (vkfft.h), loaded by
 * the probe, so loading the plugin maps no OpenCL, Vulkan or glslang.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "../common/ctx_pool.h"
#include "vkfft.h"

static const char *const vkfft_ops[] = { "fft.c2c", "fft.r2c", NULL };
/* The prior of a hardware device's engine, MB/s of input. */
#define VKFFT_PRIOR_MBPS 3000

/* The companions (vkfft.h) by variant, and the table each exports; an
 * engine's variant names its companion. Loaded by the first probe (under
 * load_lock) before any engine exists; a later probe (another context)
 * finds the same tables. */
static const struct {
	const char *variant, *file, *table;
} parts[] = {
	{ "opencl", "opencl.so", "vkfft_api_opencl" },
	{ "vulkan", "vulkan.so", "vkfft_api_vulkan" },
};
#define NPARTS (sizeof parts / sizeof parts[0])
static const struct vkfft_api *api[NPARTS];
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

/* A worker context: its engine, its companion's table and the companion's
 * context; failed: a run of it failed (the device's state unknown). */
struct vkfft_ctx {
	const struct accel_engine *e;
	const struct vkfft_api *api;
	void *ctx;
	int failed;
};

static void close_now(void *ctx);

/* Worker contexts idle since their job ended (ctx_pool.h), kept for the
 * next job of the same engine and shape (vkfft_shape): its open takes one
 * (the companion's adopt) instead of making a device, kernels and a VkFFT
 * plan again. Opening one cost 555-629 ms on Vulkan and 194-288 ms on
 * OpenCL (an H200), every job of a process running many (accel-bench's
 * runs, a library's caller). Four are kept: two jobs' of queue_depth. */
static struct ctx_pool pool = CTX_POOL_INIT(4, close_now);

/* Load companion k and its table: the table, or NULL after a note ("opencl:
 * cannot load vkfft/opencl.so: libOpenCL.so.1: cannot open ..."). */
static const struct vkfft_api *load_part(struct accel_probe *p, size_t k)
{
	char why[200];
	void *h = accel_probe_dlopen(p, parts[k].file, why, sizeof why);
	if (!h) {
		accel_probe_note(p, "%s: %s", parts[k].variant, why);
		return NULL;
	}
	const struct vkfft_api *t = dlsym(h, parts[k].table);
	if (!t || t->version != VKFFT_API_VERSION) {
		accel_probe_note(p, "%s: vkfft/%s is of another build of this plugin (%s)", parts[k].variant,
				 parts[k].file, t ? "its table's version differs" : "no table");
		dlclose(h);
		return NULL;
	}
	return t;
}

static int vkfft_probe(struct accel_probe *p)
{
	/* The drivers would see this host, not the recorded tree. */
	if (accel_probe_sysroot(p)[0])
		return accel_probe_fail(p, "not run: ACCEL_SYSROOT is set");
	int found = 0;
	for (size_t k = 0; k < NPARTS; k++) {
		pthread_mutex_lock(&load_lock);
		if (!api[k])
			api[k] = load_part(p, k);
		const struct vkfft_api *t = api[k];
		pthread_mutex_unlock(&load_lock);
		if (t && t->probe(p) == 0)
			found = 1;
	}
	if (!found)
		return accel_probe_fail(p, "no OpenCL or Vulkan device VkFFT can use");
	return 0;
}

/* The table of engine e's companion (its probe added e). */
static const struct vkfft_api *part_of(const struct accel_engine *e)
{
	for (size_t k = 0; k < NPARTS; k++)
		if (!strcmp(e->variant, parts[k].variant))
			return api[k];
	return NULL;
}

static int vkfft_supports(const struct accel_engine *e, const struct accel_op *op, double *prior_mbps,
			  char *reason, size_t len)
{
	if (strcmp(op->name, "fft.c2c") && strcmp(op->name, "fft.r2c")) {
		snprintf(reason, len, "only fft.c2c and fft.r2c");
		return ACCEL_ENOTSUP;
	}
	const struct accel_fft *f = op->ext;
	if (f && f->n > ((size_t)1 << 24)) {
		snprintf(reason, len, "VkFFT here takes N up to 2^24");
		return ACCEL_ENOTSUP;
	}
	/* Debian 12's VkFFT 1.2.26, built here for Vulkan, gives wrong
	 * spectra for sizes it runs through Bluestein's algorithm (a prime
	 * factor above 13; measured on lavapipe): those are not offered. */
	if (f && !strcmp(e->variant, "vulkan")) {
		size_t m = f->n;
		for (size_t p = 2; p <= 13; p++)
			while (m % p == 0)
				m /= p;
		if (m > 1) {
			snprintf(reason, len, "VkFFT's Vulkan path here takes N with prime factors up to 13 only (N = %zu)", f->n);
			return ACCEL_ENOTSUP;
		}
	}
	/* A software device (PoCL) is far slower than FFTW: the router never
	 * ranks it above the CPU unless named. */
	*prior_mbps = e->software ? 50 : VKFFT_PRIOR_MBPS;
	snprintf(reason, len, "VkFFT on %s%s", e->variant, e->software ? " (software device)" : "");
	return 0;
}

/* ctx_pool_take's test: the companion's adopt. */
static int adopt(void *ctx, const void *job)
{
	struct vkfft_ctx *c = ctx;
	return c->api->adopt(c->ctx, job);
}

static int vkfft_open(const struct accel_engine *e, const struct accel_op *op, void **ctx)
{
	const struct vkfft_api *t = part_of(e);
	if (!op->ext || !t)
		return ACCEL_ENOTSUP;
	struct vkfft_ctx *c = ctx_pool_take(&pool, e, adopt, op->ext);
	if (c) {
		*ctx = c;
		return 0;
	}
	if (!(c = calloc(1, sizeof *c)))
		return ACCEL_ENOMEM;
	c->e = e;
	c->api = t;
	int rc = t->open(e, op->ext, &c->ctx);
	if (rc < 0) {
		free(c);
		return rc;
	}
	*ctx = c;
	return 0;
}

static int vkfft_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	struct vkfft_ctx *c = ctx;
	int rc = c->api->run(c->ctx, u, err, len);
	if (rc < 0)
		c->failed = 1;
	return rc;
}

static void close_now(void *ctx)
{
	struct vkfft_ctx *c = ctx;
	c->api->close(c->ctx);
	free(c);
}

/* A context whose runs all succeeded goes to the pool; one that failed is
 * closed. */
static void vkfft_close(void *ctx)
{
	struct vkfft_ctx *c = ctx;
	if (c && c->failed)
		close_now(c);
	else if (c)
		ctx_pool_put(&pool, c->e, c);
}

/* The engine's idle contexts closed, then its data freed (Vulkan: the
 * instance with its last engine, after every device made from it). */
static void vkfft_release(const struct accel_engine *e)
{
	const struct vkfft_api *t = part_of(e);
	ctx_pool_drop(&pool, e);
	if (t)
		t->release(e->data);
}

static const struct accel_api_info vkfft_apis[] = {
	{ "opencl", ACCEL_API_COMPUTE },
	{ "vulkan", ACCEL_API_COMPUTE },
	{ NULL, 0 },
};

/* The most supports() says for any device (a hardware one). */
static const struct accel_prior_bound vkfft_bounds[] = {
	{ "fft.c2c", VKFFT_PRIOR_MBPS },
	{ "fft.r2c", VKFFT_PRIOR_MBPS },
	{ NULL, 0 },
};

ACCEL_PLUGIN_EXPORT const struct accel_backend accel_backend_vkfft = {
	.abi = ACCEL_BACKEND_ABI,
	.name = "vkfft",
	.description = "VkFFT on OpenCL and Vulkan devices (the whole FFT chain on the device: conversion, window, batched FFTs, power, dB, averaging)",
	.ops = vkfft_ops,
	.probe = vkfft_probe,
	.supports = vkfft_supports,
	.open = vkfft_open,
	.run = vkfft_run,
	.close = vkfft_close,
	.classes = ACCEL_CLASS_BIT(ACCEL_CLASS_GPU) | ACCEL_CLASS_BIT(ACCEL_CLASS_NPU),
	/* After the opencl backend (30), so that it finds the devices that
	 * backend added rather than adding them twice. */
	.priority = 35,
	.apis = vkfft_apis,
	.queue_depth = 2,
	.release = vkfft_release,
	.prior_bounds = vkfft_bounds,
};
