/*
 * seekable.c - zstd's seekable format: the seek table frame written after
 * independent frames, and read back from the end of a file so that a range
 * of the content decodes from the frames it needs. Layout: "Zstandard
 * Seekable Format" 0.1.0 (zstd's contrib/seekable_format/
 * zstd_seekable_compression_format.md).
 */
#include <stdlib.h>
#include <string.h>
#include <accel/ops/compress.h>
#include "core.h"

/* Checksum_Flag, and the Reserved_Bits a reader must find zero, of the
 * Seek_Table_Descriptor. */
#define DESC_CHECKSUM 0x80u
#define DESC_RESERVED 0x7Cu

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

void accel_seek_table_free(struct accel_seek_table *t)
{
	free(t->coff);
	free(t->doff);
	free(t->check);
	memset(t, 0, sizeof *t);
}

/* Room for n frames. */
static int reserve(struct accel_seek_table *t, uint64_t n)
{
	if (n <= t->cap)
		return 0;
	uint64_t cap = t->cap * 2 > n ? t->cap * 2 : n;
	if (cap > UINT32_MAX)
		cap = UINT32_MAX;
	uint64_t *c = realloc(t->coff, (size_t)(cap + 1) * sizeof *c);
	if (!c)
		return ACCEL_ENOMEM;
	t->coff = c;
	uint64_t *d = realloc(t->doff, (size_t)(cap + 1) * sizeof *d);
	if (!d)
		return ACCEL_ENOMEM;
	t->doff = d;
	uint32_t *k = realloc(t->check, (size_t)cap * sizeof *k);
	if (!k)
		return ACCEL_ENOMEM;
	t->check = k;
	if (!t->cap)
		t->coff[0] = t->doff[0] = 0;
	t->cap = cap;
	return 0;
}

int accel_seek_table_add(struct accel_seek_table *t, uint64_t csize, uint64_t dsize, uint32_t check)
{
	if (csize > UINT32_MAX || dsize > UINT32_MAX || t->nframes >= UINT32_MAX)
		return ACCEL_EINVAL;
	int rc = reserve(t, t->nframes + 1);
	if (rc < 0)
		return rc;
	uint64_t k = t->nframes++;
	t->coff[k + 1] = t->coff[k] + csize;
	t->doff[k + 1] = t->doff[k] + dsize;
	t->check[k] = check;
	return 0;
}

int accel_seek_table_write(const struct accel_seek_table *t, struct accel_output *out)
{
	size_t entry = t->checksums ? 12 : 8;
	uint8_t buf[4096];
	size_t n = 0;
	uint64_t body = t->nframes * entry + ACCEL_SEEK_FOOTER;
	put_le32(buf, ACCEL_SEEK_TABLE_MAGIC);
	put_le32(buf + 4, (uint32_t)body);
	n = 8;
	for (uint64_t k = 0; k < t->nframes; k++) {
		if (n + entry > sizeof buf) {
			int rc = accel_output_write(out, buf, n);
			if (rc < 0)
				return rc;
			n = 0;
		}
		put_le32(buf + n, (uint32_t)(t->coff[k + 1] - t->coff[k]));
		put_le32(buf + n + 4, (uint32_t)(t->doff[k + 1] - t->doff[k]));
		if (t->checksums)
			put_le32(buf + n + 8, t->check[k]);
		n += entry;
	}
	if (n + ACCEL_SEEK_FOOTER > sizeof buf) {
		int rc = accel_output_write(out, buf, n);
		if (rc < 0)
			return rc;
		n = 0;
	}
	put_le32(buf + n, (uint32_t)t->nframes);
	buf[n + 4] = t->checksums ? DESC_CHECKSUM : 0;
	put_le32(buf + n + 5, ACCEL_SEEKABLE_MAGIC);
	return accel_output_write(out, buf, n + ACCEL_SEEK_FOOTER);
}

int accel_seek_footer(const uint8_t *f, uint64_t size, uint64_t *frame_size, char *err, size_t len)
{
	if (le32(f + 5) != ACCEL_SEEKABLE_MAGIC)
		return ACCEL_ENOTSUP;
	if (f[4] & DESC_RESERVED) {
		snprintf(err, len, "seek table: reserved descriptor bits set (0x%02x): a later version of the format",
			 f[4]);
		return ACCEL_EDATA;
	}
	uint64_t nframes = le32(f), entry = f[4] & DESC_CHECKSUM ? 12 : 8;
	*frame_size = 8 + nframes * entry + ACCEL_SEEK_FOOTER;
	if (*frame_size > size) {
		snprintf(err, len, "seek table: %llu frames need %llu bytes, more than the %llu of the input",
			 (unsigned long long)nframes, (unsigned long long)*frame_size, (unsigned long long)size);
		return ACCEL_EDATA;
	}
	return 0;
}

int accel_seek_table_parse(const uint8_t *p, size_t n, uint64_t size, struct accel_seek_table *t,
			   char *err, size_t len)
{
	accel_seek_table_free(t);
	if (n < 8 + ACCEL_SEEK_FOOTER || n > size)
		return ACCEL_ENOTSUP;
	uint64_t frame_size;
	const uint8_t *f = p + n - ACCEL_SEEK_FOOTER;
	int rc = accel_seek_footer(f, size, &frame_size, err, len);
	if (rc < 0)
		return rc;
	if (frame_size != n) {
		snprintf(err, len, "seek table: its footer says %llu bytes, %zu given",
			 (unsigned long long)frame_size, n);
		return ACCEL_EDATA;
	}
	if (le32(p) != ACCEL_SEEK_TABLE_MAGIC || le32(p + 4) != n - 8) {
		snprintf(err, len, "seek table: not preceded by its skippable frame header (magic 0x%08x, size %u "
			 "for %zu bytes)", le32(p), le32(p + 4), n - 8);
		return ACCEL_EDATA;
	}
	uint64_t nframes = le32(f), data = size - n;
	int checksums = !!(f[4] & DESC_CHECKSUM);
	size_t entry = checksums ? 12 : 8;
	if (nframes && (rc = reserve(t, nframes)) < 0)
		return rc;
	t->checksums = checksums;
	t->frame_size = n;
	for (uint64_t k = 0; k < nframes; k++) {
		const uint8_t *e = p + 8 + k * entry;
		uint32_t csize = le32(e);
		if (csize < 8 || t->coff[k] + csize > data) {
			snprintf(err, len, "seek table: frame %llu is %u bytes at byte offset %llu, %s",
				 (unsigned long long)k, csize, (unsigned long long)t->coff[k],
				 csize < 8 ? "shorter than any frame" : "past the start of the table");
			accel_seek_table_free(t);
			return ACCEL_EDATA;
		}
		t->coff[k + 1] = t->coff[k] + csize;
		t->doff[k + 1] = t->doff[k] + le32(e + 4);
		t->check[k] = checksums ? le32(e + 8) : 0;
		t->nframes = k + 1;
	}
	if (t->nframes ? t->coff[nframes] != data : data != 0) {
		snprintf(err, len, "seek table: its %llu frames add up to %llu bytes, but %llu come before the table",
			 (unsigned long long)nframes, (unsigned long long)(nframes ? t->coff[nframes] : 0),
			 (unsigned long long)data);
		accel_seek_table_free(t);
		return ACCEL_EDATA;
	}
	return 0;
}

int accel_seek_table_read(struct accel_input *in, struct accel_seek_table *t, char *err, size_t len)
{
	accel_seek_table_free(t);
	if (in->size < 8 + ACCEL_SEEK_FOOTER)
		return ACCEL_ENOTSUP;
	uint64_t size = (uint64_t)in->size, frame_size;
	uint8_t f[ACCEL_SEEK_FOOTER];
	ssize_t got = accel_input_pread(in, size - sizeof f, f, sizeof f);
	if (got < 0)
		return (int)got;
	if (got < (ssize_t)sizeof f) {
		snprintf(err, len, "seek table: the input is shorter than it said");
		return ACCEL_EDATA;
	}
	int rc = accel_seek_footer(f, size, &frame_size, err, len);
	if (rc < 0)
		return rc;
	uint8_t *p = malloc((size_t)frame_size);
	if (!p)
		return ACCEL_ENOMEM;
	got = accel_input_pread(in, size - frame_size, p, (size_t)frame_size);
	if (got >= 0 && (uint64_t)got < frame_size) {
		snprintf(err, len, "seek table: the input is shorter than it said");
		got = ACCEL_EDATA;
	}
	rc = got < 0 ? (int)got : accel_seek_table_parse(p, (size_t)frame_size, size, t, err, len);
	free(p);
	return rc;
}
