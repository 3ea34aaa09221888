/*
 * cufft_api.h - the few entry points of the CUDA driver API (libcuda.so.1),
 * cuFFT (libcufft.so) and NVRTC (libnvrtc.so) the cufft backend calls,
 * declared here from NVIDIA's documented ABI so that the plugin builds on
 * machines without the CUDA toolkit; the libraries are dlopen'ed at probe
 * time. Sources: CUDA Driver API reference (cuda.h), cuFFT API reference
 * (cufft.h), NVRTC user guide (nvrtc.h), CUDA 12 and 13. Where the toolkit
 * is installed, api_check.c compares every declaration below with the real
 * headers at build time.
 *
 * The real result and enum types are C enums whose values are all >= 0,
 * which GCC and Clang give the type unsigned int: hence `unsigned` below.
 */
#ifndef ACCEL_BACKEND_CUFFT_API_H
#define ACCEL_BACKEND_CUFFT_API_H

#include <stddef.h>

/* Driver API: CUresult (0 is CUDA_SUCCESS), CUdevice, CUdeviceptr (64-bit
 * builds), and opaque handles with the tags cuda.h gives them. */
typedef unsigned cu_result;
typedef int cu_device;
typedef unsigned long long cu_deviceptr;
typedef struct CUctx_st *cu_context;
typedef struct CUstream_st *cu_stream;
typedef struct CUmod_st *cu_module;
typedef struct CUfunc_st *cu_function;

/* CUdevice_attribute values, CU_STREAM_NON_BLOCKING, and the result the
 * driver gives for PTX newer than it (CUDA_ERROR_UNSUPPORTED_PTX_VERSION). */
enum {
	CUFFT_CU_ATTR_MULTIPROCESSOR_COUNT = 16,
	CUFFT_CU_ATTR_PCI_BUS_ID = 33,
	CUFFT_CU_ATTR_PCI_DEVICE_ID = 34,
	CUFFT_CU_ATTR_PCI_DOMAIN_ID = 50,
	CUFFT_CU_ATTR_CC_MAJOR = 75,
	CUFFT_CU_ATTR_CC_MINOR = 76,
	CUFFT_CU_STREAM_NON_BLOCKING = 1,
	CUFFT_CU_ERROR_UNSUPPORTED_PTX_VERSION = 222,
};

typedef cu_result (*cu_init_fn)(unsigned flags);
typedef cu_result (*cu_driver_get_version_fn)(int *version);
typedef cu_result (*cu_device_get_count_fn)(int *count);
typedef cu_result (*cu_device_get_fn)(cu_device *device, int ordinal);
typedef cu_result (*cu_device_get_name_fn)(char *name, int len, cu_device dev);
typedef cu_result (*cu_device_total_mem_fn)(size_t *bytes, cu_device dev);
typedef cu_result (*cu_device_get_attribute_fn)(int *value, unsigned attrib, cu_device dev);
typedef cu_result (*cu_get_error_name_fn)(cu_result error, const char **name);
typedef cu_result (*cu_primary_ctx_retain_fn)(cu_context *ctx, cu_device dev);
typedef cu_result (*cu_primary_ctx_release_fn)(cu_device dev);
typedef cu_result (*cu_ctx_set_current_fn)(cu_context ctx);
typedef cu_result (*cu_stream_create_fn)(cu_stream *stream, unsigned flags);
typedef cu_result (*cu_stream_destroy_fn)(cu_stream stream);
typedef cu_result (*cu_stream_synchronize_fn)(cu_stream stream);
typedef cu_result (*cu_mem_alloc_fn)(cu_deviceptr *dptr, size_t bytes);
typedef cu_result (*cu_mem_free_fn)(cu_deviceptr dptr);
typedef cu_result (*cu_mem_host_alloc_fn)(void **pp, size_t bytes, unsigned flags);
typedef cu_result (*cu_mem_free_host_fn)(void *p);
typedef cu_result (*cu_memcpy_htod_async_fn)(cu_deviceptr dst, const void *src, size_t bytes, cu_stream stream);
typedef cu_result (*cu_memcpy_dtoh_async_fn)(void *dst, cu_deviceptr src, size_t bytes, cu_stream stream);
typedef cu_result (*cu_module_load_data_fn)(cu_module *module, const void *image);
typedef cu_result (*cu_module_unload_fn)(cu_module module);
typedef cu_result (*cu_module_get_function_fn)(cu_function *fn, cu_module module, const char *name);
typedef cu_result (*cu_launch_kernel_fn)(cu_function f, unsigned grid_x, unsigned grid_y, unsigned grid_z,
					 unsigned block_x, unsigned block_y, unsigned block_z, unsigned shared_bytes,
					 cu_stream stream, void **params, void **extra);

/* The driver entry points, by their exported names (cuda.h maps several
 * to _v2 symbols: cuMemAlloc_v2, cuMemcpyHtoDAsync_v2 ...). */
struct cu_driver {
	cu_init_fn init;
	cu_driver_get_version_fn driver_version;
	cu_device_get_count_fn count;
	cu_device_get_fn get;
	cu_device_get_name_fn name;
	cu_device_total_mem_fn total_mem;
	cu_device_get_attribute_fn attribute;
	cu_get_error_name_fn error_name;
	cu_primary_ctx_retain_fn primary_retain;
	cu_primary_ctx_release_fn primary_release;
	cu_ctx_set_current_fn set_current;
	cu_stream_create_fn stream_create;
	cu_stream_destroy_fn stream_destroy;
	cu_stream_synchronize_fn stream_sync;
	cu_mem_alloc_fn mem_alloc;
	cu_mem_free_fn mem_free;
	cu_mem_host_alloc_fn host_alloc;
	cu_mem_free_host_fn free_host;
	cu_memcpy_htod_async_fn htod_async;
	cu_memcpy_dtoh_async_fn dtoh_async;
	cu_module_load_data_fn module_load;
	cu_module_unload_fn module_unload;
	cu_module_get_function_fn module_function;
	cu_launch_kernel_fn launch;
};

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
