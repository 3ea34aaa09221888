/*
 * wav.c - the header of a WAV file: RIFF chunks (id, little-endian 32-bit
 * size, data padded to an even length), the "fmt " chunk (WAVEFORMAT:
 * format tag, channels, sample rate, byte rate, block align, bits; tag
 * 0xFFFE WAVE_FORMAT_EXTENSIBLE carries the real tag in the first two bytes
 * of its SubFormat GUID), then "data". Source: Microsoft, "Multimedia
 * Programming Interface and Data Specifications 1.0" (1991) and
 * "Multiple Channel Audio Data and WAVE Files" (WAVEFORMATEXTENSIBLE).
 * RF64 (EBU Tech 3306) and BW64 (ITU-R BS.2088) are the same chunks under
 * "RF64" or "BW64", with a "ds64" chunk first whose 64-bit sizes stand for
 * the 32-bit fields that hold 0xFFFFFFFF. RIFX (big-endian RIFF) and Sony
 * Wave64 are recognised and refused.
 * No size read here is trusted: every chunk is checked against the bytes
 * given, and the RIFF size is ignored (streamed files lie in it).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <accel/ops/fft.h>
#include "core.h"

/* Bytes of header (chunks before the samples) accepted at most. */
#define WAV_HEADER_MAX ((size_t)1 << 20)

#define TAG_PCM 1
#define TAG_FLOAT 3
#define TAG_EXTENSIBLE 0xFFFE

static unsigned le16(const uint8_t *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* KSDATAFORMAT_SUBTYPE_* GUIDs end with these 14 bytes (after the tag). */
static const uint8_t guid_tail[14] = {
	0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71,
};

static int bad(char *err, size_t len, const char *what)
{
	snprintf(err, len, "WAV header: %s", what);
	return ACCEL_EDATA;
}

/* The "fmt " chunk's body c[0..size) into w. */
static int parse_fmt(const uint8_t *c, uint32_t size, struct accel_wav *w, char *err, size_t len)
{
	if (size < 16)
		return bad(err, len, "fmt chunk shorter than 16 bytes");
	unsigned tag = le16(c), align = le16(c + 12);
	w->channels = le16(c + 2);
	w->rate = le32(c + 4);
	w->bits = le16(c + 14);
	if (tag == TAG_EXTENSIBLE) {
		if (size < 40 || le16(c + 16) < 22)
			return bad(err, len, "WAVE_FORMAT_EXTENSIBLE fmt chunk shorter than 40 bytes");
		if (memcmp(c + 26, guid_tail, sizeof guid_tail))
			return bad(err, len, "unknown WAVE_FORMAT_EXTENSIBLE sub-format");
		tag = le16(c + 24);
	}
	if (w->channels == 0)
		return bad(err, len, "0 channels");
	if (tag == TAG_PCM && w->bits == 8)
		w->type = ACCEL_SAMPLE_U8;
	else if (tag == TAG_PCM && w->bits == 16)
		w->type = ACCEL_SAMPLE_I16;
	else if (tag == TAG_PCM && w->bits == 24)
		w->type = ACCEL_SAMPLE_I24;
	else if (tag == TAG_PCM && w->bits == 32)
		w->type = ACCEL_SAMPLE_I32;
	else if (tag == TAG_FLOAT && w->bits == 32)
		w->type = ACCEL_SAMPLE_F32;
	else if (tag == TAG_FLOAT && w->bits == 64)
		w->type = ACCEL_SAMPLE_F64;
	else {
		snprintf(err, len, "WAV header: format %u with %u-bit samples is not supported (8-, 16-, 24- or 32-bit PCM, 32- or 64-bit float)",
			 tag, w->bits);
		return ACCEL_EDATA;
	}
	if (align != w->channels * (w->bits / 8))
		return bad(err, len, "block align does not match channels and bits");
	return 0;
}

/* What the first bytes p[0..n) may be: the 4-byte form of a RIFF-like
 * file, matched on as many bytes as there are. */
enum form { FORM_NONE, FORM_RIFF, FORM_RF64, FORM_BW64, FORM_RIFX, FORM_W64 };

static enum form form_of(const uint8_t *p, size_t n)
{
	static const char *const ids[] = { [FORM_RIFF] = "RIFF", [FORM_RF64] = "RF64", [FORM_BW64] = "BW64",
					   [FORM_RIFX] = "RIFX", [FORM_W64] = "riff" };
	for (int f = FORM_RIFF; f <= FORM_W64; f++)
		if (!memcmp(p, ids[f], n < 4 ? n : 4))
			return (enum form)f;
	return FORM_NONE;
}

/* Sony Wave64: the "riff" GUID (its 12 bytes after "riff"). */
static const uint8_t w64_riff_tail[12] = {
	0x2e, 0x91, 0xcf, 0x11, 0xa5, 0xd6, 0x28, 0xdb, 0x04, 0xc1, 0x00, 0x00,
};

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

int accel_wav_parse(const uint8_t *p, size_t n, struct accel_wav *w, size_t *need, char *err, size_t len)
{
	*need = 0;
	enum form form = form_of(p, n);
	if (form == FORM_NONE)
		return 0;
	size_t want = form == FORM_W64 ? 16 : 12;
	if (n < want) {
		/* Three bytes may still be any form: each is told apart once
		 * its bytes are there. */
		*need = want;
		return ACCEL_ENOTSUP;
	}
	if (form == FORM_W64)
		return memcmp(p + 4, w64_riff_tail, sizeof w64_riff_tail) ? 0 :
			bad(err, len, "Sony Wave64 (.w64) is not supported (RIFF, RF64 and BW64 are)");
	if (form == FORM_RIFX)
		return bad(err, len, "RIFX (big-endian RIFF) is not supported (RIFF, RF64 and BW64 are)");
	if (memcmp(p + 8, "WAVE", 4))
		return bad(err, len, form == FORM_RIFF ? "a RIFF file that is not WAVE" : "an RF64 or BW64 file that is not WAVE");
	memcpy(w->form, p, 4);
	w->form[4] = 0;
	int have_fmt = 0;
	size_t off = 12;
	int64_t ds64_data = -1;  /* the ds64 chunk's data size, -1: no ds64 */
	for (;;) {
		if (off + 8 > WAV_HEADER_MAX)
			return bad(err, len, "no data chunk in the first 1 MiB");
		if (off + 8 > n) {
			*need = off + 8;
			return ACCEL_ENOTSUP;
		}
		uint32_t size = le32(p + off + 4);
		if (off == 12 && form != FORM_RIFF) {
			/* ds64: RIFF size, data size, sample count (64 bits
			 * each), then a table of other chunks' sizes. */
			if (memcmp(p + off, "ds64", 4))
				return bad(err, len, "an RF64 or BW64 file without a ds64 chunk first");
			if (size < 28)
				return bad(err, len, "ds64 chunk shorter than 28 bytes");
			if (off + 8 + 28 > n) {
				*need = off + 8 + 28;
				return ACCEL_ENOTSUP;
			}
			uint64_t d = le64(p + off + 16);
			if (d > INT64_MAX)
				return bad(err, len, "ds64 data size over 2^63 bytes");
			ds64_data = (int64_t)d;
		}
		if (!memcmp(p + off, "data", 4)) {
			if (!have_fmt)
				return bad(err, len, "data chunk before the fmt chunk");
			w->data_offset = off + 8;
			int64_t d = size == 0xFFFFFFFFu && ds64_data >= 0 ? ds64_data : size == 0xFFFFFFFFu ? 0 : (int64_t)size;
			w->data_size = d ? d : -1;
			return 1;
		}
		/* Every other chunk is skipped; "fmt " is read. The chunk and
		 * its pad byte must fit the header limit. */
		uint64_t next = (uint64_t)off + 8 + size + (size & 1);
		if (next > WAV_HEADER_MAX)
			return bad(err, len, "a chunk before the data runs past the first 1 MiB");
		if (!memcmp(p + off, "fmt ", 4)) {
			if (have_fmt)
				return bad(err, len, "two fmt chunks");
			if (off + 8 + size > n) {
				*need = off + 8 + size;
				return ACCEL_ENOTSUP;
			}
			int rc = parse_fmt(p + off + 8, size, w, err, len);
			if (rc < 0)
				return rc;
			have_fmt = 1;
		}
		off = (size_t)next;
	}
}
