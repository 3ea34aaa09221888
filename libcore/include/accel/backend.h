/*
 * accel/backend.h - the plugin ABI, whole (as hwloc's plugins.h): the backend table, engines,
 * operations and the probe helpers a backend calls. A plugin includes this
 * header and the ops/ header of the operations it runs.
 * Part of libaccel's public API; <accel.h> includes every such header.
 */
#ifndef ACCEL_BACKEND_H
#define ACCEL_BACKEND_H

#include <accel/device.h>
#include <accel/unit.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

struct accel_ctx;
struct accel_probe;
struct accel_input;
struct accel_output;

/* The ABI of plugins: the backend table (with its tables: accel_api_info,
 * accel_api_note, accel_prior_bound), the structs its hooks are given
 * (accel_op, accel_engine, accel_device, accel_unit, accel_buf) and those
 * that reach a plugin through op->ext (the accel/ops/ headers: accel_fft,
 * accel_age_key, accel_hash_files, accel_onnx_params, accel_tensor). A
 * change to any of their layouts raises it (libcore/abi.c stops a build
 * that forgets); a plugin built against another value is refused at load
 * with a reason, never called. */
#define ACCEL_BACKEND_ABI 12

/* Plugins are built with -fvisibility=hidden and export one symbol, their
 * table: ACCEL_PLUGIN_EXPORT const struct accel_backend accel_backend_NAME. */
#define ACCEL_PLUGIN_EXPORT __attribute__((visibility("default")))

/* An operation with its parameters, as a program asks for it. */
struct accel_op {
	const char *name;     /* "zstd.compress", "gzip.decompress", ... */
	int level;            /* codec level, in the codec's own scale */
	int checksum;         /* 1: write/verify the format's checksum */
	size_t chunk_size;    /* bytes per unit for chunked operations */
	const void *ext;      /* operation-specific parameters, or NULL */
	uint64_t memory_limit;   /* bytes the operation may use for its own state (a zstd window), 0: default */
};

/* The bit of a device class in a class mask (struct accel_backend.classes,
 * accel_discover_classes). */
#define ACCEL_CLASS_BIT(c) (1u << (c))
#define ACCEL_CLASS_ALL ((1u << ACCEL_CLASS_COUNT) - 1)

/* What an API a backend reports on devices is for (struct accel_api.name
 * -> kinds); several bits may be set ("vaapi" decodes and encodes). */
enum accel_api_kind {
	ACCEL_API_COMPUTE = 1u << 0,       /* general compute: vulkan, opencl, cuda */
	ACCEL_API_VIDEO_DECODE = 1u << 1,  /* nvdec, vaapi, vdpau, qsv ... */
	ACCEL_API_VIDEO_ENCODE = 1u << 2,  /* nvenc, vaapi, qsv ... */
	ACCEL_API_CRYPTO = 1u << 3,        /* openssl, qat */
	ACCEL_API_COMPRESSION = 1u << 4,   /* qat, the host's codecs */
	ACCEL_API_NETWORK = 1u << 5,       /* netdev, pcap */
	ACCEL_API_INVENTORY = 1u << 6,     /* only reports a device: pci, nvml */
};
#define ACCEL_API_VIDEO (ACCEL_API_VIDEO_DECODE | ACCEL_API_VIDEO_ENCODE)

/* One entry of a backend's table of the APIs it reports. */
struct accel_api_info {
	const char *name;    /* as in struct accel_api.name; NULL ends the table */
	unsigned kinds;      /* enum accel_api_kind bits */
};

/* One entry of a backend's api_notes: the word its notes use for an API. */
struct accel_api_note {
	const char *api;     /* as in struct accel_api_info.name; NULL ends the table */
	const char *word;    /* "cuda" */
};

/* One entry of a backend's prior_bounds: the most MB/s of input that its
 * supports() sets as the prior of any of its engines for one operation. */
struct accel_prior_bound {
	const char *op;      /* one of the backend's ops; NULL ends the table */
	double mbps;         /* > 0 */
};

/* What a backend's probe sees: it adds devices and engines through
 * accel_probe_add_device() and accel_probe_add_engine(). */
struct accel_probe;

/*
 * A backend: the code that performs operations through one API. One table per
 * backend (the model is FFmpeg's HWContextType and curl's struct Curl_ssl),
 * built in or loaded from the plugin accel_<name>.so, which exports it as
 * `accel_backend_<name>`. Every function except probe is called only for
 * engines the backend's probe added.
 */
struct accel_backend {
	unsigned abi;              /* ACCEL_BACKEND_ABI */
	const char *name;          /* "cpu", "vulkan", "opencl", "cuda" */
	const char *description;   /* one line for accel-detect -v */
	/* Operations this backend can ever offer; NULL-terminated. Discovery
	 * probes a backend only when the operation asked for is listed here. */
	const char *const *ops;

	/* Find the backend's devices and add one engine per usable device.
	 * Returns 0, or a negative code after accel_probe_fail() gave the
	 * reason ("libvulkan.so.1 not found"). Must not block for long.
	 * Called at most once per context, under the context's lock: it may
	 * call the accel_probe_* functions, not accel_probe_backend or
	 * accel_discover* (the lock is not recursive). */
	int (*probe)(struct accel_probe *p);

	/* Whether engine `e` can run `op`. Returns 0 and sets *prior_mbps to a
	 * static throughput guess in MB/s of input (where it came from may go
	 * to reason[len], e.g. ACCEL_HASH_MEASURED: the route prints it
	 * beside the prior, else "not measured"), or ACCEL_ENOTSUP with the
	 * reason written to reason[len]. Called by the router without a lock,
	 * possibly from several threads at once: must be thread-safe. */
	int (*supports)(const struct accel_engine *e, const struct accel_op *op,
			double *prior_mbps, char *reason, size_t len);

	/* Open a per-worker context for running `op` on `e`: 0 with *ctx set,
	 * or a negative ACCEL_E* code. Called on the worker thread that will
	 * use it (on the caller's thread for stream). Several contexts of one
	 * engine are open and used at once on different threads. */
	int (*open)(const struct accel_engine *e, const struct accel_op *op, void **ctx);

	/* Run one unit: read u->in, write u->out (growing it with
	 * accel_buf_reserve). Returns 0; ACCEL_EDATA for bad input; ACCEL_EDEVICE
	 * or ACCEL_ENOTSUP when the engine failed and another may succeed;
	 * ACCEL_ENOMEM ends the run. A one-line detail goes to err[len]. Runs on
	 * the thread that opened ctx, never on two threads for one ctx. */
	int (*run)(void *ctx, struct accel_unit *u, char *err, size_t len);

	/* Optional: process a region of input that cannot be cut into units
	 * (for example one large zstd frame) sequentially, from `in` to `out`.
	 * Consumes exactly one region (one frame or member); same returns as run.
	 * Runs on the thread that calls accel_stream_run (the reader). */
	int (*stream)(void *ctx, struct accel_input *in, struct accel_output *out,
		      char *err, size_t len);

	/* Free a context from open, on the thread that used it. */
	void (*close)(void *ctx);

	/* --- registry (ABI 2): what the backend says about itself, so that no
	 * program names a backend. --- */
	/* Classes of the devices its probe can find: ACCEL_CLASS_BIT()s; 0 for
	 * a backend that finds none of a known class (probed only when every
	 * class is asked for). */
	unsigned classes;
	/* Probe order, lower first (ties: registry order). APIs that name a
	 * device best come first: a device merged later by PCI address keeps
	 * the first probe's names. The cpu backend is 0. */
	int priority;
	/* The APIs it records on devices (accel_device_add_api) and their
	 * kinds; ended by { NULL }; NULL: none. */
	const struct accel_api_info *apis;

	/* ---- Asynchronous device work ----
	 * Units the backend keeps in flight per engine, so that uploading one
	 * unit, computing another and downloading a third overlap: the stream
	 * engine runs that many workers on the engine at once (0 or 1: one; at
	 * most ACCEL_QUEUE_DEPTH_MAX), each with a context of its own from
	 * open(). Contract: a context holds what one unit in flight needs and
	 * reuses it for every unit it runs (staging buffers in pinned host
	 * memory and on the device, sized at open or grown once, and its own
	 * queue or stream); run() submits upload, compute and download on that
	 * queue and waits only for it. Depth 2 is double buffering, 3 triple.
	 * What the contexts share (the device context, compiled kernels) lives
	 * in the engine's data from the probe, used by several threads at once. */
	int queue_depth;

	/* ---- What no program may name ----
	 * Optional: for an API of `apis` whose devices the probe's notes
	 * (accel_probe_note) begin with another word than the API's name,
	 * that word ({ "nvenc", "cuda" }: FFmpeg's device type); ended by
	 * { NULL }. When no device is usable through an API, accel-detect
	 * --require quotes the note of the backend that reports it which
	 * begins with that word (else with the API's name) and a space. */
	const struct accel_api_note *api_notes;

	/* ---- Engine data (ABI 3) ----
	 * Optional: free what the probe gave engine e as its data (e->data,
	 * from accel_probe_add_engine: loaded models, compiled kernels).
	 * Called by accel_ctx_free, once per engine of this backend whose data
	 * is not NULL, after every context from open() is closed; the engine
	 * is not used again. Required of a backend whose engines hold data. */
	void (*release)(const struct accel_engine *e);

	/* ---- Versions (ABI 5) ----
	 * Optional: the libraries the backend loads, for the programs'
	 * --version: lines "NAME VERSION" (or "NAME VERSION (NOTE)", "NAME
	 * (WHY NOT)" when the library cannot be loaded), each ended by '\n',
	 * into buf[len], cut at len. The version the library reports at run
	 * time, asked without starting it (no device context, no
	 * environment); a library too heavy to load for that is left out.
	 * Called before any probe, on the main thread. */
	void (*versions)(char *buf, size_t len);

	/* ---- Bounds without a probe (ABI 8) ----
	 * Optional: for each operation listed, the most MB/s of input that
	 * supports() sets as a prior, on any device; ended by { NULL }. Known
	 * without a probe (the plugin manifest records it), so that an auto
	 * route need not start a device's drivers to learn that the backend
	 * cannot lead: a backend of GPUs and NPUs only whose bound is at most
	 * the prior of the CPU engine leading the route, and of which the
	 * profile has no measured figure, is left unprobed. NULL, or an
	 * operation not listed: no bound (probed as before). */
	const struct accel_prior_bound *prior_bounds;

	/* ---- Checks where the engine is used (ABI 11) ----
	 * Optional: a check of engine e for op that costs too much for
	 * supports() (OpenCV's importer reading the model in a child process:
	 * 35 ms for a model of 0.6 MB, 70 ms for 10 MB, and on with the
	 * model's size). accel_route runs it for the engines an auto route
	 * serves first and for every engine a --backend list names, an engine
	 * that fails it being left out with its reason; the others (an auto
	 * route's fallbacks, --fallback cpu's engine) keep their rank, and the
	 * stream runs it before it first opens them: a failure there is the
	 * engine's (dropped at once; its unit goes where --fallback says), with
	 * the reason as the error. So a process that never falls back never
	 * pays for it. Returns 0, or ACCEL_ENOTSUP with the reason, one line,
	 * in reason[len]. Called without a lock from any thread, maybe more
	 * than once for one op: the backend keeps its answer. */
	int (*verify)(const struct accel_engine *e, const struct accel_op *op, char *reason, size_t len);
};
#define ACCEL_QUEUE_DEPTH_MAX 16

/* The built-in CPU backend (libzstd, ISA-L, libdeflate, liblz4), always last on a
 * route. A plugin may delegate to its functions, as tests/plugins/test.c
 * does; they ignore the engine they are given. */
extern const struct accel_backend accel_backend_cpu;

/*
 * An engine: one backend, or one variant of it, on one device, named
 * BACKEND[.VARIANT]:DEVICE ("vulkan:gpu0", "onnxruntime.cuda:gpu0",
 * "fftw:cpu0"). The built-in CPU backend's engine keeps the short name
 * "cpu" (what -v, ACCEL_FAULT and profiles have always said); -b cpu:cpu0
 * selects it too. The name changes only while a probe adds a device that
 * sorts before it (see accel_probe_add_device), never after probing.
 */
struct accel_engine {
	char name[40];                    /* "cpu", "vulkan:gpu0", "onnxruntime.cuda:gpu0" */
	const struct accel_backend *backend;
	int device;                       /* index into accel_devices() */
	int software;                     /* copied from the device */
	void *data;                       /* backend's own per-engine data */
	char variant[16];                 /* "cuda", or "" for the backend's only engine kind */
};

/* The accel_probe_* functions below are called only from a backend's probe,
 * on the probing thread, with the context's lock held by the caller; `p`
 * is valid only during that probe. */

/* Called by a probe: add (or merge into an existing device with the same
 * PCI address) a device; returns its index, or a negative code
 * (ACCEL_ENOMEM: the context holds its 64 devices already). A device whose
 * id the probe left empty gets one from a fixed order, not the order of
 * probing: by class, then PCI bus address, then devices without one by
 * vendor, model and driver ("gpu0" is the GPU with the lowest address).
 * Ids (and the engine names made of them) of devices of that class are
 * renumbered when a device sorts before them, so the same set of devices
 * gets the same ids whichever backends were probed first. */
int accel_probe_add_device(struct accel_probe *p, const struct accel_device *d);
/* Device index `i`, for a probe to complete what it merged; NULL for an
 * index out of range. */
struct accel_device *accel_probe_device(struct accel_probe *p, int i);
/* Called by a probe: add an engine of this backend on device `device`.
 * Returns the engine's index, or ACCEL_EINVAL (no such device, the backend
 * has its engine on that device already, or the context holds its 64
 * engines already: a note says so). */
int accel_probe_add_engine(struct accel_probe *p, int device, void *data);
/* Like accel_probe_add_engine, for one of several engines a backend offers
 * on one device ("cuda" and "tensorrt" providers on gpu0): the engine is
 * named BACKEND.VARIANT:DEVICE. `variant` is 1 to 15 characters of
 * [a-z0-9_-]; ACCEL_EINVAL otherwise, or when this backend has an engine
 * of that variant on that device already. */
int accel_probe_add_engine_variant(struct accel_probe *p, int device, const char *variant, void *data);
/* Called by a probe: the index of the CPU device ("cpu0"), so a plugin can
 * add engines on it (FFTW, OpenSSL, an inference library's CPU provider).
 * The cpu backend is probed first when it was not yet, whichever probe
 * asks, on this thread under the lock already held; no other lock is
 * taken. Returns the index, the CPU probe's negative code when it failed,
 * or ACCEL_ENOTSUP when no CPU device was found. */
int accel_probe_cpu_device(struct accel_probe *p);
/* Called by a probe: whether it should list every device it can find (1:
 * accel-detect, a -v or --json report, accel_discover_classes) or only
 * what its engines need (0: a route, where finding more costs start-up
 * time and changes nothing). On 0 the backend is marked as probed for a
 * route only: when an inventory asks for its classes later, it is probed
 * again with 1, its engines (accel_probe_add_engine returns the index of
 * the one added before) and devices (merged) kept. */
int accel_probe_list_devices(struct accel_probe *p);
/* Called by a probe that can find devices through an API with software
 * implementations (OpenCL's PoCL, Vulkan's lavapipe) beside engines of
 * its own on the CPU: whether to look for them. 1 in an inventory, when
 * the route names the backend (--backend), or when the machine may hold a
 * GPU or NPU (a PCI function of those classes, /dev/dri, /dev/kfd ...);
 * 0 otherwise: all it could find is software devices, which an auto route
 * never prefers, and starting their drivers costs more than the job
 * (PoCL: ~0.1 s, LLVM loaded). On 0 the backend is marked as probed for a
 * route only, as accel_probe_list_devices does. */
int accel_probe_software_devices(struct accel_probe *p);
/* Called by a probe: record why the backend is unavailable (printf format,
 * cut at 255 bytes); returns ACCEL_ENOTSUP so a probe can `return
 * accel_probe_fail(...)`. */
int accel_probe_fail(struct accel_probe *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Called by a probe: record one line of detail about what it saw, whether
 * or not it found a device ("cuda /dev/nvidia0: Cannot load libcuda.so.1").
 * accel-detect shows the notes with -v and in --json. Lines past
 * ACCEL_MAX_NOTES are dropped; a line is cut at 255 bytes. */
void accel_probe_note(struct accel_probe *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Root under which /sys, /proc and /dev are read ($ACCEL_SYSROOT when the
 * context was made, or ""). */
const char *accel_probe_sysroot(const struct accel_probe *p);

/* ------------------------------------------------------------ probe helpers */

/* The sysfs helpers and accel_pci_locality only read files and write the
 * buffers or device given: safe from any thread. The bounded calls are
 * safe from any thread too. */

/* Read the first line of the file named by fmt under sysroot `root` (a
 * probe's accel_probe_sysroot) into buf, newline removed and
 * accel_text_sanitize()d. Returns its length, or -1 when it cannot be read. */
int accel_sysfs_read(const char *root, char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The decimal integer in the file named by fmt under `root` (blanks and a
 * newline around it allowed) into *out. Returns 0, or -1 when the file
 * cannot be read or holds anything else ("abc", "", "12x"). */
int accel_sysfs_read_long(const char *root, long *out, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Last component of the target of the symbolic link named by fmt under
 * `root` ("mlx5_core" for .../device/driver), accel_text_sanitize()d.
 * Returns its length, or -1. */
int accel_sysfs_link(const char *root, char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Complete a device from sysfs by its d->pci_address: numa_node (-1 when
 * the file holds no node number), driver when empty, and the properties
 * "pci_id" ("10de:2330") and "local_cpulist" (the CPUs closest to it,
 * "0-31"). Nothing when the function is not in <root>/sys/bus/pci/devices. */
void accel_pci_locality(struct accel_device *d, const char *root);
/* The device class of PCI function `addr` ("0000:17:00.0") under `root`,
 * from its class and vendor files: ACCEL_CLASS_NPU for a processing
 * accelerator (class 0x12xxxx); ACCEL_CLASS_GPU for a 3D controller
 * (0x0302xx) or a display controller (0x03xxxx) of NVIDIA, AMD or Intel;
 * ACCEL_CLASS_OTHER for any other display controller (a BMC's VGA such as
 * ASPEED's, a virtual machine's). -1 for a function of another class or
 * one that cannot be read. The PCI class code and vendor id read go to
 * *pci_class and *vendor (0 when unreadable) unless NULL. The rule by which
 * the pci backend lists functions and device ids are reserved (see struct
 * accel_device). Thread-safe (reads files only). */
int accel_pci_classify(const char *root, const char *addr, unsigned *pci_class, unsigned *vendor);
/* $ACCEL_PROBE_TIMEOUT: the seconds a bounded call waits by default, a
 * decimal number from ACCEL_PROBE_TIMEOUT_MIN to ACCEL_PROBE_TIMEOUT_MAX. */
#define ACCEL_PROBE_TIMEOUT_DEFAULT 5.0
#define ACCEL_PROBE_TIMEOUT_MIN 0.001
#define ACCEL_PROBE_TIMEOUT_MAX 3600.0
/* Set *seconds from $ACCEL_PROBE_TIMEOUT (the default when unset), read
 * on every call. Returns 0; ACCEL_EINVAL, *seconds the default, when it is
 * set but empty, not a number or out of the range (inf, nan, negative):
 * programs refuse it as a usage error. */
int accel_probe_timeout(double *seconds);
/* Run fn(arg) on a thread of its own and wait for it at most `seconds`
 * (<= 0 or above ACCEL_PROBE_TIMEOUT_MAX: $ACCEL_PROBE_TIMEOUT, else 5).
 * Returns fn's result; ACCEL_EDEVICE when it did not return in time: the
 * thread is then left running (counted by accel_abandoned_calls), so arg
 * must stay valid for the life of the process; ACCEL_ENOMEM. When no
 * thread can be created, fn runs on the caller's thread, unbounded. For
 * probes that call into drivers which may hang; fn must be thread-safe. */
int accel_call_bounded(int (*fn)(void *), void *arg, double seconds);
/* Run fn(args[i]) for each i < n on threads of their own, all at once,
 * and wait for them together at most `seconds` (<= 0: as above). rcs[i]
 * gets fn's result, or ACCEL_EDEVICE for a call that did not return in
 * time (left running: its args[i] must stay valid for the life of the
 * process). A call whose thread cannot be created runs on the caller's
 * thread first, unbounded. Returns how many did not return in time, or
 * ACCEL_ENOMEM (nothing run). */
int accel_call_bounded_all(int (*fn)(void *), void *const *args, int n, double seconds, int *rcs);
/* How many bounded calls of this process did not return in time. Their
 * threads may still be inside a driver, whose libraries' exit handlers
 * must then not run: end the program with accel_exit(). An atomic read:
 * safe from any thread. */
int accel_abandoned_calls(void);
/* Run fn(arg) in a child process (fork) and wait for it at most
 * $ACCEL_PROBE_TIMEOUT seconds, for a probe whose driver may abort or crash
 * the process (PoCL calls abort() when /sys is masked). The child runs only
 * this thread, with stdin from /dev/null and its stdout and stderr into a
 * pipe: the last line it printed goes to said[said_len] (may be NULL with
 * said_len 0). Returns 0 when the child finished: *rc is fn's result and
 * the `size` bytes at arg are as the child left them (plain data only: no
 * pointer made in the child is valid here). ACCEL_EDEVICE when it did not,
 * why[len] saying how: "aborted (SIGABRT)", "was killed by SIGSEGV", "did
 * not answer in time (ACCEL_PROBE_TIMEOUT)" (it is killed), "cannot start a
 * child process: ...". With api non-NULL the outcome is kept for
 * accel_api_survives. Costs a fork; safe from any thread. */
int accel_call_isolated(const char *api, int (*fn)(void *), void *arg, size_t size, int *rc, char *why, size_t len,
			char *said, size_t said_len);
/* Whether starting the driver of `api` ("opencl", "vulkan") survives in
 * this process, before a probe starts it in-process: the first call in the
 * process (unless accel_call_isolated ran for api) runs trial(arg) in a
 * child; later calls return what that child did. 0 when it survived, else
 * ACCEL_EDEVICE with why[len] as accel_call_isolated says it. */
int accel_api_survives(const char *api, int (*trial)(void *), void *arg, char *why, size_t len);
/* dlopen(name, RTLD_NOW | RTLD_LOCAL) for a probe; NULL with why[len]:
 * "NAME not found" when it is not installed, else "cannot load NAME:
 * <dlerror>" and accel_address_limit's words (a library that cannot be
 * mapped under ulimit -v is no missing library). */
void *accel_dlopen(const char *name, char *why, size_t len);
/* Called by a probe: dlopen `file`, a companion object of the plugin being
 * probed, from the folder named as its backend beside it (PLUGINDIR/vkfft/
 * opencl.so for PLUGINDIR/accel_vkfft.so). What of a plugin must link a
 * heavy library (a C++ API, a header-only library that calls its API
 * directly) lives there, so that loading the plugin maps none of it: see
 * accel(7), PLUGINS. NULL with why[len]: "NAME/FILE not found", or "cannot
 * load NAME/FILE: <dlerror>" (which names a library it needs that is
 * missing) and accel_address_limit's words. */
void *accel_probe_dlopen(struct accel_probe *p, const char *file, char *why, size_t len);
/* Called by a probe: the path of companion `file`, as accel_probe_dlopen
 * finds it, into path[len], for a backend that loads it later, where an
 * engine is used (accel_companion_dlopen). 0, or -1 with why[wlen]:
 * "NAME/FILE not found". */
int accel_probe_companion(struct accel_probe *p, const char *file, char *path, size_t len, char *why,
			  size_t wlen);
/* dlopen a companion at the path accel_probe_companion gave, from any
 * thread: NULL with why[len] as accel_probe_dlopen says it. */
void *accel_companion_dlopen(const char *path, char *why, size_t len);
/* "; the address space is limited to 390.6 MiB (ulimit -v)" in buf when
 * RLIMIT_AS is set, else "": appended to a driver's out-of-memory or
 * start-up failure, whose true cause it often is (and, non-empty, the
 * sign to start such a driver in a child first). Returns buf. */
const char *accel_address_limit(char *buf, size_t len);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
