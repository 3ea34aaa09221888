/*
 * vkfft.h - what the files of the vkfft backend share: the engine data of
 * each API and the functions of the file that includes VkFFT's header for
 * that API (one file per API: the header is slow to compile).
 */
#ifndef ACCEL_VKFFT_H
#define ACCEL_VKFFT_H

#include <accel/ops/fft.h>

/*
 * The chain on the device: a unit's raw samples go up once (the span of its
 * frames: overlapping frames share bytes), a "load" kernel converts and
 * windows the kept frames (accel_fft_kept_index) into VkFFT's buffer as
 * complex frames (real input with a zero imaginary part), VkFFT transforms
 * them in place, a "reduce" kernel makes the finished rows (accel.h: the
 * formula of each value) and only the rows come down, written by
 * accel_fft_put_rows. Sizes are those of the largest unit (unit 0 keeps
 * the most frames), so the buffers are made once per worker context.
 */
struct vkfft_chain {
	enum accel_sample type;       /* the type the device reads */
	size_t sample_bytes;          /* its bytes */
	int host_f64;                 /* 1: cf64/f64 (_be) converted to cf32/f32 on the host */
	int f64_be;                   /* 1: those doubles are big-endian */
	size_t frames;                /* frames of a whole unit: index entries */
	size_t batch;                 /* kept frames of the largest unit: VkFFT's numberBatches */
	size_t rows;                  /* rows of the largest unit */
	size_t vals;                  /* floats of one row */
	size_t in_bytes;              /* device input bytes of a whole unit, a multiple of 4 */
	size_t rot;                   /* --shift: row value j is bin (j + rot) mod bins */
	float scale, scale2;          /* f->scale and its square */
	/* Per unit (vkfft_chain_unit). */
	uint32_t *idx;                /* kept frame numbers */
	float *stage;                 /* host_f64: the unit's samples as floats */
};
/* Fill ch for job f; host_f64: the device reads no doubles (big-endian
 * ones it never reads). 0 or ACCEL_ENOMEM. */
int vkfft_chain_init(struct vkfft_chain *ch, const struct accel_fft *f, int host_f64);
/* Only ch's sizes and constants (idx and stage left NULL). */
void vkfft_chain_sizes(struct vkfft_chain *ch, const struct accel_fft *f, int host_f64);
void vkfft_chain_free(struct vkfft_chain *ch);
/* Unit u: ch->idx gets its kept frame numbers; *raw and *bytes what goes
 * up (the unit's input, or ch->stage), *avail its samples. Returns the
 * kept frames (0: the unit writes no row). */
size_t vkfft_chain_unit(struct vkfft_chain *ch, const struct accel_fft *f, const struct accel_unit *u,
			const void **raw, size_t *bytes, size_t *avail);

/*
 * What a worker context is made of for a job, beyond its engine: the
 * chain's sizes and constants, the job's values in the kernels' #defines
 * and arguments (N, hop, bins, averaging, output, dB offset) and the
 * window's coefficients (the buffer written once at open). VkFFT's plan
 * is of N and the chain's batch. Two jobs of equal shapes on one engine
 * get contexts that differ in nothing, so a context kept idle after one
 * job serves the other as one opened for it would (vkfft.c's pool): what
 * a context reads of its job at run time it reads from the job it serves
 * then.
 */
struct vkfft_shape {
	struct vkfft_chain ch;        /* sizes and constants only */
	size_t n, hop, bins;
	unsigned average;
	enum accel_fft_out out;
	double db_offset;
	float *win;                   /* a copy of the N coefficients */
};
/* s for job f (host_f64 as vkfft_chain_init takes it). 0 or ACCEL_ENOMEM. */
int vkfft_shape_init(struct vkfft_shape *s, const struct accel_fft *f, int host_f64);
/* 1 when a and b are equal in every field, the window's bits included. */
int vkfft_shape_equal(const struct vkfft_shape *a, const struct vkfft_shape *b);
void vkfft_shape_free(struct vkfft_shape *s);

/*
 * What each file that includes VkFFT's header for one API offers. Each is
 * built with chain.c into a companion object of the plugin (accel_probe_
 * dlopen): vkfft/opencl.so (vkfft_opencl.c, linked to the OpenCL ICD
 * loader) and vkfft/vulkan.so (vkfft_vulkan.c, linked to the Vulkan loader
 * and glslang), which exports only its table, vkfft_api_opencl or
 * vkfft_api_vulkan. The plugin loads them at probe time: a program that
 * never probes vkfft maps none of those libraries.
 */
#define VKFFT_API_VERSION 3
struct vkfft_api {
	unsigned version;    /* VKFFT_API_VERSION: the plugin and the companion are of one build */
	/* Find the API's devices, add each (or find it, added by the opencl or
	 * vulkan backend) and an engine vkfft.<api> on it. 0, or ACCEL_ENOTSUP
	 * after a note ("opencl: ..."). */
	int (*probe)(struct accel_probe *p);
	int (*open)(const struct accel_engine *e, const struct accel_fft *f, void **ctx);
	int (*run)(void *ctx, struct accel_unit *u, char *err, size_t len);
	void (*close)(void *ctx);
	/* Whether ctx, opened for an earlier job on its engine and idle since
	 * (its last run succeeded), serves job f as a context opened for f
	 * would: equal shapes (vkfft_shape_equal). 1: ctx now serves f; 0:
	 * ctx is unchanged. */
	int (*adopt)(void *ctx, const struct accel_fft *f);
	/* Free an engine's data (Vulkan: the instance with its last engine). */
	void (*release)(void *data);
};
extern __attribute__((visibility("default"))) const struct vkfft_api vkfft_api_opencl;
extern __attribute__((visibility("default"))) const struct vkfft_api vkfft_api_vulkan;

#endif
