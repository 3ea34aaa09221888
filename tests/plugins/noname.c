/*
 * noname.c - the "noname" backend, a plugin whose table has neither a name
 * nor a probe: loading it must leave a reason, never crash.
 */
#include "accel.h"

ACCEL_PLUGIN_EXPORT const struct accel_backend accel_backend_noname = {
	.abi = ACCEL_BACKEND_ABI,
	.description = "a plugin table without name and probe (test suite)",
};
