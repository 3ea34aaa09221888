/*
 * frame.c - finding frame boundaries in compressed streams without decoding
 * them, so decompression can run frames in parallel. Layouts: zstd, RFC 8878
 * section 3.1; lz4, "LZ4 Frame Format Description" 1.6.x, and its "Legacy
 * frame" (lz4 -l); gzip, RFC 1952 with our 'A','C' FEXTRA subfield
 * (backends/cpu/gzip.c) or BGZF's 'B','C' (SAM/BAM Format Specification,
 * 4.1).
 */
#include <string.h>
#include <accel/ops/compress.h>
#include "core.h"

#define ZSTD_MAGIC 0xFD2FB528u
#define LZ4_MAGIC 0x184D2204u
#define LZ4_LEGACY_MAGIC 0x184C2102u
#define SKIP_MAGIC_MASK 0xFFFFFFF0u
#define SKIP_MAGIC 0x184D2A50u

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

const char *accel_format_name(enum accel_format f)
{
	switch (f) {
	case ACCEL_FORMAT_ZSTD: return "zstd";
	case ACCEL_FORMAT_GZIP: return "gzip";
	case ACCEL_FORMAT_LZ4: return "lz4";
	case ACCEL_FORMAT_SKIPPABLE: return "skippable";
	case ACCEL_FORMAT_NONE: return "none";
	default: return "unknown";
	}
}

enum accel_format accel_format_detect(const uint8_t *p, size_t n)
{
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return ACCEL_FORMAT_GZIP;
	if (n < 4)
		return ACCEL_FORMAT_UNKNOWN;
	uint32_t m = le32(p);
	if (m == ZSTD_MAGIC)
		return ACCEL_FORMAT_ZSTD;
	if (m == LZ4_MAGIC || m == LZ4_LEGACY_MAGIC)
		return ACCEL_FORMAT_LZ4;
	if ((m & SKIP_MAGIC_MASK) == SKIP_MAGIC)
		return ACCEL_FORMAT_SKIPPABLE;
	return ACCEL_FORMAT_UNKNOWN;
}

/* A cursor over the input: `pos` bytes of the frame walked so far. In peek
 * mode they stay in the input buffer; in consume mode they are consumed as
 * soon as walked. */
struct cursor {
	struct accel_input *in;
	int consume;
	uint64_t pos, max, start;
	char *err;
	size_t len;
	struct accel_buf *dst;  /* accel_frame_read: the frame is read into dst */
	int copying;            /* 1 once the walked bytes live in dst */
};

/* accel_frame_read: the frame will be split off; move the bytes walked so
 * far from the input's buffer into dst and read the rest straight there.
 * dst gets room for `expect` bytes of frame at once: growing it block by
 * block moved a frame of MiBs through several fresh buffers (each copied,
 * each a page fault per page of fresh memory the kernel zeroes), which cost
 * more CPU than a third of decoding it. Room reserved and not written
 * takes no memory. */
static int start_copy(struct cursor *c, uint64_t expect)
{
	if (!c->dst || c->copying)
		return 0;
	const uint8_t *p;
	if (expect < c->pos + 65536)
		expect = c->pos + 65536;
	if (accel_buf_reserve(c->dst, (size_t)expect))
		return ACCEL_ENOMEM;
	ssize_t got = accel_input_peek(c->in, (size_t)c->pos, &p);
	if (got < (ssize_t)c->pos)
		return got < 0 ? (int)got : ACCEL_EDATA;
	memcpy(c->dst->data, p, (size_t)c->pos);
	c->dst->len = (size_t)c->pos;
	accel_input_consume(c->in, (size_t)c->pos);
	c->copying = 1;
	return 0;
}

static int copy_need(struct cursor *c, size_t n, const uint8_t **p)
{
	size_t want = (size_t)c->pos + n;
	if (c->pos + n > c->max)
		return ACCEL_ENOTSUP;
	if (c->dst->len < want) {
		if (accel_buf_reserve(c->dst, want))
			return ACCEL_ENOMEM;
		ssize_t got = accel_input_read(c->in, c->dst->data + c->dst->len, want - c->dst->len);
		if (got < 0)
			return (int)got;
		c->dst->len += (size_t)got;
		if (c->dst->len < want) {
			snprintf(c->err, c->len, "truncated frame: input ends at byte offset %llu",
				 (unsigned long long)c->in->offset);
			return ACCEL_EDATA;
		}
	}
	*p = c->dst->data + c->pos;
	return 0;
}

/* Make n bytes at the cursor visible; ACCEL_EDATA at end of input. */
static int need(struct cursor *c, size_t n, const uint8_t **p)
{
	if (c->copying)
		return copy_need(c, n, p);
	if (!c->consume && c->pos + n > c->max)
		return ACCEL_ENOTSUP;
	size_t want = c->consume ? n : (size_t)c->pos + n;
	ssize_t got = accel_input_peek(c->in, want, p);
	if (got < 0)
		return (int)got;
	if ((size_t)got < want) {
		snprintf(c->err, c->len, "truncated frame: input ends at byte offset %llu",
			 (unsigned long long)(c->in->offset + (uint64_t)got));
		return ACCEL_EDATA;
	}
	if (!c->consume)
		*p += c->pos;
	return 0;
}

/* Move past n bytes (which need not be visible). */
static int skip(struct cursor *c, uint64_t n)
{
	if (c->copying) {
		const uint8_t *p;
		int rc = copy_need(c, (size_t)n, &p);
		if (rc == 0)
			c->pos += n;
		return rc;
	}
	if (!c->consume) {
		const uint8_t *p;
		if (c->pos + n > c->max)
			return ACCEL_ENOTSUP;
		int rc = need(c, (size_t)n, &p);
		if (rc < 0)
			return rc;
		c->pos += n;
		return 0;
	}
	while (n) {
		const uint8_t *p;
		size_t step = n > (1u << 20) ? (1u << 20) : (size_t)n;
		ssize_t got = accel_input_peek(c->in, step, &p);
		if (got < 0)
			return (int)got;
		if (got == 0) {
			snprintf(c->err, c->len, "truncated frame: input ends at byte offset %llu",
				 (unsigned long long)c->in->offset);
			return ACCEL_EDATA;
		}
		accel_input_consume(c->in, (size_t)got);
		n -= (uint64_t)got;
		c->pos += (uint64_t)got;
	}
	return 0;
}

/* The size a zstd or lz4 frame of f->content_size bytes (known, at most
 * the parallel limit when it gets here) most likely has at most: its
 * content stored raw, a block header per 128 KiB (zstd; lz4's blocks
 * are larger), the header, checksum and end mark well inside 64 KiB. */
static uint64_t frame_bound(const struct cursor *c, const struct accel_frame *f)
{
	uint64_t n = f->content_size > 0 ? (uint64_t)f->content_size : 0;
	return c->pos + n + n / 32768 + 65536;
}

static int bad(struct cursor *c, const char *what)
{
	snprintf(c->err, c->len, "%s at byte offset %llu", what, (unsigned long long)(c->start + c->pos));
	return ACCEL_EDATA;
}

static int scan_zstd(struct cursor *c, struct accel_frame *f)
{
	const uint8_t *p;
	int rc = need(c, 5, &p);
	if (rc < 0)
		return rc;
	uint8_t fhd = p[4];
	int fcs_flag = fhd >> 6, single = fhd >> 5 & 1, did_flag = fhd & 3;
	if (fhd & 0x08)
		return bad(c, "zstd frame header: reserved bit set");
	f->checksum = fhd >> 2 & 1;
	static const int did_size[4] = { 0, 1, 2, 4 };
	static const int fcs_size[4] = { 0, 2, 4, 8 };
	int fcs_len = fcs_flag == 0 && single ? 1 : fcs_size[fcs_flag];
	size_t hlen = 5 + (size_t)!single + (size_t)did_size[did_flag] + (size_t)fcs_len;
	if ((rc = need(c, hlen, &p)) < 0)
		return rc;
	const uint8_t *fcs = p + hlen - fcs_len;
	switch (fcs_len) {
	case 0: f->content_size = -1; break;
	case 1: f->content_size = fcs[0]; break;
	case 2: f->content_size = (fcs[0] | fcs[1] << 8) + 256; break;
	case 4: f->content_size = le32(fcs); break;
	default: f->content_size = (int64_t)le64(fcs); break;
	}
	/* Not worth walking when the content cannot fit the limit: in peek
	 * mode such a frame is decoded sequentially. */
	if (!c->consume && (f->content_size < 0 || (uint64_t)f->content_size > c->max))
		return ACCEL_ENOTSUP;
	if ((rc = skip(c, hlen)) < 0 || (rc = start_copy(c, frame_bound(c, f))) < 0)
		return rc;
	for (;;) {
		if ((rc = need(c, 3, &p)) < 0)
			return rc;
		uint32_t bh = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
		int last = bh & 1, type = bh >> 1 & 3;
		uint32_t size = bh >> 3;
		if (type == 3)
			return bad(c, "zstd block header: reserved block type");
		if (size > (128u << 10))
			return bad(c, "zstd block header: block larger than 128 KiB");
		if ((rc = skip(c, 3 + (type == 1 ? 1 : size))) < 0)
			return rc;
		f->blocks++;
		if (last)
			break;
	}
	if (f->checksum && (rc = skip(c, 4)) < 0)
		return rc;
	return 0;
}

/* The legacy frame: the magic, then blocks of a 4-byte little-endian
 * compressed size and that many bytes, until the input ends or a size over
 * ACCEL_LZ4_LEGACY_BOUND, which is the next frame's magic (as lz4 -d reads
 * it). No content size, no checksum: decoded sequentially. */
static int scan_lz4_legacy(struct cursor *c, struct accel_frame *f)
{
	if (!c->consume)
		return ACCEL_ENOTSUP;
	int rc = skip(c, 4);
	while (rc == 0) {
		const uint8_t *p;
		ssize_t n = accel_input_peek(c->in, 4, &p);
		if (n < 0)
			return (int)n;
		if (n == 0 || (n == 4 && le32(p) > ACCEL_LZ4_LEGACY_BOUND))
			return 0;
		if (n < 4)
			return bad(c, "lz4 legacy frame: truncated block size");
		rc = skip(c, 4 + (uint64_t)le32(p));
		f->blocks++;
	}
	return rc;
}

static int scan_lz4(struct cursor *c, struct accel_frame *f)
{
	const uint8_t *p;
	int rc = need(c, 4, &p);
	if (rc < 0)
		return rc;
	if (le32(p) == LZ4_LEGACY_MAGIC)
		return scan_lz4_legacy(c, f);
	if ((rc = need(c, 7, &p)) < 0)
		return rc;
	uint8_t flg = p[4], bd = p[5];
	if ((flg >> 6) != 1)
		return bad(c, "lz4 frame header: unsupported version");
	if ((flg & 0x02) || (bd & 0x8f))
		return bad(c, "lz4 frame header: reserved bits set");
	int bsize_id = bd >> 4 & 7;
	if (bsize_id < 4)
		return bad(c, "lz4 frame header: invalid block size");
	uint32_t block_max = 1u << (8 + 2 * bsize_id);
	int block_ck = flg >> 4 & 1, has_size = flg >> 3 & 1, has_dict = flg & 1;
	f->checksum = flg >> 2 & 1;
	size_t hlen = 4 + 2 + (has_size ? 8 : 0) + (has_dict ? 4 : 0) + 1;
	if ((rc = need(c, hlen, &p)) < 0)
		return rc;
	/* A content size of 0 is unknown, as lz4 reads it (lz4frame.h:
	 * "0 == unknown"), whatever the flag says. */
	f->content_size = has_size && le64(p + 6) ? (int64_t)le64(p + 6) : -1;
	if (!c->consume && (f->content_size < 0 || (uint64_t)f->content_size > c->max))
		return ACCEL_ENOTSUP;
	if ((rc = skip(c, hlen)) < 0 || (rc = start_copy(c, frame_bound(c, f))) < 0)
		return rc;
	for (;;) {
		if ((rc = need(c, 4, &p)) < 0)
			return rc;
		uint32_t bs = le32(p);
		if (bs == 0) {
			if ((rc = skip(c, 4)) < 0)
				return rc;
			break;
		}
		uint32_t size = bs & 0x7fffffffu;
		if (size > block_max)
			return bad(c, "lz4 block larger than the frame's maximum block size");
		if ((rc = skip(c, 4 + (uint64_t)size + (block_ck ? 4 : 0))) < 0)
			return rc;
		f->blocks++;
	}
	if (f->checksum && (rc = skip(c, 4)) < 0)
		return rc;
	return 0;
}

/* Whether the 'AC' size just walked ends where a member can end: the
 * trailer's ISIZE is the content size of the field, and the next bytes
 * start a gzip member or the input ends. */
static int member_end_plausible(struct cursor *c, const struct accel_frame *f)
{
	const uint8_t *p;
	if (need(c, 0, &p) < 0 || le32(p - 4) != (uint32_t)f->content_size)
		return 0;
	size_t at = c->copying ? 0 : (size_t)c->pos;  /* peek mode: the member is still there */
	ssize_t n = accel_input_peek(c->in, at + 2, &p);
	if (n < (ssize_t)at)
		return 0;
	return (size_t)n == at || ((size_t)n == at + 2 && p[at] == 0x1f && p[at + 1] == 0x8b);
}

/* The data of the subfield SI1 si1, SI2 si2 of `len` bytes in a member's
 * extra field x[0..xlen) (RFC 1952, 2.3.1.1), or NULL. */
static const uint8_t *subfield(const uint8_t *x, size_t xlen, uint8_t si1, uint8_t si2, size_t len)
{
	const uint8_t *end = x + xlen;
	while (end - x >= 4) {
		size_t sl = (size_t)(x[2] | x[3] << 8);
		if ((size_t)(end - x - 4) < sl)
			return NULL;
		if (x[0] == si1 && x[1] == si2 && sl == len)
			return x + 4;
		x += 4 + sl;
	}
	return NULL;
}

/* A BGZF block's 'BC' subfield (SAM/BAM Format Specification, 4.1: SI1
 * 66, SI2 67, SLEN 2, BSIZE the member's size in bytes less 1): 1 with
 * the size in *member, else 0. */
static int bgzf_find(const uint8_t *x, size_t xlen, uint32_t *member)
{
	const uint8_t *d = subfield(x, xlen, 'B', 'C', 2);
	if (d)
		*member = (uint32_t)(d[0] | d[1] << 8) + 1;
	return d != NULL;
}

static int scan_gzip(struct cursor *c, struct accel_frame *f)
{
	const uint8_t *p;
	int rc = need(c, 10, &p);
	if (rc < 0)
		return rc;
	if (p[2] != 8)
		return bad(c, "gzip header: compression method is not deflate");
	if (p[3] & 0xe0)
		return bad(c, "gzip header: reserved flag bits set");
	f->checksum = 1;
	if (!(p[3] & 4))
		return ACCEL_ENOTSUP;  /* no FEXTRA: only inflating finds the end */
	if ((rc = need(c, 12, &p)) < 0)
		return rc;
	size_t xlen = (size_t)(p[10] | p[11] << 8);
	if ((rc = need(c, 12 + xlen, &p)) < 0)
		return rc;
	uint32_t member, isize = 0;
	/* BGZF (bgzip, samtools, htslib): the member's size alone, its
	 * content size in its trailer. */
	int bgzf = !accel_gzip_ac_find(p + 12, xlen, &member, &isize);
	if (bgzf && !bgzf_find(p + 12, xlen, &member))
		return ACCEL_ENOTSUP;
	f->content_size = isize;
	/* Another tool's 'AC' field, or a lie: inflating finds the end. */
	if (member < 12 + xlen + 8)
		return ACCEL_ENOTSUP;
	/* The field is a hint: a member (or its content) over the limit, or
	 * one whose end does not look like the end of a member, is left to
	 * the sequential decoder. */
	if (!c->consume && (member > c->max || (uint64_t)f->content_size > c->max))
		return ACCEL_ENOTSUP;
	if ((rc = start_copy(c, member)) < 0)
		return rc;
	/* A member said to run past the end of the input is one more lie, not
	 * a truncation, until inflating says so. */
	if ((rc = skip(c, member - (bgzf ? 4 : 0))) < 0)
		return rc == ACCEL_EDATA && !c->consume ? ACCEL_ENOTSUP : rc;
	if (bgzf) {
		/* ISIZE, read before it is walked (and, consuming, gone). */
		if ((rc = need(c, 4, &p)) < 0 || (f->content_size = le32(p), rc = skip(c, 4)) < 0)
			return rc == ACCEL_EDATA && !c->consume ? ACCEL_ENOTSUP : rc;
		if (!c->consume && (uint64_t)f->content_size > c->max)
			return ACCEL_ENOTSUP;
	}
	if (!c->consume && !member_end_plausible(c, f))
		return ACCEL_ENOTSUP;
	return 0;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

void accel_gzip_ac_header(uint8_t *h, unsigned xfl, uint32_t isize)
{
	static const uint8_t fixed[16] = {
		0x1f, 0x8b, 8 /* deflate */, 4 /* FEXTRA */, 0, 0, 0, 0 /* MTIME */,
		0 /* XFL */, 3 /* Unix */, 12, 0 /* XLEN */, 'A', 'C', 8, 0 /* LEN */,
	};
	memcpy(h, fixed, sizeof fixed);
	h[8] = (uint8_t)xfl;
	put_le32(h + 16, 0);
	put_le32(h + 20, isize);
}

void accel_gzip_ac_set_size(uint8_t *h, uint32_t member_size)
{
	put_le32(h + 16, member_size);
}

int accel_gzip_ac_find(const uint8_t *x, size_t xlen, uint32_t *member, uint32_t *isize)
{
	const uint8_t *d = subfield(x, xlen, 'A', 'C', 8);
	if (d) {
		*member = le32(d);
		*isize = le32(d + 4);
	}
	return d != NULL;
}

static int scan(struct accel_input *in, uint64_t max, int consume, struct accel_buf *dst,
		struct accel_frame *f, char *err, size_t len, int *copying)
{
	memset(f, 0, sizeof *f);
	f->content_size = f->frame_size = -1;
	*copying = 0;
	const uint8_t *p;
	ssize_t n = accel_input_peek(in, 4, &p);
	if (n < 0)
		return (int)n;
	if (n == 0) {
		f->format = ACCEL_FORMAT_NONE;
		return 0;
	}
	struct cursor c = { in, consume, 0, max, in->offset, err, len, dst, 0 };
	f->format = accel_format_detect(p, (size_t)n);
	int rc;
	switch (f->format) {
	case ACCEL_FORMAT_ZSTD: rc = scan_zstd(&c, f); break;
	case ACCEL_FORMAT_LZ4: rc = scan_lz4(&c, f); break;
	case ACCEL_FORMAT_GZIP: rc = scan_gzip(&c, f); break;
	case ACCEL_FORMAT_SKIPPABLE:
		if ((rc = need(&c, 8, &p)) < 0)
			break;
		f->content_size = 0;
		/* accel_frame_read walks past a skippable frame (consumes
		 * it, dst left empty), whatever its size; a peek stops at max. */
		if (c.dst) {
			c.consume = 1;
			c.max = ~0ULL;
			c.dst = NULL;
		}
		rc = skip(&c, 8 + (uint64_t)le32(p + 4));
		break;
	default:
		snprintf(err, len, "not in a known format (zstd, gzip or lz4) at byte offset %llu",
			 (unsigned long long)in->offset);
		return ACCEL_EDATA;
	}
	if (rc == 0)
		f->frame_size = (int64_t)c.pos;
	*copying = c.copying;
	return rc;
}

int accel_frame_scan(struct accel_input *in, uint64_t max, int consume, struct accel_frame *f,
		     char *err, size_t len)
{
	int copying;
	return scan(in, max, consume, NULL, f, err, len, &copying);
}

/* Give the bytes of a frame already moved into dst back to the input, in
 * front of what it still holds, so that nothing is consumed. The buffers
 * trade places: no copy of the frame's bytes. */
static int unread(struct accel_input *in, struct accel_buf *dst)
{
	if (in->map_len) {
		/* The bytes are still in the mapping, just before start. */
		in->start -= dst->len;
		in->offset -= dst->len;
		dst->len = 0;
		return 0;
	}
	size_t have = in->end - in->start;
	if (accel_buf_reserve(dst, dst->len + have))
		return ACCEL_ENOMEM;
	memcpy(dst->data + dst->len, in->buf + in->start, have);
	uint8_t *buf = in->buf;
	size_t cap = in->cap;
	in->buf = dst->data;
	in->cap = dst->cap;
	in->start = 0;
	in->end = dst->len + have;
	in->offset -= dst->len;
	dst->data = buf;
	dst->cap = cap;
	dst->len = 0;
	return 0;
}

int accel_frame_read(struct accel_input *in, uint64_t max, struct accel_buf *dst, struct accel_frame *f,
		     char *err, size_t len)
{
	dst->len = 0;
	int copying = 0;
	/* A mapped input holds the whole frame already: walked where it is,
	 * dst borrows it (cap 0). */
	const uint8_t *p;
	ssize_t n = in->map_len ? accel_input_peek(in, 4, &p) : 0;
	enum accel_format fmt = n > 0 ? accel_format_detect(p, (size_t)n) : ACCEL_FORMAT_UNKNOWN;
	if (fmt == ACCEL_FORMAT_ZSTD || fmt == ACCEL_FORMAT_LZ4 || fmt == ACCEL_FORMAT_GZIP) {
		int rc = scan(in, max, 0, NULL, f, err, len, &copying);
		if (rc < 0)
			return rc;
		if (dst->cap)
			accel_buf_free(dst);
		dst->data = in->buf + in->start;
		dst->len = (size_t)f->frame_size;
		accel_input_consume(in, dst->len);
		return 0;
	}
	int rc = scan(in, max, 0, dst, f, err, len, &copying);
	if (rc == ACCEL_ENOTSUP && copying && (rc = unread(in, dst)) == 0)
		rc = ACCEL_ENOTSUP;
	return rc;
}

int accel_zstd_frame_header(const uint8_t *p, size_t n, int64_t *content, int *checksum)
{
	if (n < 5)
		return 0;
	if (le32(p) != ZSTD_MAGIC || (p[4] & 0x08))
		return ACCEL_EDATA;
	uint8_t fhd = p[4];
	int fcs_flag = fhd >> 6, single = fhd >> 5 & 1;
	static const int did_size[4] = { 0, 1, 2, 4 };
	static const int fcs_size[4] = { 0, 2, 4, 8 };
	int fcs_len = fcs_flag == 0 && single ? 1 : fcs_size[fcs_flag];
	size_t hlen = 5 + (size_t)!single + (size_t)did_size[fhd & 3] + (size_t)fcs_len;
	if (n < hlen)
		return 0;
	const uint8_t *fcs = p + hlen - fcs_len;
	switch (fcs_len) {
	case 0: *content = -1; break;
	case 1: *content = fcs[0]; break;
	case 2: *content = (fcs[0] | fcs[1] << 8) + 256; break;
	case 4: *content = le32(fcs); break;
	default: *content = (int64_t)le64(fcs); break;
	}
	*checksum = fhd >> 2 & 1;
	return (int)hlen;
}
