/*
 * fake_devices.h - a context whose devices come from one fake backend, for
 * the tests of the require language and the reports: a CPU (avx2, aes, 4
 * cores, 8 threads, 32 MiB L3), an NVIDIA GPU (80 GiB, NUMA 0, vulkan, cuda
 * and nvenc usable, Vulkan 1.3.250, fp64), an AMD GPU (48 GiB, NUMA 1,
 * vulkan usable, opencl not, Vulkan 1.2.170) and a software GPU (llvmpipe).
 * Its table of APIs gives nvenc the video encode kind.
 */
#ifndef FAKE_DEVICES_H
#define FAKE_DEVICES_H

#include <stdlib.h>
#include <string.h>
#include "core.h"

#define GiB (1024.0 * 1024 * 1024)

static struct accel_device fake_dev(enum accel_device_class cls, const char *vendor, const char *model,
				    const char *pci, int numa, double memory)
{
	struct accel_device d;
	memset(&d, 0, sizeof d);
	d.cls = cls;
	strcpy(d.vendor, vendor);
	strcpy(d.model, model);
	strcpy(d.pci_address, pci);
	d.numa_node = numa;
	d.memory_bytes = (uint64_t)memory;
	return d;
}

static int fake_devices_probe(struct accel_probe *p)
{
	struct accel_device d = fake_dev(ACCEL_CLASS_CPU, "GenuineIntel", "Fake CPU 9000", "", -1, 0);
	d.flags = ACCEL_CPU_AVX2 | ACCEL_CPU_AES;
	d.packages = 1, d.cores = 4, d.threads = 8, d.numa_nodes = 1;
	d.cache_bytes[2] = 32u << 20;
	strcpy(d.driver, "kernel");
	if (accel_probe_add_device(p, &d) < 0)
		return ACCEL_ENOMEM;

	d = fake_dev(ACCEL_CLASS_GPU, "NVIDIA", "NVIDIA H100 80GB HBM3", "0000:03:00.0", 0, 80 * GiB);
	strcpy(d.driver, "nvidia");
	accel_device_add_api(&d, "vulkan", 1, NULL);
	accel_device_add_api(&d, "cuda", 1, NULL);
	accel_device_add_api(&d, "nvenc", 1, NULL);
	accel_device_set(&d, "api_version", "1.3.250");
	accel_device_set(&d, "fp64", "true");
	accel_device_set_num(&d, "compute_units", 132);
	accel_device_set(&d, "device_file", "/dev/nvidia0");
	if (accel_probe_add_device(p, &d) < 0)
		return ACCEL_ENOMEM;

	d = fake_dev(ACCEL_CLASS_GPU, "AMD", "Radeon Pro W7900", "0000:17:00.0", 1, 48 * GiB);
	strcpy(d.driver, "amdgpu");
	accel_device_add_api(&d, "vulkan", 1, NULL);
	accel_device_add_api(&d, "opencl", 0, "no ICD for this device");
	accel_device_set(&d, "api_version", "1.2.170");
	accel_device_set(&d, "fp64", "false");
	accel_device_set_num(&d, "compute_units", 96);
	if (accel_probe_add_device(p, &d) < 0)
		return ACCEL_ENOMEM;

	d = fake_dev(ACCEL_CLASS_GPU, "Mesa", "llvmpipe (LLVM 15.0.6, 256 bits)", "", -1, 0);
	d.software = 1;
	accel_device_add_api(&d, "vulkan", 1, NULL);
	return accel_probe_add_device(p, &d) < 0 ? ACCEL_ENOMEM : 0;
}

/* What the APIs it reports are for: nvenc makes the NVIDIA GPU a video
 * engine, as the ffmpeg backend's table does for the real one. */
static const struct accel_api_info fake_devices_apis[] = {
	{ "vulkan", ACCEL_API_COMPUTE },
	{ "cuda", ACCEL_API_COMPUTE },
	{ "opencl", ACCEL_API_COMPUTE },
	{ "nvenc", ACCEL_API_VIDEO_ENCODE },
	{ NULL, 0 },
};

static const struct accel_backend fake_devices_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "fakedev", .description = "fake devices for the tests",
	.probe = fake_devices_probe,
	.classes = ACCEL_CLASS_BIT(ACCEL_CLASS_CPU) | ACCEL_CLASS_BIT(ACCEL_CLASS_GPU),
	.apis = fake_devices_apis,
};

/* A context with the built-in backends and fakedev, which has probed. */
static struct accel_ctx *fake_devices_ctx(void)
{
	unsetenv("ACCEL_BACKEND_PATH");
	unsetenv("ACCEL_SYSROOT");
	struct accel_ctx *ctx = accel_ctx_new();
	if (!ctx)
		return NULL;
	/* No device of this machine: the ids of the fake GPUs are the same on
	 * a host with PCI GPUs of its own (ids follow the PCI scan). */
	ctx->sysroot = "/nonexistent/accel-test-sysroot";
	/* Only the built-in backends: the test binary's folder has plugins/. */
	while (ctx->nbackends > 1 && strcmp(ctx->backends[ctx->nbackends - 1].origin, "built-in"))
		ctx->nbackends--;
	struct accel_backend_status *s = &ctx->backends[ctx->nbackends++];
	memset(s, 0, sizeof *s);
	strcpy(s->name, fake_devices_backend.name);
	strcpy(s->origin, "fake_devices.h");
	s->backend = &fake_devices_backend;
	if (accel_probe_backend(ctx, "fakedev") < 0) {
		accel_ctx_free(ctx);
		return NULL;
	}
	return ctx;
}

#endif
