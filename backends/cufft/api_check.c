/*
 * api_check.c - built only where the CUDA toolkit's headers are installed:
 * checks at compile time that each declaration of cufft_api.h and of the
 * driver binding the CUDA backends share (backends/common/cuda_driver.h,
 * which cufft_api.h includes), from which the plugins are built without
 * the toolkit, matches cuda.h, cufft.h and nvrtc.h: the function types of
 * the entry points they dlopen (by their exported names: cuda.h maps
 * cuMemAlloc to cuMemAlloc_v2 ...), the handles, structs and enum values.
 * Nothing here runs.
 */
#include <stddef.h>
#include <cuda.h>
#include <cufft.h>
#include <nvrtc.h>
#include "cufft_api.h"

#define SAME(real, ours) _Static_assert(__builtin_types_compatible_p(__typeof__(&(real)), ours), \
					#real " differs from its declaration in cufft_api.h or cuda_driver.h")
#define TYPE(real, ours) _Static_assert(__builtin_types_compatible_p(real, ours), \
					#real " differs from " #ours " in cufft_api.h or cuda_driver.h")
#define VALUE(real, ours) _Static_assert((long long)(real) == (long long)(ours), \
					 #real " differs from " #ours " in cufft_api.h or cuda_driver.h")

/* backends/common/cuda_driver.h: the driver API of the cuda, cufft and
 * onnxruntime backends. */

TYPE(CUresult, cu_result);
TYPE(CUdevice, cu_device);
TYPE(CUdeviceptr, cu_deviceptr);
TYPE(CUcontext, cu_context);
TYPE(CUstream, cu_stream);
TYPE(CUmodule, cu_module);
TYPE(CUfunction, cu_function);
TYPE(CUdevice_attribute, unsigned);
TYPE(cudaStream_t, cu_stream);

/* CUuuid is a struct of another tag: the same layout as struct cu_uuid. */
_Static_assert(sizeof(CUuuid) == sizeof(struct cu_uuid) && offsetof(CUuuid, bytes) == offsetof(struct cu_uuid, bytes) &&
	       sizeof(((CUuuid *)0)->bytes) == sizeof(((struct cu_uuid *)0)->bytes), "CUuuid's layout");

VALUE(CUDA_SUCCESS, 0);
VALUE(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, CU_ATTR_MULTIPROCESSOR_COUNT);
VALUE(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, CU_ATTR_PCI_BUS_ID);
VALUE(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, CU_ATTR_PCI_DEVICE_ID);
VALUE(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, CU_ATTR_PCI_DOMAIN_ID);
VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, CU_ATTR_CC_MAJOR);
VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, CU_ATTR_CC_MINOR);
VALUE(CU_STREAM_NON_BLOCKING, CU_STREAM_FLAG_NON_BLOCKING);

/* The exported symbols the plugin looks up, with the types cuda.h gives
 * the names that map to them. */
SAME(cuInit, cu_init_fn);
SAME(cuDriverGetVersion, cu_driver_get_version_fn);
SAME(cuDeviceGetCount, cu_device_get_count_fn);
SAME(cuDeviceGet, cu_device_get_fn);
SAME(cuDeviceGetName, cu_device_get_name_fn);
SAME(cuDeviceTotalMem_v2, cu_device_total_mem_fn);
SAME(cuDeviceGetAttribute, cu_device_get_attribute_fn);
/* cuDeviceGetUuid_v2, the name cuda.h maps cuDeviceGetUuid to (drivers
 * before CUDA 11.4 export only the latter, of the same type). */
SAME(cuDeviceGetUuid_v2, cu_result (*)(CUuuid *, cu_device));
SAME(cuGetErrorName, cu_get_error_name_fn);
SAME(cuDevicePrimaryCtxRetain, cu_primary_ctx_retain_fn);
SAME(cuDevicePrimaryCtxRelease_v2, cu_primary_ctx_release_fn);
SAME(cuCtxSetCurrent, cu_ctx_set_current_fn);
SAME(cuStreamCreate, cu_stream_create_fn);
SAME(cuStreamDestroy_v2, cu_stream_destroy_fn);
SAME(cuStreamSynchronize, cu_stream_synchronize_fn);
SAME(cuMemAlloc_v2, cu_mem_alloc_fn);
SAME(cuMemFree_v2, cu_mem_free_fn);
SAME(cuMemHostAlloc, cu_mem_host_alloc_fn);
SAME(cuMemFreeHost, cu_mem_free_host_fn);
SAME(cuMemcpyHtoDAsync_v2, cu_memcpy_htod_async_fn);
SAME(cuMemcpyDtoHAsync_v2, cu_memcpy_dtoh_async_fn);
SAME(cuModuleLoadData, cu_module_load_data_fn);
SAME(cuModuleUnload, cu_module_unload_fn);
SAME(cuModuleGetFunction, cu_module_get_function_fn);
SAME(cuLaunchKernel, cu_launch_kernel_fn);

/* cufft_api.h: cuFFT and NVRTC, the cufft backend's own. */

TYPE(cufftResult, cufft_result);
TYPE(cufftHandle, cufft_handle);
TYPE(cufftType, unsigned);
VALUE(CUFFT_SUCCESS, 0);
VALUE(CUFFT_C2C, CUFFT_API_C2C);
VALUE(CUFFT_FORWARD, CUFFT_API_FORWARD);
VALUE(CUFFT_INVERSE, CUFFT_API_INVERSE);
/* cufft_name() in cufft.c names results by their value. */
VALUE(CUFFT_EXEC_FAILED, 6);
VALUE(CUFFT_INVALID_SIZE, 8);
VALUE(CUFFT_INVALID_DEVICE, 11);
VALUE(CUFFT_NOT_SUPPORTED, 16);
VALUE(CUFFT_NVSHMEM_FAILURE, 20);
/* cufftComplex is CUDA's float2 (a struct of another tag): the same
 * layout as struct cufft_complex, and cufftExecC2C's type with it. */
_Static_assert(sizeof(cufftComplex) == sizeof(struct cufft_complex), "cufftComplex's size");
_Static_assert(offsetof(cufftComplex, x) == offsetof(struct cufft_complex, x) &&
	       offsetof(cufftComplex, y) == offsetof(struct cufft_complex, y), "cufftComplex's layout");
SAME(cufftExecC2C, cufft_result (*)(cufft_handle, cufftComplex *, cufftComplex *, int));
SAME(cufftPlanMany, cufft_plan_many_fn);
SAME(cufftSetStream, cufft_set_stream_fn);
SAME(cufftDestroy, cufft_destroy_fn);
SAME(cufftGetVersion, cufft_get_version_fn);

TYPE(nvrtcResult, nvrtc_result);
TYPE(nvrtcProgram, nvrtc_program);
VALUE(NVRTC_SUCCESS, 0);
SAME(nvrtcVersion, nvrtc_version_fn);
SAME(nvrtcCreateProgram, nvrtc_create_program_fn);
SAME(nvrtcCompileProgram, nvrtc_compile_program_fn);
SAME(nvrtcGetPTXSize, nvrtc_get_ptx_size_fn);
SAME(nvrtcGetPTX, nvrtc_get_ptx_fn);
SAME(nvrtcGetProgramLogSize, nvrtc_get_program_log_size_fn);
SAME(nvrtcGetProgramLog, nvrtc_get_program_log_fn);
SAME(nvrtcDestroyProgram, nvrtc_destroy_program_fn);
SAME(nvrtcGetErrorString, nvrtc_get_error_string_fn);
SAME(nvrtcGetNumSupportedArchs, nvrtc_get_num_supported_archs_fn);
SAME(nvrtcGetSupportedArchs, nvrtc_get_supported_archs_fn);
