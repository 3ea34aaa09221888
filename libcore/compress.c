/*
 * compress.c - decompression as accel-compress -d does it: the format from
 * the first frame that is not skippable, then each frame in parallel on the
 * route's engines when its end is known and it fits the parallel limit, else
 * sequentially. The switch between the two happens only at frame boundaries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "core.h"

/* zstd's default limit on the window of a frame it decodes (windowLog 27). */
#define WINDOW_LOG_DEFAULT 27

struct dec {
	enum accel_format format;
	uint64_t max;
};

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
	struct accel_route route;
	struct accel_route_req req = { &op, cfg->backend, in->size, NULL };
	int rc = accel_route(ctx, &req, &route);
	if (cfg->verbose > 0)
		accel_route_print(&route, stderr);
	if (rc == ACCEL_EINVAL) {
		const char *list = cfg->backend ? cfg->backend : getenv("ACCEL_BACKEND");
		snprintf(err, len, "--backend: malformed list '%s'", list ? list : "");
		return rc;
	}
	if (rc < 0) {
		snprintf(err, len, "no engine can run %s (try -v for the reasons)", opname);
		return rc;
	}
	struct dec d = { format, cfg->parallel_max ? cfg->parallel_max : ACCEL_DECOMPRESS_PARALLEL_MAX };
	struct accel_stream_ops ops = { next_frame, NULL, NULL };
	return accel_stream_run(ctx, &cfg->stream, &route, &op, &ops, &d, in, out, stats, err, len);
}
