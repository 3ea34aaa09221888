/*
 * accel/fault.h - fault injection for tests ($ACCEL_FAULT, accel(7) TESTING).
 * Part of libaccel's public API; <accel.h> includes every such header.
 */
#ifndef ACCEL_FAULT_H
#define ACCEL_FAULT_H

#include <accel/errors.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Whether $ACCEL_FAULT (accel(7), TESTING) says engine `engine` must fail
 * on unit `unit`: 1 or 0 (0 too when $ACCEL_FAULT is unset or malformed:
 * check it with accel_fault_check first). For programs that run units of
 * their own outside the stream engine, such as accel-transcode's video
 * packets, so that their fallback is tested as the stream engine's is.
 * $ACCEL_FAULT is read once per process, as accel_stream_run reads it.
 * Thread-safe. */
int accel_fault_hit(const char *engine, uint64_t unit);
/* accel_fault_hit for stage `stage` ("decode", "encode") of a program whose
 * engine runs several stages on its own units: a rule ENGINE@STAGE:UNITS
 * matches only that stage, a rule without @STAGE every stage (and
 * accel_fault_hit, the stream engine's units). Thread-safe. */
int accel_fault_hit_stage(const char *engine, const char *stage, uint64_t unit);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
