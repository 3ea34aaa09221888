/*
 * qat.c - Intel QuickAssist (QAT) crypto and compression engines from sysfs:
 * PCI functions of class 0x0b40 (co-processor) from Intel or with a known QAT
 * device id, the driver bound, qat/state and qat/cfg_services (the kernel's
 * qat sysfs ABI) and SR-IOV virtual functions. A VF whose PF is visible is
 * counted on the PF, not listed.
 */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <accel/backend.h>

static const struct { unsigned id; const char *name; } qat_ids[] = {
	{ 0x0435, "QAT DH895xCC" }, { 0x0443, "QAT DH895xCC VF" },
	{ 0x37c8, "QAT C62x" }, { 0x37c9, "QAT C62x VF" },
	{ 0x19e2, "QAT C3xxx" }, { 0x19e3, "QAT C3xxx VF" },
	{ 0x18ee, "QAT 200xx" }, { 0x18ef, "QAT 200xx VF" },
	{ 0x18a0, "QAT C4xxx" }, { 0x18a1, "QAT C4xxx VF" },
	{ 0x4940, "QAT 4xxx" }, { 0x4941, "QAT 4xxx VF" },
	{ 0x4942, "QAT 401xx" }, { 0x4943, "QAT 401xx VF" },
	{ 0x4944, "QAT 402xx" }, { 0x4945, "QAT 402xx VF" },
	{ 0x4946, "QAT 420xx" }, { 0x4947, "QAT 420xx VF" },
};

static const char *qat_name(unsigned id)
{
	for (size_t i = 0; i < sizeof qat_ids / sizeof qat_ids[0]; i++)
		if (qat_ids[i].id == id)
			return qat_ids[i].name;
	return NULL;
}

static void add_qat(struct accel_probe *p, const char *root, const char *a, unsigned device)
{
	char v[128];
	struct accel_device d;
	memset(&d, 0, sizeof d);
	d.cls = ACCEL_CLASS_CRYPTO;
	d.numa_node = -1;
	snprintf(d.vendor, sizeof d.vendor, "Intel");
	const char *name = qat_name(device);
	if (name)
		snprintf(d.model, sizeof d.model, "%s", name);
	else
		snprintf(d.model, sizeof d.model, "QAT device 8086:%04x", device);
	snprintf(d.pci_address, sizeof d.pci_address, "%.15s", a);
	accel_pci_locality(&d, root);
	const char *why = NULL;
	if (!d.driver[0]) {
		why = "no kernel driver bound (modprobe qat_4xxx or the driver of this generation)";
	} else if (accel_sysfs_read(root, v, sizeof v, "/sys/bus/pci/devices/%s/qat/state", a) > 0) {
		accel_device_set(&d, "state", v);
		if (strcmp(v, "up"))
			why = "qat/state is down (echo up > qat/state)";
	}
	if (accel_sysfs_read(root, v, sizeof v, "/sys/bus/pci/devices/%s/qat/cfg_services", a) > 0)
		accel_device_set(&d, "services", v);
	long n;
	if (accel_sysfs_read_long(root, &n, "/sys/bus/pci/devices/%s/sriov_numvfs", a) == 0)
		accel_device_set_num(&d, "sriov_numvfs", n);
	if (accel_sysfs_read_long(root, &n, "/sys/bus/pci/devices/%s/sriov_totalvfs", a) == 0)
		accel_device_set_num(&d, "sriov_totalvfs", n);
	accel_device_add_api(&d, "qat", why == NULL, why);
	accel_probe_add_device(p, &d);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int qat_probe(struct accel_probe *p)
{
	const char *root = accel_probe_sysroot(p);
	char dir[PATH_MAX], v[64], link[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/sys/bus/pci/devices", root);
	struct dirent **list;
	int n = scandir(dir, &list, NULL, by_name);
	if (n < 0)
		return accel_probe_fail(p, "%s is not readable", dir);
	int found = 0;
	for (int i = 0; i < n; i++) {
		const char *a = list[i]->d_name;
		unsigned vendor = 0, device = 0, cls = 0;
		if (accel_sysfs_read(root, v, sizeof v, "/sys/bus/pci/devices/%s/vendor", a) > 0)
			vendor = (unsigned)strtoul(v, NULL, 16);
		if (accel_sysfs_read(root, v, sizeof v, "/sys/bus/pci/devices/%s/device", a) > 0)
			device = (unsigned)strtoul(v, NULL, 16);
		if (accel_sysfs_read(root, v, sizeof v, "/sys/bus/pci/devices/%s/class", a) > 0)
			cls = (unsigned)strtoul(v, NULL, 16);
		int is_qat = vendor == 0x8086 && (qat_name(device) || cls >> 8 == 0x0b40);
		/* A VF whose PF is here is the PF's business (sriov_numvfs). */
		if (is_qat && accel_sysfs_link(root, link, sizeof link, "/sys/bus/pci/devices/%s/physfn", a) > 0 &&
		    accel_sysfs_read(root, v, sizeof v, "/sys/bus/pci/devices/%s/vendor", link) > 0)
			is_qat = 0;
		if (is_qat) {
			add_qat(p, root, a, device);
			found++;
		}
		free(list[i]);
	}
	free(list);
	return found ? 0 : accel_probe_fail(p, "no QAT device on the PCI bus");
}

/* QAT: discovery only; compression through QATzip comes with accel-compress. */
static const struct accel_api_info qat_apis[] = {
	{ "qat", ACCEL_API_CRYPTO | ACCEL_API_COMPRESSION },
	{ NULL, 0 },
};

ACCEL_PLUGIN_EXPORT const struct accel_backend accel_backend_qat = {
	.abi = ACCEL_BACKEND_ABI,
	.name = "qat",
	.description = "Intel QuickAssist engines in sysfs (PCI class 0x0b40, qat/state)",
	.ops = NULL,
	.probe = qat_probe,
	.classes = ACCEL_CLASS_BIT(ACCEL_CLASS_CRYPTO),
	.priority = 50,
	.apis = qat_apis,
};
