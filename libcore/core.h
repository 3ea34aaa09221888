/*
 * core.h - internals shared by libcore's files (prefix core_). Nothing here is
 * part of the public API in accel.h.
 */
#ifndef ACCEL_CORE_H
#define ACCEL_CORE_H

#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <accel/context.h>

/* The registry grows as plugins are found, up to CORE_MAX_BACKENDS (the
 * built-in ones included); devices and engines are held in fixed tables. */
#define CORE_MAX_BACKENDS 64
#define CORE_MAX_DEVICES 64
#define CORE_MAX_ENGINES 64

struct accel_probe {
	struct accel_ctx *ctx;
	int backend;           /* index of the backend being probed */
	char *reason;          /* where accel_probe_fail writes */
	size_t reason_len;
};

/* A PCI function that reserves a device id (core_pci_scan). */
struct core_pci_fn {
	char addr[16];                 /* "0000:17:00.0" */
	enum accel_device_class cls;   /* as accel_pci_classify() says */
};

struct accel_ctx {
	pthread_mutex_t lock;
	/* nbackends statuses in room for cap (grown by core_backend_add); the
	 * one past CORE_MAX_BACKENDS is taken only by the first plugin the
	 * registry has no room for, with the reason (and how many were left out). */
	struct accel_backend_status *backends;
	int nbackends, cap;
	int left_out;                      /* plugins not loaded: registry full */
	struct accel_device devices[CORE_MAX_DEVICES];
	unsigned char fixed_id[CORE_MAX_DEVICES]; /* 1: the probe chose the id */
	int view_rank[CORE_MAX_DEVICES];   /* whose view names it (accel_probe_add_device) */
	int ndevices;
	double nested_seconds;             /* probes run inside the running one */
	/* The GPUs and NPUs on the PCI bus, read once when the first device
	 * is numbered: they hold their ids whichever probes ran. */
	struct core_pci_fn pci[CORE_MAX_DEVICES];
	int npci;
	int pci_scanned;
	struct accel_engine engines[CORE_MAX_ENGINES];
	int nengines;
	const char *sysroot;
	/* 1 once a report or an inventory wants every device the probes can
	 * find (core_ctx_inventory); before, a probe may list only what its
	 * engines need (accel_probe_list_devices) and is marked partial. */
	int inventory;
	unsigned char partial[CORE_MAX_BACKENDS + 1];
	int reprobing;                     /* backend index being probed again, or -1 */
	int named_probe;                   /* backend index a route naming it probes, or -1 */
	/* 1: backend i left out devices that could only be software here
	 * (accel_probe_software_devices); a route naming it probes it again. */
	unsigned char soft_skipped[CORE_MAX_BACKENDS + 1];
	/* 1: backend i was registered from a manifest and is not loaded yet:
	 * its table is the manifest's (no functions) until probe_index loads it. */
	unsigned char lazy[CORE_MAX_BACKENDS + 1];
	struct core_manifest *manifests;   /* read for this context (manifest.c) */
	/* accel_memory_available's last answer and when (accel_now), under
	 * lock: read again once it is a second old. */
	uint64_t mem_available;
	double mem_available_at;
};

/* The plugin manifest (manifest.c): the file in a plugin folder, beside
 * the plugins, that lists their tables so they are loaded only when used. */
#define CORE_MANIFEST "plugins.manifest"
struct core_manifest;
/* Write the manifest of the plugins in `dir` (every accel_NAME.so whose
 * table libaccel can use, loaded to read it) to out. 0, or ACCEL_EIO with
 * the reason in err[len]. */
int core_manifest_write(FILE *out, const char *dir, char *err, size_t len);
/* The manifest of `dir`, or NULL when it has none, it is malformed or of
 * another format or ABI, or a plugin it lists is missing or is not the
 * file it recorded (stale: another size or build-id; without a build-id,
 * another size or modification time): the folder is then scanned. Free
 * with core_manifest_free. */
struct core_manifest *core_manifest_read(const char *dir);
void core_manifest_free(struct core_manifest *m);
/* The table manifest m gives plugin file `file` ("accel_fftw.so"): its
 * registry fields only (no probe or other function), or NULL when m does
 * not list it. */
const struct accel_backend *core_manifest_find(const struct core_manifest *m, const char *file);
/* Keep m with ctx (freed by accel_ctx_free): its tables stay in use. */
void core_manifest_keep(struct accel_ctx *ctx, struct core_manifest *m);
/* The GNU build-id (NT_GNU_BUILD_ID note) of the ELF file open on fd, of
 * `size` bytes: its length, copied to id[cap]; 0 when the file, an ELF
 * object of this machine's class and byte order, has none; -1 when it is
 * not one, cannot be read, or a header or note does not fit in the file
 * (or the build-id in cap). A few preads. buildid.c. */
int core_elf_build_id(int fd, uint64_t size, unsigned char *id, size_t cap);
/* NAME of a plugin file "accel_NAME.so" into name[len]: 0, or -1 when
 * file is not one. discover.c. */
int core_plugin_name(const char *file, char *name, size_t len);
/* Why a plugin's table cannot be used (into buf[len]), or NULL when it
 * can. discover.c. */
const char *core_table_problem(const struct accel_backend *b, const char *name, char *buf, size_t len);
/* Load plugin i if it was registered from a manifest (lazy): its table
 * replaces the manifest's, or it is recorded as not loaded with the
 * reason. The caller holds the context's lock. discover.c. */
void core_backend_load(struct accel_ctx *ctx, int i);

/* From now on probes list every device they can find, and the backends
 * probed before for a route only are probed again, in full, when they find
 * devices of `classes` (ACCEL_CLASS_ALL: any). Takes the context's lock.
 * discover.c. */
void core_ctx_inventory(struct accel_ctx *ctx, unsigned classes);
/* Probe backend i for a route that names it (--backend): its probe looks
 * for devices that could only be software here too, probed again when an
 * earlier probe left them out. Returns the probe's code. */
int core_probe_named(struct accel_ctx *ctx, int i);
/* Whether this machine may hold a GPU or NPU: a PCI function of those
 * classes, or a device node a driver makes for one without PCI (an SoC's
 * GPU under /dev/dri, /dev/kfd, /dev/accel, WSL's /dev/dxg). Without one,
 * Vulkan and OpenCL find only software devices (lavapipe, PoCL), which an
 * auto route never prefers: their drivers cost ~0.3 s and ~90 MB (PoCL
 * loads LLVM). */
int core_may_have_devices(struct accel_ctx *ctx);

/* Start-up of every program (accel_common_init): fds 0, 1 and 2 held open
 * (on /dev/null where closed) and the handlers that remove a pending
 * temporary output installed before any library is loaded (io.c). */
void core_io_startup(void);

/* The program whose --help accel_msg_usage points at, after
 * accel_msg_prog: a subcommand's full name ("accel-crypt keygen"; the
 * pointer is kept). util.c. */
void core_msg_help_name(const char *name);

/* Open /dev/null on each closed fd 0, 1 and 2 (the other way: reading a
 * closed stdin or writing a closed stdout still fails with EBADF), so no
 * descriptor opened later (a pipe, a temporary, a library's log) takes its
 * number. Called by core_io_startup and accel_ctx_new (io.c). */
void core_guard_std_fds(void);

/* A unit of a mapped input was written: the whole pages of its bytes
 * [data, data + len) leave the process's mapping (they are read again from
 * the page cache if touched). Nothing when in is not mapped or data is not
 * inside its mapping. io.c. */
void core_input_drop(struct accel_input *in, const uint8_t *data, size_t len);
/* accel_input_map where mapping pays: not for a regular file under 128 KiB,
 * which is read through the buffer (its mmap, page faults and munmap, a
 * TLB flush on every core the process runs on, cost more than copying
 * it). Returns what accel_input_map returns, 0 for a small file. */
int core_input_map_large(struct accel_input *in);
/* A mapped input read through read() instead, for one decoder that walks
 * a long stretch of it (the sequential gzip and zstd decoders; lz4's,
 * faster than the copy, reads in place): view is a
 * buffered input over the same file from where `in` is, its offsets
 * counted as in's. On this VM a decoder loading from the mapping spent
 * 10-20% more CPU than on the same bytes read into a buffer (a TLB miss a
 * page, where the kernel's copy goes through its own map): one gzip
 * member of 64 MiB in 173 ms against 155 from a pipe; a zstd frame of
 * 64 MiB streamed in 90 against 72. Returns 1 with view set up (end it
 * with core_input_view_end), 0 when `in` is not mapped or the view could
 * not be made (read `in` itself). */
int core_input_view(struct accel_input *in, struct accel_input *view);
/* The bytes view consumed, consumed from `in` (at most to the mapping's
 * end); view closed. */
void core_input_view_end(struct accel_input *in, struct accel_input *view);
/* fn(ctx, in, out, err, len), a sequential decoder, run on a view of `in`
 * when it is mapped (core_input_view), else on `in`: its return, errno
 * as fn left it. */
typedef int (*core_stream_fn)(void *ctx, struct accel_input *in, struct accel_output *out, char *err, size_t len);
int core_input_viewed(struct accel_input *in, core_stream_fn fn, void *ctx, struct accel_output *out, char *err,
		      size_t len);

/* Whether out takes writes at a place of its own (core_output_pwrite) in
 * any order: a null output, the temporary file of accel_output_open
 * (renamed only when the run succeeds, so a run stopped midway never
 * leaves holes in a file by the final name), or /dev/null (stdout's
 * too); not a regular file on stdout or a caller's fd (it would show holes
 * after a crash; O_APPEND ignores the place), not a window, pipe or other
 * device. 1 with *base the place of the next byte, else 0. io.c. */
int core_output_positioned(struct accel_output *out, uint64_t *base);
/* len bytes of data written at byte `at` of out (core_output_positioned),
 * leaving its position alone and counting nothing (core_output_place
 * does). 0, or ACCEL_EIO with out->error and errno set. Thread-safe for
 * distinct places. */
int core_output_pwrite(struct accel_output *out, const void *data, size_t len, uint64_t at);
/* After positioned writes: out's position set to `end`, anything written
 * beyond it (units written after a cut) cut off, and len bytes counted as
 * written. 0, or ACCEL_EIO with out->error set. */
int core_output_place(struct accel_output *out, uint64_t end, uint64_t len);

/* A condition variable whose timed waits count on CLOCK_MONOTONIC, and
 * the deadline `seconds` from now on that clock, for pthread_cond_timedwait
 * on it. util.c. */
void core_cond_init_monotonic(pthread_cond_t *c);
void core_deadline(struct timespec *ts, double seconds);

/* While this thread reads the mapping [at, at + len) of a file that may
 * shrink under it (accel_hash_run_unit), a SIGBUS there jumps to jb
 * (siglongjmp, the signal mask restored: take it with sigsetjmp(jb, 1))
 * rather than ending the process; jb NULL ends the guard. Returns 1, or 0
 * where SIGBUS has a handler that is not ours (the program's, a
 * sanitizer's): the file must then be read, not mapped. io.c. */
int core_bus_guard(sigjmp_buf *jb, const void *at, size_t len);

/* Built-in backends (backends/<name>/): accel_backend_cpu, in accel.h. */

/* Whether `op` is listed in b->ops. */
int core_backend_offers(const struct accel_backend *b, const char *op);
/* A new, zeroed status for backend `name` from `origin` (a path, or
 * "built-in") at the end of the registry, or NULL when the name is taken
 * (the first one found wins, as with PATH), the registry is full (then the
 * first one left out holds the reason, with the count) or memory is short.
 * Statuses move when the registry grows: hold indices, not pointers. */
struct accel_backend_status *core_backend_add(struct accel_ctx *ctx, const char *name, const char *origin);
/* Index of the registered backend `name`, or -1. */
int core_backend_index(const struct accel_ctx *ctx, const char *name);
/* Split an engine selector "BACKEND[.VARIANT][:DEVICE]" into its parts
 * (each cut to its buffer's size, missing parts empty). */
void core_engine_split(const char *sel, char *backend, size_t blen, char *variant, size_t vlen,
		       char *device, size_t dlen);

/* Fault injection ($ACCEL_FAULT): 1 when engine `engine` must fail on unit
 * `seq`. The specification is parsed once per process. */
int core_fault_hit(const char *engine, uint64_t seq);
/* The same for stage `stage` of the engine (NULL: none): a rule naming a
 * stage (ENGINE@STAGE:UNITS) matches only that stage, one without any. */
int core_fault_hit_stage(const char *engine, const char *stage, uint64_t seq);
/* 0, or ACCEL_EINVAL when $ACCEL_FAULT is malformed. */
int core_fault_status(void);
/* Parse a fault specification (exposed for the unit tests); 0 or ACCEL_EINVAL. */
int core_fault_parse(const char *spec);
/* Why the last core_fault_parse failed ("empty unit number in 'cpu:1,,2'"). */
const char *core_fault_error(void);

/* The whole pages of [from, to) made present and writable in one call
 * (MADV_POPULATE_WRITE, Linux 5.14; elsewhere nothing is done and the
 * pages fault in as they are first written): for memory about to be
 * written whole (accel_buf_reserve_fill, gzip_index.c). Inline: the fuzz
 * replay drivers compile libcore's sources against a libaccel.so that
 * hides core_ symbols. */
static inline void core_populate(uint8_t *from, uint8_t *to)
{
#ifdef MADV_POPULATE_WRITE
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = ((uintptr_t)from + page - 1) & ~(page - 1), z = (uintptr_t)to & ~(page - 1);
	if (z > a)
		madvise((void *)a, z - a, MADV_POPULATE_WRITE);
#else
	(void)from;
	(void)to;
#endif
}

/* Reorder buffer: holds finished units until all earlier ones are written. */
struct core_reorder {
	struct accel_unit **slot;
	size_t cap;
	uint64_t next;        /* sequence number to write next */
};
int core_reorder_init(struct core_reorder *r, size_t cap);
void core_reorder_free(struct core_reorder *r);
/* Store a finished unit. ACCEL_EINVAL when its seq is outside the window
 * [next, next + cap) or its slot is taken. */
int core_reorder_put(struct core_reorder *r, struct accel_unit *u);
/* The unit with seq == next, removed and next advanced; NULL if not there yet. */
struct accel_unit *core_reorder_take(struct core_reorder *r);


/* accel_text_sanitize() on every text of a device (names, APIs' reasons,
 * properties' keys and values): what probes found becomes safe to print. */
void core_device_sanitize(struct accel_device *d);

/* The display controllers and processing accelerators in
 * <root>/sys/bus/pci/devices, in bus order (addresses sorted as strings),
 * with the class accel_pci_classify() gives them: at most `max` into out.
 * Returns how many (0 when the directory cannot be read). */
int core_pci_scan(const char *root, struct core_pci_fn *out, int max);

/* Device ids (device.c's header holds the rule). Whether a and b, neither
 * on PCI, are one device found twice. */
int core_device_same(const struct accel_device *a, const struct accel_device *b);
/* Whether the PCI functions of class cls hold their ids (GPUs and NPUs). */
int core_class_reserves(enum accel_device_class cls);
/* Number the devices of class cls whose id no probe chose, and rename the
 * engines on them. */
void core_device_renumber(struct accel_ctx *ctx, enum accel_device_class cls);
/* Name engine e BACKEND[.VARIANT]:ID from its device's id ("cpu" for the
 * built-in backend's engine). */
void core_engine_name(struct accel_ctx *ctx, struct accel_engine *e);

/* snprintf that never overflows and always terminates. */
void core_strlcpy(char *dst, const char *src, size_t len);
/* Edit distance of a and b, a swap of neighbours counting 1; 99 when
 * either is over 47 characters. */
int core_edit_distance(const char *a, const char *b);

/* Video engines (report.c): whether device d is of class video or holds
 * an API that the backends of ctx give a video kind (ACCEL_API_VIDEO); a
 * usable one when `usable`. ctx NULL: the class alone. */
int core_has_video(const struct accel_ctx *ctx, const struct accel_device *d, int usable);

/* "1.5 GiB" into buf: bytes in powers of 1024, one decimal past B. */
void core_human_bytes(char *buf, size_t len, double b);

#endif
