/*
 * badabi.c - the "badabi" backend, a plugin built for another backend ABI:
 * loading it must leave a reason, never call into it or crash.
 */
#include <stdlib.h>
#include "accel.h"

static const char *const badabi_ops[] = { "zstd.compress", NULL };

/* Never called: the ABI check refuses the table first. */
static int badabi_probe(struct accel_probe *p)
{
	abort();
}

ACCEL_PLUGIN_EXPORT const struct accel_backend accel_backend_badabi = {
	.abi = ACCEL_BACKEND_ABI + 100,
	.name = "badabi",
	.description = "a plugin with a wrong ABI number (test suite)",
	.ops = badabi_ops,
	.probe = badabi_probe,
};
