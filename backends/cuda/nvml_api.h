/*
 * nvml_api.h - the few NVML entry points the cuda backend's probe calls,
 * declared from NVIDIA's documented ABI (nvml.h) so the plugin builds
 * without it; libnvidia-ml.so.1 is dlopen'ed at run time. The driver API
 * is backends/common/cuda_driver.h.
 */
#ifndef ACCEL_BACKEND_NVML_API_H
#define ACCEL_BACKEND_NVML_API_H

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
