/*
 * vkfft.c - the "vkfft" backend: fft.c2c and fft.r2c with VkFFT, one engine
 * variant per API on each device it reaches (vkfft.opencl:gpu0). A unit's
 * frames are converted and windowed on the host (accel_fft_load), uploaded,
 * transformed as one VkFFT dispatch of numberBatches frames, downloaded and
 * reduced by accel_fft_emit. Real input runs as a complex transform with a
 * zero imaginary part; the half spectrum is kept. Each worker context owns
 * its queue, buffers and VkFFT application; the stream engine keeps
 * queue_depth units in flight per engine.
 */
#include <string.h>
#include "vkfft.h"

static const char *const vkfft_ops[] = { "fft.c2c", "fft.r2c", NULL };

static int vkfft_probe(struct accel_probe *p)
{
	return vkfft_cl_probe(p);
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
	/* A software device (PoCL) is far slower than FFTW: the router never
	 * ranks it above the CPU unless named. */
	*prior_mbps = e->software ? 50 : 3000;
	snprintf(reason, len, "VkFFT on %s%s", e->variant, e->software ? " (software device)" : "");
	return 0;
}

static int vkfft_open(const struct accel_engine *e, const struct accel_op *op, void **ctx)
{
	if (op->ext && !strcmp(e->variant, "opencl"))
		return vkfft_cl_open(e, op->ext, ctx);
	return ACCEL_ENOTSUP;
}

static int vkfft_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	return vkfft_cl_run(ctx, u, err, len);
}

static void vkfft_close(void *ctx)
{
	vkfft_cl_close(ctx);
}

static const struct accel_api_info vkfft_apis[] = {
	{ "opencl", ACCEL_API_COMPUTE },
	{ NULL, 0 },
};

const struct accel_backend accel_backend_vkfft = {
	.abi = ACCEL_BACKEND_ABI,
	.name = "vkfft",
	.description = "VkFFT on OpenCL devices (batched FFTs, kernels generated at open)",
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
};
