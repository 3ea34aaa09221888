/*
 * vkfft_vulkan.c - VkFFT's Vulkan backend (VKFFT_BACKEND 0) on Vulkan
 * devices: built against the corrected copy of Debian's vkFFT.h that
 * backend.mk makes under $(B)/vkfft (Debian 12's 1.2.26 does not compile
 * in C and fills glslang 12's resource struct by position, so shaders fail
 * at run time), and linked to Debian's static glslang and SPIRV-Tools. Per
 * worker: a logical device with one compute queue, the chain's buffers
 * (vkfft.h: raw samples, frame numbers, window and rows host-visible and
 * mapped once; VkFFT's buffer in device memory), the chain's two compute
 * pipelines (GLSL compiled at open with the same glslang), a command
 * buffer and a fence.
 */
#define VKFFT_BACKEND 0
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>
#include <vkFFT.h>
#include "vkfft.h"

#define MAX_DEVICES 16

/* glslang's process state (the built-in symbol tables every compile
 * needs, built by a process's first glslang_initialize_process and freed by
 * its last glslang_finalize_process) is held from the first open to the
 * release of the last engine: else each compile, ours and initializeVkFFT's,
 * built the tables again (two of ours and one of VkFFT's a worker context).
 * Memory only: glslang starts no thread and opens no file. */
static pthread_mutex_t glslang_lock = PTHREAD_MUTEX_INITIALIZER;
static int glslang_held, live_engines;

/* The instance of one probe, kept while an engine on one of its devices
 * is (vkfft_vk_release destroys it with the last). */
struct vk_instance {
	VkInstance handle;
	int engines;
};

struct vkfft_vk_dev {
	struct vk_instance *inst;
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
 * may hang). */
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

static int vkfft_vk_probe(struct accel_probe *p)
{
	if (accel_probe_sysroot(p)[0] || accel_abandoned_calls() > 0)
		return ACCEL_ENOTSUP;
	/* Never freed when abandoned: the scan may still write to it. */
	struct vk_found *s = calloc(1, sizeof *s);
	if (!s)
		return ACCEL_ENOMEM;
	/* Under ulimit -v a driver may abort on an allocation it cannot make
	 * (lavapipe's LLVM does): it starts here only where it started in a
	 * child process under the same limit. */
	char limit[80], why[96];
	if (accel_address_limit(limit, sizeof limit)[0] && accel_api_survives("vulkan", scan, s, why, sizeof why) < 0) {
		accel_probe_note(p, "vulkan: not run: the Vulkan driver %s in a child process", why);
		free(s);
		return ACCEL_ENOTSUP;
	}
	if (accel_call_bounded(scan, s, 0) != 0) {
		accel_probe_note(p, "vulkan: %s", s->err[0] ? s->err : "the Vulkan driver did not answer in time");
		return ACCEL_ENOTSUP;
	}
	struct vk_instance *inst = calloc(1, sizeof *inst);
	if (!inst) {
		vkDestroyInstance(s->instance, NULL);
		free(s);
		return ACCEL_ENOMEM;
	}
	inst->handle = s->instance;
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
		dev->inst = inst;
		if (accel_probe_add_engine_variant(p, i, "vulkan", dev) < 0) {
			free(dev);
		} else {
			inst->engines++;
			pthread_mutex_lock(&glslang_lock);
			live_engines++;
			pthread_mutex_unlock(&glslang_lock);
		}
		accel_probe_note(p, "vulkan: %s", pr->deviceName);
	}
	free(s);
	if (inst->engines)
		return 0;
	vkDestroyInstance(inst->handle, NULL);
	free(inst);
	return ACCEL_ENOTSUP;
}


static void hold_glslang(void)
{
	pthread_mutex_lock(&glslang_lock);
	if (!glslang_held)
		glslang_held = glslang_initialize_process() != 0;
	pthread_mutex_unlock(&glslang_lock);
}

static void vkfft_vk_release(void *data)
{
	struct vkfft_vk_dev *d = data;
	pthread_mutex_lock(&glslang_lock);
	if (--live_engines == 0 && glslang_held) {
		glslang_finalize_process();
		glslang_held = 0;
	}
	pthread_mutex_unlock(&glslang_lock);
	if (--d->inst->engines == 0) {
		vkDestroyInstance(d->inst->handle, NULL);
		free(d->inst);
	}
	free(d);
}

/*
 * The kernels of the chain (vkfft.h) as one GLSL compute shader, compiled
 * at open with glslang twice (LOAD, then REDUCE) after #define lines of the
 * job's constants: T_name (the sample type, accel_sample_name: T_cf32,
 * T_ci16_be; doubles are converted to floats on the host), SB (its bytes),
 * CPLX, N, HOP, BINS, ROT, AVG, OUT (enum accel_fft_out).
 * The samples are read from a buffer of 32-bit words, bytes and halves by
 * shifting, so no 8- or 16-bit storage feature is needed. Integers are
 * scaled as accel.h says, in the same float operations as the host's
 * loader. Each invocation walks the elements with a grid stride (the
 * dispatch is at most 65535 groups).
 */
static const char vk_source[] =
	"layout(local_size_x = 64) in;\n"
	"layout(std430, binding = 0) readonly buffer Raw { uint raw[]; };\n"
	"layout(std430, binding = 1) readonly buffer Idx { uint idx[]; };\n"
	"layout(std430, binding = 2) readonly buffer Win { float win[]; };\n"
	"layout(std430, binding = 3) buffer Spec { vec2 spec[]; };\n"
	"layout(std430, binding = 4) writeonly buffer Rows { float rows[]; };\n"
	"layout(push_constant) uniform Push { uint total; uint avail; uint kept; float scale; float scale2;\n"
	"				     float db_offset; } pc;\n"
	"uint byte_at(uint b) { return (raw[b >> 2] >> ((b & 3u) * 8u)) & 0xffu; }\n"
	"float s8(uint v) { return float(int(v << 24) >> 24); }\n"
	"float s16(uint v) { return float(int(v << 16) >> 16); }\n"
	"#if defined(T_cf32)\n"
	"vec2 get(uint s) { return vec2(uintBitsToFloat(raw[2u * s]), uintBitsToFloat(raw[2u * s + 1u])); }\n"
	"#elif defined(T_ci16)\n"
	"vec2 get(uint s) { uint w = raw[s]; return vec2(s16(w & 0xffffu), s16(w >> 16)) * (1.0 / 32768.0); }\n"
	"#elif defined(T_ci8)\n"
	"vec2 get(uint s) { return vec2(s8(byte_at(2u * s)), s8(byte_at(2u * s + 1u))) * (1.0 / 128.0); }\n"
	"#elif defined(T_cu8)\n"
	"vec2 get(uint s)\n"
	"{\n"
	"	return (vec2(float(byte_at(2u * s)), float(byte_at(2u * s + 1u))) - 128.0) * (1.0 / 128.0);\n"
	"}\n"
	"#elif defined(T_f32)\n"
	"vec2 get(uint s) { return vec2(uintBitsToFloat(raw[s]), 0.0); }\n"
	"#elif defined(T_i16)\n"
	"vec2 get(uint s) { return vec2(s16((raw[s >> 1] >> ((s & 1u) * 16u)) & 0xffffu) * (1.0 / 32768.0), 0.0); }\n"
	"#elif defined(T_u8)\n"
	"vec2 get(uint s) { return vec2((float(byte_at(s)) - 128.0) * (1.0 / 128.0), 0.0); }\n"
	"#elif defined(T_i8)\n"
	"vec2 get(uint s) { return vec2(s8(byte_at(s)) * (1.0 / 128.0), 0.0); }\n"
	"#else\n"
	/* The others assembled from their bytes: SB bytes a sample, CPLX. */
	"uint word(uint b) { return byte_at(b) | byte_at(b + 1u) << 8 | byte_at(b + 2u) << 16 | byte_at(b + 3u) << 24; }\n"
	"uint word_be(uint b) { return byte_at(b + 3u) | byte_at(b + 2u) << 8 | byte_at(b + 1u) << 16 | byte_at(b) << 24; }\n"
	"float val(uint b)\n"
	"{\n"
	"#if defined(T_ci32) || defined(T_i32)\n"
	"	return float(int(word(b))) * (1.0 / 2147483648.0);\n"
	"#elif defined(T_ci24) || defined(T_i24)\n"
	"	return float(int(byte_at(b) << 8 | byte_at(b + 1u) << 16 | byte_at(b + 2u) << 24) >> 8) * (1.0 / 8388608.0);\n"
	"#elif defined(T_cf32_be) || defined(T_f32_be)\n"
	"	return uintBitsToFloat(word_be(b));\n"
	"#elif defined(T_ci16_be) || defined(T_i16_be)\n"
	"	return s16(byte_at(b + 1u) | byte_at(b) << 8) * (1.0 / 32768.0);\n"
	"#else\n"
	"	return float(int(word_be(b))) * (1.0 / 2147483648.0);\n"
	"#endif\n"
	"}\n"
	"vec2 get(uint s) { uint b = s * SB; return vec2(val(b), CPLX != 0 ? val(b + SB / 2u) : 0.0); }\n"
	"#endif\n"
	"void main()\n"
	"{\n"
	"	for (uint g = gl_GlobalInvocationID.x; g < pc.total; g += gl_NumWorkGroups.x * 64u) {\n"
	"#ifdef LOAD\n"
	/* Element g of the kept frames: frame g / N, sample g % N. */
	"		uint k = g / N, i = g % N, s = idx[k] * HOP + i;\n"
	"		vec2 v = s < pc.avail ? get(s) : vec2(0.0);\n"
	"		spec[g] = v * win[i];\n"
	"#else\n"
	/* Value j of row r. */
	"		uint r = g / BINS, j = g % BINS, c = j + ROT;\n"
	"		if (c >= BINS)\n"
	"			c -= BINS;\n"
	"#if OUT == 0\n"
	"		vec2 x = spec[r * N + c] * pc.scale;\n"
	"		rows[2u * g] = x.x;\n"
	"		rows[2u * g + 1u] = x.y;\n"
	"#else\n"
	"		uint k0 = r * AVG, k1 = min(k0 + AVG, pc.kept);\n"
	"		float acc = 0.0;\n"
	"		for (uint k = k0; k < k1; k++) {\n"
	"			vec2 x = spec[k * N + c];\n"
	"			float p = x.x * x.x + x.y * x.y;\n"
	"#if OUT == 1\n"
	"			acc += sqrt(p);\n"
	"#else\n"
	"			acc += p;\n"
	"#endif\n"
	"		}\n"
	"		float v = acc / float(k1 - k0);\n"
	"#if OUT == 1\n"
	"		rows[g] = v * pc.scale;\n"
	"#elif OUT == 2\n"
	"		rows[g] = v * pc.scale2;\n"
	"#else\n"
	/* 10 log10(x) = 10 log10(2) log2(x). */
	"		rows[g] = 3.0102999566398120 * log2(v * pc.scale2) + pc.db_offset;\n"
	"#endif\n"
	"#endif\n"
	"#endif\n"
	"	}\n"
	"}\n";

/* The push constants of both kernels. */
struct vk_push {
	uint32_t total;               /* elements: kept * N (load) or rows * bins (reduce) */
	uint32_t avail;               /* samples of the unit's input */
	uint32_t kept;
	float scale, scale2, db_offset;
};

/* A buffer and its memory (mapped when host-visible). */
struct vk_buf {
	VkBuffer buffer;
	VkDeviceMemory memory;
	void *map;
	VkDeviceSize size;
};

struct vk_ctx {
	const struct accel_fft *f;
	struct vkfft_chain ch;
	struct vkfft_shape shape;     /* what it was made for (vkfft_vk_adopt) */
	VkPhysicalDevice pd;
	VkDevice dev;
	VkQueue queue;
	VkCommandPool pool;
	VkCommandBuffer cmd;
	VkFence fence;
	/* raw, idx, win, spec (VkFFT's buffer), rows: bindings 0 to 4. */
	struct vk_buf buf[5];
	uint64_t bytes;               /* of spec */
	VkDescriptorSetLayout dsl;
	VkDescriptorPool dpool;
	VkDescriptorSet set;
	VkPipelineLayout layout;
	VkShaderModule module[2];
	VkPipeline load, reduce;
	VkFFTApplication app;
	int app_ok;
};

static void vkfft_vk_close(void *ctx)
{
	struct vk_ctx *c = ctx;
	if (!c)
		return;
	if (c->app_ok)
		deleteVkFFT(&c->app);
	if (c->dev) {
		vkDestroyPipeline(c->dev, c->load, NULL);
		vkDestroyPipeline(c->dev, c->reduce, NULL);
		for (int i = 0; i < 2; i++)
			vkDestroyShaderModule(c->dev, c->module[i], NULL);
		vkDestroyPipelineLayout(c->dev, c->layout, NULL);
		vkDestroyDescriptorPool(c->dev, c->dpool, NULL);
		vkDestroyDescriptorSetLayout(c->dev, c->dsl, NULL);
		for (int i = 0; i < 5; i++) {
			if (c->buf[i].map)
				vkUnmapMemory(c->dev, c->buf[i].memory);
			vkDestroyBuffer(c->dev, c->buf[i].buffer, NULL);
			vkFreeMemory(c->dev, c->buf[i].memory, NULL);
		}
		if (c->fence)
			vkDestroyFence(c->dev, c->fence, NULL);
		if (c->pool)
			vkDestroyCommandPool(c->dev, c->pool, NULL);
		vkDestroyDevice(c->dev, NULL);
	}
	vkfft_chain_free(&c->ch);
	vkfft_shape_free(&c->shape);
	free(c);
}

static int vkfft_vk_adopt(void *ctx, const struct accel_fft *f)
{
	struct vk_ctx *c = ctx;
	struct vkfft_shape s;
	int same = vkfft_shape_init(&s, f, 1) == 0 && vkfft_shape_equal(&s, &c->shape);
	vkfft_shape_free(&s);
	if (same)
		c->f = f;
	return same;
}

/* A storage buffer of `size` bytes in memory with the flags `want`, and
 * `prefer` too when a memory type has them; mapped when host-visible. */
static int vk_buffer(struct vk_ctx *c, struct vk_buf *b, VkDeviceSize size, VkMemoryPropertyFlags want,
		     VkMemoryPropertyFlags prefer)
{
	VkBufferCreateInfo bi = { .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = size,
				  .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
					   VK_BUFFER_USAGE_TRANSFER_DST_BIT,
				  .sharingMode = VK_SHARING_MODE_EXCLUSIVE };
	b->size = size;
	if (vkCreateBuffer(c->dev, &bi, NULL, &b->buffer) != VK_SUCCESS)
		return ACCEL_EDEVICE;
	VkMemoryRequirements req;
	vkGetBufferMemoryRequirements(c->dev, b->buffer, &req);
	VkPhysicalDeviceMemoryProperties mp;
	vkGetPhysicalDeviceMemoryProperties(c->pd, &mp);
	uint32_t type = UINT32_MAX;
	for (int pass = 0; pass < 2 && type == UINT32_MAX; pass++) {
		VkMemoryPropertyFlags flags = pass ? want : want | prefer;
		for (uint32_t i = 0; i < mp.memoryTypeCount && type == UINT32_MAX; i++)
			if ((req.memoryTypeBits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & flags) == flags)
				type = i;
	}
	VkMemoryAllocateInfo ai = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size,
				    .memoryTypeIndex = type };
	if (type == UINT32_MAX || vkAllocateMemory(c->dev, &ai, NULL, &b->memory) != VK_SUCCESS ||
	    vkBindBufferMemory(c->dev, b->buffer, b->memory, 0) != VK_SUCCESS)
		return ACCEL_EDEVICE;
	if ((want & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) &&
	    vkMapMemory(c->dev, b->memory, 0, size, 0, &b->map) != VK_SUCCESS)
		return ACCEL_EDEVICE;
	return 0;
}

/* SPIR-V of the chain's shader with the job's #defines and `stage`
 * ("LOAD" or "REDUCE") into a module. */
static int vk_module(struct vk_ctx *c, const struct accel_fft *f, const char *stage, VkShaderModule *m)
{
	size_t len = sizeof vk_source + 512;
	char *src = malloc(len);
	if (!src)
		return ACCEL_ENOMEM;
	snprintf(src, len,
		 "#version 450\n#define %s 1\n#define T_%s 1\n#define SB %zuu\n#define CPLX %d\n#define N %zuu\n"
		 "#define HOP %zuu\n#define BINS %zuu\n#define ROT %zuu\n#define AVG %uu\n#define OUT %d\n%s",
		 stage, accel_sample_name(c->ch.type), c->ch.sample_bytes, accel_sample_is_complex(c->ch.type), f->n, f->hop, f->bins, c->ch.rot, f->average, (int)f->out, vk_source);
	glslang_input_t in = {
		.language = GLSLANG_SOURCE_GLSL,
		.stage = GLSLANG_STAGE_COMPUTE,
		.client = GLSLANG_CLIENT_VULKAN,
		.client_version = GLSLANG_TARGET_VULKAN_1_0,
		.target_language = GLSLANG_TARGET_SPV,
		.target_language_version = GLSLANG_TARGET_SPV_1_0,
		.code = src,
		.default_version = 450,
		.default_profile = GLSLANG_NO_PROFILE,
		.messages = GLSLANG_MSG_DEFAULT_BIT,
		.resource = glslang_default_resource(),
	};
	int rc = ACCEL_EDEVICE;
	glslang_initialize_process();
	glslang_shader_t *sh = glslang_shader_create(&in);
	glslang_program_t *prog = glslang_program_create();
	if (sh && prog && glslang_shader_preprocess(sh, &in) && glslang_shader_parse(sh, &in)) {
		glslang_program_add_shader(prog, sh);
		if (glslang_program_link(prog, GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT)) {
			glslang_program_SPIRV_generate(prog, in.stage);
			VkShaderModuleCreateInfo mi = {
				.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
				.codeSize = glslang_program_SPIRV_get_size(prog) * sizeof(uint32_t),
				.pCode = glslang_program_SPIRV_get_ptr(prog),
			};
			if (!glslang_program_SPIRV_get_messages(prog) &&
			    vkCreateShaderModule(c->dev, &mi, NULL, m) == VK_SUCCESS)
				rc = 0;
		}
	}
	if (prog)
		glslang_program_delete(prog);
	if (sh)
		glslang_shader_delete(sh);
	glslang_finalize_process();
	free(src);
	return rc;
}

/* The chain's buffers (the window written once), descriptor set and the
 * two pipelines. */
static int vk_chain_open(struct vk_ctx *c, const struct accel_fft *f)
{
	VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
	VkMemoryPropertyFlags local = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
	if (vk_buffer(c, &c->buf[0], c->ch.in_bytes, host, local) < 0 ||
	    vk_buffer(c, &c->buf[1], c->ch.frames * 4, host, local) < 0 ||
	    vk_buffer(c, &c->buf[2], f->n * sizeof(float), host, local) < 0 ||
	    vk_buffer(c, &c->buf[3], c->bytes, 0, local) < 0 ||
	    vk_buffer(c, &c->buf[4], c->ch.rows * c->ch.vals * sizeof(float), host,
		      VK_MEMORY_PROPERTY_HOST_CACHED_BIT) < 0)
		return ACCEL_EDEVICE;
	memcpy(c->buf[2].map, f->win, f->n * sizeof(float));
	VkDescriptorSetLayoutBinding b[5];
	VkDescriptorBufferInfo info[5];
	VkWriteDescriptorSet w[5];
	for (uint32_t i = 0; i < 5; i++) {
		b[i] = (VkDescriptorSetLayoutBinding){ .binding = i, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
						       .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT };
		info[i] = (VkDescriptorBufferInfo){ .buffer = c->buf[i].buffer, .offset = 0, .range = VK_WHOLE_SIZE };
	}
	VkDescriptorSetLayoutCreateInfo li = { .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
					       .bindingCount = 5, .pBindings = b };
	VkDescriptorPoolSize ps = { .type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = 5 };
	VkDescriptorPoolCreateInfo pi = { .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = 1,
					  .poolSizeCount = 1, .pPoolSizes = &ps };
	VkPushConstantRange pr = { .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = sizeof(struct vk_push) };
	if (vkCreateDescriptorSetLayout(c->dev, &li, NULL, &c->dsl) != VK_SUCCESS ||
	    vkCreateDescriptorPool(c->dev, &pi, NULL, &c->dpool) != VK_SUCCESS)
		return ACCEL_EDEVICE;
	VkDescriptorSetAllocateInfo ai = { .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
					   .descriptorPool = c->dpool, .descriptorSetCount = 1, .pSetLayouts = &c->dsl };
	VkPipelineLayoutCreateInfo pli = { .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1,
					   .pSetLayouts = &c->dsl, .pushConstantRangeCount = 1,
					   .pPushConstantRanges = &pr };
	if (vkAllocateDescriptorSets(c->dev, &ai, &c->set) != VK_SUCCESS ||
	    vkCreatePipelineLayout(c->dev, &pli, NULL, &c->layout) != VK_SUCCESS)
		return ACCEL_EDEVICE;
	for (uint32_t i = 0; i < 5; i++)
		w[i] = (VkWriteDescriptorSet){ .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = c->set,
					       .dstBinding = i, .descriptorCount = 1,
					       .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .pBufferInfo = &info[i] };
	vkUpdateDescriptorSets(c->dev, 5, w, 0, NULL);
	if (vk_module(c, f, "LOAD", &c->module[0]) < 0 || vk_module(c, f, "REDUCE", &c->module[1]) < 0)
		return ACCEL_EDEVICE;
	VkComputePipelineCreateInfo ci[2];
	for (int i = 0; i < 2; i++)
		ci[i] = (VkComputePipelineCreateInfo){
			.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
			.stage = { .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
				   .stage = VK_SHADER_STAGE_COMPUTE_BIT, .module = c->module[i], .pName = "main" },
			.layout = c->layout,
		};
	VkPipeline p[2];
	if (vkCreateComputePipelines(c->dev, VK_NULL_HANDLE, 2, ci, NULL, p) != VK_SUCCESS)
		return ACCEL_EDEVICE;
	c->load = p[0];
	c->reduce = p[1];
	return 0;
}

static int vkfft_vk_open(const struct accel_engine *e, const struct accel_fft *f, void **ctx)
{
	const struct vkfft_vk_dev *d = e->data;
	struct vk_ctx *c = calloc(1, sizeof *c);
	if (!c)
		return ACCEL_ENOMEM;
	c->f = f;
	if (vkfft_chain_init(&c->ch, f, 1) < 0 || vkfft_shape_init(&c->shape, f, 1) < 0) {
		vkfft_chain_free(&c->ch);
		vkfft_shape_free(&c->shape);
		free(c);
		return ACCEL_ENOMEM;
	}
	c->bytes = (uint64_t)c->ch.batch * f->n * 8;
	c->pd = d->pd;
	/* The shaders index bytes and values in 32 bits. */
	if (c->ch.in_bytes > UINT32_MAX || c->bytes / 8 > UINT32_MAX) {
		vkfft_vk_close(c);
		return ACCEL_ENOTSUP;
	}
	hold_glslang();
	float prio = 1;
	VkDeviceQueueCreateInfo qi = { .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = d->family,
				       .queueCount = 1, .pQueuePriorities = &prio };
	VkDeviceCreateInfo di = { .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1,
				  .pQueueCreateInfos = &qi };
	VkCommandPoolCreateInfo pi = { .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
				       .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, .queueFamilyIndex = d->family };
	VkFenceCreateInfo fi = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
	if (vkCreateDevice(d->pd, &di, NULL, &c->dev) != VK_SUCCESS) {
		vkfft_vk_close(c);
		return ACCEL_EDEVICE;
	}
	vkGetDeviceQueue(c->dev, d->family, 0, &c->queue);
	VkCommandBufferAllocateInfo ci = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
					   .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1 };
	if (vkCreateCommandPool(c->dev, &pi, NULL, &c->pool) != VK_SUCCESS ||
	    vkCreateFence(c->dev, &fi, NULL, &c->fence) != VK_SUCCESS || vk_chain_open(c, f) < 0 ||
	    (ci.commandPool = c->pool, vkAllocateCommandBuffers(c->dev, &ci, &c->cmd) != VK_SUCCESS)) {
		vkfft_vk_close(c);
		return ACCEL_EDEVICE;
	}
	VkFFTConfiguration cfg = { 0 };
	cfg.FFTdim = 1;
	cfg.size[0] = f->n;
	cfg.numberBatches = c->ch.batch;
	cfg.physicalDevice = &c->pd;
	cfg.device = &c->dev;
	cfg.queue = &c->queue;
	cfg.commandPool = &c->pool;
	cfg.fence = &c->fence;
	cfg.bufferSize = &c->bytes;
	cfg.buffer = &c->buf[3].buffer;
	if (initializeVkFFT(&c->app, cfg) != VKFFT_SUCCESS) {
		vkfft_vk_close(c);
		return ACCEL_EDEVICE;
	}
	c->app_ok = 1;
	*ctx = c;
	return 0;
}

/* Work of one kernel: its pipeline, our descriptor set (VkFFT binds its
 * own in between), the push constants and enough groups of 64. */
static void vk_dispatch(struct vk_ctx *c, VkPipeline p, const struct vk_push *pc)
{
	uint32_t groups = (pc->total + 63) / 64;
	vkCmdBindPipeline(c->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p);
	vkCmdBindDescriptorSets(c->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, c->layout, 0, 1, &c->set, 0, NULL);
	vkCmdPushConstants(c->cmd, c->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof *pc, pc);
	vkCmdDispatch(c->cmd, groups < 65535 ? groups : 65535, 1, 1);
}

/* A compute shader's writes made visible to the next stage's reads. */
static void vk_barrier(struct vk_ctx *c, VkPipelineStageFlags dst_stage, VkAccessFlags dst)
{
	VkMemoryBarrier mb = { .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
			       .dstAccessMask = dst };
	vkCmdPipelineBarrier(c->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, dst_stage, 0, 1, &mb, 0, NULL, 0, NULL);
}

/* One unit: the raw samples and frame numbers into the mapped buffers,
 * then load, FFT and reduce in one command buffer with barriers between,
 * one submission, the rows read from their mapped buffer. */
static int vkfft_vk_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	struct vk_ctx *c = ctx;
	const struct accel_fft *f = c->f;
	const void *raw;
	size_t bytes, avail;
	size_t kept = vkfft_chain_unit(&c->ch, f, u, &raw, &bytes, &avail);
	if (!kept)
		return 0;
	size_t rows = accel_fft_rows(f, kept);
	memcpy(c->buf[0].map, raw, bytes);
	memcpy(c->buf[1].map, c->ch.idx, kept * 4);
	struct vk_push pc = { .total = (uint32_t)(kept * f->n), .avail = (uint32_t)avail, .kept = (uint32_t)kept,
			      .scale = c->ch.scale, .scale2 = c->ch.scale2, .db_offset = (float)f->db_offset };
	VkCommandBufferBeginInfo bi = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
					.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT };
	VkFFTLaunchParams lp = { 0 };
	lp.commandBuffer = &c->cmd;
	lp.buffer = &c->buf[3].buffer;
	if (vkResetCommandBuffer(c->cmd, 0) != VK_SUCCESS || vkBeginCommandBuffer(c->cmd, &bi) != VK_SUCCESS) {
		snprintf(err, len, "cannot record a command buffer");
		return ACCEL_EDEVICE;
	}
	VkAccessFlags rw = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
	vk_dispatch(c, c->load, &pc);
	vk_barrier(c, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, rw);
	VkFFTResult vr = VkFFTAppend(&c->app, f->inverse ? 1 : -1, &lp);
	vk_barrier(c, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, rw);
	pc.total = (uint32_t)(rows * f->bins);
	vk_dispatch(c, c->reduce, &pc);
	/* The rows, visible to the host once the fence is signalled. */
	vk_barrier(c, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
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
	return accel_fft_put_rows(f, c->buf[4].map, rows, &u->out);
}

const struct vkfft_api vkfft_api_vulkan = {
	.version = VKFFT_API_VERSION,
	.probe = vkfft_vk_probe,
	.open = vkfft_vk_open,
	.run = vkfft_vk_run,
	.close = vkfft_vk_close,
	.adopt = vkfft_vk_adopt,
	.release = vkfft_vk_release,
};
