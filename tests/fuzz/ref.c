/*
 * ref.c - memory files and the reference decoders for the fuzz targets:
 * libzstd's streaming decoder, zlib's gzip inflate member by member, and
 * liblz4's frame decoder (and its block decoder for legacy frames), each
 * over the whole input.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <lz4.h>
#include <lz4frame.h>
#include "fuzz.h"

void fuzz_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("fuzz: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

int fuzz_memfd(const char *name, const void *data, size_t size)
{
	int fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	const uint8_t *p = data;
	while (size) {
		ssize_t w = write(fd, p, size);
		if (w <= 0) {
			close(fd);
			return -1;
		}
		p += w;
		size -= (size_t)w;
	}
	if (lseek(fd, 0, SEEK_SET) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void put(struct fuzz_out *o, const void *p, size_t n)
{
	if (o->too_big || !n)
		return;
	if (o->len + n > FUZZ_OUT_MAX) {
		o->too_big = 1;
		return;
	}
	if (o->len + n > o->cap) {
		size_t cap = o->cap ? o->cap : 65536;
		while (cap < o->len + n)
			cap *= 2;
		uint8_t *d = realloc(o->data, cap);
		if (!d)
			fuzz_fail("out of memory");
		o->data = d;
		o->cap = cap;
	}
	memcpy(o->data + o->len, p, n);
	o->len += n;
}

void fuzz_slurp(int fd, struct fuzz_out *o)
{
	uint8_t buf[65536];
	ssize_t r;
	if (lseek(fd, 0, SEEK_SET) < 0)
		fuzz_fail("lseek on a memory file failed");
	while ((r = read(fd, buf, sizeof buf)) > 0)
		put(o, buf, (size_t)r);
}

void fuzz_out_free(struct fuzz_out *o)
{
	free(o->data);
	memset(o, 0, sizeof *o);
}

void fuzz_ref_zstd(const uint8_t *p, size_t n, struct fuzz_out *o)
{
	ZSTD_DCtx *d = ZSTD_createDCtx();
	uint8_t buf[1 << 16];
	ZSTD_inBuffer in = { p, n, 0 };
	size_t rc = 0;
	o->ok = 0;
	if (!d)
		fuzz_fail("out of memory");
	/* zstd -d's default window limit (windowLog 27, 128 MiB). */
	ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, 27);
	if (n == 0)
		goto out;
	while (in.pos < in.size && !o->too_big) {
		ZSTD_outBuffer ob = { buf, sizeof buf, 0 };
		rc = ZSTD_decompressStream(d, &ob, &in);
		if (ZSTD_isError(rc))
			goto out;
		put(o, buf, ob.pos);
	}
	/* Flush what a finished input still holds. */
	while (rc != 0 && !o->too_big) {
		ZSTD_outBuffer ob = { buf, sizeof buf, 0 };
		rc = ZSTD_decompressStream(d, &ob, &in);
		if (ZSTD_isError(rc) || ob.pos == 0)
			break;
		put(o, buf, ob.pos);
	}
	o->ok = rc == 0;
out:
	ZSTD_freeDCtx(d);
}

void fuzz_ref_gzip(const uint8_t *p, size_t n, struct fuzz_out *o)
{
	uint8_t buf[1 << 16];
	z_stream z;
	memset(&z, 0, sizeof z);
	o->ok = 0;
	if (n == 0 || inflateInit2(&z, 16 + 15) != Z_OK)
		return;
	size_t pos = 0;
	for (;;) {
		/* Each member starts with the gzip magic. After a member, gzip
		 * -d ignores zero bytes, says a lone other byte ends a member
		 * short, and ignores two or more with a warning ("trailing
		 * garbage", status 2). */
		if (pos && (n - pos < 2 || p[pos] != 0x1f || p[pos + 1] != 0x8b)) {
			size_t z0 = pos;
			while (z0 < n && !p[z0])
				z0++;
			if (z0 == n)
				o->ok = 1;
			else if (n - pos >= 2)
				o->garbage = 1;
			break;
		}
		if (n - pos < 2 || p[pos] != 0x1f || p[pos + 1] != 0x8b)
			break;
		z.next_in = (Bytef *)(p + pos);
		z.avail_in = (uInt)(n - pos);
		int rc;
		do {
			z.next_out = buf;
			z.avail_out = sizeof buf;
			rc = inflate(&z, Z_NO_FLUSH);
			put(o, buf, sizeof buf - z.avail_out);
		} while (rc == Z_OK && !o->too_big && (z.avail_in || !z.avail_out));
		if (rc != Z_STREAM_END)
			break;
		pos = n - z.avail_in;
		if (pos == n) {
			o->ok = 1;
			break;
		}
		inflateReset(&z);
	}
	inflateEnd(&z);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* lz4 -d's legacy frame at p[*pos] (lz4io.c, LZ4IO_decodeLegacyStream):
 * after the magic, a 4-byte size and a block, each decoded alone into at
 * most 8 MiB, until the input ends or a size over LZ4_COMPRESSBOUND(8 MiB),
 * the next frame's magic. 1 with *pos after the frame, or 0 (corrupt or
 * truncated). */
static int ref_lz4_legacy(const uint8_t *p, size_t n, size_t *pos, struct fuzz_out *o)
{
	static char *block;
	if (!block && !(block = malloc(8u << 20)))
		fuzz_fail("out of memory");
	size_t at = *pos + 4;
	while (at < n && !o->too_big) {
		if (n - at < 4)
			return 0;
		uint32_t size = le32(p + at);
		if (size > LZ4_COMPRESSBOUND(8 << 20))
			break;
		if (n - at - 4 < size)
			return 0;
		int got = LZ4_decompress_safe((const char *)p + at + 4, block, (int)size, 8 << 20);
		if (got < 0)
			return 0;
		put(o, block, (size_t)got);
		at += 4 + size;
	}
	*pos = at;
	return 1;
}

void fuzz_ref_lz4(const uint8_t *p, size_t n, struct fuzz_out *o)
{
	static uint8_t *buf;  /* one 4 MiB block buffer for the process */
	LZ4F_dctx *d;
	o->ok = 0;
	if (!buf && !(buf = malloc(4u << 20)))
		fuzz_fail("out of memory");
	if (LZ4F_isError(LZ4F_createDecompressionContext(&d, LZ4F_VERSION)))
		fuzz_fail("out of memory");
	size_t pos = 0, hint = 1;
	while (pos < n && !o->too_big) {
		/* Between frames (and first) a legacy frame may start. */
		if ((hint == 0 || pos == 0) && n - pos >= 4 && le32(p + pos) == 0x184C2102u) {
			if (!ref_lz4_legacy(p, n, &pos, o))
				goto out;
			hint = 0;
			continue;
		}
		size_t src = n - pos, dst = 4u << 20;
		hint = LZ4F_decompress(d, buf, &dst, p + pos, &src, NULL);
		if (LZ4F_isError(hint))
			goto out;
		put(o, buf, dst);
		pos += src;
		if (src == 0 && dst == 0)
			break;
	}
	o->ok = n > 0 && pos == n && hint == 0;
out:
	LZ4F_freeDecompressionContext(d);
}
