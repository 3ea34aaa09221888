/*
 * fakecuda.c - a test double of the CUDA driver and cuFFT, built as
 * build/tests/fakecuda/libcuda.so.1 and libcufft.so.12, so that
 * tests/fft-cuda.bats runs the cufft plugin's probe, open, run and close on
 * machines without a GPU (LD_LIBRARY_PATH=build/tests/fakecuda). "Device"
 * memory is host memory; copies are done when queued; a kernel launch
 * runs chain.cu's kernels compiled as C (one thread over the whole grid)
 * with the arguments the plugin passed, unpacked as chain.cu declares
 * them; cufftExecC2C runs FFTW (fftw3f). What it cannot check is the GPU
 * itself: real PTX loading, launches, cuFFT.
 *
 * Environment: FAKECUDA_GPUS (devices, default 1), FAKECUDA_FAIL_EXEC=K
 * (the K-th cufftExecC2C of the process fails with CUFFT_EXEC_FAILED),
 * FAKECUDA_NO_INIT=1 (cuInit fails with CUDA_ERROR_NO_DEVICE),
 * FAKECUDA_COUNTS=FILE (at exit, the process's calls that start or keep a
 * device's state appended to FILE: "retain R release L loads M unloads U
 * held H plans P destroyed D", H the primary contexts still retained, P
 * the cuFFT plans made and D those destroyed).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fftw3.h>
#include "../../backends/cufft/cufft_api.h"
#include "../../backends/cufft/chain.cu"

#define EXPORT __attribute__((visibility("default")))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int execs;
static int retains, releases, loads, unloads, held, made, destroyed;   /* under lock */

/* FAKECUDA_COUNTS: the counts, appended at exit. */
__attribute__((destructor)) static void write_counts(void)
{
	const char *path = getenv("FAKECUDA_COUNTS");
	FILE *f = path && *path ? fopen(path, "a") : NULL;
	if (!f)
		return;
	pthread_mutex_lock(&lock);
	fprintf(f, "retain %d release %d loads %d unloads %d held %d plans %d destroyed %d\n", retains, releases, loads,
		unloads, held, made, destroyed);
	pthread_mutex_unlock(&lock);
	fclose(f);
}
static char ctx_token[4], stream_token[64], module_token, fn_load, fn_reduce;

static int gpus(void)
{
	const char *v = getenv("FAKECUDA_GPUS");
	return v ? atoi(v) : 1;
}

EXPORT cu_result cuInit(unsigned flags)
{
	const char *v = getenv("FAKECUDA_NO_INIT");
	return v && *v == '1' ? 100 : 0;
}
/* NVRTC itself dlopens libcuda.so.1 and asks for the driver's private
 * tables: there are none here (CUDA_ERROR_NOT_SUPPORTED). */
EXPORT cu_result cuGetExportTable(const void **table, const void *id)
{
	*table = NULL;
	return 801;
}
EXPORT cu_result cuDriverGetVersion(int *v) { *v = 13000; return 0; }
EXPORT cu_result cuDeviceGetCount(int *n) { *n = gpus(); return 0; }
EXPORT cu_result cuDeviceGet(cu_device *d, int i) { *d = i; return i < gpus() ? 0 : 101; }
EXPORT cu_result cuDeviceGetName(char *name, int len, cu_device d)
{
	snprintf(name, (size_t)len, "Fake CUDA GPU %d", d);
	return 0;
}
EXPORT cu_result cuDeviceTotalMem_v2(size_t *b, cu_device d) { *b = (size_t)8 << 30; return 0; }
EXPORT cu_result cuDeviceGetAttribute(int *v, unsigned attr, cu_device d)
{
	switch (attr) {
	case CU_ATTR_MULTIPROCESSOR_COUNT: *v = 4; return 0;
	case CU_ATTR_PCI_BUS_ID: *v = 0xe0 + d; return 0;
	case CU_ATTR_PCI_DEVICE_ID: *v = 0; return 0;
	case CU_ATTR_PCI_DOMAIN_ID: *v = 0; return 0;
	case CU_ATTR_CC_MAJOR: *v = 8; return 0;
	case CU_ATTR_CC_MINOR: *v = 0; return 0;
	}
	return 1;
}
EXPORT cu_result cuGetErrorName(cu_result r, const char **s)
{
	*s = r == 0 ? "CUDA_SUCCESS" : r == 100 ? "CUDA_ERROR_NO_DEVICE" : r == 2 ? "CUDA_ERROR_OUT_OF_MEMORY" :
	     "CUDA_ERROR_INVALID_VALUE";
	return 0;
}
EXPORT cu_result cuDevicePrimaryCtxRetain(cu_context *c, cu_device d)
{
	*c = (cu_context)(void *)&ctx_token[d & 3];
	pthread_mutex_lock(&lock);
	retains++;
	held++;
	pthread_mutex_unlock(&lock);
	return 0;
}
EXPORT cu_result cuDevicePrimaryCtxRelease_v2(cu_device d)
{
	pthread_mutex_lock(&lock);
	releases++;
	held--;
	pthread_mutex_unlock(&lock);
	return 0;
}
EXPORT cu_result cuCtxSetCurrent(cu_context c) { return c ? 0 : 1; }
EXPORT cu_result cuStreamCreate(cu_stream *s, unsigned flags)
{
	*s = (cu_stream)(void *)&stream_token[0];
	return 0;
}
EXPORT cu_result cuStreamDestroy_v2(cu_stream s) { return 0; }
EXPORT cu_result cuStreamSynchronize(cu_stream s) { return 0; }
EXPORT cu_result cuMemAlloc_v2(cu_deviceptr *d, size_t bytes)
{
	void *p = malloc(bytes);
	*d = (cu_deviceptr)(uintptr_t)p;
	return p ? 0 : 2;
}
EXPORT cu_result cuMemFree_v2(cu_deviceptr d) { free((void *)(uintptr_t)d); return 0; }
EXPORT cu_result cuMemHostAlloc(void **p, size_t bytes, unsigned flags) { *p = malloc(bytes); return *p ? 0 : 2; }
EXPORT cu_result cuMemFreeHost(void *p) { free(p); return 0; }
EXPORT cu_result cuMemcpyHtoDAsync_v2(cu_deviceptr d, const void *h, size_t bytes, cu_stream s)
{
	memcpy((void *)(uintptr_t)d, h, bytes);
	return 0;
}
EXPORT cu_result cuMemcpyDtoHAsync_v2(void *h, cu_deviceptr d, size_t bytes, cu_stream s)
{
	memcpy(h, (const void *)(uintptr_t)d, bytes);
	return 0;
}
/* The image must be PTX of chain.cu (what NVRTC made of it). */
EXPORT cu_result cuModuleLoadData(cu_module *m, const void *image)
{
	if (!strstr(image, ".entry chain_load(") || !strstr(image, ".entry chain_reduce("))
		return 200;
	*m = (cu_module)(void *)&module_token;
	pthread_mutex_lock(&lock);
	loads++;
	pthread_mutex_unlock(&lock);
	return 0;
}
EXPORT cu_result cuModuleUnload(cu_module m)
{
	pthread_mutex_lock(&lock);
	unloads++;
	pthread_mutex_unlock(&lock);
	return 0;
}
EXPORT cu_result cuModuleGetFunction(cu_function *f, cu_module m, const char *name)
{
	if (!strcmp(name, "chain_load"))
		*f = (cu_function)(void *)&fn_load;
	else if (!strcmp(name, "chain_reduce"))
		*f = (cu_function)(void *)&fn_reduce;
	else
		return 500;
	return 0;
}

#define PTR(T, i) ((T)(uintptr_t) * (const cu_deviceptr *)p[i])
#define ULL(i) (*(const unsigned long long *)p[i])
#define INT(i) (*(const int *)p[i])
#define DBL(i) (*(const double *)p[i])

EXPORT cu_result cuLaunchKernel(cu_function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
				unsigned bz, unsigned shared, cu_stream s, void **p, void **extra)
{
	if (!gx || !bx || extra)
		return 1;
	if (f == (cu_function)(void *)&fn_load)
		chain_load(PTR(const unsigned char *, 0), ULL(1), PTR(const unsigned int *, 2), ULL(3), ULL(4), ULL(5),
			   INT(6), PTR(const float *, 7), PTR(float2 *, 8));
	else if (f == (cu_function)(void *)&fn_reduce)
		chain_reduce(PTR(const float2 *, 0), ULL(1), ULL(2), ULL(3), ULL(4), ULL(5), INT(6), DBL(7), DBL(8),
			     PTR(float *, 9));
	else
		return 400;
	return 0;
}

/* cuFFT. */
struct plan {
	int n, batch;
};
static struct plan plans[64];
static int nplans;

EXPORT cufft_result cufftGetVersion(int *v) { *v = 12000; return 0; }
EXPORT cufft_result cufftPlanMany(cufft_handle *h, int rank, int *n, int *inembed, int istride, int idist,
				  int *onembed, int ostride, int odist, unsigned type, int batch)
{
	if (rank != 1 || type != CUFFT_API_C2C || istride != 1 || ostride != 1 || idist != n[0] || odist != n[0] ||
	    batch < 1)
		return 4;
	pthread_mutex_lock(&lock);
	int i = nplans < 64 ? nplans++ : -1;
	if (i >= 0)
		plans[i] = (struct plan){ n[0], batch };
	made++;
	pthread_mutex_unlock(&lock);
	*h = i;
	return i < 0 ? 2 : 0;
}
EXPORT cufft_result cufftSetStream(cufft_handle h, cu_stream s) { return s ? 0 : 4; }
EXPORT cufft_result cufftDestroy(cufft_handle h)
{
	pthread_mutex_lock(&lock);
	destroyed++;
	pthread_mutex_unlock(&lock);
	return 0;
}
EXPORT cufft_result cufftExecC2C(cufft_handle h, struct cufft_complex *in, struct cufft_complex *out, int dir)
{
	const char *v = getenv("FAKECUDA_FAIL_EXEC");
	pthread_mutex_lock(&lock);
	int k = ++execs;
	struct plan pl = plans[h];
	pthread_mutex_unlock(&lock);
	if (v && atoi(v) == k)
		return 6;
	fftwf_plan fp = fftwf_plan_many_dft(1, &pl.n, pl.batch, (fftwf_complex *)in, NULL, 1, pl.n,
					    (fftwf_complex *)out, NULL, 1, pl.n, dir, FFTW_ESTIMATE);
	if (!fp)
		return 5;
	fftwf_execute(fp);
	fftwf_destroy_plan(fp);
	return 0;
}

/* FFTW's planner is not thread-safe, and the fftw plugin plans in the same
 * process (with a lock of its own) while this double does: FFTW's own
 * lock around every planner call, for the whole process. */
__attribute__((constructor)) static void planner_lock(void)
{
	fftwf_make_planner_thread_safe();
}
