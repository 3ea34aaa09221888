/*
 * devnodes.c - the device files that reach a PCI function: DRM render nodes
 * (/sys/bus/pci/devices/X/drm/renderD*), the kernel's accel class
 * (X/accel/accelN) and NVIDIA's /dev/nvidiaN (minor number from
 * /proc/driver/nvidia/gpus/X/information). Listed only when the node
 * exists under <root>/dev.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "pci.h"

static int node_exists(const char *root, const char *dev)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s%s", root, dev);
	return access(path, F_OK) == 0;
}

/* First entry of <root>/sys/bus/pci/devices/<addr>/<sub> starting with prefix. */
static int first_entry(const char *root, const char *addr, const char *sub, const char *prefix,
		       char *buf, size_t len)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/sys/bus/pci/devices/%s/%s", root, addr, sub);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	struct dirent *e;
	int found = -1;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, prefix, strlen(prefix)) && (found < 0 || strcmp(e->d_name, buf) < 0)) {
			snprintf(buf, len, "%s", e->d_name);
			found = 0;
		}
	closedir(d);
	return found;
}

void pci_device_nodes(struct accel_device *d, const char *root)
{
	char name[256], dev[PATH_MAX], line[256];
	const char *a = d->pci_address;
	if (first_entry(root, a, "drm", "renderD", name, sizeof name) == 0) {
		snprintf(dev, sizeof dev, "/dev/dri/%s", name);
		if (node_exists(root, dev)) {
			accel_device_set(d, "render_node", dev);
			if (!accel_device_get(d, "device_file"))
				accel_device_set(d, "device_file", dev);
		}
	}
	if (first_entry(root, a, "accel", "accel", name, sizeof name) == 0) {
		snprintf(dev, sizeof dev, "/dev/accel/%s", name);
		if (node_exists(root, dev))
			accel_device_set(d, "device_file", dev);
	}
	snprintf(dev, sizeof dev, "%s/proc/driver/nvidia/gpus/%s/information", root, a);
	FILE *f = fopen(dev, "re");
	if (!f)
		return;
	int minor = -1;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "Device Minor: %d", &minor) == 1)
			break;
		if (!strncmp(line, "Model:", 6) && !d->model[0]) {
			char *v = line + 6;
			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = 0;
			snprintf(d->model, sizeof d->model, "%.127s", v);
		}
	}
	fclose(f);
	if (minor >= 0) {
		snprintf(dev, sizeof dev, "/dev/nvidia%d", minor);
		if (node_exists(root, dev))
			accel_device_set(d, "device_file", dev);
	}
}
