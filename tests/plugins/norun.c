/*
 * norun.c - the "norun" backend, a plugin whose table offers an operation
 * but has no run function: loading it must leave a reason, never call into
 * it or crash.
 */
#include <stdlib.h>
#include "accel.h"

static const char *const norun_ops[] = { "zstd.compress", NULL };

/* Never called: the table is refused first. */
static int norun_probe(struct accel_probe *p)
{
	abort();
}

static int norun_supports(const struct accel_engine *e, const struct accel_op *op,
			  double *prior_mbps, char *reason, size_t len)
{
	abort();
}

ACCEL_PLUGIN_EXPORT const struct accel_backend accel_backend_norun = {
	.abi = ACCEL_BACKEND_ABI,
	.name = "norun",
	.description = "a plugin that offers zstd.compress without a run function (test suite)",
	.ops = norun_ops,
	.probe = norun_probe,
	.supports = norun_supports,
};
