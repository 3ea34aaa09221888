/*
 * vkfft.c - the "vkfft" backend: fft.c2c and fft.r2c with VkFFT, one engine
 * variant per API on each device it reaches (vkfft.opencl:gpu0,
 * vkfft.vulkan:gpu0). The whole chain runs on the device (vkfft.h): a
 * unit's raw samples go up, kernels of ours convert and window them, VkFFT
 * transforms the kept frames as one dispatch of numberBatches frames, and
 * kernels of ours reduce them to finished rows, the only thing that comes
 * down. Real input runs as a complex transform with a zero imaginary part;
 * the half spectrum is kept. Each worker context owns its queue, buffers,
 * kernels and VkFFT application, made once at open; the stream engine
 * keeps queue_depth units in flight per engine.
 */
#include <stdlib.h>
#include <string.h>
#include "vkfft.h"

int vkfft_chain_init(struct vkfft_chain *ch, const struct accel_fft *f, int host_f64)
{
	memset(ch, 0, sizeof *ch);
	ch->type = f->type;
	/* Big-endian doubles are always converted here. */
	ch->host_f64 = (host_f64 && (f->type == ACCEL_SAMPLE_CF64 || f->type == ACCEL_SAMPLE_F64)) ||
		       f->type == ACCEL_SAMPLE_CF64_BE || f->type == ACCEL_SAMPLE_F64_BE;
	ch->f64_be = f->type == ACCEL_SAMPLE_CF64_BE || f->type == ACCEL_SAMPLE_F64_BE;
	if (ch->host_f64)
		ch->type = accel_sample_is_complex(f->type) ? ACCEL_SAMPLE_CF32 : ACCEL_SAMPLE_F32;
	ch->sample_bytes = accel_sample_bytes(ch->type);
	ch->frames = f->unit_frames;
	ch->batch = accel_fft_kept_frames(f, 0, f->unit_frames);
	ch->rows = accel_fft_rows(f, ch->batch);
	ch->vals = f->out == ACCEL_FFT_COMPLEX ? 2 * f->bins : f->bins;
	size_t span = (ch->frames - 1) * f->hop + f->n;
	ch->in_bytes = (span * ch->sample_bytes + 3) & ~(size_t)3;
	ch->rot = f->shift ? f->bins - f->bins / 2 : 0;
	ch->scale = (float)f->scale;
	ch->scale2 = (float)(f->scale * f->scale);
	ch->idx = malloc(ch->frames * sizeof *ch->idx);
	ch->stage = ch->host_f64 ? malloc(ch->in_bytes) : NULL;
	if (!ch->idx || (ch->host_f64 && !ch->stage)) {
		vkfft_chain_free(ch);
		return ACCEL_ENOMEM;
	}
	return 0;
}

void vkfft_chain_free(struct vkfft_chain *ch)
{
	free(ch->idx);
	free(ch->stage);
	ch->idx = NULL;
	ch->stage = NULL;
}

size_t vkfft_chain_unit(struct vkfft_chain *ch, const struct accel_fft *f, const struct accel_unit *u,
			const void **raw, size_t *bytes, size_t *avail)
{
	size_t frames = accel_fft_unit_frames(f, u->in.len);
	if (frames > ch->frames)
		frames = ch->frames;
	size_t kept = accel_fft_kept_index(f, u->seq, frames, ch->idx);
	size_t samples = u->in.len / f->sample_bytes;
	size_t max = ch->in_bytes / ch->sample_bytes;
	if (samples > max)
		samples = max;
	*avail = samples;
	*bytes = samples * ch->sample_bytes;
	*raw = u->in.data;
	if (ch->host_f64) {
		/* Doubles to floats: a value per 8 bytes. */
		size_t vals = *bytes / 4;
		for (size_t i = 0; i < vals; i++) {
			uint8_t b[8];
			double d;
			for (int k = 0; k < 8; k++)
				b[k] = u->in.data[8 * i + (ch->f64_be ? 7 - k : k)];
			memcpy(&d, b, 8);
			ch->stage[i] = (float)d;
		}
		*raw = ch->stage;
	}
	return kept;
}

static const char *const vkfft_ops[] = { "fft.c2c", "fft.r2c", NULL };

/* Engines run on contexts of their own API: a context starts with the
 * variant's tag. */
struct vkfft_ctx {
	int vulkan;
	void *api;
};

static int vkfft_probe(struct accel_probe *p)
{
	/* The drivers would see this host, not the recorded tree. */
	if (accel_probe_sysroot(p)[0])
		return accel_probe_fail(p, "not run: ACCEL_SYSROOT is set");
	int cl = vkfft_cl_probe(p), vk = ACCEL_ENOTSUP;
#ifdef ACCEL_VKFFT_VULKAN
	vk = vkfft_vk_probe(p);
#endif
	if (cl < 0 && vk < 0)
		return accel_probe_fail(p, "no OpenCL or Vulkan device VkFFT can use");
	return 0;
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
	*prior_mbps = e->software ? 50 : 3000;
	snprintf(reason, len, "VkFFT on %s%s", e->variant, e->software ? " (software device)" : "");
	return 0;
}

static int vkfft_open(const struct accel_engine *e, const struct accel_op *op, void **ctx)
{
	if (!op->ext)
		return ACCEL_ENOTSUP;
	struct vkfft_ctx *c = calloc(1, sizeof *c);
	if (!c)
		return ACCEL_ENOMEM;
	c->vulkan = !strcmp(e->variant, "vulkan");
	int rc;
#ifdef ACCEL_VKFFT_VULKAN
	if (c->vulkan)
		rc = vkfft_vk_open(e, op->ext, &c->api);
	else
#endif
		rc = vkfft_cl_open(e, op->ext, &c->api);
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
#ifdef ACCEL_VKFFT_VULKAN
	if (c->vulkan)
		return vkfft_vk_run(c->api, u, err, len);
#endif
	return vkfft_cl_run(c->api, u, err, len);
}

static void vkfft_close(void *ctx)
{
	struct vkfft_ctx *c = ctx;
	if (!c)
		return;
#ifdef ACCEL_VKFFT_VULKAN
	if (c->vulkan)
		vkfft_vk_close(c->api);
	else
#endif
		vkfft_cl_close(c->api);
	free(c);
}

static void vkfft_release(const struct accel_engine *e)
{
#ifdef ACCEL_VKFFT_VULKAN
	if (!strcmp(e->variant, "vulkan")) {
		vkfft_vk_release(e->data);
		return;
	}
#endif
	vkfft_cl_release(e->data);
}

static const struct accel_api_info vkfft_apis[] = {
	{ "opencl", ACCEL_API_COMPUTE },
	{ "vulkan", ACCEL_API_COMPUTE },
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
};
