/*
 * gzip.c - gzip members (RFC 1952). Compression: levels 1-3 with ISA-L's
 * igzip (fast), levels 4-12 with libdeflate (zlib's ratio or better; 10-12
 * are its slower, smaller levels). Each unit becomes one member with our
 * 'A','C' FEXTRA subfield (accel/ops/compress.h, accel_gzip_ac_header), so
 * a reader finds member boundaries without inflating. Decompression: igzip.
 */
#include <stdlib.h>
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <accel/ops/compress.h>
#include "codec_dl.h"
#include "core.h"
#include "cpu.h"
#include "ops/gzip_index.h"

/* ISA-L's and libdeflate's functions (codec_dl.h), loaded by gc_load or
 * gd_load before an open. */
static const struct core_isal *const isal = &core_isal_fns;
static const struct core_deflate *const dfl = &core_deflate_fns;

/* Levels up to this one are ISA-L's; those above, libdeflate's. */
#define GZIP_ISAL_MAX 3

/* accel gzip level 1..3 to ISA-L's 1..3 (ISA-L's 0, a static Huffman
 * code, compresses about 10% worse than gzip -1 and is not used). */
static int isal_level(int level)
{
	return level < 1 ? 1 : level;
}

static const uint32_t level_buf_size[4] = {
	ISAL_DEF_LVL0_DEFAULT, ISAL_DEF_LVL1_DEFAULT, ISAL_DEF_LVL2_DEFAULT, ISAL_DEF_LVL3_DEFAULT,
};

struct gc {
	int level;                        /* accel's, 1..12 */
	uint8_t *level_buf;               /* ISA-L's levels */
	struct isal_zstream z;
	struct libdeflate_compressor *ld; /* libdeflate's levels */
};

static int gc_open(const struct accel_op *op, void **ctx)
{
	if (op->level < 1 || op->level > ACCEL_GZIP_LEVEL_MAX)
		return ACCEL_EINVAL;
	struct gc *g = calloc(1, sizeof *g);
	if (!g)
		return ACCEL_ENOMEM;
	g->level = op->level;
	if (g->level <= GZIP_ISAL_MAX)
		g->level_buf = malloc(level_buf_size[isal_level(g->level)]);
	else
		g->ld = dfl->libdeflate_alloc_compressor(g->level);
	if (!g->level_buf && !g->ld) {
		free(g);
		return ACCEL_ENOMEM;
	}
	*ctx = g;
	return 0;
}

/* u->in as raw deflate data at out[cap] with ISA-L; its size, or -1 with
 * err set. */
static int64_t isal_compress(struct gc *g, const struct accel_unit *u, uint8_t *out, size_t cap, char *err, size_t len)
{
	struct isal_zstream *z = &g->z;
	int l = isal_level(g->level);
	isal->isal_deflate_stateless_init(z);
	z->level = (uint32_t)l;
	z->level_buf = g->level_buf;
	z->level_buf_size = level_buf_size[l];
	z->gzip_flag = IGZIP_GZIP_NO_HDR;  /* deflate data + CRC32/ISIZE trailer */
	z->end_of_stream = 1;
	z->flush = NO_FLUSH;
	z->next_in = u->in.data;
	z->avail_in = (uint32_t)u->in.len;
	z->next_out = out;
	z->avail_out = (uint32_t)cap;
	int rc = isal->isal_deflate_stateless(z);
	if (rc != COMP_OK) {
		snprintf(err, len, "igzip: deflate failed (error %d)", rc);
		return -1;
	}
	return z->total_out;
}

/* The same with libdeflate, the CRC32/ISIZE trailer (RFC 1952 2.3.1) after
 * the deflate data. */
static int64_t ld_compress(struct gc *g, const struct accel_unit *u, uint8_t *out, size_t cap, char *err, size_t len)
{
	size_t n = dfl->libdeflate_deflate_compress(g->ld, u->in.data, u->in.len, out, cap - 8);
	if (!n) {
		snprintf(err, len, "libdeflate: %zu bytes do not fit the %zu bytes of their bound", u->in.len, cap);
		return -1;
	}
	uint32_t crc = dfl->libdeflate_crc32(0, u->in.data, u->in.len), isize = (uint32_t)u->in.len;
	for (int i = 0; i < 4; i++) {
		out[n + i] = (uint8_t)(crc >> 8 * i);
		out[n + 4 + i] = (uint8_t)(isize >> 8 * i);
	}
	return (int64_t)n + 8;
}

static int gc_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	struct gc *g = ctx;
	if (u->in.len > 0xffffffffu - 65536) {
		snprintf(err, len, "gzip: unit of %zu bytes is too large for a member", u->in.len);
		return ACCEL_EINVAL;
	}
	size_t cap = g->ld ? dfl->libdeflate_deflate_compress_bound(g->ld, u->in.len) + 8 :
		     u->in.len + u->in.len / 8 + 1024;
	if (accel_buf_reserve(&u->out, ACCEL_GZIP_AC_HEADER + cap))
		return ACCEL_ENOMEM;
	uint8_t *h = u->out.data;
	/* XFL (RFC 1952 2.3.1): 4 fastest, 2 maximum compression */
	accel_gzip_ac_header(h, g->level == 1 ? 4 : g->level >= 9 ? 2 : 0, (uint32_t)u->in.len);
	int64_t n = g->ld ? ld_compress(g, u, h + ACCEL_GZIP_AC_HEADER, cap, err, len) :
		    isal_compress(g, u, h + ACCEL_GZIP_AC_HEADER, cap, err, len);
	if (n < 0)
		return ACCEL_EDEVICE;
	u->out.len = ACCEL_GZIP_AC_HEADER + (size_t)n;
	accel_gzip_ac_set_size(h, (uint32_t)u->out.len);
	return 0;
}

static void gc_close(void *ctx)
{
	struct gc *g = ctx;
	if (g) {
		free(g->level_buf);
		if (g->ld)  /* libdeflate is loaded only for its levels */
			dfl->libdeflate_free_compressor(g->ld);
	}
	free(g);
}

static const char *inflate_error(int rc)
{
	switch (rc) {
	case ISAL_INVALID_BLOCK: return "invalid deflate block";
	case ISAL_INVALID_SYMBOL: return "invalid deflate symbol";
	case ISAL_INVALID_LOOKBACK: return "invalid distance (lookback)";
	case ISAL_INVALID_WRAPPER: return "invalid gzip header";
	case ISAL_UNSUPPORTED_METHOD: return "unsupported compression method";
	case ISAL_INCORRECT_CHECKSUM: return "CRC32 or ISIZE of the trailer does not match";
	case ISAL_NEED_DICT: return "needs a dictionary";
	case ISAL_OUT_OVERFLOW: return "more data than the header says";
	}
	return "inflate failed";
}

struct gd {
	struct accel_gzip_dec_ext par; /* threads for one member (op->ext) */
	struct inflate_state st;
	uint8_t *buf;
	size_t cap;
	uint8_t *head;                 /* gd_head's output, PROBE_OUT bytes */
};

/* The output a member's first ACCEL_GZIP_PARALLEL_MIN bytes may decode to
 * in gd_head before it counts as a member for the parallel decoder. */
#define PROBE_OUT ((size_t)4 << 20)

static int gd_open(const struct accel_op *op, void **ctx)
{
	struct gd *g = calloc(1, sizeof *g);
	if (!g)
		return ACCEL_ENOMEM;
	if (op->ext)
		g->par = *(const struct accel_gzip_dec_ext *)op->ext;
	*ctx = g;
	return 0;
}

/* The members from byte pos of a unit on, inside its header's member size
 * ('AC', or BGZF's 'BC'):
 * those after the first where the size spans more than one member, or
 * all of them where the field's content size was short of the first's.
 * Each is inflated whole, appended to u->out,
 * up to ACCEL_DECOMPRESS_PARALLEL_MAX bytes of output in all. Bytes there
 * that are not a member end the data, as gzip -d ends it at any such
 * bytes after a member: what was inflated is kept (u->out_good), and the
 * operation judges the rest of the input (padding, garbage, a lone byte)
 * from u->in_end. */
static int more_members(struct gd *g, struct accel_unit *u, size_t pos, char *err, size_t len)
{
	while (pos < u->in.len) {
		if (u->in.len - pos < 2 || u->in.data[pos] != 0x1f || u->in.data[pos + 1] != 0x8b) {
			snprintf(err, len, "gzip member: %zu bytes that are not a member before the member size in its header",
				 u->in.len - pos);
			u->out_good = u->out.len;
			u->in_end = pos;
			return ACCEL_EDATA;
		}
		isal->isal_inflate_init(&g->st);
		g->st.crc_flag = ISAL_GZIP;
		g->st.next_in = u->in.data + pos;
		g->st.avail_in = (uint32_t)(u->in.len - pos);
		for (;;) {
			if (u->out.cap - u->out.len < 65536) {
				if (u->out.len >= ACCEL_DECOMPRESS_PARALLEL_MAX) {
					snprintf(err, len, "gzip members inside one header's member size decode to over %llu MiB",
						 (unsigned long long)(ACCEL_DECOMPRESS_PARALLEL_MAX >> 20));
					return ACCEL_EDATA;
				}
				size_t cap = u->out.cap * 2 > u->out.len + 65536 ? u->out.cap * 2 : u->out.len + 65536;
				if (accel_buf_reserve(&u->out, cap))
					return ACCEL_ENOMEM;
			}
			size_t room = u->out.cap - u->out.len;
			if (room > UINT32_MAX)
				room = UINT32_MAX;
			g->st.next_out = u->out.data + u->out.len;
			g->st.avail_out = (uint32_t)room;
			int rc = isal->isal_inflate(&g->st);
			u->out.len += room - g->st.avail_out;
			if (rc != ISAL_DECOMP_OK) {
				snprintf(err, len, "gzip member: %s", inflate_error(rc));
				return ACCEL_EDATA;
			}
			if (g->st.block_state == ISAL_BLOCK_FINISH)
				break;
			if (!g->st.avail_in && g->st.avail_out) {
				snprintf(err, len, "gzip member: crosses the member size in its header");
				return ACCEL_EDATA;
			}
		}
		pos = u->in.len - g->st.avail_in;
	}
	return 0;
}

/* A member whose size the walker knew: ours (its size and ISIZE in the
 * header's 'AC' field) or a BGZF block (its size in 'BC', ISIZE read from
 * its trailer). */
static int gd_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	struct gd *g = ctx;
	if (accel_buf_reserve_fill(&u->out, u->out_hint ? u->out_hint : 1))
		return ACCEL_ENOMEM;
	isal->isal_inflate_init(&g->st);
	g->st.crc_flag = ISAL_GZIP;
	g->st.next_in = u->in.data;
	g->st.avail_in = (uint32_t)u->in.len;
	g->st.next_out = u->out.data;
	g->st.avail_out = (uint32_t)u->out_hint;
	int rc = isal->isal_inflate_stateless(&g->st);
	if (rc == ISAL_OUT_OVERFLOW) {
		/* The field's content size is short of the member's: a hint
		 * that lied, as gzip -d never reads it. Inflated again into
		 * a buffer that grows. */
		u->out.len = 0;
		return more_members(g, u, 0, err, len);
	}
	if (rc != ISAL_DECOMP_OK) {
		snprintf(err, len, "gzip member: %s", rc == ISAL_END_INPUT ?
			 "truncated before the member size in its header" : inflate_error(rc));
		return ACCEL_EDATA;
	}
	/* The member size came from the header: when the member ends before
	 * it, the bytes up to it must be whole members too (gzip -d reads
	 * them all). */
	if (g->st.avail_in) {
		u->out.len = g->st.total_out;
		return more_members(g, u, u->in.len - g->st.avail_in, err, len);
	}
	if (g->st.total_out != u->out_hint) {
		snprintf(err, len, "gzip member: %u bytes decoded, header says %zu", g->st.total_out, u->out_hint);
		return ACCEL_EDATA;
	}
	u->out.len = g->st.total_out;
	return 0;
}

/* Before the parallel decoder: the member's head inflated here from the
 * input's buffer, its output held. A member that ends within its first
 * ACCEL_GZIP_PARALLEL_MIN bytes and PROBE_OUT bytes of output (a BGZF
 * block, one of many small files concatenated) is done: written and
 * consumed, 1. The parallel decoder cuts the input after a member into
 * chunks and searches them for block starts; for a member that small, at
 * each member, that cost 64 times igzip's time on a BGZF file of 64 KiB
 * members. 0: the member goes on, or its head is bad (the decoders after
 * say how), nothing written or consumed. */
static int gd_head(struct gd *g, struct accel_input *in, struct accel_output *out)
{
	const uint8_t *p;
	ssize_t n = accel_input_peek(in, ACCEL_GZIP_PARALLEL_MIN, &p);
	if (n < (ssize_t)ACCEL_GZIP_PARALLEL_MIN)
		return n < 0 ? (int)n : 0;  /* the parallel decoder leaves it too */
	if (!g->head && !(g->head = malloc(PROBE_OUT)))
		return ACCEL_ENOMEM;
	isal->isal_inflate_init(&g->st);
	g->st.crc_flag = ISAL_GZIP;
	g->st.next_in = (uint8_t *)p;
	g->st.avail_in = (uint32_t)n;
	g->st.next_out = g->head;
	g->st.avail_out = (uint32_t)PROBE_OUT;
	if (isal->isal_inflate(&g->st) != ISAL_DECOMP_OK || g->st.block_state != ISAL_BLOCK_FINISH)
		return 0;
	int rc = accel_output_write(out, g->head, PROBE_OUT - g->st.avail_out);
	if (rc < 0)
		return rc;
	accel_input_consume(in, (size_t)n - g->st.avail_in);
	return 1;
}

/* Threads from which a member goes to the parallel decoder. Its
 * speculative decoding spends about twice ISA-L's CPU (four times where
 * the window never clears of markers, as in text), which two threads do
 * not win back: on the 2-core VM every member tried decoded faster on one
 * ISA-L inflate than on two threads, 64 MiB of a tar by gzip -6 of ratio
 * 1.23 in 174 ms against 229, 1.5: 114 / 154, 2.7 (libraries): 131 / 176,
 * 6.1 (headers, Python, Perl): 65 / 222; 256 MiB by gzip -1, 1.85:
 * 555 / 574 (igzip: 61 to 473 ms on the same files). */
#define PARALLEL_THREADS 3

/* One gzip member (gzip, pigz, ours): inflated with bounded memory; a
 * large one on several threads (libcore/ops/gzip_index.c) when op->ext
 * gives PARALLEL_THREADS or more. */
static int gd_member(struct gd *g, struct accel_input *in, struct accel_output *out, char *err, size_t len)
{
	int par = g->par.threads >= PARALLEL_THREADS;
	int head = par ? gd_head(g, in, out) : 0;
	if (head)
		return head < 0 ? head : 0;
	if (par) {
		int rc = accel_gzip_inflate_parallel(in, out, g->par.threads, g->par.memory, err, len);
		if (rc != ACCEL_ENOTSUP)
			return rc;
	}
	if (!g->buf) {
		g->cap = 1u << 18;
		if (!(g->buf = malloc(g->cap)))
			return ACCEL_ENOMEM;
	}
	uint64_t start = in->offset;
	isal->isal_inflate_init(&g->st);
	g->st.crc_flag = ISAL_GZIP;
	for (;;) {
		const uint8_t *p;
		ssize_t n = accel_input_peek(in, 1u << 18, &p);
		if (n < 0)
			return (int)n;
		if (n == 0) {
			snprintf(err, len, "gzip member at byte offset %llu is truncated at byte offset %llu",
				 (unsigned long long)start, (unsigned long long)in->offset);
			return ACCEL_EDATA;
		}
		g->st.next_in = (uint8_t *)p;
		g->st.avail_in = (uint32_t)n;
		for (;;) {
			g->st.next_out = g->buf;
			g->st.avail_out = (uint32_t)g->cap;
			int rc = isal->isal_inflate(&g->st);
			uint32_t stored, computed;
			if (rc == ISAL_INCORRECT_CHECKSUM && in->offset == start &&
			    accel_gzip_header_crc(p, (size_t)n, &stored, &computed) && stored != computed) {
				/* ISA-L says the same for the header's CRC16 and
				 * the trailer's CRC32: gzip names the header. */
				snprintf(err, len, "gzip member at byte offset %llu: header checksum 0x%04x != computed checksum 0x%04x",
					 (unsigned long long)start, stored, computed);
				return ACCEL_EDATA;
			}
			if (rc != ISAL_DECOMP_OK) {
				snprintf(err, len, "gzip member at byte offset %llu: %s", (unsigned long long)start,
					 inflate_error(rc));
				return ACCEL_EDATA;
			}
			size_t got = g->cap - g->st.avail_out;
			int w = accel_output_write(out, g->buf, got);
			if (w < 0)
				return w;
			if (g->st.block_state == ISAL_BLOCK_FINISH || (!g->st.avail_in && g->st.avail_out))
				break;
		}
		accel_input_consume(in, (size_t)n - g->st.avail_in);
		if (g->st.block_state == ISAL_BLOCK_FINISH)
			return 0;
	}
}

/* Members, one after another: after one, the next as long as it is a
 * member whose header has no extra field (no size the walker could cut
 * a unit by: gzip's, and the members of small files concatenated), here
 * rather than through the stream again, whose switch from units to a
 * sequential region and back cost about 130 us a member. What follows a
 * member otherwise (a member with a size, padding, garbage, the end) is
 * the walker's. */
static int gd_members(void *ctx, struct accel_input *in, struct accel_output *out, char *err, size_t len)
{
	struct gd *g = ctx;
	for (;;) {
		int rc = gd_member(g, in, out, err, len);
		if (rc < 0)
			return rc;
		const uint8_t *p;
		ssize_t n = accel_input_peek(in, 4, &p);
		if (n < 0)
			return (int)n;
		if (n < 4 || p[0] != 0x1f || p[1] != 0x8b || p[2] != 8 || (p[3] & 0xe4))
			return 0;
	}
}

/* Members inflated on one thread read a mapped input through a read()
 * view (core_input_view), one view for all the members in a row; the
 * parallel decoder's batches of megabytes stay on the mapping (through a
 * buffer: 255 -> 385 ms at -T4). */
static int gd_stream(void *ctx, struct accel_input *in, struct accel_output *out, char *err, size_t len)
{
	struct gd *g = ctx;
	if (g->par.threads >= PARALLEL_THREADS)
		return gd_members(g, in, out, err, len);
	return core_input_viewed(in, gd_members, g, out, err, len);
}

static void gd_close(void *ctx)
{
	struct gd *g = ctx;
	if (g) {
		free(g->buf);
		free(g->head);
	}
	free(g);
}

/* The library of op's level, and its single-core MB/s (a guess, from
 * compressing text and binaries on one core: the profile measures). */
static void gc_describe(const struct accel_op *op, const char **library, double *prior_mbps)
{
	int l = op->level ? op->level : accel_compress_default_level("gzip");
	*library = l <= GZIP_ISAL_MAX ? "ISA-L igzip" : "libdeflate";
	*prior_mbps = l <= GZIP_ISAL_MAX ? 200 : l <= 6 ? 40 : l <= 9 ? 10 : 3;
}

/* Compression: ISA-L's levels or libdeflate's, as op's level asks. */
static int gc_load(const struct accel_op *op, char *why, size_t len)
{
	int ok = op->level <= GZIP_ISAL_MAX ? core_isal(why, len) != NULL : core_deflate(why, len) != NULL;
	return ok ? 0 : ACCEL_ENOTSUP;
}

/* Decompression: ISA-L, and zlib for the parallel decoder's serial
 * stretches (ops/gzip_index.c). */
static int gd_load(const struct accel_op *op, char *why, size_t len)
{
	(void)op;
	return core_isal(why, len) && core_zlib(why, len) ? 0 : ACCEL_ENOTSUP;
}

const struct cpu_codec cpu_gzip_compress = {
	"gzip.compress", 200, "ISA-L igzip", gc_open, gc_run, NULL, gc_close, gc_describe, gc_load,
};
const struct cpu_codec cpu_gzip_decompress = {
	"gzip.decompress", 600, "ISA-L igzip", gd_open, gd_run, gd_stream, gd_close, NULL, gd_load,
};
