/*
 * lz4_parts.c - an lz4 frame of independent blocks (the lz4 program's
 * default) cut at block boundaries into parts that decode in parallel
 * (ACCEL_LZ4_PART, accel/ops/compress.h). Layout: "LZ4 Frame Format
 * Description" 1.6.x: the header (magic, FLG, BD, an optional 8-byte
 * content size, an optional dictionary ID, HC: the second byte of XXH32 of
 * the descriptor), blocks of a 4-byte size (high bit: stored), data and
 * an optional block checksum, an end mark of 4 zero bytes, an optional
 * content checksum (XXH32 of the content, seed 0). The content checksum
 * runs through the content in order, so it is taken as the parts are
 * written (lz4_parts_write); each part's blocks are checked by the engine
 * that decodes them. The legacy frame of lz4 -l (its "Legacy frame"
 * section: the magic, then blocks of a 4-byte compressed size and data
 * until the input ends or a size over ACCEL_LZ4_LEGACY_BOUND, the next
 * frame's magic) is cut the same way, a block a part, nothing to check.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <accel/ops/compress.h>
#include "codec_dl.h"
#include "ops/lz4_parts.h"

#define LZ4_MAGIC 0x184D2204u
#define LZ4_LEGACY_MAGIC 0x184C2102u
#define FLG_INDEPENDENT 0x20
#define FLG_BLOCK_CHECKSUM 0x10
#define FLG_CONTENT_SIZE 0x08
#define FLG_CONTENT_CHECKSUM 0x04
#define FLG_DICT_ID 0x01

/* A frame whose last part is cut, for the writer. */
struct frame_rec {
	uint64_t offset;       /* the frame's byte offset in the input */
	uint64_t content_size; /* stated by its header (sized 1) */
	int sized;
	uint32_t checksum;     /* its content checksum, when FLG has one */
};

struct lz4_parts {
	const struct core_xxhash *x;
	/* The cutter's (one lz4_parts_next at a time): the frame being cut. */
	int active, first, block_ck;
	uint64_t flags;        /* FLG | BD << 8 of that frame */
	size_t block_max, hlen;
	int legacy;            /* lz4 -l's frame: blocks to the end or a magic */
	uint64_t block_at;     /* the byte offset of the block being cut */
	struct frame_rec cur;
	/* Frames cut to their end and not yet checked by the writer, oldest
	 * first (recs[head .. n)); the cutter runs ahead of the writer on
	 * another thread. */
	pthread_mutex_t lock;
	struct frame_rec *recs;
	size_t head, n, cap;
	/* The writer's: the frame being written. */
	XXH32_state_t *state;
	uint64_t written;
};

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

struct lz4_parts *lz4_parts_new(void)
{
	const struct core_xxhash *x = core_xxhash(NULL, 0);
	struct lz4_parts *p = x ? calloc(1, sizeof *p) : NULL;
	if (!p)
		return NULL;
	p->x = x;
	if (!(p->state = x->XXH32_createState())) {
		free(p);
		return NULL;
	}
	pthread_mutex_init(&p->lock, NULL);
	return p;
}

void lz4_parts_free(struct lz4_parts *p)
{
	if (!p)
		return;
	p->x->XXH32_freeState(p->state);
	pthread_mutex_destroy(&p->lock);
	free(p->recs);
	free(p);
}

int lz4_parts_active(const struct lz4_parts *p)
{
	return p->active;
}

int lz4_parts_begin(struct lz4_parts *p, struct accel_input *in)
{
	const uint8_t *h;
	ssize_t n = accel_input_peek(in, 15, &h);
	if (n < 0)
		return (int)n;
	if (n >= 4 && le32(h) == LZ4_LEGACY_MAGIC) {
		/* No descriptor, no checksum: 8 MiB blocks after the magic. */
		p->cur = (struct frame_rec){ in->offset, 0, 0, 0 };
		p->flags = ACCEL_LZ4_PART_LEGACY;
		p->block_max = ACCEL_LZ4_LEGACY_BLOCK;
		p->block_ck = 0;
		p->hlen = 4;
		p->legacy = p->active = p->first = 1;
		return 1;
	}
	if (n < 7 || le32(h) != LZ4_MAGIC)
		return 0;
	unsigned flg = h[4], bd = h[5], id = bd >> 4 & 7;
	/* What lz4 -d refuses is its to say; linked blocks and blocks that
	 * may refer to a dictionary decode one after another. */
	if ((flg >> 6) != 1 || (flg & 0x02) || (bd & 0x8f) || id < 4 || !(flg & FLG_INDEPENDENT) ||
	    (flg & FLG_DICT_ID))
		return 0;
	size_t hlen = flg & FLG_CONTENT_SIZE ? 15 : 7;
	if ((size_t)n < hlen || (p->x->XXH32(h + 4, hlen - 5, 0) >> 8 & 0xff) != h[hlen - 1])
		return 0;
	uint64_t size = 0;
	for (size_t i = 0; hlen == 15 && i < 8; i++)
		size |= (uint64_t)h[6 + i] << (8 * i);
	/* A stated size of 0 is unknown, as lz4 reads it (lz4frame.h). */
	p->cur = (struct frame_rec){ in->offset, size, size != 0, 0 };
	p->flags = flg | bd << 8;
	p->block_max = (size_t)1 << (8 + 2 * id);
	p->block_ck = !!(flg & FLG_BLOCK_CHECKSUM);
	p->hlen = hlen;
	p->legacy = 0;
	p->active = p->first = 1;
	return 1;
}

static int truncated(const struct lz4_parts *p, uint64_t at, char *err, size_t len)
{
	snprintf(err, len, "lz4 %s at byte offset %llu is truncated at byte offset %llu",
		 p->legacy ? "legacy block" : "frame", (unsigned long long)(p->legacy ? p->block_at : p->cur.offset),
		 (unsigned long long)at);
	return ACCEL_EDATA;
}

/* A part being cut: from a mapped input its bytes stay where they lie
 * (pos of them walked, borrowed at the end), from any other they are read
 * into dst as they are walked. */
struct cut {
	struct lz4_parts *p;
	struct accel_input *in;
	struct accel_buf *dst;
	size_t pos;
};

/* Up to n bytes at the cut's end made visible at *b: how many (fewer only
 * where the input ends), or ACCEL_EIO, ACCEL_ENOMEM. */
static ssize_t visible(struct cut *c, size_t n, const uint8_t **b)
{
	size_t at = c->in->map_len ? c->pos : 0;
	ssize_t got = accel_input_peek(c->in, at + n, b);
	if (got < 0)
		return got;
	*b += at;
	return got - (ssize_t)at;
}

/* n bytes at the cut's end visible at *b: 0, or ACCEL_EDATA (the input
 * ends first), ACCEL_EIO, ACCEL_ENOMEM. */
static int look(struct cut *c, size_t n, const uint8_t **b, char *err, size_t len)
{
	ssize_t got = visible(c, n, b);
	if (got < 0)
		return (int)got;
	if ((size_t)got < n)
		return truncated(c->p, c->in->offset + (c->in->map_len ? c->pos : 0) + (uint64_t)got, err, len);
	return 0;
}

/* Whether the frame ends at the cut's end: the end mark, or for a legacy
 * frame the end of the input or a size over ACCEL_LZ4_LEGACY_BOUND (the
 * next frame's magic, as lz4 -d reads it). */
static int at_end(struct cut *c)
{
	const uint8_t *b;
	ssize_t got = visible(c, 4, &b);
	if (c->p->legacy)
		return got == 0 || (got >= 4 && le32(b) > ACCEL_LZ4_LEGACY_BOUND);
	return got >= 4 && !le32(b);
}

/* Add the n bytes at the cut's end to the part. */
static int take(struct cut *c, size_t n, char *err, size_t len)
{
	if (c->in->map_len) {
		const uint8_t *b;
		int rc = look(c, n, &b, err, len);
		if (rc == 0)
			c->pos += n;
		return rc;
	}
	if (accel_buf_reserve(c->dst, c->dst->len + n))
		return ACCEL_ENOMEM;
	uint64_t at = c->in->offset;
	ssize_t got = accel_input_read(c->in, c->dst->data + c->dst->len, n);
	if (got < 0)
		return (int)got;
	c->dst->len += (size_t)got;
	return (size_t)got < n ? truncated(c->p, at + (uint64_t)got, err, len) : 0;
}

/* The next block, or the end mark with the content checksum, into the
 * part: 1 a block, 0 the end; *most grows by what the block decodes to at
 * most. */
static int take_block(struct cut *c, size_t *most, char *err, size_t len)
{
	struct lz4_parts *p = c->p;
	const uint8_t *b;
	if (p->legacy && at_end(c))
		return 0;
	p->block_at = c->in->offset + (c->in->map_len ? c->pos : 0);
	int rc = look(c, 4, &b, err, len);
	if (rc < 0)
		return rc;
	uint32_t bs = le32(b);
	if (p->legacy) {
		/* A compressed size, whole: at most the bound, by at_end. */
		*most += ACCEL_LZ4_LEGACY_BLOCK;
		rc = take(c, 4 + (size_t)bs, err, len);
		return rc < 0 ? rc : 1;
	}
	if (!bs) {
		size_t n = p->flags & FLG_CONTENT_CHECKSUM ? 8 : 4;
		if ((rc = look(c, n, &b, err, len)) < 0)
			return rc;
		p->cur.checksum = n == 8 ? le32(b + 4) : 0;
		return take(c, n, err, len);
	}
	size_t size = bs & 0x7fffffffu;
	if (size > p->block_max) {
		snprintf(err, len, "lz4 frame at byte offset %llu: block at byte offset %llu is larger than the "
			 "frame's maximum block size, %zu bytes", (unsigned long long)p->cur.offset,
			 (unsigned long long)(c->in->offset + (c->in->map_len ? c->pos : 0)), p->block_max);
		return ACCEL_EDATA;
	}
	*most += bs >> 31 ? size : p->block_max;
	rc = take(c, 4 + size + (p->block_ck ? 4 : 0), err, len);
	return rc < 0 ? rc : 1;
}

int lz4_parts_next(struct lz4_parts *p, struct accel_input *in, struct accel_unit *u, char *err, size_t len)
{
	struct cut c = { p, in, &u->in, 0 };
	size_t most = 0, group = ACCEL_LZ4_PART_CONTENT / p->block_max;
	int rc = 0;
	u->offset = in->offset;
	if (in->map_len && u->in.cap)
		accel_buf_free(&u->in);
	u->in.len = 0;
	/* Read: room for the group at once (what is not written takes no
	 * memory), not grown and copied block by block. */
	if (!in->map_len && accel_buf_reserve(&u->in, (group ? group : 1) * (p->block_max + 8) + p->hlen + 8))
		return ACCEL_ENOMEM;
	if (p->first && (rc = take(&c, p->hlen, err, len)) < 0)
		return rc;
	/* A group of blocks, and the end mark when it comes next. */
	for (size_t k = 0; k < (group ? group : 1) && (rc = take_block(&c, &most, err, len)) == 1; k++)
		;
	if (rc == 1 && at_end(&c) && (rc = take_block(&c, &most, err, len)) < 0)
		return rc;
	if (rc < 0)
		return rc;
	if (in->map_len) {
		/* Claimed, not borrowed: the stream preads the part into the
		 * unit (u->in_at), as it does a whole frame (compress.c). */
		u->in.data = NULL;
		u->in_at = (int64_t)in->start;
		u->in.len = c.pos;
		accel_input_consume(in, c.pos);
	}
	u->out_hint = most;
	u->part = ACCEL_LZ4_PART | p->flags | (p->first ? ACCEL_LZ4_PART_FIRST : 0) |
		  (rc == 0 ? ACCEL_LZ4_PART_LAST : 0);
	p->first = 0;
	if (rc == 0 && p->legacy)
		p->active = 0;
	if (rc == 0 && !p->legacy) {
		pthread_mutex_lock(&p->lock);
		if (p->n == p->cap) {
			size_t cap = p->cap ? 2 * p->cap : 8;
			struct frame_rec *r = realloc(p->recs, cap * sizeof *r);
			if (!r) {
				pthread_mutex_unlock(&p->lock);
				return ACCEL_ENOMEM;
			}
			p->recs = r;
			p->cap = cap;
		}
		p->recs[p->n++] = p->cur;
		pthread_mutex_unlock(&p->lock);
		p->active = 0;
	}
	return 1;
}

int lz4_parts_write(struct lz4_parts *p, struct accel_output *out, const struct accel_unit *u, char *err,
		    size_t len)
{
	if (!(u->part & ACCEL_LZ4_PART) || (u->part & ACCEL_LZ4_PART_LEGACY))
		return accel_output_write(out, u->out.data, u->out.len);
	int check = !!(u->part & FLG_CONTENT_CHECKSUM);
	if (u->part & ACCEL_LZ4_PART_FIRST) {
		p->written = 0;
		if (check)
			p->x->XXH32_reset(p->state, 0);
	}
	if (check)
		p->x->XXH32_update(p->state, u->out.data, u->out.len);
	p->written += u->out.len;
	if (u->part & ACCEL_LZ4_PART_LAST) {
		pthread_mutex_lock(&p->lock);
		struct frame_rec r = p->recs[p->head++];
		if (p->head == p->n)
			p->head = p->n = 0;
		pthread_mutex_unlock(&p->lock);
		if (r.sized && p->written != r.content_size) {
			snprintf(err, len, "lz4 frame at byte offset %llu: %llu bytes decoded, header says %llu",
				 (unsigned long long)r.offset, (unsigned long long)p->written,
				 (unsigned long long)r.content_size);
			return ACCEL_EDATA;
		}
		uint32_t sum = check ? p->x->XXH32_digest(p->state) : 0;
		if (sum != r.checksum) {
			snprintf(err, len, "lz4 frame at byte offset %llu: content checksum mismatch (XXH32 %08x, the "
				 "frame says %08x)", (unsigned long long)r.offset, sum, r.checksum);
			return ACCEL_EDATA;
		}
	}
	return accel_output_write(out, u->out.data, u->out.len);
}
