/*
 * crypt_armor.c - fuzz target for accel-crypt's armor decoder
 * (libcore/ops/crypt/armor.c). Fed whole or in two pieces cut anywhere,
 * the decoder gives the same bytes and the same verdict; armor it accepts,
 * written again by our encoder's rules (64 columns, padding on the last
 * line), is the input without its surrounding whitespace and CRs: one
 * encoding per file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ops/crypt/crypt_format.h"
#include "fuzz.h"

static void fail(const char *what)
{
	fprintf(stderr, "fuzz: crypt_armor: %s\n", what);
	abort();
}

static int decode(const uint8_t *p, size_t n, size_t cut, struct accel_buf *out)
{
	struct armor_dec d;
	char err[200];
	memset(&d, 0, sizeof d);
	if (armor_feed(&d, p, cut, out, err, sizeof err) < 0 || armor_feed(&d, p + cut, n - cut, out, err, sizeof err) < 0)
		return -1;
	return armor_finish(&d, err, sizeof err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct accel_buf a = { 0 }, b = { 0 };
	int ra = decode(data, size, 0, &a);
	int rb = decode(data, size, size / 3, &b);
	if (ra != rb || (ra == 0 && (a.len != b.len || (a.len && memcmp(a.data, b.data, a.len)))))
		fail("the verdict or the bytes depend on where the input is cut");
	if (ra == 0) {
		/* The input without CRs and the whitespace around the armor. */
		size_t s = 0, e = size;
		while (s < e && strchr(" \t\r\n", data[s]))
			s++;
		while (e > s && strchr(" \t\r\n", data[e - 1]))
			e--;
		char *norm = malloc(e - s + 2);
		size_t nl = 0;
		for (size_t i = s; i < e; i++)
			if (data[i] != '\r')
				norm[nl++] = (char)data[i];
		norm[nl++] = '\n';
		struct text t = { 0 };
		text_add(&t, ARMOR_BEGIN "\n", sizeof ARMOR_BEGIN);
		for (size_t i = 0; i < a.len; i += 48) {
			char line[70];
			size_t k = a.len - i < 48 ? a.len - i : 48;
			size_t l = b64_encode(a.data + i, k, line);
			while (l % 4)
				line[l++] = '=';
			line[l++] = '\n';
			text_add(&t, line, l);
		}
		text_add(&t, ARMOR_END "\n", sizeof ARMOR_END);
		if (t.oom || t.len != nl || memcmp(t.p, norm, nl))
			fail("accepted armor that our encoder would not have written");
		free(t.p);
		free(norm);
	}
	accel_buf_free(&a);
	accel_buf_free(&b);
	return 0;
}
