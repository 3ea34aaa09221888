/*
 * test_ids.c - stable device ids: a GPU or NPU on the PCI bus gets the id of
 * its rank in bus order whichever probes ran and in whatever order, devices
 * without a PCI address follow all of those of their class, and the pci
 * backend and the ids class PCI functions by one rule (accel_pci_classify).
 * The recorded tree tests/fixtures/sysroot-gpu holds an ASPEED BMC display
 * (0000:03:00.0) and two H100s (0000:17:00.0, 0000:b1:00.0).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "core.h"
/* The pci backend itself, so that its rule is the one tested. */
#include "../../backends/pci/pci.c"
#include "../../backends/pci/devnodes.c"

#define FIXTURE "tests/fixtures/sysroot-gpu"

static struct accel_device dev(enum accel_device_class cls, const char *pci, const char *model, const char *api)
{
	struct accel_device d;
	memset(&d, 0, sizeof d);
	d.cls = cls;
	d.numa_node = -1;
	snprintf(d.pci_address, sizeof d.pci_address, "%s", pci);
	snprintf(d.model, sizeof d.model, "%s", model);
	accel_device_add_api(&d, api, 1, NULL);
	return d;
}

static int add(struct accel_probe *p, struct accel_device d)
{
	int i = accel_probe_add_device(p, &d);
	assert_true(i >= 0);
	assert_true(accel_probe_add_engine(p, i, NULL) >= 0);
	return 0;
}

/* "second" sees only the GPU later on the bus, as a Vulkan driver that
 * misses the first would; "first" only the first; "soft" a GPU with no
 * PCI address (llvmpipe); "both" both PCI GPUs, later one first. */
static int second_probe(struct accel_probe *p)
{
	return add(p, dev(ACCEL_CLASS_GPU, "0000:b1:00.0", "H100 b1", "vulkan"));
}

static int first_probe(struct accel_probe *p)
{
	return add(p, dev(ACCEL_CLASS_GPU, "0000:17:00.0", "H100 17", "cuda"));
}

static int soft_probe(struct accel_probe *p)
{
	struct accel_device d = dev(ACCEL_CLASS_GPU, "", "llvmpipe", "vulkan");
	d.software = 1;
	return add(p, d);
}

static int both_probe(struct accel_probe *p)
{
	add(p, dev(ACCEL_CLASS_GPU, "0000:b1:00.0", "H100 b1", "opencl"));
	return add(p, dev(ACCEL_CLASS_GPU, "0000:17:00.0", "H100 17", "opencl"));
}

#define FAKE(n) { .abi = ACCEL_BACKEND_ABI, .name = #n, .description = "fake", .probe = n##_probe }
static const struct accel_backend fakes[] = { FAKE(second), FAKE(first), FAKE(soft), FAKE(both) };
#define NFAKES 4

static void register_backend(struct accel_ctx *ctx, const struct accel_backend *b)
{
	struct accel_backend_status *s = core_backend_add(ctx, b->name, "test_ids.c");
	assert_non_null(s);
	s->backend = b;
}

/* A context reading `root`, with the fake backends only. */
static struct accel_ctx *new_ctx(const char *root)
{
	unsetenv("ACCEL_BACKEND_PATH");
	setenv("ACCEL_SYSROOT", root, 1);
	struct accel_ctx *ctx = accel_ctx_new();
	unsetenv("ACCEL_SYSROOT");
	assert_non_null(ctx);
	ctx->nbackends = 0;
	for (int i = 0; i < NFAKES; i++)
		register_backend(ctx, &fakes[i]);
	return ctx;
}

/* The id of the device of model `model`, or NULL when none was found. */
static const char *id_of(const struct accel_ctx *ctx, const char *model)
{
	for (int i = 0; i < accel_device_count(ctx); i++)
		if (!strcmp(accel_device_at(ctx, i)->model, model))
			return accel_device_at(ctx, i)->id;
	return NULL;
}

/* Every engine is named BACKEND:ID after its device's final id. */
static void assert_engine_names(const struct accel_ctx *ctx)
{
	for (int i = 0; i < accel_engine_count(ctx); i++) {
		const struct accel_engine *e = accel_engine_at(ctx, i);
		char want[64];
		snprintf(want, sizeof want, "%s:%s", e->backend->name, accel_device_at(ctx, e->device)->id);
		assert_string_equal(e->name, want);
	}
}

static void subset_gives_the_full_probe_id(void **state)
{
	(void)state;
	struct accel_ctx *ctx = new_ctx(FIXTURE);
	accel_discover(ctx, NULL);
	assert_string_equal(id_of(ctx, "H100 17"), "gpu0");
	assert_string_equal(id_of(ctx, "H100 b1"), "gpu1");
	assert_string_equal(id_of(ctx, "llvmpipe"), "gpu2");
	accel_ctx_free(ctx);

	/* Only the probe that misses the first GPU: still gpu1, never gpu0. */
	ctx = new_ctx(FIXTURE);
	assert_int_equal(accel_probe_backend(ctx, "second"), 0);
	assert_int_equal(accel_device_count(ctx), 1);
	assert_string_equal(id_of(ctx, "H100 b1"), "gpu1");
	assert_string_equal(accel_engine_at(ctx, 0)->name, "second:gpu1");
	/* A GPU with no PCI address comes after both PCI GPUs. */
	assert_int_equal(accel_probe_backend(ctx, "soft"), 0);
	assert_string_equal(id_of(ctx, "llvmpipe"), "gpu2");
	accel_ctx_free(ctx);

	ctx = new_ctx(FIXTURE);
	assert_int_equal(accel_probe_backend(ctx, "soft"), 0);
	assert_string_equal(id_of(ctx, "llvmpipe"), "gpu2");
	assert_string_equal(accel_engine_at(ctx, 0)->name, "soft:gpu2");
	accel_ctx_free(ctx);
}

/* Every subset of the fake probes, each in every order: the same device
 * always has the same id, and its engines carry it. */
static int next_perm(int *a, int n)
{
	int i = n - 2;
	while (i >= 0 && a[i] >= a[i + 1])
		i--;
	if (i < 0)
		return 0;
	int j = n - 1;
	while (a[j] <= a[i])
		j--;
	int t = a[i];
	a[i] = a[j];
	a[j] = t;
	for (int l = i + 1, r = n - 1; l < r; l++, r--) {
		t = a[l];
		a[l] = a[r];
		a[r] = t;
	}
	return 1;
}

static void any_order_any_subset_agrees(void **state)
{
	(void)state;
	static const char *const model[] = { "H100 17", "H100 b1", "llvmpipe" };
	static const char *const want[] = { "gpu0", "gpu1", "gpu2" };
	int runs = 0;
	for (unsigned set = 1; set < 1u << NFAKES; set++) {
		int order[NFAKES], n = 0;
		for (int i = 0; i < NFAKES; i++)
			if (set & 1u << i)
				order[n++] = i;
		do {
			struct accel_ctx *ctx = new_ctx(FIXTURE);
			for (int k = 0; k < n; k++)
				assert_int_equal(accel_probe_backend(ctx, fakes[order[k]].name), 0);
			for (int m = 0; m < 3; m++) {
				const char *id = id_of(ctx, model[m]);
				if (id)
					assert_string_equal(id, want[m]);
			}
			assert_engine_names(ctx);
			accel_ctx_free(ctx);
			runs++;
		} while (next_perm(order, n));
	}
	assert_int_equal(runs, 4 + 12 + 24 + 24);
}

/* With no GPU on the PCI bus (this machine's case for llvmpipe), a GPU
 * without a PCI address is gpu0, and PCI GPUs the probes report but the
 * tree does not hold are numbered by address, as before. */
static void no_pci_gpu_keeps_the_order_found(void **state)
{
	(void)state;
	char root[] = "/tmp/test_ids.XXXXXX";
	assert_non_null(mkdtemp(root));
	struct accel_ctx *ctx = new_ctx(root);
	assert_int_equal(accel_probe_backend(ctx, "soft"), 0);
	assert_string_equal(id_of(ctx, "llvmpipe"), "gpu0");
	assert_int_equal(accel_probe_backend(ctx, "second"), 0);
	assert_string_equal(id_of(ctx, "H100 b1"), "gpu0");
	assert_string_equal(id_of(ctx, "llvmpipe"), "gpu1");
	assert_int_equal(accel_probe_backend(ctx, "first"), 0);
	assert_string_equal(id_of(ctx, "H100 17"), "gpu0");
	assert_string_equal(id_of(ctx, "H100 b1"), "gpu1");
	assert_string_equal(id_of(ctx, "llvmpipe"), "gpu2");
	assert_engine_names(ctx);
	accel_ctx_free(ctx);
	rmdir(root);
}

static void put(const char *root, const char *addr, const char *file, const char *text)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/sys/bus/pci/devices/%s", root, addr);
	char *p = path;
	while ((p = strchr(p + 1, '/')))
		if (p > path + strlen(root)) {
			*p = 0;
			mkdir(path, 0755);
			*p = '/';
		}
	mkdir(path, 0755);
	snprintf(path + strlen(path), sizeof path - strlen(path), "/%s", file);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", text);
	fclose(f);
}

/* The rule: 0x12 is an NPU, 0x0302 or a GPU vendor's display a GPU, any
 * other display "other" (it reserves no GPU id), anything else nothing. */
static void the_pci_rule(void **state)
{
	(void)state;
	unsigned cls, vendor;
	assert_int_equal(accel_pci_classify(FIXTURE, "0000:03:00.0", &cls, &vendor), ACCEL_CLASS_OTHER);
	assert_int_equal(cls, 0x030000);
	assert_int_equal(vendor, 0x1a03);
	assert_int_equal(accel_pci_classify(FIXTURE, "0000:17:00.0", &cls, &vendor), ACCEL_CLASS_GPU);
	assert_int_equal(cls, 0x030200);
	assert_int_equal(vendor, 0x10de);
	assert_int_equal(accel_pci_classify(FIXTURE, "0000:99:00.0", &cls, &vendor), -1);
	assert_int_equal(cls, 0);

	char root[] = "/tmp/test_ids.XXXXXX";
	assert_non_null(mkdtemp(root));
	put(root, "0000:01:00.0", "class", "0x020000");    /* a NIC */
	put(root, "0000:01:00.0", "vendor", "0x15b3");
	put(root, "0000:02:00.0", "class", "0x030000");    /* AMD VGA: a GPU */
	put(root, "0000:02:00.0", "vendor", "0x1002");
	put(root, "0000:05:00.0", "class", "0x030000");    /* QEMU VGA: other */
	put(root, "0000:05:00.0", "vendor", "0x1234");
	put(root, "0000:0a:00.0", "class", "0x120000");    /* two NPUs */
	put(root, "0000:0a:00.0", "vendor", "0x1e52");
	put(root, "0000:0b:00.0", "class", "0x120000");
	put(root, "0000:0b:00.0", "vendor", "0x1e52");
	assert_int_equal(accel_pci_classify(root, "0000:01:00.0", NULL, NULL), -1);
	assert_int_equal(accel_pci_classify(root, "0000:02:00.0", NULL, NULL), ACCEL_CLASS_GPU);
	assert_int_equal(accel_pci_classify(root, "0000:05:00.0", NULL, NULL), ACCEL_CLASS_OTHER);
	assert_int_equal(accel_pci_classify(root, "0000:0b:00.0", NULL, NULL), ACCEL_CLASS_NPU);
	struct core_pci_fn fn[8];
	assert_int_equal(core_pci_scan(root, fn, 8), 4);
	assert_string_equal(fn[0].addr, "0000:02:00.0");
	assert_int_equal(fn[0].cls, ACCEL_CLASS_GPU);
	assert_string_equal(fn[1].addr, "0000:05:00.0");
	assert_int_equal(fn[1].cls, ACCEL_CLASS_OTHER);
	assert_string_equal(fn[3].addr, "0000:0b:00.0");
	assert_int_equal(fn[3].cls, ACCEL_CLASS_NPU);
	assert_int_equal(core_pci_scan(root, fn, 2), 2);

	/* The second NPU alone is npu1; the AMD GPU alone is gpu0. */
	struct accel_ctx *ctx = new_ctx(root);
	struct accel_probe p = { ctx, 0, NULL, 0 };
	struct accel_device d = dev(ACCEL_CLASS_NPU, "0000:0b:00.0", "n1", "tt");
	int i = accel_probe_add_device(&p, &d);
	assert_string_equal(accel_device_at(ctx, i)->id, "npu1");
	d = dev(ACCEL_CLASS_GPU, "0000:02:00.0", "amd", "vulkan");
	i = accel_probe_add_device(&p, &d);
	assert_string_equal(accel_device_at(ctx, i)->id, "gpu0");
	/* A GPU an API reports at the QEMU display's address holds no
	 * reserved id: it follows the PCI GPUs. */
	d = dev(ACCEL_CLASS_GPU, "0000:05:00.0", "virgl", "vulkan");
	i = accel_probe_add_device(&p, &d);
	assert_string_equal(accel_device_at(ctx, i)->id, "gpu1");
	/* An id a probe chose is kept, and the reserved device it collides
	 * with follows the PCI GPUs instead. */
	d = dev(ACCEL_CLASS_NPU, "", "chosen", "tt");
	strcpy(d.id, "npu0");
	i = accel_probe_add_device(&p, &d);
	assert_string_equal(accel_device_at(ctx, i)->id, "npu0");
	d = dev(ACCEL_CLASS_NPU, "0000:0a:00.0", "n0", "tt");
	i = accel_probe_add_device(&p, &d);
	assert_string_equal(accel_device_at(ctx, i)->id, "npu2");
	assert_string_equal(id_of(ctx, "n1"), "npu1");
	accel_ctx_free(ctx);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

/* The pci backend (its sources, built into this test) and a probe that
 * finds only the second GPU agree on its id. */
static void pci_backend_agrees(void **state)
{
	(void)state;
	const struct accel_backend *pci = &accel_backend_pci;
	struct accel_ctx *ctx = new_ctx(FIXTURE);
	register_backend(ctx, pci);
	assert_int_equal(accel_probe_backend(ctx, "pci"), 0);
	const char *b1 = NULL, *aspeed = NULL;
	for (int i = 0; i < accel_device_count(ctx); i++) {
		const struct accel_device *d = accel_device_at(ctx, i);
		if (!strcmp(d->pci_address, "0000:b1:00.0"))
			b1 = d->id;
		if (!strcmp(d->pci_address, "0000:03:00.0"))
			aspeed = d->id;
	}
	assert_non_null(b1);
	assert_string_equal(b1, "gpu1");
	assert_string_equal(aspeed, "other0");
	accel_ctx_free(ctx);

	ctx = new_ctx(FIXTURE);
	register_backend(ctx, pci);
	assert_int_equal(accel_probe_backend(ctx, "second"), 0);
	assert_string_equal(id_of(ctx, "H100 b1"), "gpu1");
	/* The pci backend then merges into it, and the ids stay. */
	assert_int_equal(accel_probe_backend(ctx, "pci"), 0);
	assert_string_equal(id_of(ctx, "H100 b1"), "gpu1");
	assert_string_equal(accel_engine_at(ctx, 0)->name, "second:gpu1");
	assert_int_equal(accel_device_count(ctx), 3);
	accel_ctx_free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(subset_gives_the_full_probe_id),
		cmocka_unit_test(any_order_any_subset_agrees),
		cmocka_unit_test(no_pci_gpu_keeps_the_order_found),
		cmocka_unit_test(the_pci_rule),
		cmocka_unit_test(pci_backend_agrees),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
