/*
 * wav.c - fuzz target for the WAV header reader (accel_wav_parse): no read
 * past the bytes given, and the answers agree with one another whatever
 * sizes the header states: a header that parses parses the same from just
 * its own bytes, every shorter prefix asks for more (never for less than
 * it has, never past the header), and "need more" never asks past 1 MiB.
 * RF64 and BW64 are one format under two names: the input under the other
 * name parses the same. The input is copied to a buffer of its exact size,
 * so ASan sees any read past it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "accel.h"
#include "fuzz.h"

static void fail(const char *what, size_t k)
{
	fprintf(stderr, "fuzz: wav: %s (prefix %zu)\n", what, k);
	abort();
}

/* Parse p[0..k) from a copy of exactly k bytes into *w (zeroed first). */
static int parse(const uint8_t *p, size_t k, struct accel_wav *w, size_t *need, char *err, size_t len)
{
	uint8_t *c = malloc(k ? k : 1);
	if (!c)
		abort();
	memcpy(c, p, k);
	memset(w, 0, sizeof *w);  /* padding too: results are compared whole */
	int rc = accel_wav_parse(c, k, w, need, err, len);
	free(c);
	return rc;
}

/* p[0..k) parses as it does with RF64 and BW64 swapped: the same answer,
 * fields (but the form), bytes asked for and message. */
static void check_other_name(const uint8_t *p, size_t k)
{
	int rf = k >= 4 && !memcmp(p, "RF64", 4);
	if (!rf && (k < 4 || memcmp(p, "BW64", 4)))
		return;
	uint8_t *c = malloc(k);
	if (!c)
		abort();
	memcpy(c, p, k);
	memcpy(c, rf ? "BW64" : "RF64", 4);
	struct accel_wav w1, w2;
	size_t need1 = 0, need2 = 0;
	char err1[256] = "", err2[256] = "";
	int r1 = parse(p, k, &w1, &need1, err1, sizeof err1);
	int r2 = parse(c, k, &w2, &need2, err2, sizeof err2);
	free(c);
	memcpy(w2.form, w1.form, sizeof w2.form);
	if (r1 != r2 || need1 != need2 || strcmp(err1, err2) || (r1 == 1 && memcmp(&w1, &w2, sizeof w2)))
		fail("RF64 and BW64 parse otherwise", k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct accel_wav w, w2;
	size_t need;
	char err[256] = "";
	int rc = parse(data, size, &w, &need, err, sizeof err);
	check_other_name(data, size);
	if (rc == ACCEL_ENOTSUP) {
		if (need <= size || need > ((size_t)1 << 20) + 8)
			fail("asked for a wrong number of bytes", size);
		return 0;
	}
	if (rc == ACCEL_EDATA) {
		if (!err[0] || strchr(err, '\n') || strncmp(err, "WAV header: ", 12))
			fail("an error without its one line", size);
		return 0;
	}
	if (rc == 0)
		return 0;
	if (rc != 1)
		fail("unexpected return", size);
	if (memcmp(w.form, data, 4) || w.form[4] || (strcmp(w.form, "RIFF") && strcmp(w.form, "RF64") && strcmp(w.form, "BW64")))
		fail("a header of another form", size);
	if (w.data_offset > size || w.data_offset < 20 || w.data_size < -1 || w.data_size == 0 ||
	    w.channels == 0 || accel_sample_bytes(w.type) != w.bits / 8 || accel_sample_is_complex(w.type))
		fail("a header with impossible fields", size);
	/* The header alone gives the same answer. */
	if (parse(data, (size_t)w.data_offset, &w2, &need, err, sizeof err) != 1 || memcmp(&w, &w2, sizeof w))
		fail("the header alone parses otherwise", (size_t)w.data_offset);
	/* Shorter prefixes ask for more, within the header. */
	size_t step = w.data_offset / 64 + 1;
	for (size_t k = 0; k < w.data_offset; k += step) {
		int r = parse(data, k, &w2, &need, err, sizeof err);
		if (r != ACCEL_ENOTSUP || need <= k || need > w.data_offset)
			fail("a prefix of a good header is not asked to grow", k);
	}
	return 0;
}
