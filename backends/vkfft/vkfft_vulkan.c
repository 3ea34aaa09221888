/*
 * vkfft_vulkan.c - VkFFT's Vulkan backend (VKFFT_BACKEND 0) on Vulkan
 * devices: built against the corrected copy of Debian's vkFFT.h that
 * backend.mk makes under $(B)/vkfft (Debian 12's 1.2.26 does not compile
 * in C and fills glslang 12's resource struct by position, so shaders fail
 * at run time), and linked to Debian's static glslang and SPIRV-Tools. Per
 * worker: a logical device with one compute queue, a host-visible coherent
 * buffer (mapped once) that VkFFT transforms in place, a command buffer and
 * a fence.
 */
#define VKFFT_BACKEND 0
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>
#include <vkFFT.h>
#include "vkfft.h"

#define MAX_DEVICES 16

struct vkfft_vk_dev {
	VkInstance instance;
	VkPhysicalDevice pd;
	uint32_t family;
};

struct vk_found {
	VkInstance instance;
	int n;
	struct vkfft_vk_dev dev[MAX_DEVICES];
	VkPhysicalDeviceProperties props[MAX_DEVICES];
	char err[128];
};

/* The instance and its devices with a compute queue (bounded: a driver
 * may hang). The instance is kept for the life of the process. */
static int scan(void *arg)
{
	struct vk_found *s = arg;
	VkApplicationInfo app = { .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "accel-fft",
				  .apiVersion = VK_API_VERSION_1_1 };
	VkInstanceCreateInfo ci = { .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app };
	if (vkCreateInstance(&ci, NULL, &s->instance) != VK_SUCCESS) {
		snprintf(s->err, sizeof s->err, "vkCreateInstance failed");
		return ACCEL_ENOTSUP;
	}
	VkPhysicalDevice pds[MAX_DEVICES];
	uint32_t n = MAX_DEVICES;
	if (vkEnumeratePhysicalDevices(s->instance, &n, pds) < 0)
		n = 0;
	for (uint32_t i = 0; i < n && s->n < MAX_DEVICES; i++) {
		VkQueueFamilyProperties q[16];
		uint32_t nq = 16;
		vkGetPhysicalDeviceQueueFamilyProperties(pds[i], &nq, q);
		for (uint32_t k = 0; k < nq; k++) {
			if (q[k].queueFlags & VK_QUEUE_COMPUTE_BIT) {
				struct vkfft_vk_dev *d = &s->dev[s->n];
				d->instance = s->instance;
				d->pd = pds[i];
				d->family = k;
				vkGetPhysicalDeviceProperties(pds[i], &s->props[s->n]);
				s->n++;
				break;
			}
		}
	}
	return 0;
}

/* The device the vulkan backend added (same model, a Vulkan API), or -1. */
static int find_device(struct accel_probe *p, const VkPhysicalDeviceProperties *pr)
{
	const struct accel_device *d;
	for (int i = 0; (d = accel_probe_device(p, i)) != NULL; i++) {
		for (int a = 0; a < d->napis; a++)
			if (!strcmp(d->apis[a].name, "vulkan") && !strncmp(d->model, pr->deviceName, sizeof d->model - 1))
				return i;
	}
	return -1;
}

int vkfft_vk_probe(struct accel_probe *p)
{
	if (accel_probe_sysroot(p)[0] || accel_abandoned_calls() > 0)
		return ACCEL_ENOTSUP;
	/* Never freed when abandoned: the scan may still write to it. */
	struct vk_found *s = calloc(1, sizeof *s);
	if (!s)
		return ACCEL_ENOMEM;
	if (accel_call_bounded(scan, s, 0) != 0) {
		accel_probe_note(p, "vulkan: %s", s->err[0] ? s->err : "the Vulkan driver did not answer in time");
		return ACCEL_ENOTSUP;
	}
	int added = 0;
	for (int j = 0; j < s->n; j++) {
		const VkPhysicalDeviceProperties *pr = &s->props[j];
		int i = find_device(p, pr);
		if (i < 0) {
			struct accel_device d;
			memset(&d, 0, sizeof d);
			d.cls = ACCEL_CLASS_GPU;
			d.numa_node = -1;
			snprintf(d.vendor, sizeof d.vendor, "0x%04x", pr->vendorID);
			snprintf(d.model, sizeof d.model, "%.127s", pr->deviceName);
			d.software = pr->deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
			accel_device_add_api(&d, "vulkan", 1, NULL);
			i = accel_probe_add_device(p, &d);
		}
		struct vkfft_vk_dev *dev = malloc(sizeof *dev);
		if (i < 0 || !dev) {
			free(dev);
			continue;
		}
		*dev = s->dev[j];
		if (accel_probe_add_engine_variant(p, i, "vulkan", dev) < 0)
			free(dev);
		else
			added++;
		accel_probe_note(p, "vulkan: %s", pr->deviceName);
	}
	free(s);
	return added ? 0 : ACCEL_ENOTSUP;
}

struct vk_ctx {
	struct accel_fft lf;
	const struct accel_fft *f;
	size_t batch;
	VkPhysicalDevice pd;
	VkDevice dev;
	VkQueue queue;
	VkCommandPool pool;
	VkCommandBuffer cmd;
	VkFence fence;
	VkBuffer buffer;
	VkDeviceMemory memory;
	float *mapped;
	uint64_t bytes;
	float *half;
	VkFFTApplication app;
	int app_ok;
};

void vkfft_vk_close(void *ctx)
{
	struct vk_ctx *c = ctx;
	if (!c)
		return;
	if (c->app_ok)
		deleteVkFFT(&c->app);
	if (c->dev) {
		if (c->mapped)
			vkUnmapMemory(c->dev, c->memory);
		if (c->buffer)
			vkDestroyBuffer(c->dev, c->buffer, NULL);
		if (c->memory)
			vkFreeMemory(c->dev, c->memory, NULL);
		if (c->fence)
			vkDestroyFence(c->dev, c->fence, NULL);
		if (c->pool)
			vkDestroyCommandPool(c->dev, c->pool, NULL);
		vkDestroyDevice(c->dev, NULL);
	}
	free(c->half);
	free(c);
}

int vkfft_vk_open(const struct accel_engine *e, const struct accel_fft *f, void **ctx)
{
	const struct vkfft_vk_dev *d = e->data;
	struct vk_ctx *c = calloc(1, sizeof *c);
	if (!c)
		return ACCEL_ENOMEM;
	c->f = f;
	c->lf = *f;
	c->lf.r2c = 0;
	c->batch = accel_fft_kept_frames(f, 0, f->unit_frames);
	c->bytes = (uint64_t)c->batch * f->n * 8;
	c->pd = d->pd;
	c->half = f->r2c ? malloc((size_t)c->batch * f->bins * 8) : NULL;
	float prio = 1;
	VkDeviceQueueCreateInfo qi = { .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = d->family,
				       .queueCount = 1, .pQueuePriorities = &prio };
	VkDeviceCreateInfo di = { .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1,
				  .pQueueCreateInfos = &qi };
	VkCommandPoolCreateInfo pi = { .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
				       .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, .queueFamilyIndex = d->family };
	VkFenceCreateInfo fi = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
	VkBufferCreateInfo bi = { .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = c->bytes,
				  .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
					   VK_BUFFER_USAGE_TRANSFER_DST_BIT,
				  .sharingMode = VK_SHARING_MODE_EXCLUSIVE };
	if ((f->r2c && !c->half) || vkCreateDevice(d->pd, &di, NULL, &c->dev) != VK_SUCCESS) {
		vkfft_vk_close(c);
		return ACCEL_EDEVICE;
	}
	vkGetDeviceQueue(c->dev, d->family, 0, &c->queue);
	if (vkCreateCommandPool(c->dev, &pi, NULL, &c->pool) != VK_SUCCESS ||
	    vkCreateFence(c->dev, &fi, NULL, &c->fence) != VK_SUCCESS ||
	    vkCreateBuffer(c->dev, &bi, NULL, &c->buffer) != VK_SUCCESS) {
		vkfft_vk_close(c);
		return ACCEL_EDEVICE;
	}
	VkMemoryRequirements req;
	vkGetBufferMemoryRequirements(c->dev, c->buffer, &req);
	VkPhysicalDeviceMemoryProperties mp;
	vkGetPhysicalDeviceMemoryProperties(d->pd, &mp);
	VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
	uint32_t type = UINT32_MAX;
	for (uint32_t i = 0; i < mp.memoryTypeCount && type == UINT32_MAX; i++)
		if ((req.memoryTypeBits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want)
			type = i;
	VkMemoryAllocateInfo ai = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size,
				    .memoryTypeIndex = type };
	VkCommandBufferAllocateInfo ci = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = c->pool,
					   .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1 };
	void *map = NULL;
	if (type == UINT32_MAX || vkAllocateMemory(c->dev, &ai, NULL, &c->memory) != VK_SUCCESS ||
	    vkBindBufferMemory(c->dev, c->buffer, c->memory, 0) != VK_SUCCESS ||
	    vkMapMemory(c->dev, c->memory, 0, c->bytes, 0, &map) != VK_SUCCESS ||
	    vkAllocateCommandBuffers(c->dev, &ci, &c->cmd) != VK_SUCCESS) {
		vkfft_vk_close(c);
		return ACCEL_EDEVICE;
	}
	c->mapped = map;
	VkFFTConfiguration cfg = { 0 };
	cfg.FFTdim = 1;
	cfg.size[0] = f->n;
	cfg.numberBatches = c->batch;
	cfg.physicalDevice = &c->pd;
	cfg.device = &c->dev;
	cfg.queue = &c->queue;
	cfg.commandPool = &c->pool;
	cfg.fence = &c->fence;
	cfg.bufferSize = &c->bytes;
	cfg.buffer = &c->buffer;
	if (initializeVkFFT(&c->app, cfg) != VKFFT_SUCCESS) {
		vkfft_vk_close(c);
		return ACCEL_EDEVICE;
	}
	c->app_ok = 1;
	*ctx = c;
	return 0;
}

int vkfft_vk_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	struct vk_ctx *c = ctx;
	const struct accel_fft *f = c->f;
	size_t frames = accel_fft_unit_frames(f, u->in.len);
	size_t kept = accel_fft_load(&c->lf, u->seq, u->in.data, u->in.len, frames, 0, c->batch, c->mapped);
	if (!kept)
		return 0;
	VkCommandBufferBeginInfo bi = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT };
	VkFFTLaunchParams lp = { 0 };
	lp.commandBuffer = &c->cmd;
	lp.buffer = &c->buffer;
	if (vkResetCommandBuffer(c->cmd, 0) != VK_SUCCESS || vkBeginCommandBuffer(c->cmd, &bi) != VK_SUCCESS) {
		snprintf(err, len, "cannot record a command buffer");
		return ACCEL_EDEVICE;
	}
	VkFFTResult vr = VkFFTAppend(&c->app, f->inverse ? 1 : -1, &lp);
	/* The results, visible to the host once the fence is signalled. */
	VkMemoryBarrier mb = { .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
			       .dstAccessMask = VK_ACCESS_HOST_READ_BIT };
	vkCmdPipelineBarrier(c->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL,
			     0, NULL);
	if (vkEndCommandBuffer(c->cmd) != VK_SUCCESS || vr != VKFFT_SUCCESS) {
		snprintf(err, len, "VkFFTAppend failed: error %d", (int)vr);
		return ACCEL_EDEVICE;
	}
	VkSubmitInfo si = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &c->cmd };
	if (vkQueueSubmit(c->queue, 1, &si, c->fence) != VK_SUCCESS ||
	    vkWaitForFences(c->dev, 1, &c->fence, VK_TRUE, UINT64_MAX) != VK_SUCCESS ||
	    vkResetFences(c->dev, 1, &c->fence) != VK_SUCCESS) {
		snprintf(err, len, "the Vulkan queue failed");
		return ACCEL_EDEVICE;
	}
	const float *spec = c->mapped;
	if (f->r2c) {
		for (size_t j = 0; j < kept; j++)
			memcpy(c->half + j * f->bins * 2, c->mapped + j * f->n * 2, f->bins * 8);
		spec = c->half;
	}
	return accel_fft_emit(f, spec, kept, &u->out);
}
