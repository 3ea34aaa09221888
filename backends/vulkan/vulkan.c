/*
 * vulkan.c - the Vulkan backend: finds the physical devices through the
 * loader (libvulkan.so.1, loaded at probe time) and describes each one:
 * name, vendor, type, driver, API version, memory heaps, compute queues,
 * subgroup size and PCI bus info where the driver exposes it.
 */
#define VK_NO_PROTOTYPES
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>
#include <accel/backend.h>

#define MAX_GPUS 16

/* What one physical device told us, gathered on the bounded thread. */
struct vk_gpu {
	VkPhysicalDeviceProperties props;
	VkPhysicalDeviceDriverProperties driver;
	VkPhysicalDeviceSubgroupProperties subgroup;
	VkPhysicalDevicePCIBusInfoPropertiesEXT pci;
	VkPhysicalDeviceIDProperties ids;   /* deviceUUID: one device across APIs */
	int has_pci, has_driver, has_ids;
	uint64_t local_bytes, host_bytes;
	int heaps, compute_queues;
};

struct vk_scan {
	void *lib;
	char err[200];
	int n;
	uint32_t instance_version;
	struct vk_gpu gpu[MAX_GPUS];
};

static int has_extension(PFN_vkEnumerateDeviceExtensionProperties enum_ext, VkPhysicalDevice pd,
			 const char *name)
{
	uint32_t n = 0;
	if (enum_ext(pd, NULL, &n, NULL) != VK_SUCCESS || !n)
		return 0;
	VkExtensionProperties *e = calloc(n, sizeof *e);
	int found = 0;
	if (e && enum_ext(pd, NULL, &n, e) == VK_SUCCESS)
		for (uint32_t i = 0; i < n && !found; i++)
			found = !strcmp(e[i].extensionName, name);
	free(e);
	return found;
}

/* "VK_ERROR_OUT_OF_HOST_MEMORY (-1)" for r, in buf. */
static const char *vk_result(VkResult r, char *buf, size_t len)
{
	static const struct { VkResult r; const char *name; } names[] = {
		{ VK_ERROR_OUT_OF_HOST_MEMORY, "VK_ERROR_OUT_OF_HOST_MEMORY" },
		{ VK_ERROR_OUT_OF_DEVICE_MEMORY, "VK_ERROR_OUT_OF_DEVICE_MEMORY" },
		{ VK_ERROR_INITIALIZATION_FAILED, "VK_ERROR_INITIALIZATION_FAILED" },
		{ VK_ERROR_LAYER_NOT_PRESENT, "VK_ERROR_LAYER_NOT_PRESENT" },
		{ VK_ERROR_EXTENSION_NOT_PRESENT, "VK_ERROR_EXTENSION_NOT_PRESENT" },
		{ VK_ERROR_INCOMPATIBLE_DRIVER, "VK_ERROR_INCOMPATIBLE_DRIVER" },
	};
	const char *name = "VkResult";
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].r == r)
			name = names[i].name;
	snprintf(buf, len, "%s (%d)", name, (int)r);
	return buf;
}

/* Create an instance and read every physical device (runs bounded). */
static int scan(void *arg)
{
	struct vk_scan *s = arg;
	PFN_vkGetInstanceProcAddr gipa = (PFN_vkGetInstanceProcAddr)dlsym(s->lib, "vkGetInstanceProcAddr");
	if (!gipa) {
		snprintf(s->err, sizeof s->err, "libvulkan.so.1 has no vkGetInstanceProcAddr");
		return ACCEL_ENOTSUP;
	}
	PFN_vkEnumerateInstanceVersion eiv =
		(PFN_vkEnumerateInstanceVersion)gipa(NULL, "vkEnumerateInstanceVersion");
	PFN_vkCreateInstance create = (PFN_vkCreateInstance)gipa(NULL, "vkCreateInstance");
	s->instance_version = VK_API_VERSION_1_0;
	if (eiv)
		eiv(&s->instance_version);
	if (!create || s->instance_version < VK_API_VERSION_1_1) {
		snprintf(s->err, sizeof s->err, "the Vulkan loader is older than 1.1");
		return ACCEL_ENOTSUP;
	}
	VkApplicationInfo app = {
		.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "accel",
		.apiVersion = VK_API_VERSION_1_2,
	};
	VkInstanceCreateInfo ci = { .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app };
	VkInstance inst;
	VkResult r = create(&ci, NULL, &inst);
	if (r != VK_SUCCESS) {
		/* No driver that loads (lavapipe under ulimit -v) is no
		 * missing driver: the address space limit is named. */
		char name[64], limit[80];
		snprintf(s->err, sizeof s->err, "vkCreateInstance failed: %s%s", vk_result(r, name, sizeof name),
			 accel_address_limit(limit, sizeof limit));
		return ACCEL_ENOTSUP;
	}
#define GET(T, name) PFN_##T name = (PFN_##T)gipa(inst, #T)
	GET(vkDestroyInstance, destroy);
	GET(vkEnumeratePhysicalDevices, enum_pd);
	GET(vkGetPhysicalDeviceProperties, props1);
	GET(vkGetPhysicalDeviceProperties2, props2);
	GET(vkGetPhysicalDeviceMemoryProperties, memprops);
	GET(vkGetPhysicalDeviceQueueFamilyProperties, qfprops);
	GET(vkEnumerateDeviceExtensionProperties, enum_ext);
#undef GET
	uint32_t n = MAX_GPUS;
	VkPhysicalDevice pd[MAX_GPUS];
	r = enum_pd ? enum_pd(inst, &n, pd) : VK_ERROR_INITIALIZATION_FAILED;
	if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
		char name[64], limit[80];
		snprintf(s->err, sizeof s->err, "vkEnumeratePhysicalDevices failed: %s%s",
			 vk_result(r, name, sizeof name), accel_address_limit(limit, sizeof limit));
		if (destroy)
			destroy(inst, NULL);
		return ACCEL_ENOTSUP;
	}
	for (uint32_t i = 0; i < n && props1 && props2 && memprops && qfprops && enum_ext; i++) {
		struct vk_gpu *g = &s->gpu[s->n++];
		memset(g, 0, sizeof *g);
		g->subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
		g->driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
		g->pci.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT;
		g->ids.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
		VkPhysicalDeviceProperties2 p2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2 };
		void **next = &p2.pNext;
		*next = &g->subgroup;
		next = &g->subgroup.pNext;
		/* Core in Vulkan 1.1: a 1.0 device does not fill it. */
		props1(pd[i], &g->props);
		g->has_ids = g->props.apiVersion >= VK_API_VERSION_1_1;
		if (g->has_ids) {
			*next = &g->ids;
			next = &g->ids.pNext;
		}
		g->has_driver = has_extension(enum_ext, pd[i], VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
		if (g->has_driver) {
			*next = &g->driver;
			next = &g->driver.pNext;
		}
		g->has_pci = has_extension(enum_ext, pd[i], VK_EXT_PCI_BUS_INFO_EXTENSION_NAME);
		if (g->has_pci)
			*next = &g->pci;
		props2(pd[i], &p2);
		g->props = p2.properties;
		VkPhysicalDeviceMemoryProperties mp;
		memprops(pd[i], &mp);
		g->heaps = (int)mp.memoryHeapCount;
		for (uint32_t h = 0; h < mp.memoryHeapCount; h++) {
			if (mp.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
				g->local_bytes += mp.memoryHeaps[h].size;
			else
				g->host_bytes += mp.memoryHeaps[h].size;
		}
		uint32_t nq = 0;
		qfprops(pd[i], &nq, NULL);
		VkQueueFamilyProperties *q = calloc(nq ? nq : 1, sizeof *q);
		if (q) {
			qfprops(pd[i], &nq, q);
			for (uint32_t k = 0; k < nq; k++)
				if (q[k].queueFlags & VK_QUEUE_COMPUTE_BIT)
					g->compute_queues += (int)q[k].queueCount;
			free(q);
		}
	}
	if (destroy)
		destroy(inst, NULL);
	return 0;
}

static const char *vendor_name(uint32_t id)
{
	switch (id) {
	case 0x10de: return "NVIDIA";
	case 0x1002: return "AMD";
	case 0x8086: return "Intel";
	case 0x13b5: return "ARM";
	case 0x5143: return "Qualcomm";
	case 0x1010: return "Imagination";
	case 0x106b: return "Apple";
	case VK_VENDOR_ID_MESA: return "Mesa";
	}
	return NULL;
}

static const char *type_name(VkPhysicalDeviceType t)
{
	switch (t) {
	case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
	case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
	case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
	case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
	default: return "other";
	}
}

static void version_string(char *buf, size_t len, uint32_t v)
{
	snprintf(buf, len, "%u.%u.%u", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v));
}

static void add_gpu(struct accel_probe *p, const struct vk_gpu *g)
{
	struct accel_device d;
	char buf[64];
	memset(&d, 0, sizeof d);
	d.cls = ACCEL_CLASS_GPU;
	d.numa_node = -1;
	const VkPhysicalDeviceProperties *pr = &g->props;
	const char *vendor = vendor_name(pr->vendorID);
	if (vendor)
		snprintf(d.vendor, sizeof d.vendor, "%s", vendor);
	else
		snprintf(d.vendor, sizeof d.vendor, "0x%04x", pr->vendorID);
	snprintf(d.model, sizeof d.model, "%.127s", pr->deviceName);
	if (g->has_driver)
		snprintf(d.driver, sizeof d.driver, "%.63s", g->driver.driverName);
	d.software = pr->deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
	d.memory_bytes = g->local_bytes ? g->local_bytes : g->host_bytes;
	if (g->has_pci)
		snprintf(d.pci_address, sizeof d.pci_address, "%04x:%02x:%02x.%x", g->pci.pciDomain,
			 g->pci.pciBus, g->pci.pciDevice, g->pci.pciFunction);
	accel_device_add_api(&d, "vulkan", 1, NULL);
	if (g->has_ids)
		accel_device_set_uuid(&d, g->ids.deviceUUID);
	accel_device_set(&d, "device_type", type_name(pr->deviceType));
	version_string(buf, sizeof buf, pr->apiVersion);
	accel_device_set(&d, "vulkan_api_version", buf);
	if (g->has_driver && g->driver.driverInfo[0])
		accel_device_set(&d, "vulkan_driver_info", g->driver.driverInfo);
	accel_device_set_num(&d, "vulkan_memory_heaps", g->heaps);
	accel_device_set_num(&d, "vulkan_compute_queues", g->compute_queues);
	accel_device_set_num(&d, "subgroup_size", g->subgroup.subgroupSize);
	accel_pci_locality(&d, accel_probe_sysroot(p));
	int i = accel_probe_add_device(p, &d);
	if (i >= 0)
		accel_probe_add_engine(p, i, NULL);
}

static int vulkan_probe(struct accel_probe *p)
{
	/* The driver would see this host, not the recorded tree. */
	if (accel_probe_sysroot(p)[0])
		return accel_probe_fail(p, "not run: ACCEL_SYSROOT is set");
	char why[300];
	void *lib = accel_dlopen("libvulkan.so.1", why, sizeof why);
	if (!lib)
		return accel_probe_fail(p, "%s", why);
	/* Kept on the heap and never freed: an abandoned scan still owns it. */
	struct vk_scan *s = calloc(1, sizeof *s);
	if (!s)
		return ACCEL_ENOMEM;
	s->lib = lib;
	int rc;
	char limit[80];
	if (accel_address_limit(limit, sizeof limit)[0]) {
		/* Under ulimit -v a driver may abort on an allocation it cannot
		 * make (lavapipe's LLVM does) where the same limit let it start
		 * a moment before: the scan runs in a child, whose devices are
		 * plain data, and the driver never starts in this process. */
		char why_child[96];
		if (accel_call_isolated("vulkan", scan, s, sizeof *s, &rc, why_child, sizeof why_child, NULL, 0) < 0) {
			free(s);
			return accel_probe_fail(p, "the Vulkan driver %s in a child process%s", why_child, limit);
		}
	} else {
		rc = accel_call_bounded(scan, s, 0);
	}
	if (rc == ACCEL_EDEVICE)
		return accel_probe_fail(p, "the Vulkan driver did not answer in time (ACCEL_PROBE_TIMEOUT)");
	if (rc < 0) {
		rc = accel_probe_fail(p, "%s", s->err);
		free(s);
		return rc;
	}
	if (!s->n) {
		free(s);
		return accel_probe_fail(p, "no Vulkan physical device");
	}
	for (int i = 0; i < s->n; i++)
		add_gpu(p, &s->gpu[i]);
	free(s);
	return 0;
}

/* Vulkan: discovery only for now; compute operations come with accel-fft. */
static const struct accel_api_info vulkan_apis[] = {
	{ "vulkan", ACCEL_API_COMPUTE },
	{ NULL, 0 },
};

ACCEL_PLUGIN_EXPORT const struct accel_backend accel_backend_vulkan = {
	.abi = ACCEL_BACKEND_ABI,
	.name = "vulkan",
	.description = "Vulkan physical devices through the loader (libvulkan.so.1)",
	.ops = NULL,
	.probe = vulkan_probe,
	.classes = ACCEL_CLASS_BIT(ACCEL_CLASS_GPU),
	.priority = 20,
	.apis = vulkan_apis,
};
