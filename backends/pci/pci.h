/*
 * pci.h - the sysfs PCI probe: display controllers and processing
 * accelerators, with their NUMA locality and device nodes.
 */
#ifndef ACCEL_BACKEND_PCI_H
#define ACCEL_BACKEND_PCI_H

#include <accel/device.h>

/* Add the device files of PCI function d->pci_address: "device_file"
 * (/dev/nvidiaN, /dev/dri/renderD*, /dev/accel/accelN), "render_node". */
void pci_device_nodes(struct accel_device *d, const char *root);

#endif
