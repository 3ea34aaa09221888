/*
 * fft-cuda-bw.c - host <-> device bandwidth for tests/bench/fft.sh's CUDA
 * rows: MB MiB (argument, default 256) copied from pinned host memory
 * (cuMemHostAlloc) to CUDA device 0 and back with cuMemcpyHtoDAsync and
 * cuMemcpyDtoHAsync on one stream, best of 5 each. Prints "HTOD DTOH" in
 * GB/s (1e9 bytes), or one line on stderr and exit 1 without a device.
 * The driver is dlopen'ed, with the declarations of backends/cufft.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "../../backends/cufft/cufft_api.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t bytes = (size_t)(argc > 1 ? atoi(argv[1]) : 256) << 20;
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "fft-cuda-bw: libcuda.so.1 not found\n");
		return 1;
	}
	cu_init_fn init = (cu_init_fn)dlsym(lib, "cuInit");
	cu_device_get_fn get = (cu_device_get_fn)dlsym(lib, "cuDeviceGet");
	cu_primary_ctx_retain_fn retain = (cu_primary_ctx_retain_fn)dlsym(lib, "cuDevicePrimaryCtxRetain");
	cu_ctx_set_current_fn set_current = (cu_ctx_set_current_fn)dlsym(lib, "cuCtxSetCurrent");
	cu_stream_create_fn stream_create = (cu_stream_create_fn)dlsym(lib, "cuStreamCreate");
	cu_stream_synchronize_fn sync = (cu_stream_synchronize_fn)dlsym(lib, "cuStreamSynchronize");
	cu_mem_alloc_fn mem_alloc = (cu_mem_alloc_fn)dlsym(lib, "cuMemAlloc_v2");
	cu_mem_host_alloc_fn host_alloc = (cu_mem_host_alloc_fn)dlsym(lib, "cuMemHostAlloc");
	cu_memcpy_htod_async_fn htod = (cu_memcpy_htod_async_fn)dlsym(lib, "cuMemcpyHtoDAsync_v2");
	cu_memcpy_dtoh_async_fn dtoh = (cu_memcpy_dtoh_async_fn)dlsym(lib, "cuMemcpyDtoHAsync_v2");
	cu_device dev;
	cu_context ctx;
	cu_stream s;
	cu_deviceptr d;
	void *h;
	if (!init || !get || !retain || !set_current || !stream_create || !sync || !mem_alloc || !host_alloc ||
	    !htod || !dtoh || init(0) || get(&dev, 0) || retain(&ctx, dev) || set_current(ctx) ||
	    stream_create(&s, CU_STREAM_FLAG_NON_BLOCKING) || mem_alloc(&d, bytes) || host_alloc(&h, bytes, 0)) {
		fprintf(stderr, "fft-cuda-bw: no CUDA device to measure\n");
		return 1;
	}
	double best[2] = { 1e30, 1e30 };
	for (int i = 0; i < 6; i++) {
		for (int dir = 0; dir < 2; dir++) {
			double t0 = now();
			if ((dir ? dtoh(h, d, bytes, s) : htod(d, h, bytes, s)) || sync(s)) {
				fprintf(stderr, "fft-cuda-bw: the copy failed\n");
				return 1;
			}
			double t = now() - t0;
			/* The first pass warms up (page mapping, clocks). */
			if (i && t < best[dir])
				best[dir] = t;
		}
	}
	printf("%.2f %.2f\n", (double)bytes / best[0] / 1e9, (double)bytes / best[1] / 1e9);
	return 0;
}
