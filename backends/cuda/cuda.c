/*
 * cuda.c - the CUDA backend: GPUs through the driver library (libcuda.so.1,
 * loaded at probe time, never the toolkit's stub): name, compute capability,
 * multiprocessors, memory, PCI bus id, UUID; then NVML (libnvidia-ml.so.1)
 * for temperature, utilization, memory in use, power, NVENC/NVDEC and MIG.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <accel/backend.h>
#include "../common/cuda_driver.h"
#include "nvml_api.h"

static void *sym(void *lib, const char *a, const char *b)
{
	void *f = dlsym(lib, a);
	return f || !b ? f : dlsym(lib, b);
}

/* Load NVML's entry points; 0 or -1 when the library is absent. */
static int nvml_load(struct nvml_api *n)
{
	void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return -1;
	n->init = sym(lib, "nvmlInit_v2", "nvmlInit");
	n->count = sym(lib, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
	n->handle = sym(lib, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
	n->pci = sym(lib, "nvmlDeviceGetPciInfo_v3", NULL);
	n->temperature = sym(lib, "nvmlDeviceGetTemperature", NULL);
	n->utilization = sym(lib, "nvmlDeviceGetUtilizationRates", NULL);
	n->memory = sym(lib, "nvmlDeviceGetMemoryInfo", NULL);
	n->power = sym(lib, "nvmlDeviceGetPowerUsage", NULL);
	n->encoder_capacity = sym(lib, "nvmlDeviceGetEncoderCapacity", NULL);
	n->decoder_utilization = sym(lib, "nvmlDeviceGetDecoderUtilization", NULL);
	n->mig_mode = sym(lib, "nvmlDeviceGetMigMode", NULL);
	n->driver_version = sym(lib, "nvmlSystemGetDriverVersion", NULL);
	return n->init && n->count && n->handle && n->pci ? 0 : -1;
}

/* Add what NVML knows to the GPUs already found, matched by PCI address. */
static void nvml_probe(struct accel_probe *p, const char *why_absent)
{
	struct nvml_api n;
	memset(&n, 0, sizeof n);
	unsigned count = 0;
	int ok = nvml_load(&n) == 0 && n.init() == 0 && n.count(&count) == 0;
	for (int i = 0; ; i++) {
		struct accel_device *d = accel_probe_device(p, i);
		if (!d)
			break;
		if (d->cls != ACCEL_CLASS_GPU || !accel_device_get(d, "cuda_driver_version"))
			continue;
		if (!ok) {
			accel_device_add_api(d, "nvml", 0, why_absent);
			continue;
		}
		for (unsigned k = 0; k < count; k++) {
			nvml_device h;
			struct nvml_pci_info pci;
			char addr[16];
			if (n.handle(k, &h) || n.pci(h, &pci))
				continue;
			snprintf(addr, sizeof addr, "%04x:%02x:%02x.0", pci.domain & 0xffff, pci.bus & 0xff, pci.device & 0x1f);
			if (strcmp(addr, d->pci_address))
				continue;
			accel_device_add_api(d, "nvml", 1, NULL);
			unsigned v = 0, cur = 0, pend = 0, period = 0;
			struct nvml_utilization u;
			struct nvml_memory m;
			if (n.temperature && !n.temperature(h, 0, &v))
				accel_device_set_num(d, "temperature_celsius", v);
			if (n.utilization && !n.utilization(h, &u))
				accel_device_set_num(d, "utilization_percent", u.gpu);
			if (n.memory && !n.memory(h, &m))
				accel_device_set_num(d, "memory_used_bytes", (double)m.used);
			if (n.power && !n.power(h, &v))
				accel_device_set_num(d, "power_watts", v / 1000.0);
			/* NVENC: capacity for H.264 (0) > 0; NVDEC: the query is supported. */
			accel_device_set(d, "nvenc", n.encoder_capacity && !n.encoder_capacity(h, 0, &v) && v > 0 ? "true" : "false");
			accel_device_set(d, "nvdec", n.decoder_utilization && !n.decoder_utilization(h, &v, &period) ? "true" : "false");
			if (n.mig_mode && !n.mig_mode(h, &cur, &pend))
				accel_device_set(d, "mig_mode", cur ? "enabled" : "disabled");
		}
	}
}

static int cuda_probe(struct accel_probe *p)
{
	/* The driver would see this host, not the recorded tree. */
	if (accel_probe_sysroot(p)[0])
		return accel_probe_fail(p, "not run: ACCEL_SYSROOT is set");
	char why[300];
	const struct cu_driver *cu = cu_driver_load(why, sizeof why);
	struct cu_scan *s = NULL;
	int rc = cu ? cu_driver_scan(&s, why, sizeof why) : ACCEL_ENOTSUP;
	if (rc < 0)
		return rc == ACCEL_ENOMEM ? rc : accel_probe_fail(p, "%s", why);
	for (int i = 0; i < s->n; i++) {
		struct cu_gpu *g = &s->gpu[i];
		struct accel_device d;
		char buf[32];
		cu_gpu_describe(g, &d);
		snprintf(buf, sizeof buf, "%d.%d", s->driver_version / 1000, s->driver_version % 1000 / 10);
		accel_device_set(&d, "cuda_driver_version", buf);
		if (g->uuid[0])
			accel_device_set(&d, "uuid", g->uuid);
		accel_pci_locality(&d, accel_probe_sysroot(p));
		int k = accel_probe_add_device(p, &d);
		if (k >= 0)
			accel_probe_add_engine(p, k, NULL);
	}
	free(s);
	nvml_probe(p, "libnvidia-ml.so.1 not found or nvmlInit failed");
	return 0;
}

/* CUDA: discovery only for now; cuFFT and NVENC come with their programs. */
static const struct accel_api_info cuda_apis[] = {
	{ "cuda", ACCEL_API_COMPUTE },
	{ "nvml", ACCEL_API_INVENTORY },
	{ NULL, 0 },
};

ACCEL_PLUGIN_EXPORT const struct accel_backend accel_backend_cuda = {
	.abi = ACCEL_BACKEND_ABI,
	.name = "cuda",
	.description = "NVIDIA GPUs through the CUDA driver (libcuda.so.1) and NVML (libnvidia-ml.so.1)",
	.ops = NULL,
	.probe = cuda_probe,
	.classes = ACCEL_CLASS_BIT(ACCEL_CLASS_GPU) | ACCEL_CLASS_BIT(ACCEL_CLASS_VIDEO),
	.priority = 10,
	.apis = cuda_apis,
};
