/*
 * cuda_driver.h - the CUDA driver API (libcuda.so.1) as the backends that
 * call it (cuda, cufft, onnxruntime) see it: the types, values and entry
 * points they use, declared here from NVIDIA's documented ABI (CUDA Driver
 * API reference, cuda.h, CUDA 12 and 13) so that the plugins build without
 * the toolkit; the library is dlopen'ed at probe time. Where the toolkit
 * is installed, backends/cufft/api_check.c compares every declaration
 * below with cuda.h at build time.
 *
 * The real result and enum types are C enums whose values are all >= 0,
 * which GCC and Clang give the type unsigned int: hence `unsigned` below.
 */
#ifndef ACCEL_BACKEND_CUDA_DRIVER_H
#define ACCEL_BACKEND_CUDA_DRIVER_H

#include <stddef.h>

/* CUresult (0 is CUDA_SUCCESS), CUdevice, CUdeviceptr (64-bit builds),
 * CUuuid, and opaque handles with the tags cuda.h gives them. */
typedef unsigned cu_result;
typedef int cu_device;
typedef unsigned long long cu_deviceptr;
struct cu_uuid { char bytes[16]; };
typedef struct CUctx_st *cu_context;
typedef struct CUstream_st *cu_stream;
typedef struct CUmod_st *cu_module;
typedef struct CUfunc_st *cu_function;

/* CUdevice_attribute values and CU_STREAM_NON_BLOCKING. */
enum {
	CU_ATTR_MULTIPROCESSOR_COUNT = 16,
	CU_ATTR_PCI_BUS_ID = 33,
	CU_ATTR_PCI_DEVICE_ID = 34,
	CU_ATTR_PCI_DOMAIN_ID = 50,
	CU_ATTR_CC_MAJOR = 75,
	CU_ATTR_CC_MINOR = 76,
	CU_STREAM_FLAG_NON_BLOCKING = 1,
};

typedef cu_result (*cu_init_fn)(unsigned flags);
typedef cu_result (*cu_driver_get_version_fn)(int *version);
typedef cu_result (*cu_device_get_count_fn)(int *count);
typedef cu_result (*cu_device_get_fn)(cu_device *device, int ordinal);
typedef cu_result (*cu_device_get_name_fn)(char *name, int len, cu_device dev);
typedef cu_result (*cu_device_total_mem_fn)(size_t *bytes, cu_device dev);
typedef cu_result (*cu_device_get_attribute_fn)(int *value, unsigned attrib, cu_device dev);
typedef cu_result (*cu_device_get_uuid_fn)(struct cu_uuid *uuid, cu_device dev);
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

/* The driver's entry points, looked up by their exported names (cuda.h
 * maps several to _v2 symbols: cuMemAlloc_v2, cuMemcpyHtoDAsync_v2 ...).
 * Discovery's (init to attribute) are always there; uuid may be NULL;
 * those of work on a device (primary_retain on) are there when `compute`
 * is 1. */
struct cu_driver {
	cu_init_fn init;
	cu_driver_get_version_fn driver_version;
	cu_device_get_count_fn count;
	cu_device_get_fn get;
	cu_device_get_name_fn name;
	cu_device_total_mem_fn total_mem;
	cu_device_get_attribute_fn attribute;
	cu_device_get_uuid_fn uuid;
	cu_get_error_name_fn error_name;
	int compute;
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

/* The driver, dlopen'ed once per process (the driver, never the toolkit's
 * stub): the table, or NULL with the reason in why[len] ("libcuda.so.1 not
 * found", "libcuda.so.1 lacks the CUDA driver API"). Thread-safe. */
const struct cu_driver *cu_driver_load(char *why, size_t len);

/* The name of result r ("CUDA_ERROR_NO_DEVICE"), or "unknown CUDA error". */
const char *cu_driver_error(const struct cu_driver *d, cu_result r);

/* A GPU the driver lists. */
#define CU_MAX_GPUS 32
struct cu_gpu {
	cu_device dev;
	char name[128];
	char pci[16];                 /* "0000:17:00.0", "" when the driver does not say */
	char uuid[48];                /* "GPU-xxxxxxxx-...", "" when the driver does not say */
	size_t mem;                   /* bytes */
	int cc_major, cc_minor, sms;
};
struct cu_scan {
	int driver_version;           /* 13000: CUDA 13.0 */
	int n;
	struct cu_gpu gpu[CU_MAX_GPUS];
	char err[160];
};

/* cuInit and the GPUs the driver can name (at most CU_MAX_GPUS), once
 * cu_driver_load has returned the table; run bounded (accel_call_bounded:
 * a wedged GPU can hang cuInit). Returns 0 with *scan set (malloc'ed: free
 * it) when it found one; else ACCEL_ENOTSUP with the reason in why[len]
 * ("cuInit failed: CUDA_ERROR_NO_DEVICE", "no CUDA device", "cuInit did
 * not return in time (ACCEL_PROBE_TIMEOUT)"), or ACCEL_ENOMEM. */
int cu_driver_scan(struct cu_scan **scan, char *why, size_t len);

struct accel_device;
/* Describe GPU g as the backends report it: class, vendor, model, driver,
 * PCI address, memory, the cuda API, compute capability and
 * multiprocessors (the caller adds its own and the locality). */
void cu_gpu_describe(const struct cu_gpu *g, struct accel_device *d);

#endif
