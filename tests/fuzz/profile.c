/*
 * profile.c - fuzz target for the routing profile's reader (libcore/
 * profile.c; cJSON parses the text): the input is the file profile.json
 * that accel_profile_load and, for a context, accel_profile_load_for read.
 * Each answers a count of entries or an error (load_for with one line
 * saying why); load_for gives load's entries, or refuses them as measured
 * on another machine; every entry has a positive, finite speed, names an
 * operation, a size class and an engine (its key in schema 2), and its
 * strings end within their fields. The context is this machine's CPU,
 * renamed "Fuzz CPU" so the corpus means the same everywhere, and one
 * made-up GPU at PCI 0000:65:00.0 (pci_id 10de:2330, cuda_driver_version
 * 12.4), so that profiles naming it reach the device comparisons.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core.h"
#include "fuzz.h"

static struct accel_ctx *ctx;

/* The context above: the cpu backend probed (through a profile of the
 * current schema, which asks for the CPU's model; refused or not), then
 * the GPU added. */
static void make_ctx(void)
{
	static const char probe[] = "{\"schema_version\": 2, \"machine\": {\"cpu_model\": \"\", \"devices\": []}, "
				    "\"entries\": []}";
	ctx = accel_ctx_new();
	int fd = fuzz_memfd("profile.json", probe, sizeof probe - 1);
	if (!ctx || fd < 0)
		fuzz_fail("cannot make the context");
	char path[64], why[256];
	struct accel_profile_entry *e;
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	accel_profile_load_for(ctx, path, &e, why, sizeof why);
	free(e);
	close(fd);
	for (int i = 0; i < ctx->ndevices; i++)
		if (ctx->devices[i].cls == ACCEL_CLASS_CPU)
			snprintf(ctx->devices[i].model, sizeof ctx->devices[i].model, "Fuzz CPU");
	if (ctx->ndevices >= CORE_MAX_DEVICES)
		fuzz_fail("no room for the GPU");
	struct accel_device *d = &ctx->devices[ctx->ndevices++];
	memset(d, 0, sizeof *d);
	snprintf(d->id, sizeof d->id, "gpu0");
	d->cls = ACCEL_CLASS_GPU;
	d->numa_node = -1;
	snprintf(d->vendor, sizeof d->vendor, "NVIDIA");
	snprintf(d->model, sizeof d->model, "NVIDIA H100");
	snprintf(d->pci_address, sizeof d->pci_address, "0000:65:00.0");
	if (accel_device_set(d, "pci_id", "10de:2330") < 0 || accel_device_set(d, "cuda_driver_version", "12.4") < 0)
		fuzz_fail("cannot set the GPU's properties");
}

/* A string field: not empty, and ended within its `size` bytes. */
static int good_string(const char *s, size_t size)
{
	return s[0] && memchr(s, 0, size);
}

static void check_entries(const struct accel_profile_entry *e, int n)
{
	for (int i = 0; i < n; i++) {
		if (!good_string(e[i].op, sizeof e[i].op) || !good_string(e[i].size_class, sizeof e[i].size_class) ||
		    !memchr(e[i].engine, 0, sizeof e[i].engine) || !memchr(e[i].key, 0, sizeof e[i].key))
			fuzz_fail("entry %d: a string empty or not ended", i);
		if (!e[i].key[0] && !e[i].engine[0])
			fuzz_fail("entry %d: no engine name or key", i);
		if (!(e[i].mbps > 0) || !isfinite(e[i].mbps))
			fuzz_fail("entry %d: speed %g MB/s", i, e[i].mbps);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ctx)
		make_ctx();
	int fd = fuzz_memfd("profile.json", data, size);
	if (fd < 0)
		fuzz_fail("cannot make the file");
	char path[64], why[256] = "";
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	struct accel_profile_entry *e1 = NULL, *e2 = NULL;
	int n1 = accel_profile_load(path, &e1);
	if (n1 < 0 && n1 != ACCEL_EDATA && n1 != ACCEL_ENOMEM)
		fuzz_fail("load: error %d", n1);
	if (n1 < 0 && e1)
		fuzz_fail("load: entries with an error");
	if (n1 >= 0)
		check_entries(e1, n1);
	int n2 = accel_profile_load_for(ctx, path, &e2, why, sizeof why);
	if (n2 < 0) {
		if (!why[0] || strchr(why, '\n'))
			fuzz_fail("load_for: error %d without its one line: '%s'", n2, why);
		if (e2)
			fuzz_fail("load_for: entries with an error");
		if (n1 >= 0 ? n2 != ACCEL_ENOTSUP : n2 != n1)
			fuzz_fail("load gives %d, load_for %d (%s)", n1, n2, why);
	} else if (n2 != n1 || (n1 && memcmp(e1, e2, (size_t)n1 * sizeof *e1))) {
		fuzz_fail("load gives %d entries, load_for %d or others", n1, n2);
	}
	free(e1);
	free(e2);
	close(fd);
	return 0;
}
