/*
 * accel/context.h - the context: discovery of backends, devices and engines, routing of
 * operations (accel_route_*), the measured routing profile.
 * Part of libaccel's public API; <accel.h> includes every such header.
 */
#ifndef ACCEL_CONTEXT_H
#define ACCEL_CONTEXT_H

#include <accel/backend.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

struct accel_report;

/*
 * Probing (accel_probe_backend, accel_discover*, and what probes on the way:
 * accel_cpu_engine*, accel_route, accel_profile_load_for) takes the
 * context's lock, so several threads may probe one context. The other
 * functions of this section only read the registry, devices and engines,
 * without the lock: the registry never changes after accel_ctx_new, but
 * devices and engines are added and renamed while a probe runs, so read
 * them while no other thread probes the context. Pointers returned stay
 * valid until accel_ctx_free.
 */

/* Create a context: registers the built-in backends and loads plugins from
 * $ACCEL_BACKEND_PATH (colon-separated folders), <bindir>/../lib/accel,
 * <bindir>/plugins, accel/ beside libaccel and the plugin folder of the
 * build (PLUGINDIR), and reads $ACCEL_SYSROOT. A plugin that fails to load
 * is a reason, not an error. Returns NULL only when out of memory. Safe
 * from any thread (dlopen); each context is independent. */
struct accel_ctx *accel_ctx_new(void);
/* Free a context (NULL: nothing): each engine's data goes back to its
 * backend (struct accel_backend.release). Plugins stay loaded. Call when no other
 * thread uses ctx, nor an abandoned bounded call holds a pointer into it. */
void accel_ctx_free(struct accel_ctx *ctx);

/* Probe backend `name` (once per context; later calls return the first
 * result). Returns 0, the probe's error code, or ACCEL_ENOTSUP for a name
 * not registered or a plugin that failed to load. Thread-safe (the
 * context's lock; a second caller waits for the first probe). */
int accel_probe_backend(struct accel_ctx *ctx, const char *name);
/* Probe every backend that lists `op` (NULL: every backend), in registry
 * order. Failures are recorded in accel_backend_status, not returned.
 * Thread-safe (the context's lock). */
void accel_discover(struct accel_ctx *ctx, const char *op);
/* Probe, in the order of their priority, every loaded backend that can
 * find devices of one of `classes` (ACCEL_CLASS_BIT()s); with
 * ACCEL_CLASS_ALL, every loaded backend. Each backend is probed once per
 * context, in full: one that a route probed before for its engines only
 * (accel_probe_list_devices) is probed again, and so are the probes after
 * this call. Thread-safe (the context's lock). */
void accel_discover_classes(struct accel_ctx *ctx, unsigned classes);
/* The kinds (enum accel_api_kind bits) the loaded backends give the API
 * `name` ("vaapi" -> VIDEO_DECODE | VIDEO_ENCODE), OR'ed over backends;
 * 0 for a name no backend reports. Probes nothing. */
unsigned accel_api_kinds(const struct accel_ctx *ctx, const char *name);
/* The classes of devices through which API `name` is reached: those of the
 * loaded backends that report it (0 when none does). Probes nothing. */
unsigned accel_api_classes(const struct accel_ctx *ctx, const char *name);
/* The name of the loaded backend of lowest priority value that reports
 * API `name` (static: the backend's own string), or NULL. Probes nothing. */
const char *accel_api_backend(const struct accel_ctx *ctx, const char *name);
/* The names of the registered backends (loaded or not: a plugin that failed
 * to load is still a name with a reason), in registry order, separated by
 * `sep`, into buf[len] (cut at len). Returns the length it needed. For
 * completions and messages. */
size_t accel_backend_names(const struct accel_ctx *ctx, const char *sep, char *buf, size_t len);
/* Check a --backend list ("auto", or items BACKEND[.VARIANT][:SELECTOR]
 * separated by commas or "+", as "cpu+cuda") against the registry: 0, or ACCEL_EINVAL with one
 * line in err[len] ("unknown backend 'foo'; backends here: cpu, cuda,
 * ...", "empty item in ','", "'auto' must stand alone"). Probes nothing. */
int accel_backend_list_check(const struct accel_ctx *ctx, const char *list, char *err, size_t len);

#define ACCEL_MAX_NOTES 24

/* Status of one registered backend, for reports. Its probe fields change
 * while the backend is probed (see above). */
struct accel_backend_status {
	char name[32];
	const struct accel_backend *backend; /* NULL: plugin failed to load */
	char origin[256];    /* "built-in" or the plugin's path */
	int probed;          /* 1 once probed */
	int rc;              /* probe result: 0 ok, negative failed */
	char reason[256];    /* why not loaded or probe failed */
	double probe_seconds;
	int nnotes;          /* lines the probe added with accel_probe_note */
	char notes[ACCEL_MAX_NOTES][256];
};
/* Registered backends, loaded or not, in registry order (with at most one
 * extra entry naming the plugins left out of a full registry); the status
 * of backend i, NULL when i is out of range. */
int accel_backend_count(const struct accel_ctx *ctx);
const struct accel_backend_status *accel_backend_status(const struct accel_ctx *ctx, int i);

/* Devices and engines found so far (grows as backends are probed; an id
 * or engine name may change while a probe adds a device). The _at
 * functions return NULL for an index out of range. */
int accel_device_count(const struct accel_ctx *ctx);
const struct accel_device *accel_device_at(const struct accel_ctx *ctx, int i);
int accel_engine_count(const struct accel_ctx *ctx);
const struct accel_engine *accel_engine_at(const struct accel_ctx *ctx, int i);
/* The built-in CPU engine ("cpu"), probing the cpu backend if needed;
 * NULL only when its probe failed. Thread-safe as accel_probe_backend. */
const struct accel_engine *accel_cpu_engine(struct accel_ctx *ctx);
/* The best engine on the CPU device for `op`: among the engines on the CPU
 * device (built-in or a plugin's, after probing the backends that list
 * op->name) whose supports() accepts op, the one of highest prior MB/s;
 * the built-in one on a tie. NULL when none can run it. This is where
 * --fallback cpu sends a failed unit. Probes under the lock, then reads
 * the engines (see the section's note). */
const struct accel_engine *accel_cpu_engine_for(struct accel_ctx *ctx, const struct accel_op *op);

/* Number of logical CPUs this process may use (affinity and cgroup v2
 * cpu.max quota, rounded up), at least 1. The affinity is read on every
 * call, the quota at most once a second; safe from any thread. */
int accel_cpu_count(void);

/* ------------------------------------------------------------------ routing */

enum accel_fallback {
	ACCEL_FALLBACK_CPU,   /* retry a failed unit on the best engine on the CPU device */
	ACCEL_FALLBACK_NEXT,  /* retry on the next engine of the route */
	ACCEL_FALLBACK_NONE,  /* a failed unit fails the run */
};
/* Parse "cpu", "next", "none" into *out: 0, or ACCEL_EINVAL (*out
 * unchanged). Safe from any thread. */
int accel_fallback_parse(const char *s, enum accel_fallback *out);

#define ACCEL_ROUTE_MAX 32

/* One engine considered for an operation. */
struct accel_route_entry {
	const struct accel_engine *engine; /* NULL for a backend with no engine */
	char name[40];       /* engine or backend name */
	int usable;          /* 1: ranked; 0: left out */
	double mbps;         /* expected throughput used for ranking, MB/s */
	char reason[160];    /* why this rank, or why left out */
	/* 1: ranked, but its backend's verify() has not run: the stream runs
	 * it before it first opens the engine (a fallback's check, paid only
	 * when the fallback is used). */
	int check;
};

/* Ranked engines for one operation: entries[0..nranked) usable, best first;
 * the rest left out, each with its reason. */
struct accel_route {
	char op[32];
	int n, nranked;
	int forced;          /* 1: ranked by --backend / ACCEL_BACKEND */
	int shared;          /* 1: every ranked engine serves the stream at once */
	struct accel_route_entry entries[ACCEL_ROUTE_MAX];
	/* Profile and co-execution (auto routes). */
	char profile_note[320]; /* "profile PATH ignored: why", "" when none was ignored */
	int nserving;        /* > 0: the first nserving ranked engines serve the
	                      * stream at once (auto, when the profile says they
	                      * all help); 0: as `shared` says */
	char no_engine[256]; /* nothing ranked: the line saying why when the router
	                      * knows better than "no engine can run" ("--backend
	                      * vkfft: only a software device (vkfft.vulkan:gpu0);
	                      * name it in full to use it"), else "" */
};

/* What the router is asked. */
struct accel_route_req {
	const struct accel_op *op;
	const char *backend;     /* --backend list ("auto", "cpu", "vulkan:0,cpu"); NULL: $ACCEL_BACKEND, else auto */
	int64_t size_hint;       /* job size in bytes, -1 unknown */
	const char *profile;     /* profile path; NULL: $ACCEL_PROFILE, else $XDG_CACHE_HOME/accel/profile.json */
};

/* Below this many bytes a job stays on the CPU unless forced: a device's
 * start-up and transfer cost would dominate. Under auto, backends whose
 * classes are only GPU and NPU (they run no CPU engine) are not probed for
 * such a job unless no other engine can run it; their route entry says
 * "not probed". */
#define ACCEL_SMALL_JOB_BYTES (1u << 20)
/* Seconds an engine on a GPU or NPU spends before its first byte (driver
 * and context, plans, kernels compiled), under auto charged against a job
 * of known size when the engine is ranked by its prior: its rank is then
 * size / (ACCEL_DEVICE_START_S + size / prior). Measured on an H100
 * (driver 580, CUDA 13): cuInit 0.24 s, NVIDIA's OpenCL platform 0.38 s;
 * a whole accel-fft -b cufft run of 16 MiB took 0.17 s. A profile's
 * measured MB/s (accel-bench --save) hold their start-up already. */
#define ACCEL_DEVICE_START_S 0.3
/* Under auto, the leading engines on different devices whose measured
 * MB/s for the job's size class (profile) is at least this fraction of the
 * best's serve the stream together: each adds at least a quarter. */
#define ACCEL_SHARE_MIN 0.25

/*
 * Rank the engines for req->op: a forced backend list first, in its order
 * (items joined by "," or "+"; all of a forced list's usable engines serve
 * the stream together; "cpu" for an operation the built-in backend does
 * not offer is accel_cpu_engine_for's engine, which the probes of the
 * backends listing the operation find); else the profile's measured MB/s for the job's size class, else each
 * backend's static prior. Software-emulated devices are never ranked above
 * native CPU code unless named; a forced item takes an engine on one only
 * when it names the device by id (vkfft.vulkan:gpu0, not vkfft or
 * vkfft.vulkan), and when an item finds nothing else r->no_engine says so. Under auto, engines the profile measured
 * for this size class within ACCEL_SHARE_MIN of the best serve together
 * (r->nserving); a profile that is invalid or from another machine is
 * ignored, its reason in r->profile_note. Probes the backends that list the
 * operation (a forced list: only the backends it names) and reads the
 * profile file (auto only) and $ACCEL_BACKEND when req->backend is NULL.
 * Returns 0, or ACCEL_EINVAL for a malformed backend list (an empty item,
 * "auto" among others, an item of 64 bytes or more; r then incomplete),
 * or ACCEL_ENOENGINE when no engine can run it (r still holds the
 * reasons). Thread-safe on one ctx as the context section says: probes
 * under its lock, then reads the engines and calls their supports().
 */
int accel_route(struct accel_ctx *ctx, const struct accel_route_req *req, struct accel_route *r);
/* Print a route as text lines to f (`-v`, accel-detect --routes); f's
 * stdio lock keeps each line whole. Safe from any thread. */
void accel_route_print(const struct accel_route *r, FILE *f);
struct accel_report;
/* accel_route for a program's job, with what every program does around
 * it: the route printed on stderr when verbose > 0, or added to report
 * (with its devices) when report is not NULL, and a failure's one line in
 * err[len]: "--backend: malformed list 'LIST'" (ACCEL_EINVAL; LIST is
 * req->backend, else $ACCEL_BACKEND), r->no_engine or else "no engine can
 * run OP (try -v for the reasons)" (ACCEL_ENOENGINE) or "out of memory" (ACCEL_ENOMEM, from
 * the report). Returns 0 or that code; r is filled as accel_route fills
 * it. */
int accel_route_job(struct accel_ctx *ctx, const struct accel_route_req *req, int verbose,
		    struct accel_report *report, struct accel_route *r, char *err, size_t len);

/* Size class of a job of `bytes` for the profile: "small" (< 1 MiB),
 * "medium" (< 64 MiB), "large", or "unknown" for a negative size. Static
 * strings; safe from any thread. */
const char *accel_size_class(int64_t bytes);

/*
 * The profile (accel(7), PROFILE): measured throughput per (operation,
 * engine, size class), written by accel-bench --save, read by the router.
 * It records the machine it was measured on (CPU model; each device's
 * class, vendor, model, PCI address and id, driver and driver versions)
 * and keys each engine by a stable identity, so an entry never attaches to
 * another device. Schema 2 is written; schema 1 files (no machine, entries
 * matched by engine name) are still read. The functions below use only
 * their arguments (and the environment, files, and ctx as the context
 * section says): safe from any thread on distinct entry arrays.
 */
#define ACCEL_PROFILE_SCHEMA 2

/* One measured throughput. */
struct accel_profile_entry {
	char op[32], engine[40], size_class[16];
	double mbps;          /* MB/s of input, > 0 */
	char key[256];        /* accel_engine_key() of the engine; "" in a schema 1 file */
};
/* The stable identity of engine e, "BACKEND[.VARIANT]@DEVICE", into
 * buf[len]: the device is "pci:ADDRESS" when it has one ("vulkan@pci:
 * 0000:65:00.0"), "cpu:MODEL" for a CPU ("cpu@cpu:AMD EPYC 7763 64-Core
 * Processor"), else "CLASS:VENDOR/MODEL/ID". Probe order never changes it.
 * Returns 0, or ACCEL_EINVAL ("BACKEND@none" in buf) when e's device is
 * not in ctx. The key is cut to len. */
int accel_engine_key(const struct accel_ctx *ctx, const struct accel_engine *e, char *buf, size_t len);
/* The profile's path into buf[len]: `path` when not NULL, else
 * $ACCEL_PROFILE, else $XDG_CACHE_HOME/accel/profile.json, else
 * $HOME/.cache/accel/profile.json (cut to len). Returns 0, or ACCEL_EINVAL
 * ("" in buf) when none is set. */
int accel_profile_path(const char *path, char *buf, size_t len);
/* Load a profile without checking its machine; returns the number of
 * entries (0 when the file is absent), ACCEL_EDATA for a file that is not
 * a valid profile (a schema_version other than 1 or 2 included, or larger
 * than 8 MiB), ACCEL_EIO or ACCEL_ENOMEM. *out is malloc'd (free it; NULL
 * on error). */
int accel_profile_load(const char *path, struct accel_profile_entry **out);
/* Load a profile for the machine of ctx: as accel_profile_load, and a
 * schema 2 profile whose machine differs from what ctx has found (another
 * CPU model; another PCI function at a PCI address it names; another
 * driver version where both sides know it) is refused with ACCEL_ENOTSUP.
 * May probe the cpu backend (under ctx's lock); compares with the devices
 * found so far. Returns the number of entries (0: absent),
 * or ACCEL_EDATA, ACCEL_ENOTSUP, ACCEL_EIO, ACCEL_ENOMEM with one line in
 * why[len] saying why it is ignored ("measured on another machine (CPU
 * 'X', this one 'Y')", "schema_version 3 is not supported ..."). */
int accel_profile_load_for(struct accel_ctx *ctx, const char *path, struct accel_profile_entry **out,
			   char *why, size_t len);
/* Measured MB/s of `op` on the engine with identity `key` (schema 2
 * entries) or name `engine` (schema 1 entries) for `size_class`; when
 * that class was not measured, its "large" measurement, else any. The
 * class used goes to used[len] (untouched when not measured). 0 when not
 * measured. */
double accel_profile_lookup(const struct accel_profile_entry *p, int n, const char *op, const char *key,
			    const char *engine, const char *size_class, char *used, size_t len);
/* Record a measurement in the growable array *entries of *n: `mbps` MB/s
 * of input for `op` on engine e for `size_class` ("small", "medium",
 * "large"), replacing an earlier one for the same three; *entries is
 * realloc'd. Returns 0, ACCEL_EINVAL (a NULL argument, mbps not > 0, op
 * of 32 bytes or more, a size class of 16 or more, e's device not in
 * ctx) or ACCEL_ENOMEM (*entries and *n unchanged). */
int accel_profile_put(const struct accel_ctx *ctx, struct accel_profile_entry **entries, int *n,
		      const char *op, const struct accel_engine *e, const char *size_class, double mbps);
/* Write a schema 2 profile of entries[0..n) and the machine of ctx (the
 * devices found so far: discover them all first) to `path`, creating its
 * folder: a temporary beside it (mode 0666 less the umask) renamed into
 * place after fsync, so readers see the old file or the new one (the
 * temporary is not removed by a signal). Returns 0, ACCEL_EINVAL (an
 * entry without key, operation or mbps > 0; nothing written), ACCEL_EIO
 * or ACCEL_ENOMEM, with one line in err[len]. */
int accel_profile_save(struct accel_ctx *ctx, const char *path, const struct accel_profile_entry *entries,
		       int n, char *err, size_t len);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
