/*
 * crypt_minisig.c - fuzz target for accel-crypt's minisign signature file
 * parser (libcore/ops/crypt/minisign.c). A file it accepts, written again
 * in minisign's layout (padded base64 of "ED"/"Ed" || key id ||
 * signature), parses to the same fields; it never reads past the text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ops/crypt/crypt_format.h"
#include "fuzz.h"

static void fail(const char *what)
{
	fprintf(stderr, "fuzz: crypt_minisig: %s\n", what);
	abort();
}

static void b64p(const uint8_t *p, size_t n, char *out)
{
	size_t l = b64_encode(p, n, out);
	while (l % 4)
		out[l++] = '=';
	out[l] = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	struct minisig a, b;
	if (minisign_sig_parse(text, size, &a) == 0) {
		uint8_t blob[74];
		char l2[120], l4[100];
		blob[0] = 'E';
		blob[1] = a.legacy ? 'd' : 'D';
		memcpy(blob + 2, a.id, 8);
		memcpy(blob + 10, a.sig, 64);
		b64p(blob, sizeof blob, l2);
		b64p(a.gsig, 64, l4);
		size_t n = strlen(a.untrusted) + strlen(a.trusted) + 400;
		char *again = malloc(n);
		snprintf(again, n, "untrusted comment: %s\n%s\ntrusted comment: %s\n%s\n", a.untrusted, l2, a.trusted, l4);
		if (minisign_sig_parse(again, strlen(again), &b) < 0 || a.legacy != b.legacy || memcmp(a.id, b.id, 8) ||
		    memcmp(a.sig, b.sig, 64) || memcmp(a.gsig, b.gsig, 64) || strcmp(a.trusted, b.trusted) ||
		    strcmp(a.untrusted, b.untrusted))
			fail("a parsed signature written again parses to other fields");
		free(again);
	}
	free(text);
	return 0;
}
