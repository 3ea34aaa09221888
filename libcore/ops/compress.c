/*
 * compress.c - the compression operation family as accel-compress runs it.
 * Compression: the input cut into chunks of a size set by the format and
 * level, each compressed in parallel into a frame (or member) of its own.
 * Decompression: the format from the first frame that is not skippable,
 * then each frame in parallel on the route's engines when its end is known
 * and it fits the parallel limit, else sequentially. The switch between the
 * two happens only at frame boundaries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <accel/ops/compress.h>
#include "core.h"
#include "ops/gzip_index.h"

/* zstd's default limit on the window of a frame it decodes (windowLog 27). */
#define WINDOW_LOG_DEFAULT 27

struct dec {
	enum accel_format format;
	uint64_t max;
	int garbage;         /* gzip data ended by trailing garbage */
};

/* What follows the last gzip member, as gzip -d takes it: zero bytes (a
 * tape block's padding) end the input quietly; a single other byte is a
 * member cut short; anything else is trailing garbage, ignored with a
 * warning (d->garbage). 0 (end of the stream) or ACCEL_EDATA / EIO. */
static int gzip_trailer(struct dec *d, struct accel_input *in, char *err, size_t len)
{
	const uint8_t *p;
	ssize_t n = accel_input_peek(in, 2, &p);
	if (n == 1 && p[0]) {
		snprintf(err, len, "unexpected end of input at byte offset %llu", (unsigned long long)in->offset + 1);
		return ACCEL_EDATA;
	}
	while (n > 0) {
		for (ssize_t i = 0; i < n; i++)
			if (p[i]) {
				d->garbage = 1;
				return 0;
			}
		accel_input_consume(in, (size_t)n);
		n = accel_input_peek(in, 1u << 16, &p);
	}
	return n < 0 ? (int)n : 0;
}

/* Next frame of the input: a unit when its end is known and it fits the
 * parallel limit, else a region for the sequential decoder (nothing of it
 * consumed). Skippable frames are passed over. */
static int next_frame(void *user, struct accel_input *in, struct accel_unit *u, char *err, size_t len)
{
	struct dec *d = user;
	for (;;) {
		struct accel_frame f;
		const uint8_t *p;
		ssize_t n = accel_input_peek(in, 4, &p);
		if (n < 0)
			return (int)n;
		if (n == 0)
			return 0;
		enum accel_format fmt = accel_format_detect(p, (size_t)n);
		/* Between gzip members only members: no skippable frames. */
		if (d->format == ACCEL_FORMAT_GZIP && fmt != ACCEL_FORMAT_GZIP)
			return gzip_trailer(d, in, err, len);
		if (fmt == ACCEL_FORMAT_SKIPPABLE) {
			int rc = accel_frame_scan(in, 0, 1, &f, err, len);
			if (rc < 0)
				return rc;
			continue;
		}
		if (fmt != d->format) {
			if (fmt == ACCEL_FORMAT_UNKNOWN)
				snprintf(err, len, "trailing data is not in %s format", accel_format_name(d->format));
			else
				snprintf(err, len, "a %s frame inside %s data is not supported", accel_format_name(fmt),
					 accel_format_name(d->format));
			return ACCEL_EDATA;
		}
		uint64_t off = in->offset;
		int rc = accel_frame_read(in, d->max, &u->in, &f, err, len);
		if (rc == ACCEL_ENOTSUP)
			return ACCEL_STREAM_SERIAL;
		if (rc < 0)
			return rc;
		/* The walker left frames of unknown content, or content over
		 * the limit, to the sequential decoder: the hint that sizes
		 * the output buffer is at most d->max. */
		u->offset = off;
		u->out_hint = (size_t)f.content_size;
		return 1;
	}
}

int accel_decompress(struct accel_ctx *ctx, const struct accel_decompress_cfg *cfg, struct accel_input *in,
		     struct accel_output *out, struct accel_stream_stats *stats, char *err, size_t len)
{
	err[0] = 0;
	if (stats)
		memset(stats, 0, sizeof *stats);
	/* Skippable frames may come first: the format is the first real
	 * frame's. Input holding nothing else decodes to nothing. */
	const uint8_t *p;
	ssize_t n;
	int skipped = 0;
	while ((n = accel_input_peek(in, 4, &p)) >= 4 &&
	       accel_format_detect(p, (size_t)n) == ACCEL_FORMAT_SKIPPABLE) {
		struct accel_frame f;
		int rc = accel_frame_scan(in, 0, 1, &f, err, len);
		if (rc == ACCEL_EIO)
			snprintf(err, len, "cannot read: %s", strerror(errno));
		if (rc < 0)
			return rc;
		skipped = 1;
	}
	if (n < 0) {
		snprintf(err, len, "cannot read: %s", strerror(errno));
		return (int)n;
	}
	if (n == 0) {
		if (skipped)
			return 0;
		snprintf(err, len, "unexpected end of input (empty)");
		return ACCEL_EDATA;
	}
	enum accel_format format = accel_format_detect(p, (size_t)n);
	if (format == ACCEL_FORMAT_UNKNOWN) {
		snprintf(err, len, "not in a known format (zstd, gzip or lz4) at byte offset %llu",
			 (unsigned long long)in->offset);
		return ACCEL_EDATA;
	}

	char opname[32];
	snprintf(opname, sizeof opname, "%s.decompress", accel_format_name(format));
	int wlog = cfg->window_log_max > 0 ? cfg->window_log_max : WINDOW_LOG_DEFAULT;
	uint64_t window = (uint64_t)1 << wlog;
	struct accel_op op = {
		.name = opname,
		.checksum = 1,
		.memory_limit = cfg->memory_limit > window ? cfg->memory_limit : window,
	};
	/* A gzip member of another tool decodes on the stream's threads
	 * (libcore/ops/gzip_index.c), within its memory limit. */
	struct accel_gzip_dec_ext gz = { 0, 0 };
	if (format == ACCEL_FORMAT_GZIP) {
		gz.threads = cfg->stream.threads > 0 ? cfg->stream.threads : accel_cpu_count();
		/* Our speculative decoder spends about 3x ISA-L's CPU a byte:
		 * on fewer than 4 threads one ISA-L thread is faster (measured
		 * on 2 cores: 2.5 s against 0.9 s for 46 MB of gzip -6). */
		if (gz.threads < ACCEL_GZIP_PAR_MIN_THREADS)
			gz.threads = 0;
		gz.memory = cfg->stream.memory_limit ? cfg->stream.memory_limit : accel_memory_available(ctx) / 4;
		if (!gz.memory)
			gz.memory = 1u << 30;
		op.ext = &gz;
	}
	struct accel_route route;
	struct accel_route_req req = { &op, cfg->backend, in->size, NULL };
	int rc = accel_route_job(ctx, &req, cfg->verbose, cfg->report, &route, err, len);
	if (rc < 0)
		return rc;
	struct dec d = { format, cfg->parallel_max ? cfg->parallel_max : ACCEL_DECOMPRESS_PARALLEL_MAX, 0 };
	/* A regular file is decoded where it lies: frames are read from its
	 * mapping, not copied into units. */
	accel_input_map(in);
	struct accel_stream_ops ops = { next_frame, NULL, NULL };
	rc = accel_stream_run(ctx, &cfg->stream, &route, &op, &ops, &d, in, out, stats, err, len);
	if (rc == 0 && d.garbage) {
		snprintf(err, len, "decompression OK, trailing garbage ignored");
		return ACCEL_DECOMPRESS_GARBAGE;
	}
	return rc;
}

/* ------------------------------------------------------------ compression */

static int known_format(const char *format)
{
	return format && (!strcmp(format, "zstd") || !strcmp(format, "gzip") || !strcmp(format, "lz4"));
}

int accel_compress_default_level(const char *format)
{
	if (!known_format(format))
		return ACCEL_EINVAL;
	return !strcmp(format, "gzip") ? 6 : !strcmp(format, "lz4") ? 1 : 3;
}

uint64_t accel_compress_default_chunk(const char *format, int level)
{
	if (!known_format(format))
		return 0;
	/* gzip: libdeflate's levels (4+) start each member without the
	 * previous 32 KiB as pigz does; 2 MiB members keep that loss near
	 * 0.5% of the size. */
	if (!strcmp(format, "gzip"))
		return level <= 3 ? 1u << 20 : 2u << 20;
	if (!strcmp(format, "lz4"))
		return 4u << 20;
	/* zstd: about four times the window of the level, as zstd -T does. */
	return level <= 2 ? 4u << 20 : level <= 8 ? 8u << 20 : level <= 16 ? 16u << 20 : 32u << 20;
}

/* One unit per chunk of the input; an empty input is one empty chunk. */
static int next_chunk(void *user, struct accel_input *in, struct accel_unit *u, char *err, size_t len)
{
	const uint64_t *chunk = user;
	return accel_read_chunk(in, u, (size_t)*chunk);
}

/* The operation of a compression configuration, its defaults filled in.
 * opname[32] holds the name. */
static int compress_op(const struct accel_compress_cfg *cfg, char *opname, struct accel_op *op, uint64_t *chunk,
		       char *err, size_t len)
{
	const char *format = cfg->format ? cfg->format : "zstd";
	if (!known_format(format)) {
		snprintf(err, len, "--format: '%s' is not one of zstd, gzip, lz4", format);
		return ACCEL_EINVAL;
	}
	snprintf(opname, 32, "%s.compress", format);
	int level = cfg->level ? cfg->level : accel_compress_default_level(format);
	if (!strcmp(format, "gzip") && (level < 1 || level > ACCEL_GZIP_LEVEL_MAX)) {
		snprintf(err, len, "gzip level %d is out of range (1-%d)", level, ACCEL_GZIP_LEVEL_MAX);
		return ACCEL_EINVAL;
	}
	*chunk = cfg->chunk_size ? cfg->chunk_size : accel_compress_default_chunk(format, level);
	memset(op, 0, sizeof *op);
	op->name = opname;
	op->level = level;
	op->checksum = cfg->checksum;
	op->chunk_size = (size_t)*chunk;
	op->memory_limit = cfg->memory_limit;
	return 0;
}

/* The jobs of accel_compress_jobs, each given the chunk size as `user`. */
struct chunk_jobs {
	const struct accel_stream_jobs *jobs;
	uint64_t *chunk;
};

static int chunk_start(void *arg, size_t k, struct accel_input **in, struct accel_output **out, void **user,
		       char *err, size_t len)
{
	struct chunk_jobs *cj = arg;
	int rc = cj->jobs->start(cj->jobs->arg, k, in, out, user, err, len);
	*user = cj->chunk;
	return rc;
}

static void chunk_finish(void *arg, size_t k, int rc, const struct accel_stream_stats *stats, const char *err)
{
	struct chunk_jobs *cj = arg;
	cj->jobs->finish(cj->jobs->arg, k, rc, stats, err);
}

int accel_compress_jobs(struct accel_ctx *ctx, const struct accel_compress_cfg *cfg,
			const struct accel_stream_jobs *jobs, char *err, size_t len)
{
	err[0] = 0;
	char opname[32];
	struct accel_op op;
	uint64_t chunk;
	int rc = compress_op(cfg, opname, &op, &chunk, err, len);
	if (rc < 0)
		return rc;
	struct accel_route route;
	struct accel_route_req req = { &op, cfg->backend, cfg->stream.total_size, NULL };
	rc = accel_route_job(ctx, &req, cfg->verbose, cfg->report, &route, err, len);
	if (rc < 0)
		return rc;
	/* Every job reads chunks of the same size: `user` is the chunk size
	 * whatever the jobs' start gives. */
	struct accel_stream_ops ops = { next_chunk, NULL, NULL };
	struct chunk_jobs cj = { jobs, &chunk };
	struct accel_stream_jobs wrap = { jobs->n, &cj, chunk_start, jobs->finish ? chunk_finish : NULL };
	return accel_stream_run_jobs(ctx, &cfg->stream, &route, &op, &ops, &wrap, err, len);
}

int accel_compress(struct accel_ctx *ctx, const struct accel_compress_cfg *cfg, struct accel_input *in,
		   struct accel_output *out, struct accel_stream_stats *stats, char *err, size_t len)
{
	err[0] = 0;
	if (stats)
		memset(stats, 0, sizeof *stats);
	char opname[32];
	struct accel_op op;
	uint64_t chunk;
	int rc = compress_op(cfg, opname, &op, &chunk, err, len);
	if (rc < 0)
		return rc;
	struct accel_route route;
	struct accel_route_req req = { &op, cfg->backend, in->size, NULL };
	rc = accel_route_job(ctx, &req, cfg->verbose, cfg->report, &route, err, len);
	if (rc < 0)
		return rc;
	struct accel_stream_ops ops = { next_chunk, NULL, NULL };
	return accel_stream_run(ctx, &cfg->stream, &route, &op, &ops, &chunk, in, out, stats, err, len);
}

/* ------------------------------------------------------------- measuring */

int accel_frame_measure(struct accel_ctx *ctx, enum accel_format format, struct accel_input *in,
			uint64_t *content, char *err, size_t len)
{
	err[0] = 0;
	*content = 0;
	if (format != ACCEL_FORMAT_ZSTD && format != ACCEL_FORMAT_GZIP && format != ACCEL_FORMAT_LZ4) {
		snprintf(err, len, "not a compressed frame at byte offset %llu", (unsigned long long)in->offset);
		return ACCEL_EINVAL;
	}
	char opname[32];
	snprintf(opname, sizeof opname, "%s.decompress", accel_format_name(format));
	struct accel_op op = { .name = opname, .checksum = 1 };
	/* The CPU engine is the sequential decoder of last resort: always
	 * there, and it decodes any region another engine would. */
	const struct accel_engine *cpu = accel_cpu_engine(ctx);
	if (!cpu) {
		snprintf(err, len, "no CPU engine (the cpu probe failed)");
		return ACCEL_ENOENGINE;
	}
	void *ectx;
	int rc = cpu->backend->open(cpu, &op, &ectx);
	if (rc < 0) {
		snprintf(err, len, "%s: cannot open engine: %s", cpu->name, accel_strerror(rc));
		return rc;
	}
	struct accel_output sink;
	accel_output_null(&sink);
	rc = cpu->backend->stream(ectx, in, &sink, err, len);
	cpu->backend->close(ectx);
	*content = sink.written;
	return rc;
}
