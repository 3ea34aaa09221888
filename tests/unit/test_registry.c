/*
 * test_registry.c - the registry: backends that describe themselves (the
 * classes they find, their probe priority, their APIs' kinds), engines with
 * variants named BACKEND.VARIANT:DEVICE, device ids that do not depend on
 * the order of probing, the CPU device for plugins and --fallback cpu on a
 * plugin's CPU engine, software devices looked for only where they could
 * lead or are named, the limits of the registry with their reasons,
 * engine data given back to its backend when the context is freed, and a
 * backend's verify() run where its engine is used: for the engines an auto
 * route serves first, for those named, else by the stream before it first
 * opens the engine (a fallback), once, its failure the engine's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <accel/stream.h>
#include "core.h"

static struct accel_device gpu(const char *pci, const char *vendor, const char *model)
{
	struct accel_device d;
	memset(&d, 0, sizeof d);
	d.cls = ACCEL_CLASS_GPU;
	d.numa_node = -1;
	snprintf(d.pci_address, sizeof d.pci_address, "%s", pci);
	snprintf(d.vendor, sizeof d.vendor, "%s", vendor);
	snprintf(d.model, sizeof d.model, "%s", model);
	return d;
}

static int add_gpu(struct accel_probe *p, const char *pci, const char *vendor, const char *model)
{
	struct accel_device d = gpu(pci, vendor, model);
	int dev = accel_probe_add_device(p, &d);
	assert_true(dev >= 0);
	assert_true(accel_probe_add_engine(p, dev, NULL) >= 0);
	return 0;
}

/* ------------------------------------------------------ fake backends */

static char probed[256];   /* names of the backends probed, in order */

static void mark(struct accel_probe *p, const char *name)
{
	(void)p;
	strcat(probed, name);
	strcat(probed, " ");
}

/* Three GPU finders: a PCI GPU late on the bus, one early, one without PCI. */
static int late_probe(struct accel_probe *p)
{
	mark(p, "late");
	return add_gpu(p, "0000:b1:00.0", "NVIDIA", "H100");
}
static int early_probe(struct accel_probe *p)
{
	mark(p, "early");
	add_gpu(p, "0000:17:00.0", "NVIDIA", "H100");
	return add_gpu(p, "", "Mesa", "llvmpipe");
}
static int soft_probe(struct accel_probe *p)
{
	mark(p, "soft");
	return add_gpu(p, "", "The pocl project", "pthread");
}
static int nic_probe(struct accel_probe *p)
{
	mark(p, "nics");
	return 0;
}

static const char *const upper_ops[] = { "upper", NULL };

static int upper_supports(const struct accel_engine *e, const struct accel_op *op, double *prior, char *reason,
			  size_t len)
{
	*prior = 100;
	snprintf(reason, len, "fake");
	return 0;
}
static int upper_open(const struct accel_engine *e, const struct accel_op *op, void **ctx)
{
	*ctx = (void *)e;
	return 0;
}
static int upper_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	if (accel_buf_reserve(&u->out, u->in.len + 1) < 0)
		return ACCEL_ENOMEM;
	for (size_t i = 0; i < u->in.len; i++)
		u->out.data[i] = (uint8_t)toupper(u->in.data[i]);
	u->out.len = u->in.len;
	return 0;
}
static void upper_close(void *ctx) { }

/* One GPU with two variants of the backend on it. */
static int variants_probe(struct accel_probe *p)
{
	struct accel_device d = gpu("0000:17:00.0", "NVIDIA", "H100");
	int dev = accel_probe_add_device(p, &d);
	assert_true(dev >= 0);
	assert_true(accel_probe_add_engine_variant(p, dev, "cuda", NULL) >= 0);
	assert_true(accel_probe_add_engine_variant(p, dev, "tensorrt", NULL) >= 0);
	/* The same variant twice, or a name that is no variant, is refused. */
	assert_int_equal(accel_probe_add_engine_variant(p, dev, "cuda", NULL), ACCEL_EINVAL);
	assert_int_equal(accel_probe_add_engine_variant(p, dev, "Bad.Name", NULL), ACCEL_EINVAL);
	assert_int_equal(accel_probe_add_engine_variant(p, dev, "waytoolongvariant", NULL), ACCEL_EINVAL);
	return 0;
}

/* A plugin's engine on the CPU device, for an op the built-in cpu lacks. */
static int cpuplug_probe(struct accel_probe *p)
{
	mark(p, "cpuplug");
	int cpu = accel_probe_cpu_device(p);
	assert_true(cpu >= 0);
	return accel_probe_add_engine(p, cpu, NULL) < 0 ? ACCEL_ENOMEM : 0;
}

/* As the openssl backend: an engine on the CPU device, and a device of
 * its own (a provider) only when the probe lists devices. */
static int lists;   /* probes that listed devices */
static int lister_probe(struct accel_probe *p)
{
	mark(p, "lister");
	int cpu = accel_probe_cpu_device(p);
	assert_true(cpu >= 0);
	if (accel_probe_list_devices(p)) {
		struct accel_device d = { .cls = ACCEL_CLASS_CRYPTO, .numa_node = -1 };
		snprintf(d.model, sizeof d.model, "provider");
		accel_device_add_api(&d, "lister", 1, NULL);
		assert_true(accel_probe_add_device(p, &d) >= 0);
		lists++;
	}
	accel_probe_note(p, "probed");
	return accel_probe_add_engine(p, cpu, NULL) < 0 ? ACCEL_ENOMEM : 0;
}

/* As the opencv backend: an engine on the CPU device, and on a software
 * GPU (PoCL's) only where the probe is to look for such devices. */
static int softs;   /* probes that looked for software devices */
static int softcl_probe(struct accel_probe *p)
{
	mark(p, "softcl");
	int cpu = accel_probe_cpu_device(p);
	assert_true(cpu >= 0);
	if (accel_probe_software_devices(p)) {
		struct accel_device d = gpu("", "The pocl project", "pthread");
		d.software = 1;
		int dev = accel_probe_add_device(p, &d);
		assert_true(dev >= 0);
		assert_true(accel_probe_add_engine_variant(p, dev, "cl", NULL) >= 0);
		softs++;
	}
	return accel_probe_add_engine(p, cpu, NULL) < 0 ? ACCEL_ENOMEM : 0;
}

/* More devices than the context holds. */
static int many_probe(struct accel_probe *p)
{
	int last = 0;
	for (int i = 0; i < CORE_MAX_DEVICES + 1; i++) {
		char pci[16];
		snprintf(pci, sizeof pci, "0000:%02x:00.0", i);
		struct accel_device d = gpu(pci, "v", "m");
		last = accel_probe_add_device(p, &d);
	}
	return last;
}

/* Devices without a PCI address seen through APIs, as lavapipe and PoCL
 * are: "vk" and "cl" only discover (Vulkan, OpenCL); "ocv" runs an
 * operation on the OpenCL device it finds itself (as OpenCV does), naming
 * its vendor otherwise; "fftvk" on the Vulkan one (as VkFFT does, with the
 * vendor's number and no driver). A GPU without PCI address ("Mali") is
 * found by both APIs with one UUID; its twin has another. */
static struct accel_device view(const char *api, const char *vendor, const char *model, const char *driver,
				int software, const char *uuid)
{
	struct accel_device d = gpu("", vendor, model);
	snprintf(d.driver, sizeof d.driver, "%s", driver);
	d.software = software;
	accel_device_add_api(&d, api, 1, NULL);
	if (uuid)
		accel_device_set(&d, "uuid", uuid);
	return d;
}

static int add_view(struct accel_probe *p, struct accel_device d, const char *variant)
{
	int dev = accel_probe_add_device(p, &d);
	assert_true(dev >= 0);
	assert_true(accel_probe_add_engine_variant(p, dev, variant, NULL) >= 0);
	return 0;
}

#define LVP_UUID "6d657361-3232-2e33-2e36-000000000000"
#define MALI_UUID "00112233-4455-6677-8899-aabbccddeeff"
static int vk_probe(struct accel_probe *p)
{
	mark(p, "vk");
	add_view(p, view("vulkan", "Mesa", "llvmpipe (LLVM 15.0.6, 256 bits)", "llvmpipe", 1, LVP_UUID), NULL);
	return add_view(p, view("vulkan", "ARM", "Mali-G78", "", 0, MALI_UUID), NULL);
}
static int cl_probe(struct accel_probe *p)
{
	mark(p, "cl");
	add_view(p, view("opencl", "AuthenticAMD", "pthread-skylake", "Portable Computing Language", 1, NULL), NULL);
	add_view(p, view("opencl", "ARM", "Mali-G78 r0p0", "ARM Platform", 0, MALI_UUID), NULL);
	/* The twin: same model, another UUID. */
	return add_view(p, view("opencl", "ARM", "Mali-G78 r0p0", "ARM Platform", 0, "ff"), NULL);
}
static int ocv_probe(struct accel_probe *p)
{
	mark(p, "ocv");
	return add_view(p, view("opencl", "AMD", "pthread-skylake", "Portable Computing Language", 1, NULL), "opencl");
}
static int fftvk_probe(struct accel_probe *p)
{
	mark(p, "fftvk");
	return add_view(p, view("vulkan", "0x10005", "llvmpipe (LLVM 15.0.6, 256 bits)", "", 1, NULL), "vulkan");
}

static const struct accel_api_info late_apis[] = { { "cuda", ACCEL_API_COMPUTE }, { "nvdec", ACCEL_API_VIDEO_DECODE }, { NULL, 0 } };
static const struct accel_api_info early_apis[] = { { "vulkan", ACCEL_API_COMPUTE }, { NULL, 0 } };
static const struct accel_api_info video_apis[] = { { "vaapi", ACCEL_API_VIDEO }, { "nvdec", ACCEL_API_VIDEO_DECODE }, { NULL, 0 } };

#define GPU_CLASSES ACCEL_CLASS_BIT(ACCEL_CLASS_GPU)
static const struct accel_backend late_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "late", .probe = late_probe,
	.classes = GPU_CLASSES | ACCEL_CLASS_BIT(ACCEL_CLASS_VIDEO), .priority = 10, .apis = late_apis,
};
static const struct accel_backend early_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "early", .probe = early_probe,
	.classes = GPU_CLASSES, .priority = 20, .apis = early_apis,
};
static const struct accel_backend soft_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "soft", .probe = soft_probe, .classes = GPU_CLASSES, .priority = 30,
};
static const struct accel_backend nic_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "nics", .probe = nic_probe,
	.classes = ACCEL_CLASS_BIT(ACCEL_CLASS_NIC), .priority = 5,
};
static const struct accel_backend video_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "video", .probe = nic_probe,
	.classes = ACCEL_CLASS_BIT(ACCEL_CLASS_VIDEO), .priority = 80, .apis = video_apis,
};
static const struct accel_backend variants_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "onnx", .ops = upper_ops, .probe = variants_probe,
	.supports = upper_supports, .open = upper_open, .run = upper_run, .close = upper_close,
	.classes = GPU_CLASSES | ACCEL_CLASS_BIT(ACCEL_CLASS_CPU), .priority = 50,
};
static const struct accel_backend cpuplug_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "cpuplug", .ops = upper_ops, .probe = cpuplug_probe,
	.supports = upper_supports, .open = upper_open, .run = upper_run, .close = upper_close,
	.classes = ACCEL_CLASS_BIT(ACCEL_CLASS_CPU), .priority = 60,
};
static const struct accel_backend softcl_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "softcl", .ops = upper_ops, .probe = softcl_probe,
	.supports = upper_supports, .open = upper_open, .run = upper_run, .close = upper_close,
};
static const struct accel_backend lister_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "lister", .ops = upper_ops, .probe = lister_probe,
	.supports = upper_supports, .open = upper_open, .run = upper_run, .close = upper_close,
	.classes = ACCEL_CLASS_BIT(ACCEL_CLASS_CRYPTO), .priority = 60,
};
static const struct accel_backend vk_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "vk", .probe = vk_probe, .classes = GPU_CLASSES, .priority = 20,
};
static const struct accel_backend cl_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "cl", .probe = cl_probe, .classes = GPU_CLASSES, .priority = 30,
};
static const struct accel_backend ocv_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "ocv", .ops = upper_ops, .probe = ocv_probe,
	.supports = upper_supports, .open = upper_open, .run = upper_run, .close = upper_close, .priority = 65,
};
static const struct accel_backend fftvk_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "fftvk", .ops = upper_ops, .probe = fftvk_probe,
	.supports = upper_supports, .open = upper_open, .run = upper_run, .close = upper_close,
	.classes = GPU_CLASSES, .priority = 35,
};
static const struct accel_backend many_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "many", .probe = many_probe, .classes = GPU_CLASSES,
};

/* An engine on the CPU device whose check (verify) costs too much for
 * supports(), as OpenCV reading a model: its prior, whether the check
 * passes, and the checks made. */
static double checked_prior;
static int checked_fails, checks;
static int checked_supports(const struct accel_engine *e, const struct accel_op *op, double *prior, char *reason,
			    size_t len)
{
	*prior = checked_prior;
	snprintf(reason, len, "fake, checked");
	return 0;
}
static int checked_verify(const struct accel_engine *e, const struct accel_op *op, char *reason, size_t len)
{
	__atomic_add_fetch(&checks, 1, __ATOMIC_RELAXED);
	if (!checked_fails)
		return 0;
	snprintf(reason, len, "the fake check failed");
	return ACCEL_ENOTSUP;
}
static const struct accel_backend checked_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "checked", .ops = upper_ops, .probe = cpuplug_probe,
	.supports = checked_supports, .verify = checked_verify, .open = upper_open, .run = upper_run,
	.close = upper_close, .classes = ACCEL_CLASS_BIT(ACCEL_CLASS_CPU), .priority = 60,
};

/* A backend whose engines hold data: two with a number each (malloc'd), one
 * with none; release records the numbers it is given back. */
static int released[4], nreleased;
static int owner_probe(struct accel_probe *p)
{
	struct accel_device d = gpu("0000:17:00.0", "NVIDIA", "H100");
	int dev = accel_probe_add_device(p, &d), cpu = accel_probe_cpu_device(p);
	assert_true(dev >= 0 && cpu >= 0);
	for (int i = 0; i < 2; i++) {
		int *v = malloc(sizeof *v);
		assert_non_null(v);
		*v = i + 1;
		assert_true(accel_probe_add_engine(p, i ? dev : cpu, v) >= 0);
	}
	assert_true(accel_probe_add_engine_variant(p, dev, "bare", NULL) >= 0);
	return 0;
}
static void owner_release(const struct accel_engine *e)
{
	if (nreleased < 4)
		released[nreleased] = *(int *)e->data;
	nreleased++;
	free(e->data);
}
static const struct accel_backend owner_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "owner", .probe = owner_probe, .classes = GPU_CLASSES,
	.release = owner_release,
};

static void add_backend(struct accel_ctx *ctx, const struct accel_backend *b)
{
	struct accel_backend_status *s = core_backend_add(ctx, b->name, "test_registry.c");
	assert_non_null(s);
	s->backend = b;
}

/* A context holding only the built-in cpu backend and the fakes given. */
static struct accel_ctx *new_ctx(const struct accel_backend *const *b)
{
	unsetenv("ACCEL_BACKEND_PATH");
	struct accel_ctx *ctx = accel_ctx_new();
	assert_non_null(ctx);
	ctx->nbackends = 1;   /* cpu; no plugin of build/tests/plugins */
	assert_string_equal(ctx->backends[0].name, "cpu");
	for (; *b; b++)
		add_backend(ctx, *b);
	probed[0] = 0;
	return ctx;
}

static const char *id_at(struct accel_ctx *ctx, const char *pci, const char *model)
{
	for (int i = 0; i < accel_device_count(ctx); i++) {
		const struct accel_device *d = accel_device_at(ctx, i);
		if (!strcmp(d->pci_address, pci) && !strcmp(d->model, model))
			return d->id;
	}
	return "absent";
}

static int has_engine(struct accel_ctx *ctx, const char *name)
{
	for (int i = 0; i < accel_engine_count(ctx); i++)
		if (!strcmp(accel_engine_at(ctx, i)->name, name))
			return 1;
	return 0;
}

/* ------------------------------------------------------------------ tests */

static void ids_do_not_depend_on_probe_order(void **state)
{
	(void)state;
	static const char *const orders[][3] = {
		{ "late", "early", "soft" }, { "soft", "early", "late" }, { "early", "soft", "late" },
		{ "soft", "late", "early" },
	};
	const struct accel_backend *const b[] = { &late_backend, &early_backend, &soft_backend, NULL };
	for (size_t o = 0; o < sizeof orders / sizeof orders[0]; o++) {
		struct accel_ctx *ctx = new_ctx(b);
		for (int k = 0; k < 3; k++)
			assert_int_equal(accel_probe_backend(ctx, orders[o][k]), 0);
		/* PCI bus order first, then the others by model. */
		assert_string_equal(id_at(ctx, "0000:17:00.0", "H100"), "gpu0");
		assert_string_equal(id_at(ctx, "0000:b1:00.0", "H100"), "gpu1");
		assert_string_equal(id_at(ctx, "", "llvmpipe"), "gpu2");
		assert_string_equal(id_at(ctx, "", "pthread"), "gpu3");
		/* Engine names follow their device's id. */
		assert_true(has_engine(ctx, "late:gpu1"));
		assert_true(has_engine(ctx, "early:gpu0"));
		assert_true(has_engine(ctx, "early:gpu2"));
		assert_true(has_engine(ctx, "soft:gpu3"));
		accel_ctx_free(ctx);
	}
}

/* Whichever of them ran, each device has the id accel-detect (every probe)
 * gives it: the discovery backends of the class run before a device
 * without a PCI address is numbered, and two views of one device are one. */
static void ids_do_not_depend_on_which_probes_ran(void **state)
{
	(void)state;
	static const char *const runs[][4] = {
		{ "vk", "cl", "ocv", "fftvk" }, { "ocv" }, { "fftvk" }, { "fftvk", "ocv" }, { "cl" },
	};
	const struct accel_backend *const b[] = { &fftvk_backend, &ocv_backend, &cl_backend, &vk_backend, NULL };
	for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
		struct accel_ctx *ctx = new_ctx(b);
		for (int i = 0; i < 4 && runs[k][i]; i++)
			assert_int_equal(accel_probe_backend(ctx, runs[k][i]), 0);
		/* Hardware first, then by model: the Mali and its twin, llvmpipe,
		 * PoCL; a device two probes found is listed once, as the
		 * discovery backend described it. */
		assert_int_equal(accel_device_count(ctx), 4);
		assert_string_equal(id_at(ctx, "", "Mali-G78"), "gpu0");
		assert_string_equal(id_at(ctx, "", "Mali-G78 r0p0"), "gpu1");
		assert_string_equal(id_at(ctx, "", "llvmpipe (LLVM 15.0.6, 256 bits)"), "gpu2");
		assert_string_equal(id_at(ctx, "", "pthread-skylake"), "gpu3");
		for (int i = 0; i < accel_device_count(ctx); i++) {
			const struct accel_device *d = accel_device_at(ctx, i);
			if (!strcmp(d->model, "Mali-G78")) {
				assert_int_equal(d->napis, 2);   /* vulkan and opencl: one device */
				assert_string_not_equal(d->apis[0].name, d->apis[1].name);
			}
			if (!strcmp(d->model, "pthread-skylake"))
				assert_string_equal(d->vendor, "AuthenticAMD");
			if (d->model[0] == 'l')
				assert_string_equal(d->vendor, "Mesa");
		}
		if (strstr(probed, "ocv"))
			assert_true(has_engine(ctx, "ocv.opencl:gpu3"));
		if (strstr(probed, "fftvk"))
			assert_true(has_engine(ctx, "fftvk.vulkan:gpu2"));
		accel_ctx_free(ctx);
	}
}

static void discovery_by_class_follows_priority(void **state)
{
	(void)state;
	const struct accel_backend *const b[] = { &soft_backend, &early_backend, &nic_backend, &late_backend,
						  &video_backend, NULL };
	struct accel_ctx *ctx = new_ctx(b);
	accel_discover_classes(ctx, ACCEL_CLASS_BIT(ACCEL_CLASS_GPU));
	assert_string_equal(probed, "late early soft ");
	probed[0] = 0;
	accel_discover_classes(ctx, ACCEL_CLASS_BIT(ACCEL_CLASS_VIDEO) | ACCEL_CLASS_BIT(ACCEL_CLASS_NIC));
	assert_string_equal(probed, "nics nics ");   /* nics (5), then video (80, same probe fn); late is done */
	assert_true(accel_backend_status(ctx, 0)->probed == 0);   /* cpu: not asked for */
	accel_ctx_free(ctx);
}

static void apis_have_kinds_and_owners(void **state)
{
	(void)state;
	const struct accel_backend *const b[] = { &late_backend, &early_backend, &video_backend, NULL };
	struct accel_ctx *ctx = new_ctx(b);
	assert_int_equal(accel_api_kinds(ctx, "vaapi"), ACCEL_API_VIDEO_DECODE | ACCEL_API_VIDEO_ENCODE);
	assert_int_equal(accel_api_kinds(ctx, "nvdec"), ACCEL_API_VIDEO_DECODE);
	assert_int_equal(accel_api_kinds(ctx, "vulkan"), ACCEL_API_COMPUTE);
	assert_int_equal(accel_api_kinds(ctx, "host"), ACCEL_API_COMPUTE | ACCEL_API_COMPRESSION);
	assert_int_equal(accel_api_kinds(ctx, "nosuch"), 0);
	assert_int_equal(accel_api_classes(ctx, "vaapi"), ACCEL_CLASS_BIT(ACCEL_CLASS_VIDEO));
	assert_int_equal(accel_api_classes(ctx, "nvdec"), GPU_CLASSES | ACCEL_CLASS_BIT(ACCEL_CLASS_VIDEO));
	assert_string_equal(accel_api_backend(ctx, "nvdec"), "late");   /* priority 10 before 80 */
	assert_null(accel_api_backend(ctx, "nosuch"));
	assert_int_equal(accel_probe_backend(ctx, "late"), 0);
	assert_true(accel_backend_status(ctx, 0)->probed == 0);   /* asking probes nothing else */
	accel_ctx_free(ctx);
}

static void backend_names_and_list_check(void **state)
{
	(void)state;
	const struct accel_backend *const b[] = { &late_backend, &variants_backend, NULL };
	struct accel_ctx *ctx = new_ctx(b);
	char buf[64], err[256];
	assert_int_equal(accel_backend_names(ctx, " ", buf, sizeof buf), strlen("cpu late onnx"));
	assert_string_equal(buf, "cpu late onnx");
	assert_int_equal(accel_backend_names(ctx, ", ", buf, 6), strlen("cpu, late, onnx"));
	assert_string_equal(buf, "cpu, ");
	assert_int_equal(accel_backend_list_check(ctx, "auto", err, sizeof err), 0);
	assert_int_equal(accel_backend_list_check(ctx, "onnx.cuda:gpu0,late:1,cpu:cpu0,cpu", err, sizeof err), 0);
	assert_int_equal(accel_backend_list_check(ctx, "cpu,vulkan", err, sizeof err), ACCEL_EINVAL);
	assert_string_equal(err, "unknown backend 'vulkan'; backends here: auto, cpu, late, onnx");
	assert_int_equal(accel_backend_list_check(ctx, "cpu,", err, sizeof err), ACCEL_EINVAL);
	assert_string_equal(err, "empty item in 'cpu,'");
	assert_int_equal(accel_backend_list_check(ctx, "auto,cpu", err, sizeof err), ACCEL_EINVAL);
	assert_string_equal(err, "'auto' must stand alone, not in 'auto,cpu'");
	accel_ctx_free(ctx);
}

static struct accel_op upper_op = { .name = "upper", .chunk_size = 4 };

static void names_of(const struct accel_route *r, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	for (int i = 0; i < r->nranked && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? " " : "", r->entries[i].name);
}

static void variants_are_engines_of_their_own(void **state)
{
	(void)state;
	const struct accel_backend *const b[] = { &variants_backend, NULL };
	struct accel_ctx *ctx = new_ctx(b);
	struct accel_route r;
	char names[256], err[256];
	struct accel_route_req req = { &upper_op, "onnx", -1, "/nonexistent" };
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	names_of(&r, names, sizeof names);
	assert_string_equal(names, "onnx.cuda:gpu0 onnx.tensorrt:gpu0");
	req.backend = "onnx.tensorrt";
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	names_of(&r, names, sizeof names);
	assert_string_equal(names, "onnx.tensorrt:gpu0");
	req.backend = "onnx.tensorrt:gpu0,onnx.cuda:0";
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	names_of(&r, names, sizeof names);
	assert_string_equal(names, "onnx.tensorrt:gpu0 onnx.cuda:gpu0");
	req.backend = "onnx.opencl";
	assert_int_equal(accel_route(ctx, &req, &r), ACCEL_ENOENGINE);
	assert_string_equal(r.entries[0].reason, "no onnx.opencl engine matches ''");
	const struct accel_engine *e = r.entries[0].engine;
	assert_null(e);
	/* ACCEL_FAULT: the backend's name takes every variant, a variant its own
	 * (the environment is read first, once, so that it does not undo ours). */
	assert_int_equal(core_fault_status(), 0);
	assert_int_equal(core_fault_parse("onnx:1"), 0);
	assert_true(core_fault_hit("onnx.cuda:gpu0", 1));
	assert_true(core_fault_hit("onnx.tensorrt:gpu0", 1));
	assert_int_equal(core_fault_parse("onnx.cuda:1"), 0);
	assert_true(core_fault_hit("onnx.cuda:gpu0", 1));
	assert_false(core_fault_hit("onnx.tensorrt:gpu0", 1));
	assert_false(core_fault_hit("onnx.cudax:gpu0", 1));
	assert_int_equal(core_fault_parse("onnx.tensorrt:gpu0:2"), 0);
	assert_true(core_fault_hit("onnx.tensorrt:gpu0", 2));
	assert_false(core_fault_hit("onnx.cuda:gpu0", 2));
	assert_int_equal(core_fault_parse(""), 0);
	/* accel_fault_check: a variant the probed backend has, or not. */
	setenv("ACCEL_FAULT", "", 1);
	assert_int_equal(core_fault_parse("onnx.tensorrt:1;onnx:2"), 0);
	assert_int_equal(accel_fault_check(ctx, err, sizeof err), 0);
	assert_int_equal(core_fault_parse("onnx.opencl:1"), 0);
	assert_int_equal(accel_fault_check(ctx, err, sizeof err), ACCEL_EINVAL);
	assert_string_equal(err, "ACCEL_FAULT: no engine or backend named 'onnx.opencl' (see accel(7), TESTING)");
	assert_int_equal(core_fault_parse(""), 0);
	accel_ctx_free(ctx);
}

/* The CPU device is there for a plugin probed before the cpu backend. */
static void cpu_device_exists_for_a_plugin(void **state)
{
	(void)state;
	const struct accel_backend *const b[] = { &cpuplug_backend, NULL };
	struct accel_ctx *ctx = new_ctx(b);
	assert_int_equal(accel_probe_backend(ctx, "cpuplug"), 0);
	assert_string_equal(probed, "cpuplug ");
	assert_true(accel_backend_status(ctx, 0)->probed);   /* the cpu probe ran for it */
	assert_true(has_engine(ctx, "cpuplug:cpu0"));
	assert_true(has_engine(ctx, "cpu"));                 /* the built-in keeps its short name */
	assert_int_equal(accel_device_count(ctx), 1);
	assert_string_equal(accel_device_at(ctx, 0)->id, "cpu0");
	/* -b cpu:cpu0 selects the built-in CPU engine. */
	struct accel_op z = { .name = "zstd.compress", .level = 3 };
	struct accel_route r;
	struct accel_route_req req = { &z, "cpu:cpu0", -1, "/nonexistent" };
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_string_equal(r.entries[0].name, "cpu");
	/* The best CPU-device engine for each op. */
	assert_string_equal(accel_cpu_engine_for(ctx, &upper_op)->name, "cpuplug:cpu0");
	assert_string_equal(accel_cpu_engine_for(ctx, &z)->name, "cpu");
	accel_ctx_free(ctx);
}

/* A route probes for engines only; an inventory after it probes those
 * backends again, in full, keeping their engines; after it every probe is
 * in full. */
static void a_route_lists_devices_only_for_an_inventory(void **state)
{
	(void)state;
	const struct accel_backend *const b[] = { &lister_backend, NULL };
	struct accel_ctx *ctx = new_ctx(b);
	lists = 0;
	struct accel_route r;
	struct accel_route_req req = { &upper_op, NULL, -1, "/nonexistent" };
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_string_equal(r.entries[0].name, "lister:cpu0");
	assert_int_equal(lists, 0);
	assert_int_equal(accel_device_count(ctx), 1);             /* cpu0 alone */
	assert_int_equal(accel_device_at(ctx, 0)->threads, 0);    /* no hwloc topology read */
	assert_int_equal(accel_engine_count(ctx), 2);
	accel_discover_classes(ctx, ACCEL_CLASS_BIT(ACCEL_CLASS_CRYPTO));
	assert_int_equal(lists, 1);
	assert_string_equal(probed, "lister lister ");
	assert_int_equal(accel_device_count(ctx), 2);
	assert_string_equal(id_at(ctx, "", "provider"), "crypto0");
	assert_int_equal(accel_engine_count(ctx), 2);             /* the engine kept, once */
	assert_int_equal(accel_backend_status(ctx, 1)->rc, 0);
	assert_int_equal(accel_backend_status(ctx, 1)->nnotes, 1);
	/* The cpu backend was not asked for CPU devices: still partial. */
	assert_int_equal(accel_device_at(ctx, 0)->threads, 0);
	accel_discover_classes(ctx, ACCEL_CLASS_BIT(ACCEL_CLASS_CPU));
	assert_true(accel_device_at(ctx, 0)->threads >= 1);
	assert_int_equal(accel_device_count(ctx), 2);
	assert_string_equal(accel_engine_at(ctx, 0)->name, "cpu");
	accel_ctx_free(ctx);
}

/* A context on machine `root` (a folder: its /dev and /sys), for softcl. */
static struct accel_ctx *softcl_ctx(const char *root)
{
	const struct accel_backend *const b[] = { &softcl_backend, NULL };
	struct accel_ctx *ctx = new_ctx(b);
	ctx->sysroot = root;
	softs = 0;
	return ctx;
}

/* Software devices (PoCL, lavapipe) are looked for by a backend that also
 * runs on the CPU only where a GPU or NPU may be, when a route names the
 * backend, or for an inventory; an auto route elsewhere probes it for its
 * CPU engine alone. */
static void software_devices_only_where_they_could_lead(void **state)
{
	(void)state;
	char root[] = "/tmp/accel-registry-root-XXXXXX", path[128];
	assert_non_null(mkdtemp(root));
	struct accel_route r;
	struct accel_route_req req = { &upper_op, NULL, -1, "/nonexistent" };

	/* No PCI GPU, no /dev/dri: the auto route takes the CPU engine. */
	struct accel_ctx *ctx = softcl_ctx(root);
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_string_equal(r.entries[0].name, "softcl:cpu0");
	assert_int_equal(softs, 0);
	assert_false(has_engine(ctx, "softcl.cl:gpu0"));
	/* Named, it is probed again and the software device found. */
	req.backend = "softcl.cl:gpu0";
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_int_equal(softs, 1);
	assert_string_equal(r.entries[0].name, "softcl.cl:gpu0");
	assert_string_equal(probed, "softcl softcl ");
	assert_int_equal(accel_engine_count(ctx), 3);   /* cpu, softcl:cpu0 kept, softcl.cl:gpu0 */
	accel_ctx_free(ctx);

	/* Named first: found at once. */
	ctx = softcl_ctx(root);
	req.backend = "softcl";
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_int_equal(softs, 1);
	assert_string_equal(probed, "softcl ");
	accel_ctx_free(ctx);

	/* An inventory after an auto route probes it again, in full. */
	ctx = softcl_ctx(root);
	req.backend = NULL;
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_int_equal(softs, 0);
	accel_discover_classes(ctx, ACCEL_CLASS_ALL);
	assert_int_equal(softs, 1);
	assert_true(has_engine(ctx, "softcl.cl:gpu0"));
	accel_ctx_free(ctx);

	/* A machine with a DRM device node: looked for under auto too. */
	snprintf(path, sizeof path, "%s/dev", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof path, "%s/dev/dri", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof path, "%s/dev/dri/card0", root);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	ctx = softcl_ctx(root);
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_int_equal(softs, 1);
	assert_true(has_engine(ctx, "softcl.cl:gpu0"));
	accel_ctx_free(ctx);
	unlink(path);
	snprintf(path, sizeof path, "%s/dev/dri", root);
	rmdir(path);
	snprintf(path, sizeof path, "%s/dev", root);
	rmdir(path);
	rmdir(root);
}

static int next_unit(void *user, struct accel_input *in, struct accel_unit *u, char *err, size_t len)
{
	return accel_read_chunk(in, u, 4);
}

/* Stream "abcdefghijklmnopqrst" in units of 4 through route r on `threads`
 * workers under `fallback`: accel_stream_run's code, the error in err, the
 * output in got, and the units engine `name` ran and ran again after
 * another failed them in *units and *retried (-1: not in the run). */
static int upper_stream(struct accel_ctx *ctx, const struct accel_route *r, int threads,
			enum accel_fallback fallback, char *err, size_t len, char *got, size_t glen, const char *name,
			int *units, int *retried)
{
	char in_path[] = "/tmp/accel-registry-in-XXXXXX", out_path[] = "/tmp/accel-registry-out-XXXXXX";
	const char *text = "abcdefghijklmnopqrst";
	int fd = mkstemp(in_path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	struct accel_input in;
	assert_int_equal(accel_input_open(&in, in_path), 0);
	struct accel_output out;
	memset(&out, 0, sizeof out);
	out.fd = mkstemp(out_path);
	assert_true(out.fd >= 0);
	struct accel_stream_config cfg = { .threads = threads, .fallback = fallback, .total_size = -1,
					   .prog = "test_registry", .verbose = -1 };
	struct accel_stream_ops ops = { next_unit, NULL, NULL, NULL };
	struct accel_stream_stats st;
	err[0] = 0;
	alarm(60);
	int rc = accel_stream_run(ctx, &cfg, r, &upper_op, &ops, NULL, &in, &out, &st, err, len);
	alarm(0);
	memset(got, 0, glen);
	assert_true(pread(out.fd, got, glen - 1, 0) >= 0);
	*units = *retried = -1;
	for (int i = 0; i < st.nengines; i++)
		if (!strcmp(st.engines[i].name, name)) {
			*units = (int)st.engines[i].units;
			*retried = (int)st.engines[i].retried;
		}
	accel_input_close(&in);
	close(out.fd);
	unlink(in_path);
	unlink(out_path);
	return rc;
}

/* --fallback cpu: a unit the GPU engine fails runs on the plugin's CPU
 * engine, the only CPU-device engine for "upper". */
static void fallback_cpu_takes_a_plugin_cpu_engine(void **state)
{
	(void)state;
	const struct accel_backend *const b[] = { &variants_backend, &cpuplug_backend, NULL };
	struct accel_ctx *ctx = new_ctx(b);
	struct accel_route r;
	struct accel_route_req req = { &upper_op, "onnx.cuda", -1, "/nonexistent" };
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_int_equal(r.nranked, 1);
	assert_int_equal(core_fault_status(), 0);
	assert_int_equal(core_fault_parse("onnx.cuda:1-2"), 0);
	char err[256], got[64];
	int units, retried;
	int rc = upper_stream(ctx, &r, 1, ACCEL_FALLBACK_CPU, err, sizeof err, got, sizeof got, "cpuplug:cpu0", &units,
			      &retried);
	assert_int_equal(core_fault_parse(""), 0);
	assert_string_equal(err, "");
	assert_int_equal(rc, 0);
	assert_string_equal(got, "ABCDEFGHIJKLMNOPQRST");
	assert_int_equal(units, 2);
	assert_int_equal(retried, 2);
	accel_ctx_free(ctx);
}

static void checks_run_where_the_engine_is_used(void **state)
{
	(void)state;
	const struct accel_backend *const b[] = { &variants_backend, &checked_backend, NULL };
	struct accel_ctx *ctx = new_ctx(b);
	struct accel_route r;
	char names[256], err[256], got[64];
	int units, retried;
	struct accel_route_req req = { &upper_op, NULL, -1, "/nonexistent" };
	/* A fallback behind the GPU's engines: not checked, and says so. */
	checked_prior = 50, checked_fails = 0, checks = 0;
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	names_of(&r, names, sizeof names);
	assert_string_equal(names, "onnx.cuda:gpu0 onnx.tensorrt:gpu0 checked:cpu0");
	assert_int_equal(checks, 0);
	assert_int_equal(r.entries[2].check, 1);
	assert_string_equal(r.entries[2].reason, "prior 50 MB/s (fake, checked); checked when first used");
	assert_int_equal(r.entries[0].check, 0);
	/* Never used, never checked. */
	const char *e = "checked:cpu0";
	int rc = upper_stream(ctx, &r, 2, ACCEL_FALLBACK_NEXT, err, sizeof err, got, sizeof got, e, &units, &retried);
	assert_int_equal(rc, 0);
	assert_string_equal(got, "ABCDEFGHIJKLMNOPQRST");
	assert_int_equal(checks, 0);
	/* Used (both GPU engines fail every unit): checked once for the
	 * stream, on whichever worker came first, then runs them all. */
	assert_int_equal(core_fault_status(), 0);
	assert_int_equal(core_fault_parse("onnx:*"), 0);
	rc = upper_stream(ctx, &r, 2, ACCEL_FALLBACK_NEXT, err, sizeof err, got, sizeof got, e, &units, &retried);
	assert_int_equal(rc, 0);
	assert_string_equal(err, "");
	assert_string_equal(got, "ABCDEFGHIJKLMNOPQRST");
	assert_int_equal(units, 5);
	assert_int_equal(checks, 1);
	/* A check that fails there fails the engine: dropped, the run ends
	 * with its reason, nothing written. */
	checked_fails = 1, checks = 0;
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_int_equal(checks, 0);
	rc = upper_stream(ctx, &r, 2, ACCEL_FALLBACK_NEXT, err, sizeof err, got, sizeof got, e, &units, &retried);
	assert_int_equal(rc, ACCEL_EDEVICE);
	assert_non_null(strstr(err, ": the fake check failed; no engine left to retry on"));
	assert_string_equal(got, "");
	assert_int_equal(units, 0);
	assert_int_equal(checks, 1);
	assert_int_equal(core_fault_parse(""), 0);
	/* Ranked first: checked by the route; failing, it is left out with
	 * its reason and the next engine leads. */
	checked_prior = 500, checks = 0;
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	names_of(&r, names, sizeof names);
	assert_string_equal(names, "onnx.cuda:gpu0 onnx.tensorrt:gpu0");
	assert_int_equal(checks, 1);
	int k = 0;
	while (k < r.n && strcmp(r.entries[k].name, "checked:cpu0"))
		k++;
	assert_true(k < r.n);
	assert_int_equal(r.entries[k].usable, 0);
	assert_string_equal(r.entries[k].reason, "the fake check failed");
	checked_fails = 0, checks = 0;
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	names_of(&r, names, sizeof names);
	assert_string_equal(names, "checked:cpu0 onnx.cuda:gpu0 onnx.tensorrt:gpu0");
	assert_int_equal(checks, 1);
	assert_int_equal(r.entries[0].check, 0);
	assert_string_equal(r.entries[0].reason, "prior 500 MB/s (fake, checked)");
	/* Named, it is checked by the route wherever it stands. */
	checked_prior = 50, checks = 0;
	req.backend = "onnx.cuda,checked";
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_int_equal(checks, 1);
	assert_int_equal(r.entries[1].check, 0);
	checked_fails = 1, checks = 0;
	req.backend = "checked";
	assert_int_equal(accel_route(ctx, &req, &r), ACCEL_ENOENGINE);
	assert_int_equal(checks, 1);
	assert_string_equal(r.entries[0].reason, "the fake check failed");
	accel_ctx_free(ctx);
}

static void a_full_registry_says_why(void **state)
{
	(void)state;
	const struct accel_backend *const b[] = { &many_backend, NULL };
	struct accel_ctx *ctx = new_ctx(b);
	/* The probe's last add_device fails; it returns that code. */
	assert_int_equal(accel_probe_backend(ctx, "many"), ACCEL_ENOMEM);
	assert_int_equal(accel_device_count(ctx), CORE_MAX_DEVICES);
	const struct accel_backend_status *s = accel_backend_status(ctx, 1);
	assert_int_equal(s->nnotes, 1);
	assert_string_equal(s->notes[0], "device limit reached: libaccel holds at most 64 devices; gpu 0000:40:00.0 left out");
	assert_string_equal(accel_device_at(ctx, 63)->id, "gpu63");
	accel_ctx_free(ctx);
}

static void the_registry_grows_to_its_limit(void **state)
{
	(void)state;
	const struct accel_backend *const b[] = { NULL };
	struct accel_ctx *ctx = new_ctx(b);
	char name[16];
	for (int i = 1; i < CORE_MAX_BACKENDS; i++) {
		snprintf(name, sizeof name, "p%d", i);
		assert_non_null(core_backend_add(ctx, name, "test_registry.c"));
	}
	assert_string_equal(accel_backend_status(ctx, 0)->name, "cpu");
	assert_string_equal(accel_backend_status(ctx, CORE_MAX_BACKENDS - 1)->name, "p63");
	assert_null(core_backend_add(ctx, "p1", "again"));
	assert_null(core_backend_add(ctx, "p64", "/plugins/accel_p64.so"));
	assert_null(core_backend_add(ctx, "p65", "/plugins/accel_p65.so"));
	assert_int_equal(accel_backend_count(ctx), CORE_MAX_BACKENDS + 1);
	const struct accel_backend_status *s = accel_backend_status(ctx, CORE_MAX_BACKENDS);
	assert_string_equal(s->name, "p64");
	assert_string_equal(s->reason, "the registry is full: libaccel holds at most 64 backends (2 plugins left out)");
	assert_null(accel_backend_status(ctx, CORE_MAX_BACKENDS + 1));
	accel_ctx_free(ctx);
}

static void freeing_the_context_releases_engine_data(void **state)
{
	(void)state;
	const struct accel_backend *const b[] = { &owner_backend, NULL };
	struct accel_ctx *ctx = new_ctx(b);
	nreleased = 0;
	assert_int_equal(accel_probe_backend(ctx, "owner"), 0);
	assert_int_equal(accel_engine_count(ctx), 4);
	assert_int_equal(nreleased, 0);
	accel_ctx_free(ctx);
	assert_int_equal(nreleased, 2);
	assert_int_equal(released[0], 1);
	assert_int_equal(released[1], 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ids_do_not_depend_on_probe_order),
		cmocka_unit_test(ids_do_not_depend_on_which_probes_ran),
		cmocka_unit_test(discovery_by_class_follows_priority),
		cmocka_unit_test(apis_have_kinds_and_owners),
		cmocka_unit_test(backend_names_and_list_check),
		cmocka_unit_test(variants_are_engines_of_their_own),
		cmocka_unit_test(cpu_device_exists_for_a_plugin),
		cmocka_unit_test(a_route_lists_devices_only_for_an_inventory),
		cmocka_unit_test(software_devices_only_where_they_could_lead),
		cmocka_unit_test(fallback_cpu_takes_a_plugin_cpu_engine),
		cmocka_unit_test(checks_run_where_the_engine_is_used),
		cmocka_unit_test(a_full_registry_says_why),
		cmocka_unit_test(the_registry_grows_to_its_limit),
		cmocka_unit_test(freeing_the_context_releases_engine_data),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
