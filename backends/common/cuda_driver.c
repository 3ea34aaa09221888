/*
 * cuda_driver.c - the CUDA driver (libcuda.so.1) loaded at run time, and
 * the scan of its GPUs that the backends using it share.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <accel/backend.h>
#include "cuda_driver.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct cu_driver drv;
static int loaded;
static char load_why[300];

static void load(void)
{
	void *lib = accel_dlopen("libcuda.so.1", load_why, sizeof load_why);
	if (!lib)
		return;
	int missing = 0;
#define SYM(field, type, name) (missing |= !(drv.field = (type)dlsym(lib, name)))
	SYM(init, cu_init_fn, "cuInit");
	SYM(driver_version, cu_driver_get_version_fn, "cuDriverGetVersion");
	SYM(count, cu_device_get_count_fn, "cuDeviceGetCount");
	SYM(get, cu_device_get_fn, "cuDeviceGet");
	SYM(name, cu_device_get_name_fn, "cuDeviceGetName");
	SYM(total_mem, cu_device_total_mem_fn, "cuDeviceTotalMem_v2");
	SYM(attribute, cu_device_get_attribute_fn, "cuDeviceGetAttribute");
	if (missing) {
		snprintf(load_why, sizeof load_why, "libcuda.so.1 lacks the CUDA driver API");
		return;
	}
	drv.uuid = (cu_device_get_uuid_fn)dlsym(lib, "cuDeviceGetUuid_v2");
	if (!drv.uuid)
		drv.uuid = (cu_device_get_uuid_fn)dlsym(lib, "cuDeviceGetUuid");
	drv.error_name = (cu_get_error_name_fn)dlsym(lib, "cuGetErrorName");
	SYM(primary_retain, cu_primary_ctx_retain_fn, "cuDevicePrimaryCtxRetain");
	SYM(primary_release, cu_primary_ctx_release_fn, "cuDevicePrimaryCtxRelease_v2");
	SYM(set_current, cu_ctx_set_current_fn, "cuCtxSetCurrent");
	SYM(stream_create, cu_stream_create_fn, "cuStreamCreate");
	SYM(stream_destroy, cu_stream_destroy_fn, "cuStreamDestroy_v2");
	SYM(stream_sync, cu_stream_synchronize_fn, "cuStreamSynchronize");
	SYM(mem_alloc, cu_mem_alloc_fn, "cuMemAlloc_v2");
	SYM(mem_free, cu_mem_free_fn, "cuMemFree_v2");
	SYM(host_alloc, cu_mem_host_alloc_fn, "cuMemHostAlloc");
	SYM(free_host, cu_mem_free_host_fn, "cuMemFreeHost");
	SYM(htod_async, cu_memcpy_htod_async_fn, "cuMemcpyHtoDAsync_v2");
	SYM(dtoh_async, cu_memcpy_dtoh_async_fn, "cuMemcpyDtoHAsync_v2");
	SYM(module_load, cu_module_load_data_fn, "cuModuleLoadData");
	SYM(module_unload, cu_module_unload_fn, "cuModuleUnload");
	SYM(module_function, cu_module_get_function_fn, "cuModuleGetFunction");
	SYM(launch, cu_launch_kernel_fn, "cuLaunchKernel");
#undef SYM
	drv.compute = !missing;
	loaded = 1;
}

const struct cu_driver *cu_driver_load(char *why, size_t len)
{
	pthread_once(&once, load);
	if (!loaded)
		snprintf(why, len, "%s", load_why);
	return loaded ? &drv : NULL;
}

const char *cu_driver_error(const struct cu_driver *d, cu_result r)
{
	const char *s = NULL;
	if (d->error_name)
		d->error_name(r, &s);
	return s ? s : "unknown CUDA error";
}

static void uuid_text(const struct cu_uuid *id, char *buf, size_t len)
{
	const unsigned char *u = (const unsigned char *)id->bytes;
	snprintf(buf, len, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
		 u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

static int scan(void *arg)
{
	const struct cu_driver *d = &drv;
	struct cu_scan *s = arg;
	const char *call = "cuInit";
	int n = 0;
	cu_result r = d->init(0);
	if (r || (call = "cuDeviceGetCount", r = d->count(&n))) {
		snprintf(s->err, sizeof s->err, "%s failed: %s", call, cu_driver_error(d, r));
		return ACCEL_ENOTSUP;
	}
	d->driver_version(&s->driver_version);
	for (int i = 0; i < n && s->n < CU_MAX_GPUS; i++) {
		struct cu_gpu *g = &s->gpu[s->n];
		int dom = 0, bus = 0, dev = 0;
		struct cu_uuid u;
		if (d->get(&g->dev, i) || d->name(g->name, sizeof g->name, g->dev) ||
		    d->attribute(&g->cc_major, CU_ATTR_CC_MAJOR, g->dev) ||
		    d->attribute(&g->cc_minor, CU_ATTR_CC_MINOR, g->dev))
			continue;
		d->total_mem(&g->mem, g->dev);
		d->attribute(&g->sms, CU_ATTR_MULTIPROCESSOR_COUNT, g->dev);
		if (!d->attribute(&bus, CU_ATTR_PCI_BUS_ID, g->dev) && !d->attribute(&dev, CU_ATTR_PCI_DEVICE_ID, g->dev)) {
			d->attribute(&dom, CU_ATTR_PCI_DOMAIN_ID, g->dev);
			snprintf(g->pci, sizeof g->pci, "%04x:%02x:%02x.0", dom & 0xffff, bus & 0xff, dev & 0x1f);
		}
		if (d->uuid && !d->uuid(&u, g->dev))
			uuid_text(&u, g->uuid, sizeof g->uuid);
		s->n++;
	}
	return 0;
}

int cu_driver_scan(struct cu_scan **out, char *why, size_t len)
{
	/* Never freed when abandoned: the scan may still write to it. */
	struct cu_scan *s = calloc(1, sizeof *s);
	if (!s)
		return ACCEL_ENOMEM;
	int rc = accel_call_bounded(scan, s, 0);
	if (rc == ACCEL_EDEVICE) {
		snprintf(why, len, "cuInit did not return in time (ACCEL_PROBE_TIMEOUT)");
		return ACCEL_ENOTSUP;
	}
	if (rc < 0 || !s->n) {
		snprintf(why, len, "%s", rc == ACCEL_ENOMEM ? "out of memory" : rc < 0 ? s->err : "no CUDA device");
		free(s);
		return rc == ACCEL_ENOMEM ? rc : ACCEL_ENOTSUP;
	}
	*out = s;
	return 0;
}

void cu_gpu_describe(const struct cu_gpu *g, struct accel_device *d)
{
	char buf[32];
	memset(d, 0, sizeof *d);
	d->cls = ACCEL_CLASS_GPU;
	d->numa_node = -1;
	snprintf(d->vendor, sizeof d->vendor, "NVIDIA");
	snprintf(d->model, sizeof d->model, "%s", g->name);
	snprintf(d->driver, sizeof d->driver, "nvidia");
	snprintf(d->pci_address, sizeof d->pci_address, "%s", g->pci);
	d->memory_bytes = g->mem;
	accel_device_add_api(d, "cuda", 1, NULL);
	snprintf(buf, sizeof buf, "%d.%d", g->cc_major, g->cc_minor);
	accel_device_set(d, "compute_capability", buf);
	accel_device_set_num(d, "multiprocessors", g->sms);
}
