/*
 * opencl.c - the OpenCL backend: platforms and devices through the ICD loader
 * (libOpenCL.so.1, loaded at probe time): version, compute units, global and
 * max-alloc memory, fp16/fp64, the PCI address where the platform tells it
 * (cl_khr_pci_bus_info, cl_nv_device_attribute_query), and the device's UUID
 * (cl_khr_device_uuid), which a Vulkan view of the same device shares.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <accel/backend.h>

#define MAX_DEVICES 32

/* NVIDIA's PCI query (cl_nv_device_attribute_query). */
#define NV_PCI_BUS_ID 0x4008
#define NV_PCI_SLOT_ID 0x4009
#define NV_PCI_DOMAIN_ID 0x400A

typedef cl_int (*get_platforms_fn)(cl_uint, cl_platform_id *, cl_uint *);
typedef cl_int (*platform_info_fn)(cl_platform_id, cl_platform_info, size_t, void *, size_t *);
typedef cl_int (*get_devices_fn)(cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *);
typedef cl_int (*device_info_fn)(cl_device_id, cl_device_info, size_t, void *, size_t *);

struct cl_dev {
	char platform[64], name[128], vendor[64], version[64], driver[64], pci[16];
	cl_device_type type;
	cl_uint units;
	cl_ulong global, max_alloc;
	int fp16, fp64;
	cl_uchar uuid[CL_UUID_SIZE_KHR];   /* zeros: none */
};

struct cl_scan {
	void *lib;
	char err[320];
	int n;
	struct cl_dev dev[MAX_DEVICES];
	int nplat;
	char plat[16][240];   /* per platform: its name and what it gave */
};

static int has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = strstr(list, word); p; p = strstr(p + 1, word))
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return 1;
	return 0;
}

static void read_device(device_info_fn info, cl_device_id id, struct cl_dev *d)
{
	info(id, CL_DEVICE_NAME, sizeof d->name, d->name, NULL);
	info(id, CL_DEVICE_VENDOR, sizeof d->vendor, d->vendor, NULL);
	info(id, CL_DEVICE_VERSION, sizeof d->version, d->version, NULL);
	info(id, CL_DRIVER_VERSION, sizeof d->driver, d->driver, NULL);
	info(id, CL_DEVICE_TYPE, sizeof d->type, &d->type, NULL);
	info(id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof d->units, &d->units, NULL);
	info(id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof d->global, &d->global, NULL);
	info(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof d->max_alloc, &d->max_alloc, NULL);
	size_t n = 0;
	if (info(id, CL_DEVICE_EXTENSIONS, 0, NULL, &n) == CL_SUCCESS && n) {
		char *ext = calloc(1, n + 1);
		if (ext && info(id, CL_DEVICE_EXTENSIONS, n, ext, NULL) == CL_SUCCESS) {
			d->fp16 = has_word(ext, "cl_khr_fp16");
			d->fp64 = has_word(ext, "cl_khr_fp64");
			if (!has_word(ext, "cl_khr_device_uuid") ||
			    info(id, CL_DEVICE_UUID_KHR, sizeof d->uuid, d->uuid, NULL) != CL_SUCCESS)
				memset(d->uuid, 0, sizeof d->uuid);
			cl_device_pci_bus_info_khr bi;
			cl_uint bus, slot, dom = 0;
			if (has_word(ext, "cl_khr_pci_bus_info") &&
			    info(id, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof bi, &bi, NULL) == CL_SUCCESS)
				snprintf(d->pci, sizeof d->pci, "%04x:%02x:%02x.%x", bi.pci_domain & 0xffff,
					 bi.pci_bus & 0xff, bi.pci_device & 0x1f, bi.pci_function & 7);
			else if (has_word(ext, "cl_nv_device_attribute_query") &&
				 info(id, NV_PCI_BUS_ID, sizeof bus, &bus, NULL) == CL_SUCCESS &&
				 info(id, NV_PCI_SLOT_ID, sizeof slot, &slot, NULL) == CL_SUCCESS) {
				info(id, NV_PCI_DOMAIN_ID, sizeof dom, &dom, NULL);
				snprintf(d->pci, sizeof d->pci, "%04x:%02x:%02x.%x", dom & 0xffff, bus & 0xff,
					 (slot >> 3) & 0x1f, slot & 7);
			}
		}
		free(ext);
	}
}

/* "CL_OUT_OF_HOST_MEMORY (-6)" for rc, in buf, with the address space
 * limit for the errors of memory. */
static const char *cl_error(cl_int rc, char *buf, size_t len)
{
	static const struct { cl_int rc; const char *name; } names[] = {
		{ CL_DEVICE_NOT_FOUND, "CL_DEVICE_NOT_FOUND" },
		{ CL_DEVICE_NOT_AVAILABLE, "CL_DEVICE_NOT_AVAILABLE" },
		{ CL_OUT_OF_RESOURCES, "CL_OUT_OF_RESOURCES" },
		{ CL_OUT_OF_HOST_MEMORY, "CL_OUT_OF_HOST_MEMORY" },
		{ CL_INVALID_VALUE, "CL_INVALID_VALUE" },
		{ CL_INVALID_PLATFORM, "CL_INVALID_PLATFORM" },
		{ CL_PLATFORM_NOT_FOUND_KHR, "CL_PLATFORM_NOT_FOUND_KHR" },
	};
	const char *name = "OpenCL error";
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].rc == rc)
			name = names[i].name;
	char limit[80] = "";
	if (rc == CL_OUT_OF_RESOURCES || rc == CL_OUT_OF_HOST_MEMORY)
		accel_address_limit(limit, sizeof limit);
	snprintf(buf, len, "%s (%d)%s", name, (int)rc, limit);
	return buf;
}

/* Why the ICD loader found no platform, in s->err: no ICD installed, or
 * the first one installed that does not load (its library cannot be
 * mapped under ulimit -v, say). In the child: loading one is harmless. */
static void why_no_platform(struct cl_scan *s)
{
	const char *env = getenv("OCL_ICD_VENDORS");
	const char *dir = env && *env ? env : "/etc/OpenCL/vendors";
	snprintf(s->err, sizeof s->err, "no OpenCL platform (no ICD installed in %s)", dir);
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n < 5 || strcmp(e->d_name + n - 4, ".icd"))
			continue;
		char path[512], name[256] = "", why[240];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "re");
		if (f && fgets(name, sizeof name, f))
			name[strcspn(name, "\r\n")] = 0;
		if (f)
			fclose(f);
		void *h = name[0] ? accel_dlopen(name, why, sizeof why) : NULL;
		if (h) {
			snprintf(s->err, sizeof s->err, "no OpenCL platform (the ICDs in %s load, but offer none)", dir);
			continue;
		}
		snprintf(s->err, sizeof s->err, "no OpenCL platform: the ICD of %.100s: %.180s", path,
			 name[0] ? why : "names no library");
		break;
	}
	if (d)
		closedir(d);
}

/* Enumerate platforms and devices (runs in a child: ICDs may hang or abort). */
static int scan(void *arg)
{
	struct cl_scan *s = arg;
	get_platforms_fn get_platforms = (get_platforms_fn)dlsym(s->lib, "clGetPlatformIDs");
	platform_info_fn platform_info = (platform_info_fn)dlsym(s->lib, "clGetPlatformInfo");
	get_devices_fn get_devices = (get_devices_fn)dlsym(s->lib, "clGetDeviceIDs");
	device_info_fn device_info = (device_info_fn)dlsym(s->lib, "clGetDeviceInfo");
	if (!get_platforms || !platform_info || !get_devices || !device_info) {
		snprintf(s->err, sizeof s->err, "libOpenCL.so.1 lacks OpenCL 1.0 entry points");
		return ACCEL_ENOTSUP;
	}
	cl_platform_id plat[16];
	cl_uint np = 0;
	cl_int rc = get_platforms(16, plat, &np);
	char name[120];
	if (rc == CL_PLATFORM_NOT_FOUND_KHR || (rc == CL_SUCCESS && !np)) {
		why_no_platform(s);
		return ACCEL_ENOTSUP;
	}
	if (rc != CL_SUCCESS) {
		snprintf(s->err, sizeof s->err, "clGetPlatformIDs failed: %s", cl_error(rc, name, sizeof name));
		return ACCEL_ENOTSUP;
	}
	for (cl_uint i = 0; i < np && i < 16; i++) {
		char pname[64] = "";
		platform_info(plat[i], CL_PLATFORM_NAME, sizeof pname, pname, NULL);
		cl_device_id ids[MAX_DEVICES];
		cl_uint nd = 0;
		cl_int drc = get_devices(plat[i], CL_DEVICE_TYPE_ALL, MAX_DEVICES, ids, &nd);
		char *note = s->plat[s->nplat++];
		if (drc != CL_SUCCESS) {
			/* PoCL gives no device when it cannot create its kernel cache. */
			snprintf(note, sizeof s->plat[0], "%s: clGetDeviceIDs failed: %s%s", pname,
				 cl_error(drc, name, sizeof name),
				 drc == CL_DEVICE_NOT_FOUND && strstr(pname, "Portable Computing Language") ?
				 ", PoCL needs a writable $HOME/.cache or $POCL_CACHE_DIR" : "");
			continue;
		}
		snprintf(note, sizeof s->plat[0], "%s: %u device%s", pname, nd, nd == 1 ? "" : "s");
		for (cl_uint k = 0; k < nd && k < MAX_DEVICES && s->n < MAX_DEVICES; k++) {
			struct cl_dev *d = &s->dev[s->n++];
			memset(d, 0, sizeof *d);
			memcpy(d->platform, pname, sizeof d->platform);
			read_device(device_info, ids[k], d);
		}
	}
	return 0;
}

static void add_device(struct accel_probe *p, const struct cl_dev *c)
{
	struct accel_device d;
	memset(&d, 0, sizeof d);
	d.cls = c->type & CL_DEVICE_TYPE_ACCELERATOR ? ACCEL_CLASS_NPU : ACCEL_CLASS_GPU;
	d.numa_node = -1;
	snprintf(d.vendor, sizeof d.vendor, "%s", c->vendor);
	snprintf(d.model, sizeof d.model, "%s", c->name);
	snprintf(d.driver, sizeof d.driver, "%s", c->platform);
	snprintf(d.pci_address, sizeof d.pci_address, "%s", c->pci);
	/* An OpenCL device of type CPU runs on the host's cores (PoCL). */
	d.software = (c->type & CL_DEVICE_TYPE_CPU) != 0;
	d.memory_bytes = c->global;
	accel_device_add_api(&d, "opencl", 1, NULL);
	accel_device_set_uuid(&d, c->uuid);
	accel_device_set(&d, "device_type", c->type & CL_DEVICE_TYPE_GPU ? "gpu" :
			 c->type & CL_DEVICE_TYPE_CPU ? "cpu" : c->type & CL_DEVICE_TYPE_ACCELERATOR ? "accelerator" : "other");
	accel_device_set(&d, "opencl_platform", c->platform);
	accel_device_set(&d, "opencl_version", c->version);
	accel_device_set(&d, "opencl_driver_version", c->driver);
	accel_device_set_num(&d, "compute_units", c->units);
	accel_device_set_num(&d, "max_alloc_bytes", (double)c->max_alloc);
	accel_device_set(&d, "fp16", c->fp16 ? "true" : "false");
	accel_device_set(&d, "fp64", c->fp64 ? "true" : "false");
	accel_pci_locality(&d, accel_probe_sysroot(p));
	int i = accel_probe_add_device(p, &d);
	if (i >= 0)
		accel_probe_add_engine(p, i, NULL);
}

static int opencl_probe(struct accel_probe *p)
{
	/* The driver would see this host, not the recorded tree. */
	if (accel_probe_sysroot(p)[0])
		return accel_probe_fail(p, "not run: ACCEL_SYSROOT is set");
	char loaded[300];
	void *lib = accel_dlopen("libOpenCL.so.1", loaded, sizeof loaded);
	if (!lib)
		return accel_probe_fail(p, "%s", loaded);
	struct cl_scan *s = calloc(1, sizeof *s);
	if (!s)
		return ACCEL_ENOMEM;
	s->lib = lib;
	/* In a child process: an ICD may abort (PoCL does when /sys is
	 * masked) or hang; what it found is plain data. The driver is then
	 * never started in this process. */
	char why[96], said[160];
	int rc;
	if (accel_call_isolated("opencl", scan, s, sizeof *s, &rc, why, sizeof why, said, sizeof said) < 0) {
		if (said[0])
			accel_probe_note(p, "the child process said: %s", said);
		free(s);
		if (strstr(why, "in time"))
			return accel_probe_fail(p, "an OpenCL driver did not answer in time (ACCEL_PROBE_TIMEOUT)");
		return accel_probe_fail(p, "the OpenCL probe %s in a child process; left out", why);
	}
	for (int i = 0; i < s->nplat; i++)
		accel_probe_note(p, "%s", s->plat[i]);
	if (rc == 0 && !s->n)
		rc = accel_probe_fail(p, "no OpenCL device (%s)", s->nplat ? s->plat[0] : "no platform");
	else if (rc < 0)
		rc = accel_probe_fail(p, "%s", s->err);
	for (int i = 0; i < s->n; i++)
		add_device(p, &s->dev[i]);
	free(s);
	return rc;
}

/* OpenCL: discovery only for now; kernels come with accel-fft. */
static const struct accel_api_info opencl_apis[] = {
	{ "opencl", ACCEL_API_COMPUTE },
	{ NULL, 0 },
};

ACCEL_PLUGIN_EXPORT const struct accel_backend accel_backend_opencl = {
	.abi = ACCEL_BACKEND_ABI,
	.name = "opencl",
	.description = "OpenCL platforms and devices through the ICD loader (libOpenCL.so.1)",
	.ops = NULL,
	.probe = opencl_probe,
	.classes = ACCEL_CLASS_BIT(ACCEL_CLASS_GPU) | ACCEL_CLASS_BIT(ACCEL_CLASS_NPU),
	.priority = 30,
	.apis = opencl_apis,
};
