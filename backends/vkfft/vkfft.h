/*
 * vkfft.h - what the files of the vkfft backend share: the engine data of
 * each API and the functions of the file that includes VkFFT's header for
 * that API (one file per API: the header is slow to compile).
 */
#ifndef ACCEL_VKFFT_H
#define ACCEL_VKFFT_H

#include "accel.h"

/* OpenCL (vkfft_opencl.c). */
struct vkfft_cl_dev;
/* Find the OpenCL devices, add each (or find it, added by the opencl
 * backend) and an engine vkfft.opencl on it. 0, or ACCEL_ENOTSUP after
 * accel_probe_fail. */
int vkfft_cl_probe(struct accel_probe *p);
int vkfft_cl_open(const struct accel_engine *e, const struct accel_fft *f, void **ctx);
int vkfft_cl_run(void *ctx, struct accel_unit *u, char *err, size_t len);
void vkfft_cl_close(void *ctx);

/* Vulkan (vkfft_vulkan.c). */
int vkfft_vk_probe(struct accel_probe *p);
int vkfft_vk_open(const struct accel_engine *e, const struct accel_fft *f, void **ctx);
int vkfft_vk_run(void *ctx, struct accel_unit *u, char *err, size_t len);
void vkfft_vk_close(void *ctx);

#endif
