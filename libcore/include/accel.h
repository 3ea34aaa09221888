/*
 * accel.h - the public API of libaccel: discovery of devices, backends and
 * engines, routing of operations, the chunked stream engine, and the CLI
 * helpers the accel-* programs share.
 *
 * Conventions: functions return 0 (or a count) on success and a negative
 * ACCEL_E* code on failure; sizes are in bytes and times in seconds unless
 * a name says otherwise. Nothing prints except the accel_msg_* functions,
 * the option helpers (accel_common_*, accel_cli_*), the progress meter,
 * the *_print functions and reports (to the FILE given), and the stream
 * engine's warnings and the -v route of accel_compress/accel_decompress
 * (cfg->verbose), all on stderr unless a FILE is given.
 *
 * Thread safety: libaccel keeps no global state but the few things named
 * below, so functions on distinct objects may run on any threads at once.
 * An object (input, output, buffer, meter, report, option parser) is used
 * by one thread at a time. A context (struct accel_ctx) serialises its
 * probes with a lock: accel_probe_backend and the accel_discover* and
 * routing functions may be called from several threads; the functions that
 * only read what was found (accel_*_count, accel_*_at, accel_backend_status,
 * accel_engine_key ...) take no lock and are safe while no other thread is
 * probing that context (probe first, then read). Process-wide state: the
 * program name of accel_msg_prog (set it before starting threads),
 * $ACCEL_FAULT (read once per process, on first use), the signal handlers
 * and the one pending temporary of accel_output_open, and the count of
 * abandoned bounded calls (atomic). Functions that read the environment
 * (getenv) must not race a setenv. From a signal handler call only those
 * documented as async-signal-safe: accel_now, accel_strerror and
 * accel_exit_status.
 */
#ifndef ACCEL_H
#define ACCEL_H

#include <accel/errors.h>
#include <accel/device.h>
#include <accel/backend.h>
#include <accel/context.h>
#include <accel/unit.h>
#include <accel/io.h>
#include <accel/stream.h>
#include <accel/ops/compress.h>
#include <accel/cli.h>
#include <accel/report.h>
#include <accel/ops/age.h>
#include <accel/ops/fft.h>
#include <accel/ops/tensor.h>
#include <accel/ops/onnx.h>
#include <accel/ops/video.h>
#include <accel/fault.h>

#endif
