/*
 * cuda_api.h - the few CUDA driver API and NVML entry points the probe
 * calls, declared from NVIDIA's documented ABI so the plugin builds without
 * the toolkit; the libraries are dlopen'ed at run time.
 */
#ifndef ACCEL_BACKEND_CUDA_API_H
#define ACCEL_BACKEND_CUDA_API_H

#include <stddef.h>

typedef int cu_result;            /* CUresult: 0 is CUDA_SUCCESS */
typedef int cu_device;            /* CUdevice */

/* CUdevice_attribute values. */
enum {
	CU_ATTR_MULTIPROCESSOR_COUNT = 16,
	CU_ATTR_PCI_BUS_ID = 33,
	CU_ATTR_PCI_DEVICE_ID = 34,
	CU_ATTR_PCI_DOMAIN_ID = 50,
	CU_ATTR_COMPUTE_CAPABILITY_MAJOR = 75,
	CU_ATTR_COMPUTE_CAPABILITY_MINOR = 76,
};

struct cu_api {
	cu_result (*init)(unsigned flags);
	cu_result (*driver_version)(int *v);
	cu_result (*count)(int *n);
	cu_result (*get)(cu_device *d, int ordinal);
	cu_result (*name)(char *name, int len, cu_device d);
	cu_result (*total_mem)(size_t *bytes, cu_device d);
	cu_result (*attribute)(int *v, int attr, cu_device d);
	cu_result (*uuid)(unsigned char uuid[16], cu_device d);
	cu_result (*error_name)(cu_result r, const char **s);
};

typedef int nvml_return;          /* nvmlReturn_t: 0 is NVML_SUCCESS */
typedef struct nvml_device *nvml_device;

struct nvml_pci_info {            /* nvmlPciInfo_t (v3) */
	char bus_id_legacy[16];
	unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
	char bus_id[32];
};
struct nvml_memory { unsigned long long total, free, used; };
struct nvml_utilization { unsigned gpu, memory; };

struct nvml_api {
	nvml_return (*init)(void);
	nvml_return (*count)(unsigned *n);
	nvml_return (*handle)(unsigned i, nvml_device *d);
	nvml_return (*pci)(nvml_device d, struct nvml_pci_info *pci);
	nvml_return (*temperature)(nvml_device d, int sensor, unsigned *c);
	nvml_return (*utilization)(nvml_device d, struct nvml_utilization *u);
	nvml_return (*memory)(nvml_device d, struct nvml_memory *m);
	nvml_return (*power)(nvml_device d, unsigned *mw);
	nvml_return (*encoder_capacity)(nvml_device d, int type, unsigned *cap);
	nvml_return (*decoder_utilization)(nvml_device d, unsigned *util, unsigned *period_us);
	nvml_return (*mig_mode)(nvml_device d, unsigned *current, unsigned *pending);
	nvml_return (*driver_version)(char *v, unsigned len);
};

#endif
