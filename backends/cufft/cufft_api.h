/*
 * cufft_api.h - the few entry points of cuFFT (libcufft.so) and NVRTC
 * (libnvrtc.so) the cufft backend calls, declared here from NVIDIA's
 * documented ABI so that the plugin builds on machines without the CUDA
 * toolkit; the libraries are dlopen'ed at probe time. Sources: cuFFT API
 * reference (cufft.h), NVRTC user guide (nvrtc.h), CUDA 12 and 13. The
 * driver API (libcuda.so.1) is backends/common/cuda_driver.h. Where the
 * toolkit is installed, api_check.c compares every declaration below and
 * there with the real headers at build time.
 *
 * The real result and enum types are C enums whose values are all >= 0,
 * which GCC and Clang give the type unsigned int: hence `unsigned` below.
 */
#ifndef ACCEL_BACKEND_CUFFT_API_H
#define ACCEL_BACKEND_CUFFT_API_H

#include <stddef.h>
#include "../common/cuda_driver.h"

/* cuFFT: cufftResult (0 is CUFFT_SUCCESS), cufftHandle, cufftType_t's C2C,
 * and the directions. cufftComplex is float2: two floats. */
typedef unsigned cufft_result;
typedef int cufft_handle;
struct cufft_complex { float x, y; };
enum {
	CUFFT_API_C2C = 0x29,
	CUFFT_API_FORWARD = -1,
	CUFFT_API_INVERSE = 1,
};

typedef cufft_result (*cufft_plan_many_fn)(cufft_handle *plan, int rank, int *n, int *inembed, int istride,
					   int idist, int *onembed, int ostride, int odist, unsigned type,
					   int batch);
typedef cufft_result (*cufft_exec_c2c_fn)(cufft_handle plan, struct cufft_complex *in, struct cufft_complex *out,
					  int direction);
typedef cufft_result (*cufft_set_stream_fn)(cufft_handle plan, cu_stream stream);
typedef cufft_result (*cufft_destroy_fn)(cufft_handle plan);
typedef cufft_result (*cufft_get_version_fn)(int *version);

struct cufft_lib {
	cufft_plan_many_fn plan_many;
	cufft_exec_c2c_fn exec_c2c;
	cufft_set_stream_fn set_stream;
	cufft_destroy_fn destroy;
	cufft_get_version_fn version;
};

/* NVRTC: nvrtcResult (0 is NVRTC_SUCCESS) and nvrtcProgram. */
typedef unsigned nvrtc_result;
typedef struct _nvrtcProgram *nvrtc_program;

typedef nvrtc_result (*nvrtc_version_fn)(int *major, int *minor);
typedef nvrtc_result (*nvrtc_create_program_fn)(nvrtc_program *prog, const char *src, const char *name,
						int nheaders, const char *const *headers,
						const char *const *include_names);
typedef nvrtc_result (*nvrtc_compile_program_fn)(nvrtc_program prog, int nopts, const char *const *opts);
typedef nvrtc_result (*nvrtc_get_ptx_size_fn)(nvrtc_program prog, size_t *size);
typedef nvrtc_result (*nvrtc_get_ptx_fn)(nvrtc_program prog, char *ptx);
typedef nvrtc_result (*nvrtc_get_program_log_size_fn)(nvrtc_program prog, size_t *size);
typedef nvrtc_result (*nvrtc_get_program_log_fn)(nvrtc_program prog, char *log);
typedef nvrtc_result (*nvrtc_destroy_program_fn)(nvrtc_program *prog);
typedef const char *(*nvrtc_get_error_string_fn)(nvrtc_result result);
typedef nvrtc_result (*nvrtc_get_num_supported_archs_fn)(int *count);
typedef nvrtc_result (*nvrtc_get_supported_archs_fn)(int *archs);

struct nvrtc_lib {
	nvrtc_version_fn version;
	nvrtc_create_program_fn create;
	nvrtc_compile_program_fn compile;
	nvrtc_get_ptx_size_fn ptx_size;
	nvrtc_get_ptx_fn ptx;
	nvrtc_get_program_log_size_fn log_size;
	nvrtc_get_program_log_fn log;
	nvrtc_destroy_program_fn destroy;
	nvrtc_get_error_string_fn error_string;
	nvrtc_get_num_supported_archs_fn num_archs;   /* optional (CUDA 11.2 on) */
	nvrtc_get_supported_archs_fn archs;
};

#endif
