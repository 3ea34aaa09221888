/*
 * cuda.c - the CUDA backend: GPUs through the driver library (libcuda.so.1,
 * loaded at probe time, never the toolkit's stub): name, compute capability,
 * multiprocessors, memory, PCI bus id, UUID; then NVML (libnvidia-ml.so.1)
 * for temperature, utilization, memory in use, power, NVENC/NVDEC and MIG.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include "accel.h"
#include "cuda_api.h"

#define MAX_GPUS 32

struct cu_gpu {
	char name[128], pci[16], uuid[48];
	size_t mem;
	int cc_major, cc_minor, sms;
};

struct cu_scan {
	struct cu_api api;
	char err[128];
	int n, driver_version;
	struct cu_gpu gpu[MAX_GPUS];
};

static void cu_error(struct cu_scan *s, const char *call, cu_result r)
{
	const char *name = NULL;
	if (s->api.error_name)
		s->api.error_name(r, &name);
	snprintf(s->err, sizeof s->err, "%s failed: %s", call, name ? name : "unknown error");
}

/* cuInit and the device queries (runs bounded: a wedged GPU can hang cuInit). */
static int scan(void *arg)
{
	struct cu_scan *s = arg;
	struct cu_api *c = &s->api;
	cu_result r = c->init(0);
	if (r) {
		cu_error(s, "cuInit", r);
		return ACCEL_ENOTSUP;
	}
	c->driver_version(&s->driver_version);
	int n = 0;
	if ((r = c->count(&n))) {
		cu_error(s, "cuDeviceGetCount", r);
		return ACCEL_ENOTSUP;
	}
	for (int i = 0; i < n && s->n < MAX_GPUS; i++) {
		cu_device d;
		if (c->get(&d, i))
			continue;
		struct cu_gpu *g = &s->gpu[s->n++];
		int dom = 0, bus = 0, dev = 0;
		c->name(g->name, sizeof g->name, d);
		c->total_mem(&g->mem, d);
		c->attribute(&g->cc_major, CU_ATTR_COMPUTE_CAPABILITY_MAJOR, d);
		c->attribute(&g->cc_minor, CU_ATTR_COMPUTE_CAPABILITY_MINOR, d);
		c->attribute(&g->sms, CU_ATTR_MULTIPROCESSOR_COUNT, d);
		if (!c->attribute(&bus, CU_ATTR_PCI_BUS_ID, d) && !c->attribute(&dev, CU_ATTR_PCI_DEVICE_ID, d)) {
			c->attribute(&dom, CU_ATTR_PCI_DOMAIN_ID, d);
			snprintf(g->pci, sizeof g->pci, "%04x:%02x:%02x.0", dom & 0xffff, bus & 0xff, dev & 0x1f);
		}
		unsigned char u[16];
		if (c->uuid && !c->uuid(u, d))
			snprintf(g->uuid, sizeof g->uuid,
				 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
				 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
				 u[13], u[14], u[15]);
	}
	return 0;
}

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
	void *lib = accel_dlopen("libcuda.so.1", why, sizeof why);
	if (!lib)
		return accel_probe_fail(p, "%s", why);
	struct cu_scan *s = calloc(1, sizeof *s);
	if (!s)
		return ACCEL_ENOMEM;
	struct cu_api *c = &s->api;
	c->init = sym(lib, "cuInit", NULL);
	c->driver_version = sym(lib, "cuDriverGetVersion", NULL);
	c->count = sym(lib, "cuDeviceGetCount", NULL);
	c->get = sym(lib, "cuDeviceGet", NULL);
	c->name = sym(lib, "cuDeviceGetName", NULL);
	c->total_mem = sym(lib, "cuDeviceTotalMem_v2", "cuDeviceTotalMem");
	c->attribute = sym(lib, "cuDeviceGetAttribute", NULL);
	c->uuid = sym(lib, "cuDeviceGetUuid_v2", "cuDeviceGetUuid");
	c->error_name = sym(lib, "cuGetErrorName", NULL);
	if (!c->init || !c->driver_version || !c->count || !c->get || !c->name || !c->total_mem || !c->attribute) {
		free(s);
		return accel_probe_fail(p, "libcuda.so.1 lacks the CUDA driver API");
	}
	/* Abandoned on timeout: the scan may still write to s. */
	int rc = accel_call_bounded(scan, s, 0);
	if (rc == ACCEL_EDEVICE)
		return accel_probe_fail(p, "cuInit did not return in time (ACCEL_PROBE_TIMEOUT)");
	if (rc < 0 || !s->n) {
		rc = accel_probe_fail(p, "%s", rc < 0 ? s->err : "no CUDA device");
		free(s);
		return rc;
	}
	for (int i = 0; i < s->n; i++) {
		struct cu_gpu *g = &s->gpu[i];
		struct accel_device d;
		char buf[32];
		memset(&d, 0, sizeof d);
		d.cls = ACCEL_CLASS_GPU;
		d.numa_node = -1;
		snprintf(d.vendor, sizeof d.vendor, "NVIDIA");
		snprintf(d.model, sizeof d.model, "%s", g->name);
		snprintf(d.driver, sizeof d.driver, "nvidia");
		snprintf(d.pci_address, sizeof d.pci_address, "%s", g->pci);
		d.memory_bytes = g->mem;
		accel_device_add_api(&d, "cuda", 1, NULL);
		snprintf(buf, sizeof buf, "%d.%d", g->cc_major, g->cc_minor);
		accel_device_set(&d, "compute_capability", buf);
		accel_device_set_num(&d, "multiprocessors", g->sms);
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

const struct accel_backend accel_backend_cuda = {
	.abi = ACCEL_BACKEND_ABI,
	.name = "cuda",
	.description = "NVIDIA GPUs through the CUDA driver (libcuda.so.1) and NVML (libnvidia-ml.so.1)",
	.ops = NULL,
	.probe = cuda_probe,
	.classes = ACCEL_CLASS_BIT(ACCEL_CLASS_GPU) | ACCEL_CLASS_BIT(ACCEL_CLASS_VIDEO),
	.priority = 10,
	.apis = cuda_apis,
};
