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

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* libaccel is built with -fvisibility=hidden: what this header declares is
 * its whole exported interface, everything else stays inside. */
#pragma GCC visibility push(default)

#define ACCEL_VERSION "0.1.0"

/* ------------------------------------------------------------------ errors */

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

/* ------------------------------------------------------------------ devices */

enum accel_device_class {
	ACCEL_CLASS_CPU,
	ACCEL_CLASS_GPU,
	ACCEL_CLASS_CRYPTO,   /* crypto/compression engine, e.g. Intel QAT */
	ACCEL_CLASS_VIDEO,    /* video decode/encode engine */
	ACCEL_CLASS_NIC,
	ACCEL_CLASS_NPU,
	ACCEL_CLASS_OTHER,
	ACCEL_CLASS_COUNT
};

/* CPU feature flags (struct accel_device.flags for class CPU). Source: the
 * "flags" line of /proc/cpuinfo, which uses the kernel's names. */
enum accel_cpu_flag {
	ACCEL_CPU_SSE42 = 1u << 0,
	ACCEL_CPU_PCLMUL = 1u << 1,
	ACCEL_CPU_AES = 1u << 2,
	ACCEL_CPU_VAES = 1u << 3,
	ACCEL_CPU_VPCLMULQDQ = 1u << 4,
	ACCEL_CPU_SHA_NI = 1u << 5,
	ACCEL_CPU_AVX = 1u << 6,
	ACCEL_CPU_AVX2 = 1u << 7,
	ACCEL_CPU_BMI2 = 1u << 8,
	ACCEL_CPU_AVX512F = 1u << 9,
	ACCEL_CPU_AVX512BW = 1u << 10,
	ACCEL_CPU_AVX512VL = 1u << 11,
	ACCEL_CPU_AVX512DQ = 1u << 12,
	ACCEL_CPU_AVX512VNNI = 1u << 13,
	ACCEL_CPU_AVX512BF16 = 1u << 14,
	ACCEL_CPU_AVX512FP16 = 1u << 15,
	ACCEL_CPU_AVX512IFMA = 1u << 16,
	ACCEL_CPU_AVX512VBMI = 1u << 17,
	ACCEL_CPU_AMX_TILE = 1u << 18,
	ACCEL_CPU_AMX_INT8 = 1u << 19,
	ACCEL_CPU_AMX_BF16 = 1u << 20,
	ACCEL_CPU_GFNI = 1u << 21,
	ACCEL_CPU_AVX_VNNI = 1u << 22,
};

/* Functions on devices and their properties (this section) touch only the
 * objects they are given: safe from any thread, one thread per device. */

/* CPU flag bits named in a /proc/cpuinfo "flags" line (or its value, the
 * words after the first ':'; unknown words ignored). */
uint64_t accel_cpu_flags_parse(const char *line);
/* Name of one CPU flag bit ("vaes"), or NULL for an unknown bit. */
const char *accel_cpu_flag_name(uint64_t bit);

/* One extra attribute of a device: backends attach what they know
 * ("api_version" = "1.3.255", "compute_units" = "16"). */
struct accel_prop {
	char key[48];
	char value[128];
	int numeric;  /* 1: value is a JSON number, 0: a string */
};

#define ACCEL_MAX_PROPS 48
#define ACCEL_MAX_APIS 6

/* One API through which a device is reached, and its state. */
struct accel_api {
	char name[16];     /* "vulkan", "opencl", "cuda", "nvml" */
	int ok;            /* 1: usable; 0: seen but not usable */
	char reason[128];  /* why not usable, empty when ok */
};

/* A device found by discovery: a CPU package set, a GPU, an engine. */
struct accel_device {
	/* "cpu0", "gpu0": class name and number, fixed whichever probes ran
	 * and in whatever order. GPUs and NPUs on the PCI bus (as
	 * accel_pci_classify() classes the functions in <sysroot>/sys/bus/pci)
	 * take the numbers 0, 1, ... in PCI bus order, read once per context,
	 * so a GPU at a given address is the same gpuN whether or not a probe
	 * found the GPUs before it. Then, numbered after all of those of their
	 * class (and for the other classes from 0): devices with a PCI address
	 * not reserved so, by address, then devices without one, by the
	 * priority of the backend that found them, vendor, model and driver.
	 * An id a probe set itself is kept and skipped. */
	char id[16];
	enum accel_device_class cls;
	char vendor[64];
	char model[128];
	char driver[64];
	struct accel_api apis[ACCEL_MAX_APIS];
	int napis;
	uint64_t memory_bytes;    /* device memory (CPU: installed RAM) */
	int numa_node;            /* -1: unknown or not NUMA */
	char pci_address[16];     /* "0000:65:00.0", empty if none */
	int software;             /* 1: CPU-emulated (lavapipe, PoCL): not an accelerator */
	uint64_t flags;           /* class-specific capability flags (enum accel_cpu_flag) */
	/* CPU topology (class CPU only) */
	int packages, cores, threads, numa_nodes;
	uint64_t cache_bytes[4];  /* L1d, L2, L3, L4 per instance; 0 if absent */
	struct accel_prop props[ACCEL_MAX_PROPS];
	int nprops;
};

/* Attach a property to a device (string, or a number written with %.15g),
 * replacing the value of an existing key; key and value are cut to their
 * fields (47 and 127 bytes). Returns 0, or ACCEL_ENOMEM when the key is
 * new and the device has ACCEL_MAX_PROPS already. */
int accel_device_set(struct accel_device *d, const char *key, const char *value);
int accel_device_set_num(struct accel_device *d, const char *key, double value);
/* The property "uuid" from the 16 bytes a driver gives (Vulkan's deviceUUID,
 * OpenCL's CL_DEVICE_UUID_KHR), as 8-4-4-4-12 lowercase hex digits: devices
 * without a PCI address are one device when their UUIDs are equal (device
 * ids, accel(7)). All zeros is no UUID: nothing is set. Returns 0 or
 * ACCEL_ENOMEM as accel_device_set. */
int accel_device_set_uuid(struct accel_device *d, const uint8_t uuid[16]);
/* Value of a property (points into d), or NULL. */
const char *accel_device_get(const struct accel_device *d, const char *key);
/* Record that the device is reached through API `name`, usable or not
 * (reason NULL: none); an API already recorded is updated. Past
 * ACCEL_MAX_APIS a new API is dropped silently. */
void accel_device_add_api(struct accel_device *d, const char *name, int ok, const char *reason);
/* "cpu", "gpu", "crypto", "video", "nic", "npu", "other". */
const char *accel_class_name(enum accel_device_class c);
/* Inverse of accel_class_name; -1 for an unknown name. */
int accel_class_parse(const char *name);

/* ----------------------------------------------------------------- backends */

struct accel_ctx;
struct accel_engine;
struct accel_unit;
struct accel_input;
struct accel_output;

/* The ABI of the backend table. A plugin built against another value is
 * refused with a reason, never called. */
#define ACCEL_BACKEND_ABI 3

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
	 * static throughput guess in MB/s of input, or ACCEL_ENOTSUP with the
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
};
#define ACCEL_QUEUE_DEPTH_MAX 16

/* The built-in CPU backend (libzstd, ISA-L, liblz4), always last on a
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
/* "; the address space is limited to 390.6 MiB (ulimit -v)" in buf when
 * RLIMIT_AS is set, else "": appended to a driver's out-of-memory or
 * start-up failure, whose true cause it often is. Returns buf. */
const char *accel_address_limit(char *buf, size_t len);

/* ------------------------------------------------------- context, discovery */

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
 * $ACCEL_BACKEND_PATH (colon-separated folders), <bindir>/../lib/accel and
 * <bindir>/plugins, and reads $ACCEL_SYSROOT. A plugin that fails to load
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
 * context. Thread-safe (the context's lock). */
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
 * cpu.max quota, rounded up), at least 1. Read on every call; safe from
 * any thread. */
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

/* ---------------------------------------------------------- buffers, units */

/* A growable byte buffer (zero-initialised: empty). One thread at a time. */
struct accel_buf {
	uint8_t *data;
	size_t len, cap;
};
/* Make room for `cap` bytes in total (grows by at least half; from 2 MiB
 * the data is 2 MiB-aligned, marked for huge pages); keeps the content
 * (b->len bytes). Returns 0, or ACCEL_ENOMEM with b unchanged. */
int accel_buf_reserve(struct accel_buf *b, size_t cap);
/* Free the data and leave b empty (reusable). */
void accel_buf_free(struct accel_buf *b);

/* A unit of work in the stream engine: a chunk, a frame, a batch. */
struct accel_unit {
	uint64_t seq;        /* index in the stream, from 0 (a STREAM nonce counter) */
	uint64_t offset;     /* byte offset of the unit's input in the stream */
	int last;            /* 1: the final unit of the stream */
	size_t out_hint;     /* expected output size in bytes, 0 unknown */
	struct accel_buf in;
	struct accel_buf out;
	const struct accel_engine *engine; /* the engine that produced out */
	/* Bytes at the start of `in` that the previous unit held too
	 * (overlapping FFT frames, a model's context window): statistics
	 * count only in.len - in_overlap as input, so overlap is not counted
	 * twice. Set by ops->next; 0 before each call. */
	size_t in_overlap;
};

/* ---------------------------------------------------------------- input/output */

/* Buffered input from a file descriptor or memory, with the byte offset
 * consumed. Not thread-safe: one thread reads an input at a time (the
 * stream engine's reader is the calling thread). */
struct accel_input {
	int fd;
	const char *name;    /* "stdin" or the file name, for messages */
	uint8_t *buf;
	size_t start, end, cap;
	uint64_t offset;     /* bytes consumed so far */
	int eof;
	int64_t size;        /* total size when known (regular file, memory), else -1 */
	/* A memory input (accel_input_mem): fd is -1 and bytes come from here. */
	const uint8_t *mem;
	size_t mem_len, mem_pos;
};
/* Open FILE ("-" or NULL: stdin) with a 1 MiB buffer; in->size is the
 * bytes left in a regular file, else -1. Returns 0; ACCEL_EIO with errno
 * set (EISDIR for a folder; EBADF for a stdin that is closed or open only
 * for writing, as accel_common_init leaves a closed one); ACCEL_ENOMEM. */
int accel_input_open(struct accel_input *in, const char *path);
/* An input over the caller's `len` bytes at `data` (no fd), named `name`
 * in messages (NULL: "memory"): it reads as a regular file of that size
 * does, through the same buffering (a window of at most 1 MiB is copied at
 * a time), so an operation runs on it exactly as on a file. data must stay
 * valid and unchanged until accel_input_close(). ACCEL_ENOMEM. */
int accel_input_mem(struct accel_input *in, const void *data, size_t len, const char *name);
/* Close an input (stdin and memory are not closed, only the buffer freed).
 * Only after a successful open. */
void accel_input_close(struct accel_input *in);
/* Make at least `n` bytes visible at *p (fewer only at end of input),
 * growing the buffer to n when needed; blocks until they come. Returns
 * the number visible (at most n), ACCEL_EIO (errno kept) or ACCEL_ENOMEM.
 * Does not consume; *p is valid until the next call on `in`. */
ssize_t accel_input_peek(struct accel_input *in, size_t n, const uint8_t **p);
/* Like accel_input_peek, but waits for input only until `deadline`, in
 * seconds on the clock of accel_now() (an absolute time: accel_now() +
 * max_wait): returns the number of bytes visible, fewer than `n` when the
 * input ended (in->eof set) or the deadline passed first (in->eof 0),
 * possibly 0. Waits in poll(), never busy; a deadline already passed
 * returns what is buffered without reading. Memory inputs never wait.
 * ACCEL_EIO (errno kept) or ACCEL_ENOMEM. Not thread-safe (one reader). */
ssize_t accel_input_peek_until(struct accel_input *in, size_t n, double deadline, const uint8_t **p);
/* Consume `n` bytes already visible through accel_input_peek (not
 * checked: n must not exceed what the last peek returned). */
void accel_input_consume(struct accel_input *in, size_t n);
/* Read up to `n` bytes into dst (short only at end of input); returns the
 * count, ACCEL_EIO (errno kept) or ACCEL_ENOMEM. */
ssize_t accel_input_read(struct accel_input *in, void *dst, size_t n);

/* Output to stdout or to a file that appears only when complete: a FILE is
 * written as a temporary beside it and renamed on accel_output_commit();
 * accel_output_abort() removes it, so a failed run leaves no partial file.
 * The temporary has its final permissions from the start: those of the
 * existing FILE it replaces, else 0666 less the umask (or what
 * accel_output_mode sets). A FILE that is a symlink stays one: the file it
 * leads to is what is replaced (or made, for a link that leads nowhere
 * yet), the temporary beside that file. An existing FILE that is not a
 * regular file (a device such as /dev/null, a FIFO) is written into in
 * place, never replaced (when force allows an existing FILE at all).
 *
 * Signals: while a temporary exists, a signal that would end the process
 * (SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM,
 * SIGPROF, SIGXCPU, SIGXFSZ, SIGPOLL, SIGPWR, the real-time signals) removes
 * it before the process dies of that signal. The handlers are installed once,
 * by accel_common_init (at start-up, before any library a program loads
 * installs handlers of its own, which then hand the signal on to ours) or
 * else on the first FILE opened, and only for signals whose disposition is
 * still the default: a signal the parent ignored (nohup) stays ignored. The fault
 * signals (SIGSEGV, SIGBUS, SIGABRT ...) are not caught. The name of the
 * temporary is kept in one process-wide slot (the handler is
 * async-signal-safe): only the FILE output opened last is covered, and
 * committing or aborting any FILE output clears the slot, so open FILE
 * outputs one after another, not several at once.
 * SIGPIPE: accel_output_open() sets it to ignored when its disposition is
 * the default, so a reader that goes away makes writes fail with EPIPE,
 * which accel_output_write() returns as ACCEL_EPIPE (a quiet end, exit 0).
 *
 * Threads: these functions change process-wide signal dispositions (once)
 * and may be called from any thread, but one thread at a time uses an
 * output (the stream engine's writer, then the caller after the run). */
struct accel_output {
	int fd;
	char *path;          /* final path (where FILE's symlinks lead), NULL for stdout */
	char *tmp;           /* temporary path while writing, NULL for stdout
	                      * and for a device or FIFO written in place */
	uint64_t written;    /* bytes written (bytes written again after a seek count again) */
	int broken;          /* EPIPE seen */
	int error;           /* errno of the write or close that failed, 0 */
	int null;            /* 1: accel_output_null: bytes counted, nothing written */
	int borrowed;        /* 1: accel_output_fd: the caller's fd, never closed here */
	uint64_t pos, size;  /* null output: position and size, for seeks */
};
/* Open FILE ("-" or NULL: stdout) for writing. A regular FILE is written
 * as a temporary renamed on commit; a character device or FIFO (/dev/null,
 * a named pipe) is written in place, as zstd does. force: allow replacing
 * an existing FILE, writing into a block device, and binary data (binary
 * = 1) to a terminal. Returns 0; ACCEL_EEXIST (FILE exists and is not a
 * character device or FIFO, without force); ACCEL_EINVAL (binary to a terminal
 * refused); ACCEL_EIO with errno set (EISDIR for a folder, ENAMETOOLONG
 * for a name over PATH_MAX - 16, EBADF for a stdout that is closed or open
 * only for reading, as accel_common_init leaves a closed one); ACCEL_ENOMEM. */
int accel_output_open(struct accel_output *out, const char *path, int force, int binary);
/* Give the FILE being written the permission bits mode & 0777 instead of
 * those accel_output_open chose (as zstd and lz4 give their output the
 * mode of the file they read): set on the temporary now, so the file never
 * appears with other bits. Nothing to do (0) for stdout, a device or FIFO
 * written in place, null and fd outputs. Returns 0, or ACCEL_EIO
 * (out->error). */
int accel_output_mode(struct accel_output *out, unsigned mode);
/* Write all `len` bytes of data (retrying short writes and EINTR).
 * Returns 0; ACCEL_EPIPE when the reader went away (and on every later
 * call); ACCEL_EIO (out->error holds the errno: ENOSPC for a full disk). */
int accel_output_write(struct accel_output *out, const void *data, size_t len);
/* A null output: accel_output_write counts the bytes in out->written and
 * writes nothing (accel-compress -t, benchmarks). Seeks move a virtual
 * position (a muxer that seeks back runs as on a file). Returns 0. */
int accel_output_null(struct accel_output *out);
/* An output writing to the caller's open fd (a pipe, a memfd, a socket):
 * no temporary, commit and abort never close fd, seeks are refused. SIGPIPE
 * is set to ignored as accel_output_open() does. ACCEL_EINVAL (errno EBADF)
 * for an fd that is not open. */
int accel_output_fd(struct accel_output *out, int fd);
/* Move the write position of an output as lseek(2) does (whence SEEK_SET,
 * SEEK_CUR or SEEK_END), for muxers that write a header last (mp4): works
 * on the temporary of a FILE output (renamed into place only by a
 * successful accel_output_commit, as ever) and on a null output. Returns
 * the new offset in bytes from the start; ACCEL_ENOTSUP for stdout, pipes,
 * devices written in place and accel_output_fd outputs; ACCEL_EINVAL for a
 * bad whence or a negative result; ACCEL_EIO (out->error). Not thread-safe:
 * call it where the output is written (the stream engine's writer writes
 * units in order; call it from ops->end, or before accel_stream_run). */
int64_t accel_output_seek(struct accel_output *out, int64_t offset, int whence);
/* Close (checking errors: a full disk is an error) and rename the
 * temporary into place; stdout and a device are closed. For null and fd
 * outputs nothing is closed. Returns 0, or ACCEL_EIO (out->error and errno
 * set; the temporary is removed; a null or fd output whose earlier write
 * failed). Call once, after the last write. */
int accel_output_commit(struct accel_output *out);
/* Give up an output: the temporary is closed and removed, a device
 * closed; stdout, null and fd outputs are left alone. Never fails. */
void accel_output_abort(struct accel_output *out);

/* ------------------------------------------------------------ stream engine */

/* What a program gives the stream engine. The callbacks run on the thread
 * that called accel_stream_run, never two at once; begin and end write
 * while no unit of the job is being written. */
struct accel_stream_ops {
	/* Fill u->in with the next unit read from `in` and set u->offset,
	 * u->last and u->out_hint. Return 1 for a unit, 0 at end of input,
	 * ACCEL_STREAM_SERIAL when the next input must be processed
	 * sequentially by the route's backend `stream` function, or a negative
	 * error (ACCEL_EDATA: bad input at u->offset). */
	int (*next)(void *user, struct accel_input *in, struct accel_unit *u,
		    char *err, size_t len);
	/* Optional: write a header before any unit's output. */
	int (*begin)(void *user, struct accel_output *out);
	/* Optional: write a trailer after the last unit's output. */
	int (*end)(void *user, struct accel_output *out);
};
#define ACCEL_STREAM_SERIAL 2

/* Statistics for one engine in one run (for -v). */
struct accel_engine_stats {
	char name[40];
	uint64_t units, bytes_in, bytes_out;
	uint64_t failures, retried; /* units failed here; units retried from elsewhere */
	double busy_seconds;
	int dropped;
	int workers;
};

struct accel_stream_stats {
	uint64_t units, serial_regions, bytes_in, bytes_out;
	double seconds;
	int nengines;
	struct accel_engine_stats engines[ACCEL_ROUTE_MAX];
	uint64_t memory_limit;       /* the cap on bytes of units in flight used, 0: none */
	uint64_t unit_bytes;         /* largest bytes of one unit (input + output) */
	uint64_t units_in_flight;    /* most units held at once */
	uint64_t retried;            /* units that failed on an engine and ran again */
};

struct accel_stream_config {
	int threads;                  /* CPU workers; 0: all cores */
	enum accel_fallback fallback;
	int max_failures;             /* failures before an engine is dropped (0: 3) */
	int progress;                 /* 1: progress meter on stderr */
	int64_t total_size;           /* input size for ETA, -1 unknown */
	const char *prog;             /* program name for messages */
	int verbose;                  /* -1: quiet; 0: first failure of an engine and
	                               * drops; 1: every retried unit, where it ran */
	uint64_t memory_limit; /* cap on bytes of units in flight, 0: default */
	/* Progress in the operation's unit (accel_progress_new_unit): its
	 * name (NULL: bytes) and units per byte of input (0: 1); the meter's
	 * total is total_size times the scale. */
	const char *progress_unit;
	double progress_scale;
	/* Optional: write unit u's output to out in place of u->out as it is
	 * (units in input order, on the writer thread; `user` the job's, as
	 * ops have it). 0 or a negative ACCEL_E* code, which ends the run. */
	int (*write)(void *user, struct accel_output *out, const struct accel_unit *u);
};

/*
 * Run a chunked stream: a reader fills units (ops->next) into a bounded pool,
 * workers run them on the route's engines, a writer emits outputs in input
 * order. A unit failed by an engine is run again according to cfg->fallback
 * (cpu: the best engine on the CPU device, accel_cpu_engine_for; next: the
 * next live engine of the route, wrapping around, never one the unit
 * failed on); an engine failing cfg->max_failures
 * times is dropped, its workers end, and the engine the policy names serves
 * in its place with all its workers (cfg->threads for the CPU engine).
 *
 * Memory: units_in_flight = max(1, min(2 * workers + 2, memory / unit)),
 * where workers counts the worker threads started, memory is
 * cfg->memory_limit (0: a quarter of the smaller of MemAvailable and the
 * cgroup's memory limit, no cap when neither is known) and unit is the
 * largest unit seen: its input buffer plus its output (out_hint, else the
 * input size + 1/8 before it runs; the output buffer after). In all,
 * memory in use ~ units_in_flight * (in + out per unit) + the input buffer
 * + each engine context's own state. A cap that holds no whole unit still
 * runs one unit at a time. accel_memory_available() is the smaller of
 * MemAvailable and the cgroup's limit (under ctx's sysroot), 0 when
 * neither can be read.
 *
 * A worker or writer thread that cannot be created ends the run with
 * ACCEL_ENOMEM. Fault injection: $ACCEL_FAULT (see accel(7)). Returns 0 or
 * the first error, with a message in err[len] naming the byte offset for
 * ACCEL_EDATA: ACCEL_EINVAL (malformed $ACCEL_FAULT), ACCEL_ENOENGINE (no
 * engine to run or retry a unit on), ACCEL_EDEVICE (a unit failed with no
 * engine left to retry on, or under --fallback none), ACCEL_EDATA,
 * ACCEL_EIO, ACCEL_EPIPE, ACCEL_ENOMEM, or a callback's code. stats may be
 * NULL. With cfg->verbose >= 0, engine failures are warned about on stderr.
 *
 * Threads: ops run on the calling thread (the reader); engine contexts are
 * opened, run and closed on worker threads; a writer thread writes `out`
 * and draws the progress meter. in, out and user belong to the run until
 * it returns. Several runs may share ctx and route at once on other
 * threads (the engines are only read), as long as no thread probes ctx.
 */
uint64_t accel_memory_available(const struct accel_ctx *ctx);
int accel_stream_run(struct accel_ctx *ctx, const struct accel_stream_config *cfg,
		     const struct accel_route *route, const struct accel_op *op,
		     const struct accel_stream_ops *ops, void *user,
		     struct accel_input *in, struct accel_output *out,
		     struct accel_stream_stats *stats, char *err, size_t len);
/*
 * Several inputs in one run (hashing many files, compressing FILE...): one
 * job per input, in order, through the same engines, worker threads and
 * engine contexts (opened once per run, not once per input). Each job has
 * its own input, output and `user` for ops; its units are numbered from 0
 * (u->seq), ops->begin and ops->end are called around its units, and it
 * ends when its last unit's output is written, before the next job starts
 * (so outputs never interleave, and one output may serve every job).
 * Engine failures and drops carry over from job to job. start and finish
 * run on the calling thread, while no unit is in flight.
 */
struct accel_stream_jobs {
	size_t n;                 /* number of jobs */
	void *arg;                /* passed to start and finish */
	/* Start job k (0 .. n-1) when the previous one has ended: set *in (an
	 * open input), *out and *user. Return 0, or a negative ACCEL_E* code
	 * that ends the run, with a line in err[len] (may be left empty when
	 * the callback reported it itself). Runs on the calling thread. */
	int (*start)(void *arg, size_t k, struct accel_input **in, struct accel_output **out,
		     void **user, char *err, size_t len);
	/* Optional: job k has ended with rc (0, or the run's first error with
	 * its line in err) and the job's own statistics (units, bytes, time,
	 * per-engine counts of this job). Called for every job started, on the
	 * calling thread, before the next starts: the place to close the
	 * job's input or print its -v line. */
	void (*finish)(void *arg, size_t k, int rc, const struct accel_stream_stats *stats, const char *err);
};
/* Run the jobs; the progress meter (cfg->progress) is one per job, its
 * total the job's in->size. Returns 0 or the first error (a job's, or
 * start's code), its line in err[len]; the jobs after it are not started.
 * Same memory bound and threads as accel_stream_run, which is this with
 * one job. */
int accel_stream_run_jobs(struct accel_ctx *ctx, const struct accel_stream_config *cfg,
			  const struct accel_route *route, const struct accel_op *op,
			  const struct accel_stream_ops *ops, const struct accel_stream_jobs *jobs,
			  char *err, size_t len);
/* Check $ACCEL_FAULT (accel(7), TESTING) once the route is known: 0, or
 * ACCEL_EINVAL with a line naming the bad part in err[len] for a malformed
 * value ("ACCEL_FAULT is malformed: empty unit number in 'cpu:1,,2'") or a
 * rule whose engine names no backend of ctx, nor an engine of a backend
 * already probed. accel_stream_run() checks it too. $ACCEL_FAULT is read
 * and parsed once per process, on first use (by this or by a run): later
 * changes to it have no effect. Reads ctx (NULL: only the form is
 * checked) as the context section says. */
int accel_fault_check(const struct accel_ctx *ctx, char *err, size_t len);
/* Print a run's statistics and one line per engine to f (-v). */
void accel_stream_stats_print(const struct accel_stream_stats *s, FILE *f);

/* Reader helper: fill u->in with up to `size` bytes, set u->offset and
 * u->last (true when the input ends with this chunk), reading until the
 * chunk is full or the input ends. Returns 1, 0 at end of input (no bytes
 * and u->seq > 0), ACCEL_EIO or ACCEL_ENOMEM. An empty input yields one
 * empty last chunk, so formats can write an empty frame. Called from
 * ops->next, on the reader's thread. */
int accel_read_chunk(struct accel_input *in, struct accel_unit *u, size_t size);
/* Timed flush, the reader helper for a `next` callback that must emit a
 * partial batch when the stream pauses (accel-infer --max-wait): like
 * accel_read_chunk, but once the unit's first byte has arrived (waited for
 * as long as it takes) it waits at most `max_wait` seconds for the rest,
 * then returns the unit with what came (accel_input_peek_until: poll(), no
 * busy waiting). u->last is set only when the input is known to have
 * ended; after a partial unit the next call returns 0 at end of input.
 * max_wait <= 0: accel_read_chunk. Returns 1, 0, ACCEL_EIO or ACCEL_ENOMEM. */
int accel_read_chunk_until(struct accel_input *in, struct accel_unit *u, size_t size, double max_wait);

/* --------------------------------------------------- compressed frames */

enum accel_format {
	ACCEL_FORMAT_NONE,       /* end of input */
	ACCEL_FORMAT_UNKNOWN,
	ACCEL_FORMAT_ZSTD,
	ACCEL_FORMAT_GZIP,
	ACCEL_FORMAT_LZ4,
	ACCEL_FORMAT_SKIPPABLE,  /* zstd/lz4 skippable frame: no content */
};

/* The functions of this section use only their arguments: safe from any
 * thread, one thread per input. */

/* "zstd", "gzip", "lz4", "skippable", "unknown" (static strings). */
const char *accel_format_name(enum accel_format f);
/* lz4's legacy frame (magic 0x184C2102, written by lz4 -l; ACCEL_FORMAT_LZ4):
 * blocks decode to at most ACCEL_LZ4_LEGACY_BLOCK bytes each, and a block
 * size over ACCEL_LZ4_LEGACY_BOUND (LZ4_compressBound of that) is the magic
 * of the next frame, ending the legacy one, as lz4 -d reads it. */
#define ACCEL_LZ4_LEGACY_BLOCK ((size_t)8 << 20)
#define ACCEL_LZ4_LEGACY_BOUND (ACCEL_LZ4_LEGACY_BLOCK + ACCEL_LZ4_LEGACY_BLOCK / 255 + 16)
/* Format named by its magic bytes at p[0..n): 2 bytes for gzip, 4 for
 * the others; UNKNOWN when n is too short or nothing matches. */
enum accel_format accel_format_detect(const uint8_t *p, size_t n);

/* What is known of one frame (a gzip member, a zstd or lz4 frame) without
 * decoding it. */
struct accel_frame {
	enum accel_format format;
	int64_t content_size;    /* decompressed bytes, -1 unknown */
	int64_t frame_size;      /* compressed bytes of the whole frame, -1 unknown */
	int checksum;            /* 1: the frame carries a content checksum */
	int blocks;              /* number of blocks walked (zstd, lz4) */
};

/*
 * Inspect the frame at the current position of `in` and find its end
 * without decoding: from the zstd (RFC 8878) and lz4 (LZ4 Frame Format)
 * block headers, or from the 'A','C' FEXTRA subfield of our gzip members.
 * consume = 0: peek only, and stop with ACCEL_ENOTSUP (nothing consumed)
 * when the frame or its stated content is longer than `max` bytes, or its
 * end cannot be found without inflating (a gzip member of another tool, or
 * one whose 'A','C' sizes do not match its trailer's ISIZE and the start of
 * the next member, or an lz4 legacy frame, whose content size is never
 * stated); the frame is then
 * whole at the input's peek pointer. consume = 1: consume the frame while
 * walking (for --list; memory stays bounded). Returns 0 (f->format NONE at
 * end of input), ACCEL_ENOTSUP, ACCEL_EDATA (an unknown format included)
 * with a message naming the byte offset in err[len], ACCEL_EIO (errno
 * kept) or ACCEL_ENOMEM.
 */
int accel_frame_scan(struct accel_input *in, uint64_t max, int consume, struct accel_frame *f,
		     char *err, size_t len);

/* Like accel_frame_scan in peek mode, but once the frame is known to fit
 * `max` it is read whole into dst (dst->len = f->frame_size), straight from
 * the file for its large blocks. ACCEL_ENOTSUP still consumes nothing: bytes
 * already read (at most `max`) are given back to the input's buffer, so the
 * frame can be decoded sequentially from its first byte. A skippable frame
 * is walked past instead (consumed whatever its size, dst->len 0). Returns
 * as accel_frame_scan; dst may trade buffers with the input. */
int accel_frame_read(struct accel_input *in, uint64_t max, struct accel_buf *dst, struct accel_frame *f,
		     char *err, size_t len);

/* --------------------------------------------------------- decompression */

/* Frames (and their stated content) up to this many bytes are decoded in
 * parallel, one unit each; larger ones, and frames whose end or content
 * size is not stated, are decoded sequentially in bounded memory. */
#define ACCEL_DECOMPRESS_PARALLEL_MAX ((uint64_t)64 << 20)

/* How accel_decompress runs. */
struct accel_decompress_cfg {
	const char *backend;          /* --backend list; NULL: $ACCEL_BACKEND, else auto */
	struct accel_stream_config stream;
	uint64_t memory_limit;        /* bytes a frame's window may take; raises the window limit, 0: none */
	int window_log_max;           /* zstd windows up to 2^N bytes are decoded (--long=N); 0: 27 */
	int verbose;                  /* > 0: print the route on stderr */
	uint64_t parallel_max;        /* parallel limit in bytes; 0: ACCEL_DECOMPRESS_PARALLEL_MAX */
	struct accel_report *report;  /* non-NULL: the route goes to this report
	                               * (accel_report_route) instead of stderr */
};

/*
 * Decompress every frame of `in` to `out` as accel-compress -d does: format
 * from the first non-skippable frame, frames in parallel on the route's
 * engines when their end is known and they fit the parallel limit, else
 * sequentially; the switch happens only at frame boundaries. Sizes stated
 * in frame headers are hints, checked against what decoding finds. Input
 * holding only skippable frames writes nothing and returns 0. A zstd frame
 * whose window is over max(2^window_log_max, memory_limit) is refused.
 * Memory: at most 2 * workers + 2 units in flight, each at most
 * parallel_max bytes of input and as much output, plus one sequential
 * decoder (its window, within the limit above).
 * After gzip members only members may follow, as gzip -d takes them: zero
 * bytes are ignored; other bytes (two or more) end the decoding with
 * ACCEL_DECOMPRESS_GARBAGE (everything before them written). After zstd and
 * lz4 frames anything but a frame is corrupt input, as zstd and lz4 say.
 * Returns 0; ACCEL_DECOMPRESS_GARBAGE (err: "decompression OK, trailing
 * garbage ignored", gzip's words); ACCEL_EDATA (corrupt, truncated, empty,
 * not a known format or failed a check: err names the byte offset);
 * ACCEL_ENOMEM (out of memory, or a window over the limit); ACCEL_EIO;
 * ACCEL_EPIPE; ACCEL_EINVAL (malformed backend list or $ACCEL_FAULT);
 * ACCEL_ENOENGINE; ACCEL_EDEVICE. One line in err[len]; stats may be NULL.
 * Threads as accel_stream_run (it routes, so it may probe ctx).
 */
#define ACCEL_DECOMPRESS_GARBAGE 1
int accel_decompress(struct accel_ctx *ctx, const struct accel_decompress_cfg *cfg, struct accel_input *in,
		     struct accel_output *out, struct accel_stream_stats *stats, char *err, size_t len);

/*
 * Decode the one frame (zstd or lz4 frame, gzip member) at the position of
 * `in` sequentially into nothing, consuming it, and give its decompressed
 * size in *content: for listing frames whose size is not stated (a gzip
 * member of another tool). Runs on the CPU engine in the calling thread,
 * memory bounded by the decoder's window. Returns 0; ACCEL_EDATA (corrupt:
 * err names the byte offset); ACCEL_EIO; ACCEL_ENOMEM; ACCEL_EINVAL for a
 * format that is not a compressed one. Probes the cpu backend if needed
 * (under ctx's lock); then thread-safe for distinct inputs.
 */
int accel_frame_measure(struct accel_ctx *ctx, enum accel_format format, struct accel_input *in,
			uint64_t *content, char *err, size_t len);

/* ----------------------------------------------------------- compression */

/* Level used when none is given: zstd 3, gzip 6, lz4 1; ACCEL_EINVAL for a
 * format other than "zstd", "gzip" or "lz4". Pure, as is the next one. */
int accel_compress_default_level(const char *format);
/* Bytes of input per parallel chunk when none is given, by format and
 * level: gzip 1 MiB, lz4 4 MiB, zstd 4, 8, 16 or 32 MiB for levels up to
 * 2, 8, 16 and above (about four times the level's window, as zstd -T
 * does). 0 for an unknown format. */
uint64_t accel_compress_default_chunk(const char *format, int level);

/* How accel_compress runs. */
struct accel_compress_cfg {
	const char *backend;          /* --backend list; NULL: $ACCEL_BACKEND, else auto */
	struct accel_stream_config stream;
	const char *format;           /* "zstd", "gzip" or "lz4"; NULL: zstd */
	int level;                    /* in the format's scale; 0: accel_compress_default_level */
	int checksum;                 /* 1: write content checksums */
	uint64_t chunk_size;          /* bytes per unit; 0: accel_compress_default_chunk */
	uint64_t memory_limit;        /* bytes a codec context may use, 0: default */
	int verbose;                  /* > 0: print the route on stderr */
	struct accel_report *report;  /* non-NULL: the route goes to this report
	                               * (accel_report_route) instead of stderr */
};

/*
 * Compress `in` to `out` as accel-compress does: the input cut into chunks
 * of cfg->chunk_size bytes (an empty input is one empty chunk), each
 * compressed in parallel on the route's engines into a frame (zstd, lz4) or
 * member (gzip) of its own, written in input order; the output is what the
 * format's standard tool reads. Routed for in->size (-v: the route printed
 * when cfg->verbose > 0). Returns 0; ACCEL_EINVAL (unknown format, or a
 * malformed backend list or $ACCEL_FAULT); ACCEL_ENOENGINE; ACCEL_EIO;
 * ACCEL_EPIPE; ACCEL_ENOMEM; ACCEL_EDEVICE. One line in err[len]; stats
 * may be NULL. Memory and threads as accel_stream_run.
 */
int accel_compress(struct accel_ctx *ctx, const struct accel_compress_cfg *cfg, struct accel_input *in,
		   struct accel_output *out, struct accel_stream_stats *stats, char *err, size_t len);
/* Several inputs as accel_compress does each, routed once (for
 * cfg->stream.total_size, the sum of their sizes or -1) and run as the
 * jobs of one accel_stream_run_jobs: the same engine contexts serve every
 * input. The jobs' `user` is ignored. Returns as accel_compress; a route
 * failure is returned before any job starts. */
int accel_compress_jobs(struct accel_ctx *ctx, const struct accel_compress_cfg *cfg,
			const struct accel_stream_jobs *jobs, char *err, size_t len);

/* ----------------------------------------------------------- CLI helpers */

/* The CLI helpers are for a program's main thread, before it starts
 * others: they are not thread-safe (accel_getopt and the completions use
 * static storage, accel_common_init sets the accel_msg_prog name, and they
 * read the environment). */

enum accel_opt_flags {
	ACCEL_OPT_HIDDEN = 1 << 0,   /* not in --help, man page or completions */
	ACCEL_OPT_NUMERIC = 1 << 1,  /* matches -N (e.g. compression level -19) */
	ACCEL_OPT_OPTIONAL = 1 << 2, /* long option whose argument is optional: only
	                              * "--name=ARG" gives one (*arg NULL otherwise) */
};

/* One option, declared once: --help, the man page and the completions are
 * generated from the table. */
struct accel_option {
	int id;               /* returned by accel_getopt; 0 ends the table */
	char short_name;      /* 0: none */
	const char *long_name;/* NULL: none */
	const char *arg;      /* argument name ("N", "FILE"), NULL: a flag */
	const char *help;     /* one line */
	const char *complete; /* "file", "dir", or a space-separated list of words; NULL */
	unsigned flags;
};

/* Ids of the options every program shares (DESIGN.md). */
enum accel_common_opt {
	ACCEL_OPT_BACKEND = 1000, ACCEL_OPT_FALLBACK, ACCEL_OPT_THREADS,
	ACCEL_OPT_VERBOSE, ACCEL_OPT_QUIET, ACCEL_OPT_PROGRESS, ACCEL_OPT_NO_PROGRESS,
	ACCEL_OPT_JSON, ACCEL_OPT_HELP, ACCEL_OPT_VERSION,
	ACCEL_OPT_GEN_MAN, ACCEL_OPT_GEN_COMPLETION,
};

/* An option's `complete` that lists "auto" and the registered backends'
 * names, read from the registry when the shell completes (--completion
 * backends). */
#define ACCEL_COMPLETE_BACKENDS "@backends"

/* The common options, to splice into a program's table: a program lists
 * only those it acts on (an option in --help is an option that works). */
#define ACCEL_BACKEND_OPTION \
	{ ACCEL_OPT_BACKEND, 'b', "backend", "LIST", "engines to use, in order, joined by , or + (several serve the stream together): auto, cpu, vulkan, opencl:1, cpu+cuda ...; an engine on a software device by its full name: vkfft.vulkan:gpu0", ACCEL_COMPLETE_BACKENDS, 0 }
/* For programs that run the stream engine. */
#define ACCEL_RUN_OPTIONS \
	{ ACCEL_OPT_FALLBACK, 0, "fallback", "POLICY", "when an engine fails on a unit: retry on cpu, on the next engine, or none (fail)", "cpu next none", 0 }, \
	{ ACCEL_OPT_THREADS, 'T', "threads", "N", "worker threads (0 = all cores; default 0)", NULL, 0 }, \
	{ ACCEL_OPT_PROGRESS, 0, "progress", NULL, "show a progress meter on stderr", NULL, 0 }, \
	{ ACCEL_OPT_NO_PROGRESS, 0, "no-progress", NULL, "never show a progress meter", NULL, 0 }
/* For every program. */
#define ACCEL_BASIC_OPTIONS \
	{ ACCEL_OPT_VERBOSE, 'v', "verbose", NULL, "say more: the route and per-engine statistics on stderr (accel-detect: every probe and its time, in the report)", NULL, 0 }, \
	{ ACCEL_OPT_QUIET, 'q', "quiet", NULL, "print nothing but errors", NULL, 0 }, \
	{ ACCEL_OPT_HELP, 'h', "help", NULL, "show this help and exit", NULL, 0 }, \
	{ ACCEL_OPT_VERSION, 'V', "version", NULL, "show the version and exit", NULL, 0 }, \
	{ ACCEL_OPT_GEN_MAN, 0, "help-man", NULL, "print the options as man(7) source", NULL, ACCEL_OPT_HIDDEN }, \
	{ ACCEL_OPT_GEN_COMPLETION, 0, "completion", "SHELL", "print a completion script for bash, zsh or fish", NULL, ACCEL_OPT_HIDDEN }
#define ACCEL_COMMON_OPTIONS ACCEL_BACKEND_OPTION, ACCEL_RUN_OPTIONS, ACCEL_BASIC_OPTIONS

/* A subcommand, `PROG NAME [options]` when NAME is the first argument (as
 * accel-crypt keygen): its own table, a section of the program's man page
 * and its own completions. */
struct accel_subcommand {
	const char *name;                  /* "keygen"; NULL ends the list */
	const struct accel_cli *cli;       /* prog "accel-crypt keygen", its options */
	int (*run)(int argc, char **argv); /* argv[0] is name; returns the exit status */
};

/* A program's description for the generated texts. */
struct accel_cli {
	const char *prog;        /* "accel-compress" */
	const char *usage;       /* "[options] [FILE...]" */
	const char *summary;     /* one line */
	const struct accel_option *options;
	/* The exit statuses the program can return (enum accel_exit), ending
	 * with -1, for --help; NULL: 0, 1 and 2. */
	const int *exit_statuses;
	/* NULL: none. The completions go one level deep (a subcommand's own list
	 * is not read). */
	const struct accel_subcommand *subcommands;
};

/* Settings of the common options, after accel_cli_common(). */
struct accel_common {
	const char *backend;
	enum accel_fallback fallback;
	int threads;
	int verbose, quiet, json;
	int progress;            /* -1: auto (stderr is a terminal) */
};

/* Option parser state. */
struct accel_optparse {
	const struct accel_cli *cli;
	int argc;
	char **argv;
	int i;                   /* next argv index */
	const char *cluster;     /* rest of a "-abc" cluster */
	int done;                /* "--" seen */
	char **operands;         /* collected operands (argv order), moved to the
	                          * front of argv itself: nothing to free */
	int noperands;
	char errbuf[160];
};
/* Start parsing argv[1..argc) against cli's table. Operands are moved to
 * the front of argv itself. */
void accel_optparse_init(struct accel_optparse *p, const struct accel_cli *cli, int argc, char **argv);
/* Next option: returns 1 with *id and *arg set (numeric options give the
 * digits as *arg, at most 15, in a static buffer that the next numeric
 * option overwrites; other *arg point into argv), 0 when all argv is
 * parsed (operands in p->operands), or ACCEL_EINVAL with the message in
 * p->errbuf (unknown or ambiguous option, missing or unwanted argument).
 * Long options may be abbreviated to a unique prefix. */
int accel_getopt(struct accel_optparse *p, int *id, const char **arg);
/* Set defaults for the common options from the environment (ACCEL_BACKEND,
 * ACCEL_FALLBACK, ACCEL_THREADS), each read only when the program's table
 * has its option, and check ACCEL_PROBE_TIMEOUT (accel_probe_timeout);
 * also accel_msg_prog(cli->prog). The start-up of every program: call it
 * first, before any other thread, file or library. It opens /dev/null on
 * each of fds 0, 1 and 2 that is closed (stdin write-only, stdout and
 * stderr read-only, so that using them still fails with EBADF), so no
 * descriptor opened later takes their place, and installs the signal
 * handlers of accel_output_open. Returns 0, or ACCEL_EINVAL with a
 * message on stderr for a malformed environment value. */
int accel_common_init(struct accel_common *c, const struct accel_cli *cli);
/* Handle a common option: returns 1 handled, 0 not a common option,
 * ACCEL_EINVAL bad value (usage message printed), 2 when the program must
 * exit 0 now (help, version, generated texts printed to stdout; a reader
 * that went away counts as success), or ACCEL_EIO when writing them failed
 * (message printed: the program exits 1). --backend is checked against
 * the registry of a context made and freed for it (plugins are loaded). */
int accel_common_option(struct accel_common *c, const struct accel_cli *cli, int id, const char *arg);
/* --help text (usage, visible options, exit statuses) to f; write errors
 * are left in f's error flag. */
void accel_cli_help(const struct accel_cli *cli, FILE *f);
/* The man page's OPTIONS entries (roff .TP items) to f, then each
 * subcommand's under a .SS heading naming it. */
void accel_cli_man(const struct accel_cli *cli, FILE *f);
/* A completion script for `shell` ("bash", "zsh" or "fish") to f, the
 * subcommands' names and options with it; the same bytes on every machine,
 * as the scripts are committed (completions/). For "backends", the words
 * of ACCEL_COMPLETE_BACKENDS one a line, which the scripts ask the program
 * for when completing: this loads the registry (a context). Returns 0, or
 * ACCEL_EINVAL for any other `shell`. */
int accel_cli_completion(const struct accel_cli *cli, const char *shell, FILE *f);

/* Parse "12", "4K", "64M", "1G", "2T" (powers of 1024; either case, an
 * optional "i" and "B": "4KiB") to bytes in *out. Returns 0, or
 * ACCEL_EINVAL (*out unchanged) for anything else or an overflow. Safe
 * from any thread, as is accel_parse_int. */
int accel_parse_size(const char *s, uint64_t *out);
/* Parse a decimal int from min to max (a leading '-' allowed, no blanks)
 * into *out. Returns 0, or ACCEL_EINVAL (*out unchanged). */
int accel_parse_int(const char *s, int min, int max, int *out);

/* Messages: "PROG: text" on stderr, one line (text cut at 1023 bytes),
 * written with one fprintf so lines from several threads do not mix:
 * safe from any thread (not from a signal handler). accel_msg_prog sets
 * PROG ("accel" before): it keeps the pointer, not a copy, and must be
 * called before other threads print. */
void accel_msg_prog(const char *prog);
void accel_msg_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void accel_msg_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Usage error: message plus "Try 'PROG --help' for more information." on
 * a second line (two writes: call it from one thread). */
void accel_msg_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Progress meter on stderr, one line redrawn at most five times a second:
 * the amount done, the rate, and the ETA when the total is known. Not
 * thread-safe: one thread at a time updates a meter (in the stream engine
 * the writer, or the reader during a sequential region, under the run's
 * lock). The meter keeps the label pointer: it must outlive the meter. */
struct accel_progress;
/* A meter counting bytes; total in bytes, <= 0 unknown. NULL when out of
 * memory (the update functions then do nothing). */
struct accel_progress *accel_progress_new(const char *label, int64_t total);
/* A meter counting in the operation's unit: `unit` NULL or "B" bytes
 * (shown as B, KiB, MiB ...), "s" seconds of media (shown as [h:]mm:ss,
 * the rate as a speed, "1.50x"), any other name ("samples", "frames")
 * counted with k, M, G and that name (cut at 15 bytes). `scale`: units per byte given to
 * accel_progress_update (<= 0: 1; 1/4 for 16-bit stereo samples).
 * `total`: the total in the unit, <= 0 unknown (no ETA). NULL when out of
 * memory. */
struct accel_progress *accel_progress_new_unit(const char *label, const char *unit, double scale, double total);
/* Bytes done so far (times the meter's scale); p may be NULL. */
void accel_progress_update(struct accel_progress *p, uint64_t done);
/* Amount done so far in the meter's unit; p may be NULL. */
void accel_progress_set(struct accel_progress *p, double done);
/* The meter's line as it would be drawn `elapsed` seconds after it was
 * made, without the carriage return and line erase: "zstd.compress: 1.0
 * MiB (50%) 512.0 KiB/s ETA 00:02". Returns snprintf's count. */
int accel_progress_format(const struct accel_progress *p, double elapsed, char *buf, size_t len);
/* Draw the final line, end it with a newline, free the meter (NULL:
 * nothing). */
void accel_progress_end(struct accel_progress *p);

/* End the program with exit status `status`: exit() normally; when a
 * bounded call was abandoned (accel_abandoned_calls() > 0), stdout and
 * stderr are flushed and closed and the process ends with _exit(), so no
 * atexit handler or library destructor runs under the thread still inside
 * a driver. A failure to write stdout then turns status 0 into 1, with
 * one line on stderr. Never returns. Call it from one thread (as exit()). */
__attribute__((noreturn)) void accel_exit(int status);

/* Replace, in place, what must not reach a terminal or a file from text a
 * driver, sysfs or a database gave: control characters (C0 but tab, which
 * becomes a space; DEL; C1), Unicode direction overrides and bytes that
 * are not valid UTF-8 become '?'; so do U+2028 and U+2029. The text never
 * grows. Touches only s: safe from any thread. */
void accel_text_sanitize(char *s);

/* Seconds on a monotonic clock (CLOCK_MONOTONIC), from an arbitrary
 * start. Async-signal-safe. */
double accel_now(void);

/* ------------------------------------------------------------- requirements */

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
 * JSON (ACCEL_REPORT_JSON) keys: schema_version; host {hostname, kernel,
 * sysroot, accel_version}; devices [{id, class, vendor, model, driver,
 * software, pci_address, numa_node, memory_bytes, apis [{name, ok,
 * reason}], cpu {packages, cores, threads, numa_nodes, cache {l1d_bytes
 * ...}, flags []} (CPUs only), properties {}}]; routes [{operation,
 * forced, engines [{rank, name, usable, expected_mbps, reason}]}] (when
 * opts.routes); probes [{name, origin, probed, ok, reason, seconds,
 * notes []}]; seconds. Absent values are null; times are seconds.
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
 * written at once after the devices so far). 0 or ACCEL_ENOMEM (JSON). */
int accel_report_route(struct accel_report *r, const struct accel_route *route);
/* Add the statistics of one run over `input` (its name, as in messages):
 * what a program's -v prints after each input. Table: "PROG: INPUT: "
 * then accel_stream_stats_print's lines, written at once. JSON: an entry
 * of a "runs" array: {input, units, serial_regions, bytes_in, bytes_out,
 * seconds, retried, units_in_flight, unit_bytes, memory_limit (null: no
 * cap), engines [{name, workers, units, bytes_in, bytes_out,
 * busy_seconds, failures, retried, dropped}]}. 0 or ACCEL_ENOMEM (JSON). */
int accel_report_run(struct accel_report *r, const char *input, const struct accel_stream_stats *s);
/* Add the devices that the engines of `route` run on, once each (a
 * program's -v --json: where its work ran). 0 or as accel_report_device. */
int accel_report_route_devices(struct accel_report *r, struct accel_ctx *ctx, const struct accel_route *route);
/* Add the probes of ctx's backends (table: with verbose, one line each;
 * without, how many found nothing). 0 or ACCEL_ENOMEM (JSON). Reads
 * ctx as the context section says. */
int accel_report_probes(struct accel_report *r, struct accel_ctx *ctx);
/* Write the rest of the report and free it. 0, or ACCEL_ENOMEM (nothing
 * of the JSON is written then). r may be NULL. */
int accel_report_end(struct accel_report *r);

/* ----------------------------------------------- age STREAM (accel-crypt) */

/*
 * The payload of an age v1 file (age-encryption.org/v1, C2SP age.md,
 * "Payload"): the plaintext cut into chunks of ACCEL_AGE_CHUNK bytes, each
 * sealed with ChaCha20-Poly1305 under the payload key with the nonce
 * "11-byte big-endian chunk counter || last-chunk flag" (0x01 on the final
 * chunk, else 0x00). The final chunk may be short; it is empty only when
 * the whole plaintext is. Chunks depend only on their index, so units of
 * whole chunks run in parallel. Operations "age.encrypt" and "age.decrypt":
 * op->ext points to a struct accel_age_key, op->chunk_size is the plaintext
 * bytes of one unit (a multiple of ACCEL_AGE_CHUNK); unit u holds the
 * chunks from index u->seq * op->chunk_size / ACCEL_AGE_CHUNK on. The
 * functions of this section use only their arguments: safe from any thread.
 */
#define ACCEL_AGE_CHUNK 65536
#define ACCEL_AGE_TAG 16
#define ACCEL_AGE_NONCE_LEN 12
#define ACCEL_AGE_KEY_LEN 32
/* Chunks per unit by default (1 MiB of plaintext). */
#define ACCEL_AGE_UNIT_CHUNKS 16

/* op->ext of age.encrypt and age.decrypt: the payload key (HKDF-SHA256 of
 * the file key and the payload nonce, info "payload"). */
struct accel_age_key {
	uint8_t key[ACCEL_AGE_KEY_LEN];
};

/* The STREAM nonce of chunk `counter` (last: 1 for the final chunk). */
void accel_age_nonce(uint64_t counter, int last, uint8_t nonce[ACCEL_AGE_NONCE_LEN]);

/*
 * For an engine's run(): seal (decrypt 0) or open (decrypt 1) every chunk
 * of unit u into u->out, calling aead(arg, decrypt, nonce, src, n, dst) per
 * chunk: n plaintext bytes; sealing writes n + ACCEL_AGE_TAG bytes
 * (ciphertext, then tag) to dst, opening reads them from src and writes n
 * bytes, returning 0, ACCEL_EDATA when the tag does not verify, or another
 * ACCEL_E* code. Checks the final-chunk rules while opening. Returns 0;
 * ACCEL_EDATA with one line in err[len] naming the chunk ("chunk 3 failed
 * authentication (...)", "final chunk 2 is empty", "chunk 0 is missing
 * (truncated file)", "trailing data after the final chunk 5"); aead's
 * other codes; ACCEL_ENOMEM.
 */
int accel_age_run_unit(const struct accel_op *op, struct accel_unit *u, int decrypt,
		       int (*aead)(void *arg, int decrypt, const uint8_t *nonce, const uint8_t *src, size_t n,
				   uint8_t *dst),
		       void *arg, char *err, size_t len);

/* How accel_age_encrypt and accel_age_decrypt run. */
struct accel_age_cfg {
	const char *backend;          /* --backend list; NULL: $ACCEL_BACKEND, else auto */
	struct accel_stream_config stream;
	int verbose;                  /* > 0: print the route on stderr */
	const uint8_t *key;           /* ACCEL_AGE_KEY_LEN bytes: the payload key (copied) */
	uint64_t unit_chunks;         /* chunks per unit; 0: ACCEL_AGE_UNIT_CHUNKS */
	/* Optional (encryption): write the header and the payload nonce
	 * before the first chunk; 0 or a negative ACCEL_E* code. */
	int (*begin)(void *user, struct accel_output *out);
	void *user;
};

/*
 * Encrypt the rest of `in` (the plaintext; an empty input is one empty
 * final chunk) to `out` as an age payload, or decrypt the rest of `in`
 * (the chunks after the payload nonce) to `out`: routed as "age.encrypt"
 * or "age.decrypt" for in->size, units in parallel on the route's engines,
 * written in order. Decryption writes a unit only after each of its chunks
 * verified, and stops at the first that does not: earlier units may have
 * been written (the caller aborts a FILE output). Returns 0; ACCEL_EDATA
 * (err names the chunk and byte offset); ACCEL_EINVAL (malformed backend
 * list or $ACCEL_FAULT); ACCEL_ENOENGINE; ACCEL_EIO; ACCEL_EPIPE;
 * ACCEL_ENOMEM; ACCEL_EDEVICE. One line in err[len]; stats may be NULL.
 * Memory and threads as accel_stream_run (units of unit_chunks chunks).
 */
int accel_age_encrypt(struct accel_ctx *ctx, const struct accel_age_cfg *cfg, struct accel_input *in,
		      struct accel_output *out, struct accel_stream_stats *stats, char *err, size_t len);
int accel_age_decrypt(struct accel_ctx *ctx, const struct accel_age_cfg *cfg, struct accel_input *in,
		      struct accel_output *out, struct accel_stream_stats *stats, char *err, size_t len);

/*
 * Hashing files in parallel (accel-crypt hash): operations "sha256",
 * "sha512", "sha3-256", "blake2b512", "sha1", "md5". Each unit is one
 * file: u->in holds its name (NUL-terminated; "-" is standard input), then
 * any bytes of the caller's. The engine reads and hashes the file itself
 * (so files are hashed at once on several workers, each in bounded
 * memory) and calls done() with the digest, or with errnum set when the
 * file cannot be read (digest NULL); done() fills u->out and returns 0 or
 * a negative ACCEL_E* code. op->ext points to this struct; done runs on
 * worker threads, several at once.
 */
struct accel_hash_files {
	int (*done)(void *arg, const struct accel_unit *u, const uint8_t *digest, size_t dlen, int errnum,
		    struct accel_buf *out);
	void *arg;
};
/* ------------------------------------------------------- FFT (accel-fft) */

/*
 * The FFT operation family (fft.c): sample streams cut into frames of N
 * samples every `hop` samples (frames overlap when hop < N), batched into
 * units of whole frames, transformed by an engine (the fftw plugin), then
 * scaled, turned into magnitude, power or dB, averaged and written by the
 * helpers below, so every engine gives the same bytes for the same
 * spectra. The functions of this section use only their arguments: safe
 * from any thread; a struct accel_fft is read-only once set up.
 */

/* Sample types, by SigMF names (SigMF Specification 1.x, core:datatype),
 * little-endian unless named _be. Integers are scaled to [-1, 1): i8 and
 * i16, i24, i32 by 2^7, 2^15, 2^23, 2^31; (u8 - 128) / 128. Complex types
 * hold I then Q. i24 and ci24 (packed 3-byte little-endian integers, as
 * 24-bit WAV and sox's -t s24 hold them) are not SigMF names. */
enum accel_sample {
	ACCEL_SAMPLE_CF32, ACCEL_SAMPLE_CI16, ACCEL_SAMPLE_CI8, ACCEL_SAMPLE_CU8,
	ACCEL_SAMPLE_F32, ACCEL_SAMPLE_I16, ACCEL_SAMPLE_U8, ACCEL_SAMPLE_CF64,
	ACCEL_SAMPLE_F64, ACCEL_SAMPLE_I8, ACCEL_SAMPLE_CI32, ACCEL_SAMPLE_I32,
	ACCEL_SAMPLE_CI24, ACCEL_SAMPLE_I24,
	ACCEL_SAMPLE_CF32_BE, ACCEL_SAMPLE_CI16_BE, ACCEL_SAMPLE_F32_BE, ACCEL_SAMPLE_I16_BE,
	ACCEL_SAMPLE_CF64_BE, ACCEL_SAMPLE_F64_BE, ACCEL_SAMPLE_CI32_BE, ACCEL_SAMPLE_I32_BE,
	ACCEL_SAMPLE_COUNT
};
/* Type by name: "cf32", "ci16_be"; an explicit "_le" names the plain
 * type, and real types may carry SigMF's "r" ("rf32_le" is f32). Returns
 * its value (0 or more), ACCEL_EINVAL for an unknown name, or
 * ACCEL_ENOTSUP for an 8-bit type with a byte order ("cu8_le": SigMF names
 * 8-bit types without _le or _be). */
int accel_sample_parse(const char *name);
/* "cf32", "ci16_be" ... for a type; "?" for a value out of range. */
const char *accel_sample_name(enum accel_sample t);
/* Bytes of one sample (a complex sample: both parts); 0 out of range. */
size_t accel_sample_bytes(enum accel_sample t);
/* 1 for a complex type, 0 for a real one. */
int accel_sample_is_complex(enum accel_sample t);
/* The names, separated by `sep`, into buf[len]: for messages. */
void accel_sample_names(const char *sep, char *buf, size_t len);

enum accel_fft_window {
	ACCEL_WINDOW_RECT, ACCEL_WINDOW_HANN, ACCEL_WINDOW_HAMMING, ACCEL_WINDOW_BLACKMAN,
	ACCEL_WINDOW_BLACKMAN_HARRIS, ACCEL_WINDOW_FLATTOP, ACCEL_WINDOW_KAISER,
};
enum accel_fft_out { ACCEL_FFT_COMPLEX, ACCEL_FFT_MAG, ACCEL_FFT_POWER, ACCEL_FFT_DB };
/* Normalisation, as numpy.fft's `norm`: BACKWARD (the default) scales the
 * inverse by 1/N, FORWARD the forward by 1/N, ORTHO both by 1/sqrt(N),
 * NONE neither (FFTW's own). */
enum accel_fft_norm { ACCEL_NORM_BACKWARD, ACCEL_NORM_FORWARD, ACCEL_NORM_ORTHO, ACCEL_NORM_NONE };
enum accel_fft_format { ACCEL_FFT_BINARY, ACCEL_FFT_TEXT, ACCEL_FFT_NPY };
/* Planning rigor for engines that plan (FFTW's flags of the same names). */
enum accel_fft_plan { ACCEL_PLAN_MEASURE, ACCEL_PLAN_ESTIMATE, ACCEL_PLAN_PATIENT };

/* A transform job: the caller fills the first block, accel_fft_setup the
 * rest. Handed to engines as accel_op.ext. */
struct accel_fft {
	size_t n;                     /* samples per frame, >= 2 */
	size_t hop;                   /* samples between frame starts, 0: n */
	enum accel_sample type;
	int inverse;                  /* 1: backward transform, exp(+2 pi i jk/N) */
	int full;                     /* 1: all N bins of real input (else N/2+1) */
	enum accel_fft_window window;
	double kaiser_beta;
	enum accel_fft_out out;
	double db_offset;             /* added to every dB value */
	int shift;                    /* 1: DC in the centre (numpy.fft.fftshift) */
	enum accel_fft_norm norm;
	unsigned average;             /* spectra averaged per row (Welch), 0: 1 */
	unsigned decimate;            /* one row written in D, 0: 1 */
	enum accel_fft_format format;
	enum accel_fft_plan plan;
	int pad;                      /* 1: zero-pad a partial sample and frames at the end */
	size_t unit_frames;           /* frames per unit, 0: about 4 MiB of input */
	int real;                     /* with inverse: half spectra to N real samples (fft.c2r) */
	int64_t input_bytes;          /* bytes of samples in the input when known (a regular
	                               * file, a WAV data size); 0 or -1: unknown */
	uint64_t memory_limit;        /* bytes f->memory may reach, 0: not checked */
	/* Set by accel_fft_setup. */
	int r2c;                      /* 1: real-to-complex transform (fft.r2c) */
	size_t bins;                  /* values per transformed frame: complex, N/2+1 (r2c) or N;
	                               * real, N (c2r) */
	size_t sample_bytes;
	float *win;                   /* N window coefficients (periodic) */
	double scale;                 /* normalisation factor on each value */
	int c2r;                      /* 1: complex-to-real inverse transform (fft.c2r) */
	size_t frame;                 /* input samples per frame: N, or N/2+1 bins (c2r) */
	int split;                    /* 1: a row's frames span several units (see accel_fft_run) */
	uint64_t memory;              /* bytes of the window, one unit in flight (its samples and
	                               * rows), one engine's transform buffers and the reader's
	                               * overlap: what the job needs at the least */
};

/* Check the job and complete it: 0, or ACCEL_EINVAL with one line in
 * err[len] (N < 2, an unknown type, averaged complex output, a shift of
 * a half spectrum, a negative Kaiser beta, `real` with a forward transform,
 * real input, --full, a window, a hop or an output mode other than
 * complex), ACCEL_EDATA with a line (f->input_bytes of samples hold no
 * whole frame, without f->pad), ACCEL_ENOMEM with a line (f->memory over
 * f->memory_limit), or ACCEL_ENOMEM with none. Both checks come before anything of the
 * job's size is made (the window is N floats). Sets f->unit_frames when
 * 0: about 4 MiB of input and at most 16 MiB of transform buffer per
 * unit, at least one frame; a multiple of f->average when a row fits,
 * else f->split (a unit_frames given below f->average splits too). Free
 * with accel_fft_free. */
int accel_fft_setup(struct accel_fft *f, char *err, size_t len);
/* Free what accel_fft_setup made (the window); f itself is the caller's.
 * Safe twice, and on a zeroed job that setup failed or never ran for. */
void accel_fft_free(struct accel_fft *f);
/* "fft.r2c", "fft.c2r" or "fft.c2c". */
const char *accel_fft_op_name(const struct accel_fft *f);
/* Parse a window name ("hann", "kaiser:8.6") into f->window and
 * f->kaiser_beta: 0 or ACCEL_EINVAL. */
int accel_fft_window_parse(struct accel_fft *f, const char *s);
/* Output values per row: f->bins (complex pairs for complex output, one
 * float each otherwise), valid after accel_fft_setup. */
size_t accel_fft_row_values(const struct accel_fft *f);
/* Frames a unit of `len` input bytes holds: whole frames only (the
 * stream's reader pads the last unit itself with --pad). */
size_t accel_fft_unit_frames(const struct accel_fft *f, size_t len);
/* Of the `frames` frames of unit number `seq` (units of f->unit_frames
 * frames each but the last), how many are transformed: --decimate leaves
 * out the frames of the rows not written. */
size_t accel_fft_kept_frames(const struct accel_fft *f, uint64_t seq, size_t frames);
/* Convert and window kept frames first .. first + count - 1 of unit `seq`
 * (raw samples at in[len] holding `frames` frames, frame i starting at
 * sample i * hop) into dst: N floats per frame for r2c, else f->frame
 * interleaved complex floats (N, or the N/2+1 bins of c2r). Returns the number of frames written (fewer than count
 * past the unit's kept frames). */
size_t accel_fft_load(const struct accel_fft *f, uint64_t seq, const uint8_t *in, size_t len, size_t frames,
		      size_t first, size_t count, float *dst);
/* Frames an engine should transform at once so that a batch's buffers stay
 * in cache (about 256 KiB of complex floats): a multiple of f->average (a
 * row at least), at most the kept frames of a whole unit. Give
 * accel_fft_emit whole batches: rows never straddle them. */
size_t accel_fft_batch_frames(const struct accel_fft *f);
/* Turn `kept` transformed frames (f->bins interleaved complex floats each;
 * N real floats for c2r) into output rows appended to out: scaling, magnitude, power or dB,
 * averaging of f->average frames per row (the last row of a stream may
 * average fewer), shift, and the format (binary, or CSV text). 0 or
 * ACCEL_ENOMEM. */
int accel_fft_emit(const struct accel_fft *f, const float *spec, size_t kept, struct accel_buf *out);
/*
 * For engines that run the whole chain on their device (conversion,
 * window, transform, scaling, magnitude, power or dB, averaging, shift),
 * so that only raw samples go up and finished rows come down:
 *
 * accel_fft_kept_index writes into idx (room for `frames` entries) the
 * unit's frame numbers that are transformed, in order (frame i starts at
 * sample i * hop of the unit's input; --decimate leaves rows out), and
 * returns their count, accel_fft_kept_frames. Frame numbers fit in 32 bits
 * (a unit holds at most 16 MiB of transform buffer).
 *
 * accel_fft_rows: output rows made of `kept` transformed frames, one per
 * f->average of them (the last row of a stream may average fewer: row r
 * averages min(average, kept - r * average) frames).
 *
 * Row j's value for output bin b, with rot = bins - bins / 2 when f->shift
 * (else 0) and bin c = (b + rot) mod bins, s = f->scale, X the frame's
 * unscaled transform at bin c and k the frames of the row:
 *   complex: s X (interleaved re, im; no averaging)
 *   mag:     s * mean |X|
 *   power:   s^2 * mean |X|^2
 *   db:      10 log10(s^2 * mean |X|^2) + f->db_offset
 *
 * accel_fft_put_rows appends `nrows` finished rows (accel_fft_row_values
 * values each, two floats a value for complex output) to out in f's format
 * (binary or CSV text), as accel_fft_emit does. 0 or ACCEL_ENOMEM.
 */
size_t accel_fft_kept_index(const struct accel_fft *f, uint64_t seq, size_t frames, uint32_t *idx);
size_t accel_fft_rows(const struct accel_fft *f, size_t kept);
int accel_fft_put_rows(const struct accel_fft *f, const float *rows, size_t nrows, struct accel_buf *out);
/* Output rows of a stream of `bytes` input bytes (-1: unknown, returns -1). */
int64_t accel_fft_stream_rows(const struct accel_fft *f, int64_t bytes);

/* A WAV file's header (RIFF WAVE, "fmt " and "data" chunks; Microsoft
 * Multimedia Standards Update 1994 and WAVE_FORMAT_EXTENSIBLE), also as
 * RF64 (EBU Tech 3306) or BW64 (ITU-R BS.2088): 64-bit sizes in "ds64". */
struct accel_wav {
	char form[5];             /* "RIFF", "RF64" or "BW64" */
	enum accel_sample type;   /* mono: u8, i16, i24, i32, f32, f64; stereo: their complex (I/Q) types */
	unsigned channels, rate, bits;
	uint64_t data_offset;     /* bytes before the samples */
	int64_t data_size;        /* bytes of samples stated, -1: to the end of input */
};
/* Parse the header at p[0..n). Returns 1 with *w set, 0 when p does not
 * start with a RIFF-like header, ACCEL_ENOTSUP with *need set to the
 * bytes it must see when n is too short (need <= 1 MiB), or ACCEL_EDATA
 * with one line in err[len] (unsupported encoding, malformed chunk, an
 * RF64 or BW64 file without ds64 first, RIFX, Sony Wave64). The data
 * size is the data chunk's, or ds64's where that holds 0xFFFFFFFF; 0, or
 * 0xFFFFFFFF without ds64 (a writer that streamed), means to the end of
 * input. Never reads past p[n). */
int accel_wav_parse(const uint8_t *p, size_t n, struct accel_wav *w, size_t *need, char *err, size_t len);

/* How accel_fft_run runs. */
struct accel_fft_cfg {
	const char *backend;          /* --backend list; NULL: $ACCEL_BACKEND, else auto */
	struct accel_stream_config stream;
	int verbose;                  /* > 0: print the route on stderr */
	int64_t data_size;            /* bytes of samples in the input (WAV), -1: to its end */
};

/*
 * Run the transform job f (set up) over `in` (its position at the first
 * sample) to `out`: frames batched into units, in parallel on the route's
 * engines, rows in input order; --npy writes its header first (rows from
 * the input's size, else a header rewritten at the end, which needs a
 * seekable output). With f->split (--average K of more frames than a
 * unit holds) a unit holds part of one row: engines make its mean (power
 * for dB) as a row of its own, and the writer sums them, weighted by their
 * frames, into the row; the frames of rows --decimate drops are skipped
 * unread. Memory does not grow with K. Returns 0; ACCEL_EDATA (a partial sample at the end
 * without f->pad; err names the byte offset); ACCEL_EINVAL (malformed
 * backend list or $ACCEL_FAULT, --npy to a pipe from an input of unknown
 * size); ACCEL_ENOENGINE; ACCEL_EIO; ACCEL_EPIPE; ACCEL_ENOMEM;
 * ACCEL_EDEVICE. One line in err[len]; stats may be NULL. Memory and threads
 * as accel_stream_run.
 */
int accel_fft_run(struct accel_ctx *ctx, const struct accel_fft_cfg *cfg, struct accel_fft *f,
		  struct accel_input *in, struct accel_output *out, struct accel_stream_stats *stats,
		  char *err, size_t len);

/* ------------------------------------------------- tensors, .npy (accel-infer) */

/*
 * Tensors as accel-infer and the inference backends exchange them, and the
 * NumPy .npy format they are read and written in (format versions 1.0, 2.0
 * and 3.0 of numpy.lib.format: the magic "\x93NUMPY", two version bytes, a
 * little-endian header length of 2 (1.0) or 4 bytes, and a Python dict
 * literal with 'descr', 'fortran_order' and 'shape', padded with spaces to
 * a multiple of 64 bytes and ended by a newline; then the data, C order).
 * Only little-endian (or byte-sized) numeric dtypes in C order are read.
 * These functions use only their arguments: safe from any thread.
 */
#define ACCEL_TENSOR_MAX_DIMS 16
/* Bytes of the longest .npy header accel_npy_header_write writes. */
#define ACCEL_NPY_HEADER_MAX 512
/* The longest .npy header accel_npy_header_parse reads, in characters
 * (numpy.load's max_header_size: it refuses longer ones). */
#define ACCEL_NPY_HEADER_LIMIT 10000

enum accel_dtype {
	ACCEL_DTYPE_NONE, ACCEL_DTYPE_FLOAT32, ACCEL_DTYPE_FLOAT64, ACCEL_DTYPE_FLOAT16,
	ACCEL_DTYPE_INT8, ACCEL_DTYPE_UINT8, ACCEL_DTYPE_INT16, ACCEL_DTYPE_UINT16,
	ACCEL_DTYPE_INT32, ACCEL_DTYPE_UINT32, ACCEL_DTYPE_INT64, ACCEL_DTYPE_UINT64,
	ACCEL_DTYPE_BOOL, ACCEL_DTYPE_COUNT
};

/* A tensor's element type and shape (dims[0..ndim), each >= 0). */
struct accel_tensor {
	enum accel_dtype dtype;
	int ndim;
	int64_t dims[ACCEL_TENSOR_MAX_DIMS];
};

/* NumPy's name of a dtype ("float32", "uint8", "bool"), "none" for NONE or
 * an unknown value; static. */
const char *accel_dtype_name(enum accel_dtype t);
/* Inverse of accel_dtype_name (also "f4", "f8", "f2", "i1" ... "u8",
 * "b1"): the dtype, or ACCEL_EINVAL. */
int accel_dtype_parse(const char *name);
/* Bytes of one element (1 to 8), 0 for NONE or an unknown value. */
size_t accel_dtype_size(enum accel_dtype t);
/* Elements of t (1 for a scalar, ndim 0) into *count and bytes of its data
 * into *bytes (either may be NULL). ACCEL_EDATA when a dim is negative,
 * the product overflows, or the bytes exceed `max` (0: no limit). */
int accel_tensor_size(const struct accel_tensor *t, uint64_t max, uint64_t *count, uint64_t *bytes);
/* The shape as NumPy prints it, "(1, 3, 224, 224)", "(5,)", "()", into
 * buf[len] (cut to len). Returns the length it needed. */
size_t accel_tensor_shape_str(const struct accel_tensor *t, char *buf, size_t len);

/* Parse the .npy header at p[0..n). Returns 0 with *t set and the header's
 * length (where the data starts) in *header_len; a positive count of bytes
 * needed when n is too short to decide (at least 10 until the length field
 * is seen, then the whole header); ACCEL_EDATA with one line in err[len]
 * ("not a .npy array (bad magic)", "unsupported dtype '>f4'", "fortran_order
 * arrays are not supported", "shape (100000, 100000, 100000) is 4e15 bytes,
 * over the limit of 1073741824") for a header that is malformed, over
 * ACCEL_NPY_HEADER_LIMIT, or whose data would exceed max_bytes (0: no
 * limit): the size is checked before anything is allocated. */
int accel_npy_header_parse(const uint8_t *p, size_t n, uint64_t max_bytes, struct accel_tensor *t,
			   size_t *header_len, char *err, size_t len);
/* Write a version 1.0 header for t into buf[len] (padded to a multiple of
 * 64 bytes). Returns its length, or ACCEL_EINVAL (len too small: it never
 * needs more than ACCEL_NPY_HEADER_MAX; an unknown dtype; ndim out of
 * 0..ACCEL_TENSOR_MAX_DIMS). */
int accel_npy_header_write(const struct accel_tensor *t, uint8_t *buf, size_t len);
/* Read one .npy array from `in`: its header into *t, its data appended to
 * data (data->len grows by its size). Returns 1; 0 at end of input (no
 * byte left); ACCEL_EDATA (malformed or over max_bytes as
 * accel_npy_header_parse says, or truncated: "truncated .npy array at byte
 * offset N: ..."), ACCEL_EIO (errno kept), ACCEL_ENOMEM. One reader thread. */
int accel_npy_read(struct accel_input *in, uint64_t max_bytes, struct accel_tensor *t, struct accel_buf *data,
		   char *err, size_t len);

/* Parameters of the operations "onnx.run" and "onnx.info" (struct
 * accel_op.ext), for the inference backends. onnx.run: a unit's input is
 * one .npy array per model input, in the model's order; its output one
 * .npy array per output asked for (all, in the model's order, when
 * noutputs is 0). onnx.info: the output is a JSON object {"inputs":
 * [{"name", "dtype", "shape"}], "outputs": [...]} where a dim is a number,
 * the name of a symbolic dim, or null. A backend's supports() loads the
 * model (an engine that cannot is left out with the reason) and keeps the
 * session for open(). */
struct accel_onnx_params {
	const char *model;               /* path of the .onnx file */
	int intra_threads;               /* the engine's threads per run, 0: its default */
	int ndims;                       /* symbolic dims set (--dim NAME=N) */
	const char *const *dim_names;
	const int64_t *dim_values;
	int noutputs;                    /* outputs to compute, 0: all */
	const char *const *outputs;
};

/* ---------------------------------------- fault injection (accel_fault_*) */

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
