/*
 * test.c - the "test" backend, a plugin for the tests: one software device
 * ("accel test engine") with one engine that runs every unit through the CPU
 * backend's codecs. It gives a machine without accelerators a second engine,
 * so fallback from one engine to another can be tested end to end
 * (ACCEL_FAULT=test:2 accel-compress -b test --fallback cpu).
 */
#include <string.h>
#include "accel.h"

/* Exported by libaccel; its open, run, stream and close ignore the engine. */
extern const struct accel_backend accel_backend_cpu;

static const char *const test_ops[] = {
	"zstd.compress", "zstd.decompress", "gzip.compress", "gzip.decompress",
	"lz4.compress", "lz4.decompress", NULL,
};

static int test_probe(struct accel_probe *p)
{
	struct accel_device d;
	memset(&d, 0, sizeof d);
	d.cls = ACCEL_CLASS_OTHER;
	d.numa_node = -1;
	d.software = 1;
	/* Its own id: the tests name test:other0 on any machine (a PCI
	 * display of class other, a BMC's, is numbered after it). */
	strcpy(d.id, "other0");
	strcpy(d.vendor, "accel");
	strcpy(d.model, "accel test engine");
	strcpy(d.driver, "accel_test.so");
	accel_device_add_api(&d, "test", 1, "");
	int dev = accel_probe_add_device(p, &d);
	if (dev < 0)
		return accel_probe_fail(p, "cannot add the test device");
	if (accel_probe_add_engine(p, dev, NULL) < 0)
		return accel_probe_fail(p, "cannot add the test engine");
	return 0;
}

static int test_supports(const struct accel_engine *e, const struct accel_op *op,
			 double *prior_mbps, char *reason, size_t len)
{
	double cpu_prior = 0;
	int rc = accel_backend_cpu.supports(e, op, &cpu_prior, reason, len);
	if (rc < 0)
		return rc;
	*prior_mbps = 100;
	snprintf(reason, len, "test engine delegating to the CPU backend");
	return 0;
}

static int test_open(const struct accel_engine *e, const struct accel_op *op, void **ctx)
{
	return accel_backend_cpu.open(e, op, ctx);
}

static int test_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	return accel_backend_cpu.run(ctx, u, err, len);
}

static int test_stream(void *ctx, struct accel_input *in, struct accel_output *out, char *err, size_t len)
{
	return accel_backend_cpu.stream(ctx, in, out, err, len);
}

static void test_close(void *ctx)
{
	accel_backend_cpu.close(ctx);
}

ACCEL_PLUGIN_EXPORT const struct accel_backend accel_backend_test = {
	.abi = ACCEL_BACKEND_ABI,
	.name = "test",
	.description = "test engine for the test suite (runs the CPU codecs)",
	.ops = test_ops,
	.probe = test_probe,
	.supports = test_supports,
	.open = test_open,
	.run = test_run,
	.stream = test_stream,
	.close = test_close,
};
