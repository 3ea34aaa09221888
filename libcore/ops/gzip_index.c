/*
 * gzip_index.c - parallel decompression of one gzip member written by any
 * tool (gzip, pigz, tar czf), after Knespel & Brunst, "Rapidgzip: Parallel
 * Decompression and Seeking in Gzip Files Using Cache Prefetching" (HPDC
 * 2023). Deflate is RFC 1951, the member around it RFC 1952.
 *
 * The compressed data is read in batches of `threads` chunks of at most C
 * bytes, one chunk a thread. The first chunk of a batch starts at a known
 * block boundary with the last 32 KiB of output known, and ISA-L decodes
 * it (raw deflate, that window as dictionary). Every other chunk starts at
 * the first position at or after its first byte where a deflate block
 * header is valid (a non-final dynamic Huffman block whose code lengths
 * make complete codes, or a stored block whose LEN and NLEN agree), found
 * by trial, and is decoded from there speculatively into 16-bit symbols: a
 * byte, or a marker naming a position of the unknown 32 KiB window before
 * it; but only until the last 32 KiB of its symbols hold no marker, up to
 * the next block boundary (its prefix). From there ISA-L decodes the rest
 * of the chunk into bytes with those 32 KiB as dictionary, starting at a
 * bit offset (its bit buffer primed with the bits of the first byte).
 * Each chunk's thread publishes its start once found; each chunk ends
 * exactly there: ISA-L is given input up to the byte holding that bit, too
 * few bits past it for a block header and a symbol, and the chunk ends
 * when ISA-L stands at a block boundary at that bit (the batch's last
 * chunk ends at a boundary it finds at the start of the next batch). A
 * prefix whose window never gets clean (data that keeps referring back
 * across the chunk) goes on as symbols to the first block boundary at or
 * after the start of the next chunk. Then, in order, each chunk whose
 * start is the exact bit where the one before it ended has its markers
 * replaced from the window now known and is written, its CRC32 (taken by
 * its thread for ISA-L's bytes) combined into the member's. Where ISA-L
 * does not stand at a block boundary at the next chunk's start, that start
 * was a false one (bits that read as a header and a block by chance):
 * ISA-L goes on through that chunk's input (it is marked absorbed) to the
 * start of the one after it; where the end found for a batch's last chunk
 * is false, the next boundary found after it is tried. A chunk that still
 * does not join (a block longer than the chunk, a decoding error) is
 * decoded instead by zlib from where the one before it ended, with that
 * window as its dictionary, which also names the error of a damaged member
 * as the serial decoder would. The member's trailer
 * (CRC32, ISIZE) is checked at its end. The first chunk's share of a
 * batch follows the threads' CPU times of the batch before, its ISA-L
 * alone being faster a byte than a prefix and ISA-L.
 *
 * A batch that joins whole, from the end of the one before to the start
 * of the next, is written (markers resolved, CRC32s combined, output
 * written) by a writer thread while the next batch decodes: the next
 * batch's first chunk takes as its window the last 32 KiB of the bytes of
 * this batch's last chunk. A batch that does not join whole, or whose last
 * chunk has fewer bytes than a window, waits for the writer and is written
 * (and decoded serially where it does not join) before the next begins.
 *
 * Memory: the batch of compressed input (threads * C plus a margin) and
 * each chunk's output buffers (symbols of two bytes, then bytes; at most
 * 16 C of each per chunk, both counted since buffers are reused across
 * batches) and the last chunk's scratch, for two sets of chunks (the batch
 * decoding and the one being written), or one set without the writer
 * thread when two do not fit in chunks of 256 KiB, with C chosen so that
 * this fits the memory limit.
 */
#include <errno.h>
#include <time.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include "codec_dl.h"
#include "core.h"
#include "ops/gzip_index.h"

/* zlib's and ISA-L's functions (codec_dl.h), loaded by the entry points
 * below before anything calls through them. */
static const struct core_zlib *const zl = &core_zlib_fns;
static const struct core_isal *const isal = &core_isal_fns;

#define WSIZE 32768u          /* deflate's window (RFC 1951, 2.) */
#define MARK 256u             /* symbols >= MARK: window position + MARK */
#define FAST_BITS 10          /* bits of a Huffman table lookup */
#define MAX_BITS 15
#define MARGIN (4u << 20)     /* input past a batch for its last chunk to end */
#define OUT_RATIO 16          /* symbols of output per byte of input of a chunk, at most */
/* Input a chunk, at most: each non-first chunk's speculative prefix (our
 * slower decoder, ~1.3 M symbols of a tar by gzip -6 before its window is
 * clean) is a cost a chunk, a smaller share of larger chunks. */
#define CHUNK_MAX (8u << 20)

/* ------------------------------------------------------------- bit reader */

struct br {
	const uint8_t *p;
	size_t n;        /* bytes at p */
	size_t pos;      /* next byte to load */
	uint64_t bits;
	unsigned cnt;    /* valid bits in `bits` */
	size_t pad;      /* zero bytes loaded past n */
};

static void br_init(struct br *b, const uint8_t *p, size_t n, uint64_t bit)
{
	b->p = p;
	b->n = n;
	b->pos = (size_t)(bit >> 3);
	b->bits = 0;
	b->cnt = 0;
	b->pad = 0;
	if (bit & 7) {
		b->bits = b->pos < n ? p[b->pos] >> (bit & 7) : 0;
		b->cnt = 8 - (unsigned)(bit & 7);
		b->pos++;
	}
}

static inline void br_refill(struct br *b)
{
	if (b->pos + 8 <= b->n) {
		uint64_t v;
		memcpy(&v, b->p + b->pos, 8);
		b->bits |= v << b->cnt;
		b->pos += (63 - b->cnt) >> 3;
		b->cnt |= 56;
		return;
	}
	while (b->cnt <= 56) {
		if (b->pos < b->n)
			b->bits |= (uint64_t)b->p[b->pos] << b->cnt;
		else
			b->pad++;
		b->pos++;
		b->cnt += 8;
	}
}

/* Bits consumed from p. */
static inline uint64_t br_tell(const struct br *b)
{
	return (uint64_t)b->pos * 8 - b->cnt;
}

static inline unsigned br_get(struct br *b, unsigned n)
{
	unsigned v = (unsigned)(b->bits & ((1ull << n) - 1));
	b->bits >>= n;
	b->cnt -= n;
	return v;
}

/* Past the end of the input (bits read that are not there). */
static inline int br_over(const struct br *b)
{
	return b->pad && br_tell(b) > (uint64_t)b->n * 8;
}

/* --------------------------------------------------------------- Huffman */

struct huff {
	uint16_t fast[1u << FAST_BITS]; /* sym << 4 | len; len 0: longer code */
	uint16_t count[MAX_BITS + 1];
	uint16_t sym[288];
	int empty;                      /* no codes at all */
};

/* Canonical code of the lengths (RFC 1951, 3.2.2). Returns 0, or -1 for an
 * over-subscribed set or an incomplete one (allowed only for a single code
 * of one bit, as zlib allows, and for no codes when may_be_empty). */
static int huff_build(struct huff *h, const uint8_t *len, unsigned n, int may_be_empty)
{
	uint16_t offs[MAX_BITS + 2];
	memset(h->count, 0, sizeof h->count);
	for (unsigned i = 0; i < n; i++)
		h->count[len[i]]++;
	h->empty = h->count[0] == n;
	if (h->empty) {
		memset(h->fast, 0, sizeof h->fast);
		return may_be_empty ? 0 : -1;
	}
	int left = 1, max = 0;
	for (int l = 1; l <= MAX_BITS; l++) {
		left <<= 1;
		left -= h->count[l];
		if (left < 0)
			return -1;
		if (h->count[l])
			max = l;
	}
	if (left > 0 && max != 1)
		return -1;
	offs[1] = 0;
	for (int l = 1; l <= MAX_BITS; l++)
		offs[l + 1] = offs[l] + h->count[l];
	for (unsigned i = 0; i < n; i++)
		if (len[i])
			h->sym[offs[len[i]]++] = (uint16_t)i;
	/* The lookup table: each code's bits reversed (deflate packs codes
	 * from their most significant bit), repeated over the unused bits. */
	memset(h->fast, 0, sizeof h->fast);
	unsigned code = 0, k = 0;
	for (int l = 1; l <= MAX_BITS; l++) {
		for (unsigned c = 0; c < h->count[l]; c++, k++, code++) {
			if (l > FAST_BITS)
				continue;
			unsigned r = 0;
			for (int i = 0; i < l; i++)
				r |= ((code >> i) & 1) << (l - 1 - i);
			for (unsigned f = r; f < (1u << FAST_BITS); f += 1u << l)
				h->fast[f] = (uint16_t)(h->sym[k] << 4 | l);
		}
		code <<= 1;
	}
	return 0;
}

/* One symbol; -1 for a code not in the set. Needs MAX_BITS bits in b. */
static inline int huff_decode(struct huff *h, struct br *b)
{
	uint16_t e = h->fast[b->bits & ((1u << FAST_BITS) - 1)];
	if (e & 15) {
		br_get(b, e & 15);
		return e >> 4;
	}
	/* Longer than FAST_BITS: bit by bit, canonical order. */
	int code = 0, first = 0, index = 0;
	for (int l = 1; l <= MAX_BITS; l++) {
		code |= br_get(b, 1);
		int count = h->count[l];
		if (code - count < first)
			return h->sym[index + (code - first)];
		index += count;
		first += count;
		first <<= 1;
		code <<= 1;
	}
	return -1;
}

static const uint16_t len_base[29] = { 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
	35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258 };
static const uint8_t len_extra[29] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
	3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };
static const uint16_t dist_base[30] = { 1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
	257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577 };
static const uint8_t dist_extra[30] = { 0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6,
	7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13 };
static const uint8_t clen_order[19] = { 16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15 };

struct dec {
	struct huff lit, dist;
	struct huff fixed_lit, fixed_dist;
	int fixed_built;
};

/* The header of a dynamic block after its 3 header bits (RFC 1951,
 * 3.2.7): both codes into d->lit, d->dist. 0 or -1 (not valid). */
static int dynamic_header(struct dec *d, struct br *b)
{
	uint8_t lens[320];
	br_refill(b);
	unsigned nlen = br_get(b, 5) + 257, ndist = br_get(b, 5) + 1, ncode = br_get(b, 4) + 4;
	if (nlen > 286 || ndist > 30)
		return -1;
	uint8_t cl[19] = { 0 };
	for (unsigned i = 0; i < ncode; i++) {
		br_refill(b);
		cl[clen_order[i]] = (uint8_t)br_get(b, 3);
	}
	/* zlib refuses an incomplete code length code; so do we. Checked
	 * before building it: the block finder rejects most bits here. */
	unsigned kraft = 0;
	for (unsigned i = 0; i < 19; i++)
		if (cl[i])
			kraft += 128u >> cl[i];
	if (kraft != 128)
		return -1;
	struct huff *hc = &d->dist; /* scratch for the code length code */
	if (huff_build(hc, cl, 19, 0))
		return -1;
	unsigned i = 0;
	while (i < nlen + ndist) {
		br_refill(b);
		if (br_over(b))
			return -1;
		int s = huff_decode(hc, b);
		if (s < 0)
			return -1;
		if (s < 16) {
			lens[i++] = (uint8_t)s;
			continue;
		}
		unsigned rep, val = 0;
		if (s == 16) {
			if (i == 0)
				return -1;
			val = lens[i - 1];
			rep = 3 + br_get(b, 2);
		} else if (s == 17) {
			rep = 3 + br_get(b, 3);
		} else {
			rep = 11 + br_get(b, 7);
		}
		if (i + rep > nlen + ndist)
			return -1;
		while (rep--)
			lens[i++] = (uint8_t)val;
	}
	if (lens[256] == 0)
		return -1;
	if (huff_build(&d->lit, lens, nlen, 0) || huff_build(&d->dist, lens + nlen, ndist, 1))
		return -1;
	return 0;
}

static void fixed_tables(struct dec *d)
{
	uint8_t l[288];
	unsigned i = 0;
	for (; i < 144; i++)
		l[i] = 8;
	for (; i < 256; i++)
		l[i] = 9;
	for (; i < 280; i++)
		l[i] = 7;
	for (; i < 288; i++)
		l[i] = 8;
	huff_build(&d->fixed_lit, l, 288, 0);
	/* Distance codes 30 and 31 take part in the code, never in data
	 * (RFC 1951, 3.2.6): with them the code is complete. */
	for (i = 0; i < 32; i++)
		l[i] = 5;
	huff_build(&d->fixed_dist, l, 32, 0);
	d->fixed_built = 1;
}

/* ------------------------------------------------------ speculative decode */

enum { R_STOP = 0, R_END = 1, R_CLEAN = 2, R_ERR = -1, R_EOF = -2, R_FULL = -3 };

struct syms {
	uint16_t *s;
	size_t n, cap, max;
	size_t scanned;   /* symbols looked at for markers */
	size_t last_mark; /* index after the last marker seen; 0: none */
};

/* Do the last WSIZE symbols of o hold no marker (the window of what
 * follows fully known)? Each symbol is looked at once over the calls. */
static int window_clean(struct syms *o)
{
	if (o->n < WSIZE)
		return 0;
	size_t from = o->n - WSIZE > o->scanned ? o->n - WSIZE : o->scanned;
	for (size_t i = o->n; i > from; i--)
		if (o->s[i - 1] >= MARK) {
			o->last_mark = i;
			break;
		}
	o->scanned = o->n;
	return o->n - o->last_mark >= WSIZE;
}

static int syms_room(struct syms *o, size_t need)
{
	if (o->cap - o->n >= need)
		return 0;
	if (o->n + need > o->max)
		return -1;
	size_t cap = o->cap ? o->cap * 2 : 1u << 20;
	while (cap < o->n + need)
		cap *= 2;
	if (cap > o->max)
		cap = o->max;
	uint16_t *s = realloc(o->s, cap * sizeof *s);
	if (!s)
		return -1;
	/* Written next (see chunk_decode's buffer). */
	core_populate((uint8_t *)(s + o->cap), (uint8_t *)(s + cap));
	o->s = s;
	o->cap = cap;
	return 0;
}

/* The codes of one Huffman block into o. The bit reader is a local copy
 * (kept in registers), written back on return. */
static int huff_block(struct huff *lit, struct huff *dist, struct br *bp, struct syms *o)
{
	struct br lb = *bp, *b = &lb;
	int rc;
	for (;;) {
		if (o->cap - o->n < 258 + 16 && syms_room(o, 258 + 16)) {
			rc = R_FULL;
			goto out;
		}
		uint16_t *out = o->s;
		size_t n = o->n;
		size_t room = o->cap - 258 - 16;
		while (n <= room) {
			br_refill(b);
			if (b->pad && br_over(b)) {
				o->n = n;
				rc = R_EOF;
				goto out;
			}
			int s = huff_decode(lit, b);
			if (s < 256) {
				if (s < 0)
					goto bad;
				out[n++] = (uint16_t)s;
				/* A second symbol from the same refill when
				 * the bits of a code are there (none past the
				 * input's end: pad is 0). */
				if (b->cnt < MAX_BITS || b->pad)
					continue;
				s = huff_decode(lit, b);
				if (s < 256) {
					if (s < 0)
						goto bad;
					out[n++] = (uint16_t)s;
					continue;
				}
				br_refill(b); /* the length's extra bits */
			}
			if (s == 256) {
				o->n = n;
				rc = br_over(b) ? R_EOF : R_STOP;
				goto out;
			}
			s -= 257;
			if (s >= 29)
				goto bad;
			unsigned l = len_base[s] + br_get(b, len_extra[s]);
			br_refill(b);
			int ds = huff_decode(dist, b);
			if (ds < 0 || ds >= 30)
				goto bad;
			size_t dd = dist_base[ds] + br_get(b, dist_extra[ds]);
			if (b->pad && br_over(b)) {
				o->n = n;
				rc = R_EOF;
				goto out;
			}
			if (dd <= n) {
				uint16_t *src = out + n - dd, *dst = out + n;
				if (dd >= 8) {
					/* 8 symbols at a time, up to 7 past l
					 * (room keeps 16 spare). */
					for (unsigned i = 0; i < l; i += 8)
						memcpy(dst + i, src + i, 16);
				} else {
					for (unsigned i = 0; i < l; i++)
						dst[i] = src[i];
				}
				n += l;
			} else {
				if (dd > n + WSIZE)
					goto bad;
				for (unsigned i = 0; i < l; i++, n++) {
					ptrdiff_t from = (ptrdiff_t)n - (ptrdiff_t)dd;
					out[n] = from < 0 ? (uint16_t)(MARK + WSIZE + from) : out[from];
				}
			}
		}
		o->n = n;
		if (br_over(b)) {
			rc = R_EOF;
			goto out;
		}
		continue;
bad:
		o->n = n;
		rc = br_over(b) ? R_EOF : R_ERR;
		goto out;
	}
out:
	*bp = lb;
	return rc;
}

/* A stored block after its 3 header bits. */
static int stored_block(struct br *b, struct syms *o)
{
	br_get(b, b->cnt & 7);
	br_refill(b);
	unsigned len = br_get(b, 16), nlen = br_get(b, 16);
	if ((len ^ 0xffffu) != nlen)
		return br_over(b) ? R_EOF : R_ERR;
	/* Back to bytes: what the bit buffer holds goes back to the input. */
	size_t at = (size_t)(br_tell(b) >> 3);
	if (at + len > b->n)
		return R_EOF;
	if (syms_room(o, len))
		return R_FULL;
	for (unsigned i = 0; i < len; i++)
		o->s[o->n + i] = b->p[at + i];
	o->n += len;
	br_init(b, b->p, b->n, (uint64_t)(at + len) * 8);
	return R_STOP;
}

/*
 * Decode blocks from bit `start` of p[n] into o until a block boundary at
 * or after bit `stop` (R_STOP, *end that boundary) or the end of the final
 * block (R_END, *end the bit after it); with `clean`, also until a block
 * boundary before which the last WSIZE symbols of o hold no marker
 * (R_CLEAN, *end that boundary). R_ERR: bad data (*blocks whole blocks
 * decoded before it); R_EOF: the input ran out; R_FULL: o->max reached.
 */
static int decode_range(struct dec *d, const uint8_t *p, size_t n, uint64_t start, uint64_t stop, struct syms *o,
			uint64_t *end, unsigned *blocks, int clean)
{
	struct br b;
	br_init(&b, p, n, start);
	*blocks = 0;
	for (;;) {
		uint64_t at = br_tell(&b);
		if (at >= stop) {
			*end = at;
			return R_STOP;
		}
		if (clean && *blocks && window_clean(o)) {
			*end = at;
			return R_CLEAN;
		}
		br_refill(&b);
		unsigned final = br_get(&b, 1), type = br_get(&b, 2);
		int rc;
		if (type == 0) {
			rc = stored_block(&b, o);
		} else if (type == 1) {
			if (!d->fixed_built)
				fixed_tables(d);
			rc = huff_block(&d->fixed_lit, &d->fixed_dist, &b, o);
		} else if (type == 2) {
			rc = dynamic_header(d, &b);
			if (rc == 0)
				rc = huff_block(&d->lit, &d->dist, &b, o);
			else
				rc = br_over(&b) ? R_EOF : R_ERR;
		} else {
			rc = br_over(&b) ? R_EOF : R_ERR;
		}
		if (rc != R_STOP)
			return rc;
		++*blocks;
		if (final) {
			*end = br_tell(&b);
			return R_END;
		}
	}
}

/* 57 bits or more of p from bit `at`; p holds 8 bytes from its byte. */
static inline uint64_t bits_at(const uint8_t *p, uint64_t at)
{
	uint64_t v;
	memcpy(&v, p + at / 8, 8);
	return v >> (at & 7);
}

/* Could a non-final dynamic or stored block start at bit `at`? */
static int block_start(struct dec *d, const uint8_t *p, size_t n, uint64_t at)
{
	/* Most bits fail on the first 17 + 3 HCLEN bits of a header
	 * (RFC 1951, 3.2.7): the 3 header bits, HLIT and HDIST in range, a
	 * complete code length code; before any table is built. */
	if (at / 8 + 24 <= n) {
		uint64_t v = bits_at(p, at);
		unsigned hdr = v & 7;
		if (hdr == 4) {
			if (((v >> 3) & 31) > 29 || ((v >> 8) & 31) > 29)
				return 0;
			unsigned ncode = ((v >> 13) & 15) + 4, kraft = 0;
			uint64_t w = bits_at(p, at + 17);
			for (unsigned i = 0; i < ncode; i++, w >>= 3)
				if (w & 7)
					kraft += 128u >> (w & 7);
			if (kraft != 128)
				return 0;
		} else if (hdr != 0) {
			return 0;
		}
	}
	struct br b;
	br_init(&b, p, n, at);
	br_refill(&b);
	unsigned hdr = br_get(&b, 3);
	if (hdr == 4) /* not final, dynamic */
		return dynamic_header(d, &b) == 0 && !br_over(&b);
	if (hdr != 0)
		return 0;
	/* Stored: zero padding to the byte, then LEN and NLEN. */
	unsigned padbits = b.cnt & 7;
	if (br_get(&b, padbits))
		return 0;
	br_refill(&b);
	unsigned len = br_get(&b, 16), nlen = br_get(&b, 16);
	return (len ^ 0xffffu) == nlen && !br_over(&b);
}

uint64_t accel_gzip_find_block(const uint8_t *p, size_t n, uint64_t from, uint64_t to, unsigned blocks)
{
	struct dec *d = calloc(1, sizeof *d);
	struct syms o = { NULL, 0, 0, (size_t)n * 16 + 65536, 0, 0 };
	uint64_t found = UINT64_MAX;
	if (!d)
		return found;
	for (uint64_t at = from; at < to && at < (uint64_t)n * 8; at++) {
		if (!block_start(d, p, n, at))
			continue;
		struct br b;
		br_init(&b, p, n, at);
		unsigned k = 0;
		uint64_t end, pos = at;
		int rc = R_STOP;
		/* One block at a time: stop at each boundary. */
		while (k < blocks && rc == R_STOP) {
			unsigned one;
			o.n = 0;
			rc = decode_range(d, p, n, pos, pos + 1, &o, &end, &one, 0);
			if (rc == R_STOP || rc == R_END)
				pos = end, k++;
		}
		if (rc == R_STOP || rc == R_END || (rc == R_EOF && k > 0)) {
			found = at;
			break;
		}
	}
	free(o.s);
	free(d);
	return found;
}

ptrdiff_t accel_gzip_decode_symbols(const uint8_t *p, size_t n, uint64_t start, uint16_t *out, size_t cap,
				    uint64_t *end)
{
	struct dec *d = calloc(1, sizeof *d);
	if (!d)
		return -1;
	/* The caller's buffer, never grown: max is its size. */
	struct syms o = { out, 0, cap, cap, 0, 0 };
	unsigned blocks;
	int rc = decode_range(d, p, n, start, UINT64_MAX, &o, end, &blocks, 0);
	free(d);
	if (rc == R_ERR || rc == R_FULL)
		return -1;
	if (rc == R_EOF)
		*end = (uint64_t)n * 8;
	return (ptrdiff_t)o.n;
}

/* ------------------------------------------------------------------ chunks */

/*
 * A chunk is decoded on its own thread in two stages. A chunk whose start
 * is not known finds one by trial and decodes speculatively into symbols
 * until the last 32 KiB of them hold no marker, up to the next block
 * boundary (its prefix); from there, and for a chunk with a known start
 * from its start, ISA-L decodes bytes with those 32 KiB as dictionary up
 * to exactly the bit where the next chunk starts, published by that
 * chunk's thread once it has found it. A prefix that never gets clean
 * goes on as symbols to the first block boundary at or after `stop`.
 */
struct batch {
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

struct chunk {
	uint64_t first;   /* bit where the search starts (its first byte) */
	uint64_t stop;    /* decode up to a boundary at or after this bit */
	int known;        /* first is a block boundary with the window known */
	const uint8_t *win; /* known: the window before first */
	size_t wlen;
	struct batch *b;
	struct chunk *next; /* the next chunk of the batch, NULL for the last */
	/* published by this chunk's thread for the one before it */
	uint64_t found;   /* its start, UINT64_MAX: none */
	int found_set;
	int done;         /* its thread is done (its scratch free) */
	int absorbed;     /* decoded by the chunk before it (its start false) */
	/* results */
	uint64_t start, end;
	int rc;           /* R_STOP, R_END, or < 0: nothing usable */
	struct syms o;    /* the speculative symbols (first) */
	uint8_t *bytes;   /* then ISA-L's bytes */
	size_t nb, bcap;
	uint32_t bcrc;    /* CRC32 of bytes[nb] */
	struct syms tmp;  /* scratch of the last chunk's boundary search */
	struct dec d;
	struct inflate_state *st;
	double cpu;       /* seconds its decoding took */
	const uint8_t *p;
	size_t n;
};

static void publish(struct chunk *c, uint64_t at)
{
	pthread_mutex_lock(&c->b->mu);
	c->found = at;
	c->found_set = 1;
	pthread_cond_broadcast(&c->b->cv);
	pthread_mutex_unlock(&c->b->mu);
}

/* The first block boundary in [from, to) that a block decodes from,
 * UINT64_MAX for none: where the batch's last chunk ends. */
static uint64_t find_end(struct chunk *c, uint64_t from, uint64_t to)
{
	for (uint64_t at = from; at < to && at < (uint64_t)c->n * 8; at++) {
		if (!block_start(&c->d, c->p, c->n, at))
			continue;
		uint64_t end;
		unsigned one;
		c->tmp.n = 0;
		c->tmp.scanned = c->tmp.last_mark = 0;
		int rc = decode_range(&c->d, c->p, c->n, at, at + 1, &c->tmp, &end, &one, 0);
		if (rc == R_STOP || rc == R_END)
			return at;
	}
	return UINT64_MAX;
}

/* The bit where chunk c must end when it decodes up to the end of chunk
 * l (l == c, or a chunk after it that it took over): the start of the
 * chunk after l, or for the batch's last chunk the first boundary found
 * at or after its stop (by c's scratch, or by l's once l's thread is done
 * and that scratch is free). */
static uint64_t end_bit(struct chunk *c, struct chunk *l)
{
	if (l->stop == UINT64_MAX)
		return UINT64_MAX;
	if (!l->next && l == c)
		return find_end(c, c->stop, (uint64_t)c->n * 8);
	pthread_mutex_lock(&c->b->mu);
	while (l->next ? !l->next->found_set : !l->done)
		pthread_cond_wait(&c->b->cv, &c->b->mu);
	uint64_t at = l->next ? l->next->found : 0;
	pthread_mutex_unlock(&c->b->mu);
	return l->next ? at : find_end(l, l->stop, (uint64_t)l->n * 8);
}

/* Is the block at bit `at` of c->p a non-final stored one? */
static int stored_at(const struct chunk *c, uint64_t at)
{
	size_t i = (size_t)(at / 8);
	unsigned v = c->p[i] | (i + 1 < c->n ? c->p[i + 1] << 8 : 0);
	return ((v >> (at & 7)) & 7) == 0;
}

/* Bits of c->p ISA-L has taken in (past its buffered input). */
static uint64_t isal_tell(const struct chunk *c)
{
	const struct inflate_state *s = c->st;
	return (uint64_t)(s->next_in - c->p - s->tmp_in_size) * 8 - (uint64_t)s->read_in_length;
}

/*
 * ISA-L from bit `from` (a block boundary) of c->p, with dict[dlen] as the
 * window before it, appending bytes to c->bytes: first the input before
 * c->stop, then up to the byte holding the bit where the chunk must end
 * (end_bit). At most 7 bits past that bit are visible, too few for a
 * block header and a symbol, so ISA-L stops there: the chunk ends there
 * when ISA-L stands at a block boundary at exactly that bit. A stored
 * block found there may as well start at any later bit of its header and
 * zero padding that leaves it three bits (the finder takes the first): up
 * to the byte of LEN is visible then (still no output past the header),
 * and a boundary at any of those bits decodes the same. R_STOP or
 * R_END (the final block ended first) with c->end set; R_ERR (bad data),
 * R_FULL. Where ISA-L does not stand at a block boundary at that bit, the
 * next chunk's start was a false one (a header's bits by chance, its
 * block decoding without error): ISA-L goes on through the next chunk's
 * input, marked absorbed, to the bit where that one must end, and so on.
 */
static int isal_range(struct chunk *c, uint64_t from, const uint8_t *dict, size_t dlen)
{
	struct inflate_state *s = c->st;
	isal->isal_inflate_init(s);
	if (dlen && isal->isal_inflate_set_dict(s, (uint8_t *)dict, (uint32_t)dlen) != ISAL_DECOMP_OK)
		return R_ERR;
	s->crc_flag = ISAL_DEFLATE;
	const uint8_t *at = c->p + from / 8;
	if (from & 7) {
		s->read_in = *at >> (from & 7);
		s->read_in_length = 8 - (int)(from & 7);
		at++;
	}
	s->next_in = (uint8_t *)at;
	s->block_state = ISAL_BLOCK_NEW_HDR;
	/* Phase 0: the input before stop (of l, the last chunk taken in);
	 * phase 1: up to the end bit. */
	struct chunk *l = c;
	size_t lim = c->stop / 8 < c->n ? (size_t)(c->stop / 8) : c->n;
	uint64_t target = UINT64_MAX, last = UINT64_MAX;
	int phase = 0;
	c->bcrc = 0;
	for (;;) {
		size_t have = (size_t)(s->next_in - c->p);
		s->avail_in = lim > have ? (uint32_t)(lim - have) : 0;
		for (;;) {
			const size_t piece = 256u << 10;
			if (c->bcap - c->nb < piece) {
				size_t cap = c->bcap ? c->bcap * 2 : 4u << 20;
				if (cap > c->o.max)
					cap = c->o.max;
				if (cap - c->nb < piece)
					return R_FULL;
				uint8_t *nbuf = realloc(c->bytes, cap);
				if (!nbuf)
					return R_FULL;
				/* Filled next: present at once, not faulted
				 * in page by page (with the symbols' buffer's,
				 * 27075 faults for 256 MiB of a tar by gzip -1
				 * became 3740: 645 -> 564 ms on the 2-core VM,
				 * igzip 471). */
				core_populate(nbuf + c->bcap, nbuf + cap);
				c->bytes = nbuf;
				c->bcap = cap;
			}
			s->next_out = c->bytes + c->nb;
			s->avail_out = (uint32_t)piece;
			int rc = isal->isal_inflate(s);
			size_t got = piece - s->avail_out;
			c->bcrc = isal->crc32_gzip_refl(c->bcrc, c->bytes + c->nb, got);
			c->nb += got;
			if (rc < 0)
				return R_ERR;
			if (s->block_state == ISAL_BLOCK_FINISH) {
				c->end = isal_tell(c);
				return R_END;
			}
			if (s->avail_out)
				break; /* all input taken */
		}
		if (phase == 1) {
			uint64_t at_end = isal_tell(c);
			if (target != UINT64_MAX && at_end >= target && at_end <= last &&
			    (s->block_state == ISAL_BLOCK_NEW_HDR || s->block_state == ISAL_BLOCK_HDR) &&
			    s->tmp_out_valid == s->tmp_out_processed)
				break;
			/* Not a boundary there: the next chunk's start was
			 * false, its input is decoded here too; or the end
			 * found for the batch's last chunk was, and the next
			 * boundary found after it is tried (l's scratch is
			 * free: l is c, or its thread is done). */
			if (target == UINT64_MAX)
				return R_ERR;
			if (!l->next) {
				target = last = find_end(l, target + 1, (uint64_t)c->n * 8);
				if (target != UINT64_MAX && stored_at(c, target))
					last = (target + 10) / 8 * 8 - 3;
				lim = target == UINT64_MAX ? c->n : (size_t)((last + 7) / 8);
				if (lim > c->n)
					lim = c->n;
				continue;
			}
			l = l->next;
			l->absorbed = 1;
			phase = 0;
			lim = l->stop / 8 < c->n ? (size_t)(l->stop / 8) : c->n;
			continue;
		}
		phase = 1;
		target = end_bit(c, l);
		last = target;
		if (target != UINT64_MAX && stored_at(c, target))
			last = (target + 10) / 8 * 8 - 3;
		lim = target == UINT64_MAX ? c->n : (size_t)((last + 7) / 8);
		if (lim > c->n)
			lim = c->n;
	}
	c->end = target;
	return R_STOP;
}

/* The last WSIZE symbols of a clean prefix as bytes (no markers there). */
static void prefix_window(const struct syms *o, uint8_t *w)
{
	const uint16_t *s = o->s + o->n - WSIZE;
	for (size_t i = 0; i < WSIZE; i++)
		w[i] = (uint8_t)s[i];
}

static void chunk_decode(struct chunk *c)
{
	c->o.n = 0;
	c->nb = 0;
	if (c->known) {
		c->start = c->first;
		c->rc = isal_range(c, c->first, c->win, c->wlen);
		return;
	}
	c->rc = R_ERR;
	size_t wasted = 0;
	uint64_t found = UINT64_MAX;
	for (uint64_t at = c->first; at < c->stop && at < (uint64_t)c->n * 8; at++) {
		if (!block_start(&c->d, c->p, c->n, at))
			continue;
		unsigned blocks;
		c->o.n = 0;
		c->o.scanned = c->o.last_mark = 0;
		c->start = found = at;
		c->rc = decode_range(&c->d, c->p, c->n, at, c->stop, &c->o, &c->end, &blocks, 1);
		/* Not a boundary after all (a false header can decode a
		 * block or more): the next bit, until as many symbols as a
		 * quarter of the chunk's limit were decoded in vain, which
		 * is damage more likely, for the resolver's serial decoder to
		 * name. */
		wasted += c->o.n + 1;
		if (c->rc == R_ERR && wasted < c->o.max / 4)
			continue;
		break;
	}
	publish(c, found);
	if (c->rc == R_CLEAN) {
		uint8_t w[WSIZE];
		prefix_window(&c->o, w);
		c->rc = isal_range(c, c->end, w, WSIZE);
	}
}

/* chunk_decode, timed in CPU time of its thread (c->cpu, seconds). */
static void chunk_run(struct chunk *c)
{
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	chunk_decode(c);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	c->cpu = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
	pthread_mutex_lock(&c->b->mu);
	c->done = 1;
	pthread_cond_broadcast(&c->b->cv);
	pthread_mutex_unlock(&c->b->mu);
}

static void *chunk_thread(void *arg)
{
	chunk_run(arg);
	return NULL;
}

/* ------------------------------------------------------------- the member */

struct member {
	struct accel_input *in;
	struct accel_output *out;
	uint64_t start;        /* byte offset of the member, for messages */
	uint8_t window[WSIZE];
	size_t wlen;
	uint32_t crc;
	uint32_t isize;
	uint64_t pos;          /* bit offset in the input of the next block */
	uint8_t *buf;          /* zlib's output */
	z_stream z;
	int z_open;
	char *err;
	size_t len;
};

/* p[n], the next bytes of the member's output: its length, window and the
 * output (the caller keeps the CRC32). */
static int put(struct member *m, const uint8_t *p, size_t n)
{
	if (!n)
		return 0;
	m->isize += (uint32_t)n;
	if (n >= WSIZE) {
		memcpy(m->window, p + n - WSIZE, WSIZE);
		m->wlen = WSIZE;
	} else {
		size_t keep = m->wlen + n > WSIZE ? WSIZE - n : m->wlen;
		memmove(m->window, m->window + m->wlen - keep, keep);
		memcpy(m->window + keep, p, n);
		m->wlen = keep + n;
	}
	return accel_output_write(m->out, p, n);
}

static int emit(struct member *m, const uint8_t *p, size_t n)
{
	m->crc = isal->crc32_gzip_refl(m->crc, p, n);
	return put(m, p, n);
}

/* A chunk's bytes of ISA-L, whose CRC32 its thread took. */
static int emit_bytes(struct member *m, const struct chunk *c)
{
	if (!c->nb)
		return 0;
	m->crc = (uint32_t)zl->crc32_combine(m->crc, c->bcrc, (z_off_t)c->nb);
	return put(m, c->bytes, c->nb);
}

/* Chunk c's symbols as bytes, its markers from the window. */
static int resolve(struct member *m, struct chunk *c)
{
	uint8_t *b = m->buf;
	size_t lo = WSIZE - m->wlen, done = 0;
	uint8_t win[WSIZE];
	memcpy(win + lo, m->window, m->wlen);
	while (done < c->o.n) {
		size_t k = c->o.n - done < (1u << 18) ? c->o.n - done : 1u << 18;
		const uint16_t *s = c->o.s + done;
		for (size_t i = 0; i < k; i++) {
			uint16_t v = s[i];
			if (v < MARK) {
				b[i] = (uint8_t)v;
			} else {
				v -= MARK;
				if (v < lo) {
					snprintf(m->err, m->len, "gzip member at byte offset %llu: %s",
						 (unsigned long long)m->start, "invalid distance (lookback)");
					return ACCEL_EDATA;
				}
				b[i] = win[v];
			}
		}
		int rc = emit(m, b, k);
		if (rc < 0)
			return rc;
		done += k;
	}
	return 0;
}

static int truncated(struct member *m)
{
	snprintf(m->err, m->len, "gzip member at byte offset %llu is truncated at byte offset %llu",
		 (unsigned long long)m->start, (unsigned long long)m->in->offset);
	return ACCEL_EDATA;
}

/*
 * zlib from m->pos (a block boundary) with the window as dictionary, up to
 * the first block boundary at or after bit `stop` (0) or the member's end
 * (1, m->pos then its bit after the final block), consuming the input up
 * to m->pos / 8. Errors as the serial decoder words them.
 */
static int serial_to(struct member *m, uint64_t stop)
{
	if (!m->z_open) {
		if (zl->inflateInit2_(&m->z, -15, ZLIB_VERSION, (int)sizeof(z_stream)) != Z_OK)
			return ACCEL_ENOMEM;
		m->z_open = 1;
	}
	zl->inflateReset(&m->z);
	struct accel_input *in = m->in;
	const uint8_t *p;
	ssize_t n;
	accel_input_consume(in, (size_t)(m->pos / 8 - in->offset));
	if (m->pos & 7) {
		if ((n = accel_input_peek(in, 1, &p)) < 0)
			return (int)n;
		if (n == 0)
			return truncated(m);
		unsigned used = m->pos & 7;
		zl->inflatePrime(&m->z, (int)(8 - used), p[0] >> used);
		accel_input_consume(in, 1);
	}
	if (m->wlen)
		zl->inflateSetDictionary(&m->z, m->window, (uInt)m->wlen);
	for (;;) {
		if ((n = accel_input_peek(in, 1u << 18, &p)) < 0)
			return (int)n;
		if (n == 0)
			return truncated(m);
		m->z.next_in = (Bytef *)p;
		m->z.avail_in = (uInt)n;
		int zrc;
		do {
			m->z.next_out = m->buf;
			m->z.avail_out = 1u << 18;
			zrc = zl->inflate(&m->z, Z_BLOCK);
			if (zrc == Z_DATA_ERROR || zrc == Z_NEED_DICT) {
				snprintf(m->err, m->len, "gzip member at byte offset %llu: %s",
					 (unsigned long long)m->start, m->z.msg ? m->z.msg : "invalid deflate data");
				return ACCEL_EDATA;
			}
			if (zrc == Z_MEM_ERROR)
				return ACCEL_ENOMEM;
			int w = emit(m, m->buf, (1u << 18) - m->z.avail_out);
			if (w < 0)
				return w;
			uint64_t at = (in->offset + (uint64_t)n - m->z.avail_in) * 8 - (m->z.data_type & 7);
			if (zrc == Z_STREAM_END) {
				accel_input_consume(in, (size_t)n - m->z.avail_in);
				m->pos = at;
				return 1;
			}
			/* At a block boundary past stop, not inside a header. */
			if ((m->z.data_type & 128) && !(m->z.data_type & 64) && at >= stop) {
				accel_input_consume(in, (size_t)n - m->z.avail_in);
				m->pos = at;
				return 0;
			}
		} while (m->z.avail_in || !m->z.avail_out);
		accel_input_consume(in, (size_t)n);
	}
}

/* The 8-byte trailer after the deflate data ending at m->pos. */
static int trailer(struct member *m)
{
	uint64_t at = (m->pos + 7) / 8;
	accel_input_consume(m->in, (size_t)(at - m->in->offset));
	const uint8_t *p;
	ssize_t n = accel_input_peek(m->in, 8, &p);
	if (n < 0)
		return (int)n;
	if (n < 8) {
		accel_input_consume(m->in, (size_t)n);
		return truncated(m);
	}
	uint32_t crc = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	uint32_t isize = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
	if (crc != m->crc) {
		snprintf(m->err, m->len, "gzip member at byte offset %llu: CRC32 of the trailer does not match (crc error)",
			 (unsigned long long)m->start);
		return ACCEL_EDATA;
	}
	if (isize != m->isize) {
		snprintf(m->err, m->len, "gzip member at byte offset %llu: ISIZE of the trailer does not match (length error)",
			 (unsigned long long)m->start);
		return ACCEL_EDATA;
	}
	accel_input_consume(m->in, 8);
	return 0;
}

/* Bytes of the member's header (RFC 1952, 2.3) in p[n], 0 when the header
 * is not whole in p or has what the serial decoder should judge (reserved
 * flags, a header CRC that does not match, a method other than deflate). */
static size_t header_size(const uint8_t *p, size_t n)
{
	uint32_t stored, computed;
	size_t at = accel_gzip_header_crc(p, n, &stored, &computed);
	return at && stored == computed ? at : 0;
}

size_t accel_gzip_header_crc(const uint8_t *p, size_t n, uint32_t *stored, uint32_t *computed)
{
	*stored = *computed = 0;
	if (n < 10 || p[0] != 0x1f || p[1] != 0x8b || p[2] != 8 || (p[3] & 0xe0))
		return 0;
	size_t at = 10;
	if (p[3] & 4) {
		if (n < at + 2)
			return 0;
		at += 2 + (p[at] | (size_t)p[at + 1] << 8);
	}
	for (int f = 8; f <= 16; f <<= 1)
		if (p[3] & f) {
			while (at < n && p[at])
				at++;
			if (at++ >= n)
				return 0;
		}
	if (p[3] & 2) {
		if (at + 2 > n)
			return 0;
		*computed = isal->crc32_gzip_refl(0, p, at) & 0xffff;
		*stored = p[at] | (uint32_t)p[at + 1] << 8;
		at += 2;
	}
	return at <= n ? at : 0;
}

/* C for `sets` sets of chunks' outputs in memory; 0 under 256 KiB. */
static size_t chunk_size_for(int threads, uint64_t memory, int sets)
{
	/* Per chunk: its input, and a set: up to OUT_RATIO symbols of two
	 * bytes and OUT_RATIO bytes per byte of input (a chunk's buffers only
	 * grow, so one that held a long speculative prefix in one batch and
	 * ISA-L's bytes in another holds both); per set the last chunk's
	 * scratch for its end (OUT_RATIO symbols); plus the margin. */
	uint64_t per = (uint64_t)threads * (1 + (uint64_t)sets * 3 * OUT_RATIO) + (uint64_t)sets * 2 * OUT_RATIO;
	if (memory <= MARGIN + per * (256u << 10))
		return 0;
	uint64_t c = (memory - MARGIN) / per;
	if (c > CHUNK_MAX)
		c = CHUNK_MAX;
	return (size_t)c;
}

size_t accel_gzip_chunk_size(int threads, uint64_t memory, int *sets)
{
	*sets = 0;
	if (threads < 2)
		return 0;
	size_t c = chunk_size_for(threads, memory, 2);
	if (c) {
		*sets = 2;
		return c;
	}
	c = chunk_size_for(threads, memory, 1);
	if (c)
		*sets = 1;
	return c;
}

/* A batch handed to the writer thread: its chunks, all joined, in order. */
struct wjob {
	struct member *m;
	struct chunk *c;
	int used;
	int rc;
};

/* The chunks' markers resolved and their bytes written, in order. */
static int write_batch(struct member *m, struct chunk *c, int used)
{
	int rc = 0;
	for (int k = 0; k < used && rc >= 0; k++)
		if (!c[k].absorbed && (rc = resolve(m, &c[k])) >= 0)
			rc = emit_bytes(m, &c[k]);
	return rc < 0 ? rc : 0;
}

static void *writer_thread(void *arg)
{
	struct wjob *j = arg;
	j->rc = write_batch(j->m, j->c, j->used);
	return NULL;
}

int accel_gzip_inflate_parallel(struct accel_input *in, struct accel_output *out, int threads, uint64_t memory,
				char *err, size_t len)
{
	int sets;
	size_t csize = accel_gzip_chunk_size(threads, memory, &sets);
	if (!csize || !core_isal(NULL, 0) || !core_zlib(NULL, 0))
		return ACCEL_ENOTSUP;
	const uint8_t *p;
	ssize_t n = accel_input_peek(in, ACCEL_GZIP_PARALLEL_MIN, &p);
	if (n < 0)
		return (int)n;
	if ((size_t)n < ACCEL_GZIP_PARALLEL_MIN)
		return ACCEL_ENOTSUP;
	size_t hs = header_size(p, (size_t)n);
	if (!hs)
		return ACCEL_ENOTSUP;

	int rc = 0;
	double w0 = 1.5;
	struct batch bt;
	struct member *m = calloc(1, sizeof *m);
	struct chunk *ch = calloc((size_t)threads * 2, sizeof *ch);
	pthread_t *tid = calloc((size_t)threads, sizeof *tid);
	/* The writer: a batch being written while the next one decodes. */
	pthread_t wt;
	struct wjob wj = { 0 };
	int w_on = 0, set = 0;
	const uint8_t *pwin = NULL; /* w_on: the written batch's last 32 KiB */
	if (!m || !ch || !tid || !(m->buf = malloc(1u << 18))) {
		rc = ACCEL_ENOMEM;
		goto out;
	}
	m->in = in;
	m->out = out;
	m->start = in->offset;
	m->err = err;
	m->len = len;
	accel_input_consume(in, hs);
	m->pos = in->offset * 8;
	pthread_mutex_init(&bt.mu, NULL);
	pthread_cond_init(&bt.cv, NULL);
	for (int k = 0; k < threads * sets; k++) {
		ch[k].o.max = OUT_RATIO * csize;
		ch[k].tmp.max = OUT_RATIO * csize;
		ch[k].b = &bt;
		if (!(ch[k].st = malloc(sizeof *ch[k].st))) {
			rc = ACCEL_ENOMEM;
			goto out;
		}
	}

	for (;;) {
		/* A batch: threads chunks of csize bytes from m->pos, into
		 * the set of chunks the writer does not hold. */
		struct chunk *cs = ch + (size_t)set * (size_t)threads;
		accel_input_consume(in, (size_t)(m->pos / 8 - in->offset));
		size_t want = (size_t)threads * csize + MARGIN;
		n = accel_input_peek(in, want, &p);
		if (n < 0) {
			rc = (int)n;
			break;
		}
		uint64_t base = in->offset * 8, bit0 = m->pos - base;
		size_t span = (size_t)n < (size_t)threads * csize ? (size_t)n : (size_t)threads * csize;
		int used = 0;
		for (int k = 0; k < threads; k++) {
			struct chunk *c = &cs[k];
			/* Shares: w0 for the first chunk, 1 for the others. */
			double tot = w0 + threads - 1;
			uint64_t a = k == 0 ? 0 : (uint64_t)(span * ((w0 + k - 1) / tot));
			uint64_t z = k == threads - 1 ? span : (uint64_t)(span * ((w0 + k) / tot));
			c->p = p;
			c->n = (size_t)n;
			c->known = k == 0;
			c->first = k == 0 ? bit0 : a * 8;
			c->stop = k == threads - 1 && (size_t)n == span ? UINT64_MAX : z * 8;
			/* While the writer has the batch before, the window
			 * is that batch's last bytes (m->window is its). */
			c->win = w_on ? pwin : m->window;
			c->wlen = w_on ? WSIZE : m->wlen;
			c->found_set = c->done = c->absorbed = 0;
			c->next = NULL;
			if (c->first >= c->stop || (k > 0 && z - a < 1024))
				break;
			if (k > 0)
				cs[k - 1].next = c;
			used++;
		}
		/* A chunk without its thread publishes no start: the one
		 * before it ends not joined, for the serial decoder. */
		int started = 1;
		for (int k = 1; k < used; k++) {
			if (pthread_create(&tid[k], NULL, chunk_thread, &cs[k])) {
				for (int j = k; j < used; j++) {
					cs[j].rc = R_ERR;
					publish(&cs[j], UINT64_MAX);
					pthread_mutex_lock(&bt.mu);
					cs[j].done = 1;
					pthread_cond_broadcast(&bt.cv);
					pthread_mutex_unlock(&bt.mu);
				}
				break;
			}
			started++;
		}
		chunk_run(&cs[0]);
		for (int k = 1; k < started; k++)
			pthread_join(tid[k], NULL);
		/* The first chunk, all ISA-L, takes less time a byte than the
		 * others with their speculative prefix: its share of the next
		 * batch follows the times of this one. */
		if (started == used && used == threads && cs[0].cpu > 0) {
			double others = 0;
			for (int k = 1; k < used; k++)
				others += cs[k].cpu;
			others /= used - 1;
			w0 *= 0.5 + 0.5 * others / cs[0].cpu; /* damped */
			w0 = w0 < 1 ? 1 : w0 > 4 ? 4 : w0;
		}

		/* Does the whole batch join, from m->pos on? */
		uint64_t at = m->pos;
		int joined = 0, end = 0;
		while (joined < used && !end) {
			/* Decoded by the chunk before it, already joined. */
			if (cs[joined].absorbed && base + cs[joined].start < at) {
				joined++;
				continue;
			}
			if (cs[joined].rc < 0 || base + cs[joined].start != at)
				break;
			at = base + cs[joined].end;
			end = cs[joined].rc == R_END;
			joined++;
		}
		/* The batch before is written first; then this one. */
		if (w_on) {
			pthread_join(wt, NULL);
			w_on = 0;
			if ((rc = wj.rc) < 0)
				goto out;
		}
		int tail = used - 1; /* the chunk whose bytes end the batch */
		while (tail > 0 && cs[tail].absorbed)
			tail--;
		if (sets == 2 && joined == used && !end && cs[tail].nb >= WSIZE) {
			/* All joined, the next batch's window in the bytes of
			 * its last chunk: written while the next decodes. */
			wj = (struct wjob){ m, cs, used, 0 };
			if (pthread_create(&wt, NULL, writer_thread, &wj)) {
				if ((rc = write_batch(m, cs, used)) < 0)
					goto out;
			} else {
				w_on = 1;
				pwin = cs[tail].bytes + cs[tail].nb - WSIZE;
				set ^= 1;
			}
			m->pos = at;
			continue;
		}

		/* In order: join or decode serially. */
		end = 0;
		for (int k = 0; k < used && !end; k++) {
			struct chunk *c = &cs[k];
			if (c->absorbed && base + c->start < m->pos)
				continue;
			if (c->rc >= 0 && base + c->start == m->pos) {
				if ((rc = resolve(m, c)) < 0 || (rc = emit_bytes(m, c)) < 0)
					goto out;
				m->pos = base + c->end;
				end = c->rc == R_END;
				continue;
			}
			/* Not joined: zlib, from where the last one ended. The
			 * input's buffer may move: the batch ends here. */
			rc = serial_to(m, c->stop == UINT64_MAX ? UINT64_MAX : base + c->stop);
			if (rc < 0)
				goto out;
			end = rc == 1;
			rc = 0;
			/* The chunks after this one start from input positions
			 * still valid as bits; their symbols are theirs. */
			for (int j = k + 1; j < used && !end; j++) {
				struct chunk *cj = &cs[j];
				if (cj->rc < 0 || base + cj->start != m->pos)
					break;
				if ((rc = resolve(m, cj)) < 0 || (rc = emit_bytes(m, cj)) < 0)
					goto out;
				m->pos = base + cj->end;
				end = cj->rc == R_END;
			}
			break;
		}
		if (end) {
			rc = trailer(m);
			break;
		}
	}
out:
	if (w_on)
		pthread_join(wt, NULL);
	if (m) {
		if (m->z_open)
			zl->inflateEnd(&m->z);
		free(m->buf);
	}
	if (ch)
		for (int k = 0; k < threads * 2; k++) {
			free(ch[k].o.s);
			free(ch[k].tmp.s);
			free(ch[k].bytes);
			free(ch[k].st);
		}
	if (ch && ch[0].b) {
		pthread_mutex_destroy(&bt.mu);
		pthread_cond_destroy(&bt.cv);
	}
	free(ch);
	free(tid);
	free(m);
	return rc;
}
