/*
 * cpu.h - the CPU backend's codecs: each is a set of functions the backend
 * table dispatches to by operation name.
 */
#ifndef ACCEL_BACKEND_CPU_H
#define ACCEL_BACKEND_CPU_H

#include <accel/backend.h>
#include <accel/io.h>

struct cpu_codec {
	const char *op;           /* "zstd.compress" */
	double prior_mbps;        /* single-core throughput guess, MB/s of input */
	const char *library;      /* "libzstd", for route reasons */
	int (*open)(const struct accel_op *op, void **ctx);
	int (*run)(void *ctx, struct accel_unit *u, char *err, size_t len);
	/* NULL for operations that always split into units. */
	int (*stream)(void *ctx, struct accel_input *in, struct accel_output *out, char *err, size_t len);
	void (*close)(void *ctx);
	/* NULL, or the library and prior of op at its level, where they
	 * depend on it (gzip: ISA-L or libdeflate). */
	void (*describe)(const struct accel_op *op, const char **library, double *prior_mbps);
	/* Load the libraries op needs (libcore/codec_dl.h): 0, or
	 * ACCEL_ENOTSUP with why[len] saying which could not be. */
	int (*load)(const struct accel_op *op, char *why, size_t len);
};

extern const struct cpu_codec cpu_zstd_compress, cpu_zstd_decompress;
extern const struct cpu_codec cpu_gzip_compress, cpu_gzip_decompress;
extern const struct cpu_codec cpu_lz4_compress, cpu_lz4_decompress;

/* Probe the CPU with /proc/cpuinfo, /proc/meminfo and cgroup limits, and
 * when `full` (or where /proc names no model or memory) its topology with
 * hwloc (packages, cores, threads, NUMA nodes, caches); fills d. 0, with
 * why[len] empty, or saying why hwloc could not be loaded (the counts then
 * unknown, 0); ACCEL_ENOTSUP when hwloc cannot read the topology. */
int cpu_topology(struct accel_device *d, const char *sysroot, int full, char *why, size_t len);

#endif
