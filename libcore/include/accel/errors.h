/*
 * accel/errors.h - the library's version, its error codes (ACCEL_E*, accel_strerror) and the
 * programs' exit statuses (accel_exit_status).
 * Part of libaccel's public API; <accel.h> includes every such header.
 */
#ifndef ACCEL_ERRORS_H
#define ACCEL_ERRORS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* The toolkit's version (accel --version, reports). */
#define ACCEL_VERSION "0.1.0"


/* Error codes: every libaccel function returns 0 or one of these (negative). */
enum accel_error {
	ACCEL_OK = 0,
	ACCEL_EINVAL = -1,   /* bad argument or option value */
	ACCEL_ENOMEM = -2,   /* out of memory */
	ACCEL_EIO = -3,      /* read or write failed (errno kept) */
	ACCEL_ENOTSUP = -4,  /* not supported by this engine: try the next one */
	ACCEL_EDEVICE = -5,  /* the engine failed: retry the unit elsewhere */
	ACCEL_EDATA = -6,    /* input is corrupt, truncated or failed a check */
	ACCEL_EPIPE = -7,    /* the reader of our output went away */
	ACCEL_ENOENGINE = -8,/* no engine left on the route to run a unit */
	ACCEL_EEXIST = -9,   /* output file exists and overwrite not allowed */
	ACCEL_EUNMET = -10,  /* a stated requirement is not met */
};

/* Exit statuses shared by every program (DESIGN.md, "Conventions"). */
enum accel_exit {
	ACCEL_EXIT_OK = 0,
	ACCEL_EXIT_FAILURE = 1,
	ACCEL_EXIT_USAGE = 2,
	ACCEL_EXIT_DATA = 3,       /* integrity or authentication check failed */
	ACCEL_EXIT_UNMET = 4,      /* accel-detect --require not met */
	ACCEL_EXIT_REGRESSION = 5, /* accel-bench --compare found a regression */
};

/* Short text for an ACCEL_E* code ("input is corrupt or truncated"),
 * "unknown error" for any other value; never NULL, static. Pure:
 * async-signal-safe. */
const char *accel_strerror(int err);

/* Exit status a program should return for an ACCEL_E* code: 0 for OK and
 * EPIPE, 2 EINVAL, 3 EDATA, 4 EUNMET, else 1. Pure: async-signal-safe. */
int accel_exit_status(int err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
