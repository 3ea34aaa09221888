/*
 * pci.c - the sysfs PCI probe: every display controller (PCI class 0x03)
 * and processing accelerator (0x12) in <root>/sys/bus/pci/devices, with
 * vendor, driver, NUMA node, closest CPUs and device files. Runs after the
 * API backends, so a GPU they found gains these facts (merged by PCI
 * address) and a GPU no API reaches is still listed, with the reason.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <pci/pci.h>
#include <accel/backend.h>
#include "pci.h"

/* Device names from the PCI ID database (pci.ids, through libpciutils'
 * libpci.so.3, loaded when a device no API named needs a name). */
static struct {
	int tried;
	void *lib;
	struct pci_access *acc;
	char *(*lookup)(struct pci_access *a, char *buf, int size, int flags, ...);
} ids;
static __thread jmp_buf *ids_jump;

/* libpci's error handler must not return: it would exit the process. */
__attribute__((noreturn)) static void ids_error(char *msg, ...)
{
	(void)msg;
	if (ids_jump)
		longjmp(*ids_jump, 1);
	abort();
}

static void ids_quiet(char *msg, ...)
{
	(void)msg;
}

/* "GH100 [H100 SXM5 80GB]" for 10de:2330 into buf; 0, or -1 when unknown. */
static int pci_ids_name(unsigned vendor, unsigned device, char *buf, size_t len)
{
	if (!ids.tried) {
		ids.tried = 1;
		ids.lib = dlopen("libpci.so.3", RTLD_NOW | RTLD_LOCAL);
		struct pci_access *(*alloc)(void) = ids.lib ? (struct pci_access * (*)(void)) dlsym(ids.lib, "pci_alloc") : NULL;
		*(void **)&ids.lookup = ids.lib ? dlsym(ids.lib, "pci_lookup_name") : NULL;
		if (alloc && ids.lookup && (ids.acc = alloc())) {
			ids.acc->error = ids_error;
			ids.acc->warning = ids_quiet;
			ids.acc->debug = ids_quiet;
		}
	}
	if (!ids.acc)
		return -1;
	jmp_buf jb;
	char *name = NULL;
	ids_jump = &jb;
	if (!setjmp(jb))
		name = ids.lookup(ids.acc, buf, (int)len, PCI_LOOKUP_DEVICE | PCI_LOOKUP_NO_NUMBERS, vendor, device);
	ids_jump = NULL;
	if (!name)
		return -1;
	if (name != buf)
		snprintf(buf, len, "%s", name);
	return 0;
}

static const char *vendor_name(unsigned id)
{
	switch (id) {
	case 0x10de: return "NVIDIA";
	case 0x1002: return "AMD";
	case 0x8086: return "Intel";
	case 0x1af4: return "Red Hat (virtio)";
	case 0x1234: return "QEMU";
	case 0x1013: return "Cirrus Logic";
	case 0x15ad: return "VMware";
	case 0x1414: return "Microsoft";
	case 0x1d0f: return "Amazon";
	case 0x1ae0: return "Google";
	case 0x1e52: return "Tenstorrent";
	case 0x1ded: return "Alibaba";
	case 0x1a03: return "ASPEED";
	case 0x102b: return "Matrox";
	}
	return NULL;
}

static int pci_addr_sort(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static void add_function(struct accel_probe *p, const char *root, const char *addr, int dcls, unsigned cls,
			 unsigned vendor)
{
	char v[64];
	struct accel_device d;
	memset(&d, 0, sizeof d);
	d.numa_node = -1;
	snprintf(d.pci_address, sizeof d.pci_address, "%.15s", addr);
	unsigned device = 0;
	d.cls = (enum accel_device_class)dcls;
	if (accel_sysfs_read(root, v, sizeof v, "/sys/bus/pci/devices/%s/device", addr) > 0)
		device = (unsigned)strtoul(v, NULL, 16);
	const char *vn = vendor_name(vendor);
	if (vn)
		snprintf(d.vendor, sizeof d.vendor, "%s", vn);
	else
		snprintf(d.vendor, sizeof d.vendor, "0x%04x", vendor);
	accel_pci_locality(&d, root);
	pci_device_nodes(&d, root);
	if (!d.model[0] && pci_ids_name(vendor, device, d.model, sizeof d.model) < 0)
		snprintf(d.model, sizeof d.model, "%s device %04x:%04x", cls >> 8 == 0x0300 ? "VGA" :
			 cls >> 16 == 0x12 ? "accelerator" : "display", vendor, device);
	accel_device_add_api(&d, "pci", d.driver[0] != 0, d.driver[0] ? NULL : "no kernel driver bound");
	accel_probe_add_device(p, &d);
}

static int pci_probe(struct accel_probe *p)
{
	const char *root = accel_probe_sysroot(p);
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/sys/bus/pci/devices", root);
	struct dirent **list;
	int n = scandir(dir, &list, NULL, pci_addr_sort);
	if (n < 0)
		return accel_probe_fail(p, "%s/sys/bus/pci/devices is not readable (no PCI bus, or /sys not mounted)", root);
	int found = 0;
	for (int i = 0; i < n; i++) {
		const char *a = list[i]->d_name;
		unsigned cls, vendor;
		/* GPU, NPU or other display: libaccel's rule, by which device ids are reserved too. */
		int dcls = a[0] != '.' ? accel_pci_classify(root, a, &cls, &vendor) : -1;
		if (dcls >= 0) {
			add_function(p, root, a, dcls, cls, vendor);
			found++;
		}
		free(list[i]);
	}
	free(list);
	return found ? 0 : accel_probe_fail(p, "no display controller or processing accelerator on the PCI bus");
}

/* PCI: discovery only (locality and device files for the API backends' devices). */
static const struct accel_api_info pci_apis[] = {
	{ "pci", ACCEL_API_INVENTORY },
	{ NULL, 0 },
};

ACCEL_PLUGIN_EXPORT const struct accel_backend accel_backend_pci = {
	.abi = ACCEL_BACKEND_ABI,
	.name = "pci",
	.description = "sysfs PCI display controllers and accelerators: NUMA node, closest CPUs, device files",
	.ops = NULL,
	.probe = pci_probe,
	.classes = ACCEL_CLASS_BIT(ACCEL_CLASS_GPU) | ACCEL_CLASS_BIT(ACCEL_CLASS_NPU) | ACCEL_CLASS_BIT(ACCEL_CLASS_OTHER) |
		   ACCEL_CLASS_BIT(ACCEL_CLASS_VIDEO),
	.priority = 40,
	.apis = pci_apis,
};
