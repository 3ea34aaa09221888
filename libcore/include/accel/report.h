/*
 * accel/report.h - requirements (--require) and reports (text, JSON, ...) of devices and routes.
 * Part of libaccel's public API; <accel.h> includes every such header.
 */
#ifndef ACCEL_REPORT_H
#define ACCEL_REPORT_H

#include <accel/context.h>
#include <accel/stream.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/*
 * A compiled --require expression: comma-separated terms NAME[.FIELD][OP
 * VALUE], all of which must hold. NAME is a device class (gpu, gpu>=2,
 * gpu.memory>=40G, gpu.vendor==NVIDIA), a CPU flag (avx2), an API
 * (vulkan, vulkan>=1.3) or a field of any device; FIELD is a key of the
 * device in accel-detect's JSON, or its JSON path (properties.fp64,
 * cpu.cache.l3_bytes, apis.vulkan). OP is one of >= <= > < == = !=; VALUE
 * a number with an optional K, M, G, T, P suffix (powers of 1024), a
 * dotted version, true, false, or with == and != a word (compared
 * ignoring case). Immutable once parsed: one may be evaluated from
 * several threads at once, on contexts no other thread is probing.
 */
struct accel_require;

#define ACCEL_REQUIRE_MAX_TERMS 32

/* Compile `expr` into *out (free with accel_require_free). Returns 0;
 * ACCEL_EINVAL with the reason, one line without the "--require: " of the
 * message, in err[len] ("'gpu>>2': OP is one of >= <= > < == = != (...)",
 * "empty expression", "33 terms; at most 32 are supported"); ACCEL_ENOMEM.
 * *out is NULL on error. Safe from any thread. */
int accel_require_parse(const char *expr, struct accel_require **out, char *err, size_t len);

/* The device classes (ACCEL_CLASS_BIT()s) whose probes the expression
 * needs to be decided, for accel_discover_classes(): a class or a field of
 * one, its own; a CPU flag, cpu; an API, the classes of the backends of ctx
 * that report it (accel_api_classes); anything else, every class. Probes
 * nothing. */
unsigned accel_require_classes(const struct accel_require *req, const struct accel_ctx *ctx);

/* Decide the expression on the devices (and probe reasons) of ctx, term
 * by term in their order, probing nothing itself. Returns 0 when every
 * term holds, ACCEL_EUNMET with the first unmet term and why in why[len]
 * as one line ("gpu>=3: found 2 gpu devices"). Software devices do not
 * count as devices of a class, but their APIs do. ACCEL_EINVAL, before any
 * term is decided, for a CLASS.FIELD whose FIELD no device can have (not a
 * key of the JSON of a device here or of the bundled backends, an API or a
 * CPU flag), why naming it and the closest key: a usage error. */
int accel_require_eval(const struct accel_require *req, struct accel_ctx *ctx, char *why, size_t len);

/* Free a compiled expression (NULL: nothing). */
void accel_require_free(struct accel_require *req);

/* ------------------------------------------------------------------ reports */

/*
 * Reports of devices, routes and probes, in one of several formats, all
 * behind one interface: accel_report_begin, then any number of
 * accel_report_device and accel_report_route, then accel_report_probes,
 * then accel_report_end, which writes what is left and frees the report.
 * Text from drivers and plugins is accel_text_sanitize()d. A report is
 * used by one thread at a time; it keeps pointers to the devices it was
 * given until accel_report_end, so the context must outlive it.
 */
enum accel_report_format {
	ACCEL_REPORT_TABLE,   /* accel-detect's table: devices under class titles */
	ACCEL_REPORT_JSON,    /* one JSON document (schema_version 1, below) */
	ACCEL_REPORT_GRES,    /* Slurm gres.conf lines for the hardware GPUs */
	ACCEL_REPORT_NFD,     /* Kubernetes Node Feature Discovery labels */
};

#define ACCEL_REPORT_SCHEMA_VERSION 1

struct accel_report_opts {
	enum accel_report_format format;
	unsigned classes;     /* bit per class shown; 0 means all */
	int verbose;          /* table: every property and each probe's line */
	int quiet;            /* table: no "(N probes found nothing)" line */
	int color;            /* table: ANSI styles */
	int routes;           /* JSON: a "routes" array, even when empty */
	double started;       /* accel_now() when the work began: JSON "seconds" */
	const char *prog;     /* names the writer in gres and NFD comments */
};

/*
 * JSON (ACCEL_REPORT_JSON) keys: schema_version; prog (opts.prog, in
 * accel_report_run_start's reports); host {hostname, kernel,
 * sysroot, accel_version}; devices [{id, class, vendor, model, driver,
 * software, pci_address, numa_node, memory_bytes, apis [{name, ok,
 * reason}], cpu {packages, cores, threads, numa_nodes, cache {l1d_bytes
 * ...}, flags []} (CPUs only), properties {}}]; routes [{operation,
 * forced, engines [{rank, name, usable, expected_mbps, reason}]}] (when
 * opts.routes); probes [{name, origin, probed, ok, reason, seconds,
 * notes []}]; status (accel_report_run_end: the exit status); seconds.
 * Absent values are null; times are seconds.
 */
struct accel_report;

/* A report written to f (which it does not close). NULL when out of memory
 * or for an unknown format. opts is copied (prog and the strings it
 * points to must outlive the report). */
struct accel_report *accel_report_new(FILE *f, const struct accel_report_opts *opts);
/* Start the report (JSON: the host of ctx, $ACCEL_SYSROOT, hostname and
 * kernel). 0 or ACCEL_ENOMEM. */
int accel_report_begin(struct accel_report *r, struct accel_ctx *ctx);
/* Whether the report's classes show device d: its own class is chosen,
 * or video is and d holds a video engine (an API that the backends of the
 * context given to accel_report_begin say decode or encode video). */
int accel_report_shows(const struct accel_report *r, const struct accel_device *d);
/* Add device d when accel_report_shows() it (else nothing). The table
 * groups devices by class, gres keeps hardware GPUs in PCI bus order.
 * Returns 0, ACCEL_ENOMEM (JSON), or ACCEL_EINVAL (table, gres: more than
 * 64 devices; table: a device after a route or the probes). */
int accel_report_device(struct accel_report *r, const struct accel_device *d);
/* Add the route of one operation (table: accel_route_print's lines,
 * written at once after the devices so far; without opts.verbose an auto
 * route shows only the backends that offer the operation, and a line
 * counts the others; JSON: every backend). 0 or ACCEL_ENOMEM. */
int accel_report_route(struct accel_report *r, const struct accel_route *route);
/* Add the statistics of one run over `input` (its name, as in messages):
 * what a program's -v prints after each input. Table: "PROG: INPUT: "
 * then accel_stream_stats_print's lines, written at once. JSON: an entry
 * of a "runs" array: {input, units, serial_regions, bytes_in, bytes_out,
 * seconds, retried, units_in_flight, unit_bytes, memory_limit (null: no
 * cap), engines [{name, workers, units, bytes_in, bytes_out,
 * busy_seconds, failures, retried, dropped}]}. 0 or ACCEL_ENOMEM (JSON). */
int accel_report_run(struct accel_report *r, const char *input, const struct accel_stream_stats *s);
/* One stage of a run that did not go through the stream engine (a
 * transcode's decoder, filters and encoder; a file hashed whole). */
struct accel_report_stage {
	const char *stage;     /* "decoder", "filter", "encoder", "hash" */
	const char *what;      /* codec, filters or algorithm: "h264", "scale", "sha256"; NULL: null */
	const char *engine;    /* the engine it ran on: "ffmpeg:cpu0", "openssl"; NULL: null */
	const char *fallback;  /* NULL, or why it ran there and not on the first engine of its route */
	int64_t frames;        /* frames through it; -1: not counted (left out) */
	double seconds;        /* time in it; < 0: not measured (null) */
};

/* One such run, as accel_report_job adds it. */
struct accel_report_job {
	const char *input;       /* its name, as in messages */
	int64_t bytes_in;        /* bytes read; -1: unknown (null) */
	int64_t bytes_out;       /* bytes written; -1: unknown (null) */
	int64_t frames_decoded;  /* -1: not a count of this run (left out) */
	int64_t frames_encoded;  /* frames written, encoded or raw; -1: left out */
	double seconds;          /* wall time; < 0: not measured (null) */
	const char *error;       /* NULL, or why it failed (one line) */
	int nstages;
	const struct accel_report_stage *stages;
};

/* Add one run that the stream engine did not make (see struct
 * accel_report_job): JSON, an entry of "runs": {input, bytes_in,
 * bytes_out, frames_decoded and frames_encoded (when counted), seconds,
 * error, stages [{stage, what, engine, fallback, frames (when counted),
 * seconds}]}; table: "PROG: INPUT: " and one line per stage. 0 or
 * ACCEL_ENOMEM (JSON). */
int accel_report_job(struct accel_report *r, const struct accel_report_job *j);
/* Add the devices that the engines of `route` run on, once each (a
 * program's -v --json: where its work ran). 0 or as accel_report_device. */
int accel_report_route_devices(struct accel_report *r, struct accel_ctx *ctx, const struct accel_route *route);
/* Add the probes of ctx's backends (table: with verbose, one line each;
 * without, how many found nothing). 0 or ACCEL_ENOMEM (JSON). Reads
 * ctx as the context section says. */
int accel_report_probes(struct accel_report *r, struct accel_ctx *ctx);
/* A program's --json run report (what -v says, as one JSON document on
 * stderr at the end): ACCEL_REPORT_JSON with routes, named prog, its
 * seconds from `started` (accel_now()), begun on ctx. NULL when out of
 * memory. */
struct accel_report *accel_report_run_start(struct accel_ctx *ctx, const char *prog, double started);
/* End a run report of accel_report_run_start: the probes of ctx, "status"
 * (the program's exit status, `status`), written whole with one write
 * after any error line of the run. Returns status, or when the report
 * cannot be made or written ACCEL_EXIT_FAILURE (when status is 0) after a
 * message. r may be NULL: returns status. */
int accel_report_run_end(struct accel_report *r, struct accel_ctx *ctx, int status);
/* Write the rest of the report and free it. 0, or ACCEL_ENOMEM (nothing
 * of the JSON is written then). r may be NULL. */
int accel_report_end(struct accel_report *r);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
