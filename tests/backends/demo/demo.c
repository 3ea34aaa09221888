/*
 * demo.c - the "demo" backend, built only for the tests: it shows that a
 * backend is one folder. It finds one emulated NPU ("accel demo NPU") and
 * offers the operation demo.reverse (each unit's bytes in reverse order)
 * through two engines on it, demo.fast and demo.exact, and through one on
 * the CPU device (demo:cpu0), which the built-in cpu backend does not have.
 */
#include <string.h>
#include "accel.h"

static const char *const demo_ops[] = { "demo.reverse", NULL };

static const struct accel_api_info demo_apis[] = {
	{ "demo", ACCEL_API_COMPUTE },
	{ NULL, 0 },
};

static int demo_probe(struct accel_probe *p)
{
	struct accel_device d;
	memset(&d, 0, sizeof d);
	d.cls = ACCEL_CLASS_NPU;
	d.numa_node = -1;
	d.software = 1;
	strcpy(d.vendor, "accel");
	strcpy(d.model, "accel demo NPU");
	strcpy(d.driver, "accel_demo.so");
	accel_device_add_api(&d, "demo", 1, NULL);
	int dev = accel_probe_add_device(p, &d);
	if (dev < 0)
		return accel_probe_fail(p, "cannot add the demo NPU");
	int cpu = accel_probe_cpu_device(p);
	if (accel_probe_add_engine_variant(p, dev, "fast", NULL) < 0 ||
	    accel_probe_add_engine_variant(p, dev, "exact", NULL) < 0 ||
	    (cpu >= 0 && accel_probe_add_engine(p, cpu, NULL) < 0))
		return accel_probe_fail(p, "cannot add the demo engines");
	return 0;
}

static int demo_supports(const struct accel_engine *e, const struct accel_op *op,
			 double *prior_mbps, char *reason, size_t len)
{
	if (strcmp(op->name, "demo.reverse")) {
		snprintf(reason, len, "only demo.reverse");
		return ACCEL_ENOTSUP;
	}
	*prior_mbps = !strcmp(e->variant, "fast") ? 300 : 200;
	snprintf(reason, len, "demo %s", e->variant[0] ? e->variant : "cpu");
	return 0;
}

static int demo_open(const struct accel_engine *e, const struct accel_op *op, void **ctx)
{
	*ctx = NULL;
	return 0;
}

static int demo_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	if (accel_buf_reserve(&u->out, u->in.len + 1) < 0)
		return ACCEL_ENOMEM;
	for (size_t i = 0; i < u->in.len; i++)
		u->out.data[i] = u->in.data[u->in.len - 1 - i];
	u->out.len = u->in.len;
	return 0;
}

static void demo_close(void *ctx)
{
}

ACCEL_PLUGIN_EXPORT const struct accel_backend accel_backend_demo = {
	.abi = ACCEL_BACKEND_ABI,
	.name = "demo",
	.description = "demo backend for the tests: an emulated NPU reversing bytes",
	.ops = demo_ops,
	.probe = demo_probe,
	.supports = demo_supports,
	.open = demo_open,
	.run = demo_run,
	.close = demo_close,
	.classes = ACCEL_CLASS_BIT(ACCEL_CLASS_NPU),
	.priority = 90,
	.apis = demo_apis,
};
