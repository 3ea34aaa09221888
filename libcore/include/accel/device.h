/*
 * accel/device.h - devices as discovery reports them: classes, CPU flags, properties, APIs.
 * Part of libaccel's public API; <accel.h> includes every such header.
 */
#ifndef ACCEL_DEVICE_H
#define ACCEL_DEVICE_H

#include <accel/errors.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

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

/* CPU flag bits (enum accel_cpu_flag) named in a /proc/cpuinfo "flags"
 * line (or its value, the words after the first ':'; unknown words
 * ignored); 0 when none is named. */
uint64_t accel_cpu_flags_parse(const char *line);
/* Name of one CPU flag bit ("vaes"), or NULL for an unknown bit. */
const char *accel_cpu_flag_name(uint64_t bit);
/* Whether `name` is a CPU flag as Linux names them in /proc/cpuinfo: one
 * of the x86 "flags" (arch/x86/include/asm/cpufeatures.h) or Arm64
 * "Features" (arch/arm64/kernel/cpuinfo.c) names this library knows, or
 * of the words a CPU device of ctx lists (see accel_device.features), so
 * a flag newer than the list is known where the CPU has it. ctx may be NULL. */
struct accel_ctx;
int accel_cpu_flag_known(const struct accel_ctx *ctx, const char *name);
/* The listed name nearest to `name`, within two edits and under half its
 * length; NULL when none is. */
const char *accel_cpu_flag_nearest(const char *name);

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
	/* Class CPU: every feature flag the kernel lists, as the words of
	 * /proc/cpuinfo's "flags" line (x86) or "Features" line (Arm) with
	 * single spaces; "" when unknown (then only `flags` says). Set with
	 * accel_device_set_features. */
	char features[2048];
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
/* accel_device_set with a number, written with %.15g; the same returns. */
int accel_device_set_num(struct accel_device *d, const char *key, double value);
/* The property "uuid" from the 16 bytes a driver gives (Vulkan's deviceUUID,
 * OpenCL's CL_DEVICE_UUID_KHR), as 8-4-4-4-12 lowercase hex digits: devices
 * without a PCI address are one device when their UUIDs are equal (device
 * ids, accel(7)). All zeros is no UUID: nothing is set. Returns 0 or
 * ACCEL_ENOMEM as accel_device_set. */
int accel_device_set_uuid(struct accel_device *d, const uint8_t uuid[16]);
/* Set d->features from the value of a /proc/cpuinfo "flags" or
 * "Features" line (the words after the first ':', or the words alone)
 * and d->flags from it (accel_cpu_flags_parse). Words past the field's
 * size are dropped whole. */
void accel_device_set_features(struct accel_device *d, const char *line);
/* Whether CPU device d has flag `name`: a word of d->features, or the bit
 * of d->flags that accel_cpu_flag_name() names so. */
int accel_device_has_flag(const struct accel_device *d, const char *name);
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

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
