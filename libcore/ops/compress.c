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
#include "ops/lz4_parts.h"

/* zstd's default limit on the window of a frame it decodes (windowLog 27). */
#define WINDOW_LOG_DEFAULT 27

struct dec {
	enum accel_format format;
	uint64_t max;
	int garbage;         /* gzip data ended by trailing garbage */
	/* --range: decompressed bytes [from, to) to `out`. dpos: the
	 * decompressed offset of the next frame while dpos_known; started:
	 * the output's window is set, frames are being decoded. With a seek
	 * table, `frame` is the entry of the next frame. */
	int range, dpos_known, started;
	uint64_t from, to, dpos;
	struct accel_output *out;
	const struct accel_seek_table *table;
	uint64_t frame, first, skipped;
	/* lz4 frames of independent blocks decoded in parts (not with
	 * --range): made when the first such frame comes; no_parts once that
	 * failed (no libxxhash), such frames then decoded sequentially. */
	struct lz4_parts *parts;
	int no_parts;
};

/* An lz4 frame the walker left to the sequential decoder, at in's
 * position: cut into parts when it can be (1, its first part in u), else
 * 0; <0 an error. */
static int lz4_first_part(struct dec *d, struct accel_input *in, struct accel_unit *u, char *err, size_t len)
{
	if (d->range || d->no_parts)
		return 0;
	if (!d->parts && !(d->parts = lz4_parts_new())) {
		d->no_parts = 1;
		return 0;
	}
	int rc = lz4_parts_begin(d->parts, in);
	return rc <= 0 ? rc : lz4_parts_next(d->parts, in, u, err, len);
}

/* The write hook of lz4 data: parts checked in order (lz4_parts_write). */
static int write_parts(void *user, struct accel_output *out, const struct accel_unit *u, char *err, size_t len)
{
	struct dec *d = user;
	if (!(u->part & ACCEL_LZ4_PART))
		return accel_output_write(out, u->out.data, u->out.len);
	return lz4_parts_write(d->parts, out, u, err, len);
}

/* --range: the zstd frame at the input's position, when its header states
 * its content size and it ends before the range, is consumed undecoded
 * (walked to its end): 1. 0 when it is needed; <0 an error. */
static int skip_frame(struct dec *d, struct accel_input *in, char *err, size_t len)
{
	const uint8_t *p;
	ssize_t n = accel_input_peek(in, 18, &p);
	if (n < 0)
		return (int)n;
	int64_t content;
	int checksum;
	if (accel_zstd_frame_header(p, (size_t)n, &content, &checksum) <= 0 || content < 0 ||
	    d->dpos + (uint64_t)content > d->from)
		return 0;
	struct accel_frame f;
	int rc = accel_frame_scan(in, 0, 1, &f, err, len);
	if (rc < 0)
		return rc;
	d->dpos += (uint64_t)content;
	d->skipped++;
	return 1;
}

/* --range with a seek table: the frame just read (f, its bytes in `bytes`
 * when not NULL) against its entry. 0 or ACCEL_EDATA. */
static int check_entry(struct dec *d, uint64_t off, const struct accel_frame *f, const struct accel_buf *bytes,
		       char *err, size_t len)
{
	const struct accel_seek_table *t = d->table;
	uint64_t k = d->frame++;
	if (k >= t->nframes || off != t->coff[k] || (f->frame_size >= 0 && (uint64_t)f->frame_size != t->coff[k + 1] - off) ||
	    (f->content_size >= 0 && (uint64_t)f->content_size != t->doff[k + 1] - t->doff[k])) {
		snprintf(err, len, "seek table entry %llu does not match the frame at byte offset %llu",
			 (unsigned long long)k, (unsigned long long)off);
		return ACCEL_EDATA;
	}
	if (bytes && t->checksums && f->checksum && bytes->len >= 4) {
		const uint8_t *e = bytes->data + bytes->len - 4;
		uint32_t c = (uint32_t)e[0] | (uint32_t)e[1] << 8 | (uint32_t)e[2] << 16 | (uint32_t)e[3] << 24;
		if (c != t->check[k]) {
			snprintf(err, len, "seek table entry %llu: checksum 0x%08x, the frame at byte offset %llu ends "
				 "with 0x%08x", (unsigned long long)k, t->check[k], (unsigned long long)off, c);
			return ACCEL_EDATA;
		}
	}
	return 0;
}

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

/* The rest of the input from byte offset `at`, where a member's 'AC' size
 * held bytes that are not a member after it (the gzip engine's in_end:
 * the run stopped there), judged by gzip_trailer from there. A pipe's rest
 * is gone: it counts as garbage. */
static int gzip_rest(struct dec *d, struct accel_input *in, uint64_t at, char *err, size_t len)
{
	int rc = accel_input_seek(in, at);
	if (rc == ACCEL_ENOTSUP) {
		d->garbage = 1;
		return 0;
	}
	if (rc < 0) {
		snprintf(err, len, "cannot read: %s", rc == ACCEL_EIO ? strerror(errno) : accel_strerror(rc));
		return rc;
	}
	return gzip_trailer(d, in, err, len);
}

/* Next frame of the input: a unit when its end is known and it fits the
 * parallel limit, else a region for the sequential decoder (nothing of it
 * consumed). Skippable frames are passed over. */
/* Unit u's frame, borrowed from a mapped input, claimed instead: its
 * offset in the file left for the stream to pread (u->in_at). */
static void claim_frame(const struct accel_input *in, struct accel_unit *u)
{
	if (in->map_len && !u->in.cap && u->in.data && u->in.data >= in->buf &&
	    u->in.data + u->in.len <= in->buf + in->map_len) {
		u->in_at = (int64_t)(u->in.data - in->buf);
		u->in.data = NULL;
	}
}

static int next_frame(void *user, struct accel_input *in, struct accel_unit *u, char *err, size_t len)
{
	struct dec *d = user;
	if (d->parts && lz4_parts_active(d->parts))
		return lz4_parts_next(d->parts, in, u, err, len);
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
		if (d->range) {
			/* Every byte of the range is in a frame issued. */
			if (d->dpos_known && d->dpos >= d->to)
				return 0;
			if (!d->started && fmt == ACCEL_FORMAT_ZSTD && !d->table) {
				int rc = skip_frame(d, in, err, len);
				if (rc < 0)
					return rc;
				if (rc)
					continue;
			}
			if (!d->started) {
				accel_output_window(d->out, d->from - d->dpos, d->to - d->from);
				d->started = 1;
			}
		}
		uint64_t off = in->offset;
		int rc = accel_frame_read(in, d->max, &u->in, &f, err, len);
		if (rc == ACCEL_ENOTSUP && d->range) {
			/* Decoded straight to the output: its content size is
			 * known only when the header states it (and the
			 * decoder holds the frame to it). */
			const uint8_t *h;
			ssize_t hn = accel_input_peek(in, 18, &h);
			int64_t content = -1;
			int checksum;
			if (hn < 0)
				return (int)hn;
			if (fmt != ACCEL_FORMAT_ZSTD || accel_zstd_frame_header(h, (size_t)hn, &content, &checksum) <= 0)
				content = -1;
			struct accel_frame hf = { .format = fmt, .content_size = content, .frame_size = -1 };
			if (d->table && (rc = check_entry(d, off, &hf, NULL, err, len)) < 0)
				return rc;
			if (content < 0)
				d->dpos_known = 0;
			d->dpos += content < 0 ? 0 : (uint64_t)content;
			return ACCEL_STREAM_SERIAL;
		}
		int part = rc == ACCEL_ENOTSUP && fmt == ACCEL_FORMAT_LZ4 ? lz4_first_part(d, in, u, err, len) : 0;
		if (part)
			return part;
		if (rc == ACCEL_ENOTSUP)
			return ACCEL_STREAM_SERIAL;
		if (rc < 0)
			return rc;
		if (d->range) {
			if (d->table && (rc = check_entry(d, off, &f, &u->in, err, len)) < 0)
				return rc;
			d->dpos += (uint64_t)f.content_size;
		}
		/* The walker left frames of unknown content, or content over
		 * the limit, to the sequential decoder: the hint that sizes
		 * the output buffer is at most d->max. */
		u->offset = off;
		u->out_hint = (size_t)f.content_size;
		/* A frame in a mapped input is claimed, not borrowed: the
		 * stream preads it into the unit on the worker that decodes it
		 * (u->in_at), and the decoder faults none of the mapping in
		 * (zstd -d of 256 MiB of a tar at -T2: 240 ms of user time
		 * borrowing, 197 claiming; see accel_read_chunk_claim). */
		claim_frame(in, u);
		return 1;
	}
}

static int decompress_run(struct accel_ctx *ctx, const struct accel_decompress_cfg *cfg, struct accel_input *in,
			  struct accel_output *out, struct dec *d, struct accel_stream_stats *stats, char *err,
			  size_t len);

/* --range with a seek table: check the header of every frame before the
 * range against its entry (pread: nothing read in between), then move the
 * input to the first frame the range needs. 0, or ACCEL_EDATA / EIO. */
static int range_seek(struct accel_ctx *ctx, struct dec *d, struct accel_input *in, char *err, size_t len)
{
	const struct accel_seek_table *t = d->table;
	uint64_t k = 0;
	while (k < t->nframes && t->doff[k + 1] <= d->from)
		k++;
	for (uint64_t i = 0; i < k; i++) {
		uint8_t h[18], e[4];
		uint64_t csize = t->coff[i + 1] - t->coff[i], dsize = t->doff[i + 1] - t->doff[i];
		ssize_t n = accel_input_pread(in, t->coff[i], h, csize < sizeof h ? (size_t)csize : sizeof h);
		if (n < 0)
			return (int)n;
		int64_t content;
		int checksum, ok;
		uint32_t m = n >= 4 ? (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24 : 0;
		if (accel_format_detect(h, (size_t)n) == ACCEL_FORMAT_SKIPPABLE) {
			ok = n >= 8 && dsize == 0 && 8 + (uint64_t)(m = (uint32_t)h[4] | (uint32_t)h[5] << 8 |
					 (uint32_t)h[6] << 16 | (uint32_t)h[7] << 24) == csize;
		} else {
			ok = accel_zstd_frame_header(h, (size_t)n, &content, &checksum) > 0 &&
			     (content < 0 || (uint64_t)content == dsize);
			/* A frame that does not state its size is decoded to
			 * measure it: its entry is not taken on trust. */
			if (ok && content < 0) {
				uint64_t got;
				int rc = accel_input_seek(in, t->coff[i]);
				if (rc == 0)
					rc = accel_frame_measure(ctx, ACCEL_FORMAT_ZSTD, in, &got, err, len);
				if (rc < 0 && rc != ACCEL_EDATA)
					return rc;
				ok = rc == 0 && got == dsize && in->offset == t->coff[i + 1];
			}
			if (ok && checksum && t->checksums) {
				if ((n = accel_input_pread(in, t->coff[i + 1] - 4, e, 4)) < 0)
					return (int)n;
				ok = n == 4 && ((uint32_t)e[0] | (uint32_t)e[1] << 8 | (uint32_t)e[2] << 16 |
						(uint32_t)e[3] << 24) == t->check[i];
			}
		}
		if (!ok) {
			snprintf(err, len, "seek table entry %llu does not match the frame at byte offset %llu",
				 (unsigned long long)i, (unsigned long long)t->coff[i]);
			return ACCEL_EDATA;
		}
	}
	d->frame = d->first = k;
	d->dpos = t->doff[k];
	return accel_input_seek(in, t->coff[k]);
}

/* -v: how --range found its frames. */
static void range_say(const struct accel_decompress_cfg *cfg, const struct accel_input *in, const struct dec *d,
		      const char *why)
{
	const char *prog = cfg->stream.prog ? cfg->stream.prog : "accel";
	if (!d->started)
		fprintf(stderr, "%s: %s: --range: nothing in the range (empty, or past the content%s); nothing decoded\n",
			prog, in->name, d->table ? " by the seek table" : "");
	else if (d->table)
		fprintf(stderr, "%s: %s: --range: seek table of %llu frames; frames %llu to %llu decoded\n", prog,
			in->name, (unsigned long long)d->table->nframes, (unsigned long long)d->first,
			(unsigned long long)(d->frame ? d->frame - 1 : 0));
	else
		fprintf(stderr, "%s: %s: --range: no seek table (%s); frames read from the start, %llu before the "
			"range skipped by their headers without decoding\n", prog, in->name, why,
			(unsigned long long)d->skipped);
}

int accel_decompress(struct accel_ctx *ctx, const struct accel_decompress_cfg *cfg, struct accel_input *in,
		     struct accel_output *out, struct accel_stream_stats *stats, char *err, size_t len)
{
	err[0] = 0;
	if (stats)
		memset(stats, 0, sizeof *stats);
	struct accel_seek_table table = { 0 };
	struct dec d = { .format = ACCEL_FORMAT_NONE, .range = cfg->range, .dpos_known = 1, .out = out };
	const char *why = in->size < 0 ? "not a regular file" : "none at the end of the input";
	if (cfg->range) {
		d.from = cfg->range_offset;
		d.to = cfg->range_length > UINT64_MAX - d.from ? UINT64_MAX : d.from + cfg->range_length;
		int rc = in->size >= 0 ? accel_seek_table_read(in, &table, err, len) : ACCEL_ENOTSUP;
		if (rc == ACCEL_ENOTSUP) {
			err[0] = 0;
			rc = 0;
		} else if (rc == 0) {
			d.table = &table;
			rc = range_seek(ctx, &d, in, err, len);
			if (rc == 0 && d.frame == table.nframes)
				d.to = d.from;  /* the range starts past the content */
		}
		if (rc == ACCEL_EIO)
			snprintf(err, len, "cannot read: %s", strerror(errno));
		if (rc < 0 || d.to == d.from) {
			if (rc == 0 && cfg->verbose > 0 && !cfg->report)
				range_say(cfg, in, &d, why);
			accel_seek_table_free(&table);
			return rc;
		}
	}
	int rc = decompress_run(ctx, cfg, in, out, &d, stats, err, len);
	if (cfg->range && rc == ACCEL_EPIPE && out->window == 2) {
		rc = 0;
		err[0] = 0;
	}
	if (cfg->range && rc == 0 && cfg->verbose > 0 && !cfg->report)
		range_say(cfg, in, &d, why);
	accel_seek_table_free(&table);
	return rc;
}

/* accel_decompress once --range has found where to start. */
static int decompress_run(struct accel_ctx *ctx, const struct accel_decompress_cfg *cfg, struct accel_input *in,
			  struct accel_output *out, struct dec *dp, struct accel_stream_stats *stats, char *err,
			  size_t len)
{
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
		/* Chunks decode mostly by ISA-L, with a short speculative
		 * prefix (gzip_index.c): from 2 threads on faster than one
		 * ISA-L inflate. */
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
	struct dec *d = dp;
	d->format = format;
	d->max = cfg->parallel_max ? cfg->parallel_max : ACCEL_DECOMPRESS_PARALLEL_MAX;
	/* A regular file (of 128 KiB or more) is mapped: finding a frame's
	 * end there is a header's sums (or a scan of its blocks' headers),
	 * so the workers take the frames themselves: no reader thread handing
	 * each over (zstd -d of 400 MB at -T2: 85 context switches became
	 * 45, about 10% off the wall time). Each frame is then claimed
	 * (claim_frame) and pread into the worker's buffer; what the
	 * sequential decoder reads, it reads where it lies. */
	core_input_map_large(in);
	struct accel_stream_ops ops = { next_frame, NULL, NULL, NULL };
	struct accel_stream_config sc = cfg->stream;
	sc.worker_reads = 1;
	/* Parts need the hook to check their frame's content; a caller's own
	 * hook leaves lz4 frames to the sequential decoder. */
	if (format == ACCEL_FORMAT_LZ4 && !d->range && !sc.write)
		sc.write = write_parts;
	else
		d->no_parts = 1;
	struct accel_stream_stats own;
	if (!stats)
		stats = &own;
	rc = accel_stream_run(ctx, &sc, &route, &op, &ops, d, in, out, stats, err, len);
	lz4_parts_free(d->parts);
	d->parts = NULL;
	if (rc == 0 && stats->data_end)
		rc = gzip_rest(d, in, stats->data_end - 1, err, len);
	if (rc == 0 && d->garbage) {
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

/* What compression's ops get as `user`. */
struct chunking {
	uint64_t chunk;                 /* bytes per unit */
	struct accel_seek_table *seek;  /* --seekable: frames recorded here */
	int checksum;                   /* the frames end with XXH64's low 32 bits */
};

/* One unit per chunk of the input; an empty input is one empty chunk. */
static int next_chunk(void *user, struct accel_input *in, struct accel_unit *u, char *err, size_t len)
{
	const struct chunking *c = user;
	return accel_read_chunk_claim(in, u, (size_t)c->chunk);
}

/* The writer's hook with a seek table: each frame's sizes (and the content
 * checksum the frame ends with) go into the table as it is written. */
static int write_recorded(void *user, struct accel_output *out, const struct accel_unit *u, char *err,
			  size_t len)
{
	(void)err;
	(void)len;
	struct chunking *c = user;
	const uint8_t *e = u->out.data + u->out.len - 4;
	uint32_t check = c->checksum && u->out.len >= 4 ?
			 (uint32_t)e[0] | (uint32_t)e[1] << 8 | (uint32_t)e[2] << 16 | (uint32_t)e[3] << 24 : 0;
	int rc = accel_seek_table_add(c->seek, u->out.len, u->in.len, check);
	return rc < 0 ? rc : accel_output_write(out, u->out.data, u->out.len);
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
	if (cfg->seek && strcmp(format, "zstd")) {
		snprintf(err, len, "--seekable: only the zstd format has a seek table (not %s)", format);
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

/* The jobs of accel_compress_jobs, each given the chunking as `user`. */
struct chunk_jobs {
	const struct accel_stream_jobs *jobs;
	struct chunking *chunk;
};

static int chunk_start(void *arg, size_t k, struct accel_input **in, struct accel_output **out, void **user,
		       char *err, size_t len)
{
	struct chunk_jobs *cj = arg;
	int rc = cj->jobs->start(cj->jobs->arg, k, in, out, user, err, len);
	*user = cj->chunk;
	/* A regular file (of 128 KiB or more) is mapped, its chunks
	 * claimed (accel_read_chunk_claim). */
	if (rc == 0 && *in)
		core_input_map_large(*in);
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
	struct chunking c = { 0, cfg->seek, cfg->checksum };
	int rc = compress_op(cfg, opname, &op, &c.chunk, err, len);
	if (rc < 0)
		return rc;
	struct accel_route route;
	struct accel_route_req req = { &op, cfg->backend, cfg->stream.total_size, NULL };
	rc = accel_route_job(ctx, &req, cfg->verbose, cfg->report, &route, err, len);
	if (rc < 0)
		return rc;
	/* Every job reads chunks of the same size: `user` is the chunking
	 * whatever the jobs' start gives. */
	struct accel_stream_ops ops = { next_chunk, NULL, NULL, NULL };
	struct chunk_jobs cj = { jobs, &c };
	struct accel_stream_jobs wrap = { jobs->n, &cj, chunk_start, jobs->finish ? chunk_finish : NULL };
	struct accel_stream_config scfg = cfg->stream;
	if (cfg->seek) {
		cfg->seek->checksums = cfg->checksum;
		scfg.write = write_recorded;
	}
	/* The workers cut a mapped job's chunks themselves, as in
	 * accel_compress; a pipe's are read on the calling thread. */
	scfg.worker_reads = 1;
	return accel_stream_run_jobs(ctx, &scfg, &route, &op, &ops, &wrap, err, len);
}

int accel_compress(struct accel_ctx *ctx, const struct accel_compress_cfg *cfg, struct accel_input *in,
		   struct accel_output *out, struct accel_stream_stats *stats, char *err, size_t len)
{
	err[0] = 0;
	if (stats)
		memset(stats, 0, sizeof *stats);
	char opname[32];
	struct accel_op op;
	struct chunking c = { 0, cfg->seek, cfg->checksum };
	int rc = compress_op(cfg, opname, &op, &c.chunk, err, len);
	if (rc < 0)
		return rc;
	struct accel_route route;
	struct accel_route_req req = { &op, cfg->backend, in->size, NULL };
	rc = accel_route_job(ctx, &req, cfg->verbose, cfg->report, &route, err, len);
	if (rc < 0)
		return rc;
	struct accel_stream_ops ops = { next_chunk, NULL, NULL, NULL };
	struct accel_stream_config scfg = cfg->stream;
	if (cfg->seek) {
		cfg->seek->checksums = cfg->checksum;
		scfg.write = write_recorded;
	}
	/* A regular file (of 128 KiB or more) is mapped and each unit
	 * claims its chunk (accel_read_chunk_claim): the stream preads it
	 * into the worker's buffer. Borrowed from the mapping, the
	 * compressor's first touch of each page faulted: 256 MiB of a tar
	 * took 612 ms (zstd -3), 400 (lz4 -1) against 469 and 294 claimed
	 * (2-core VM, 10.7 us a fault). */
	core_input_map_large(in);
	/* The workers cut their chunks themselves (accel_stream_config). */
	scfg.worker_reads = 1;
	return accel_stream_run(ctx, &scfg, &route, &op, &ops, &c, in, out, stats, err, len);
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
