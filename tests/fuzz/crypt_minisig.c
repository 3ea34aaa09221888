/*
 * crypt_minisig.c - fuzz target for accel-crypt's minisign file parsers
 * (libcore/ops/crypt/minisign.c). A signature file it accepts, written
 * again in minisign's layout (padded base64 of "ED"/"Ed" || key id ||
 * signature), parses to the same fields; it never reads past the text.
 * The same bytes go through the public and secret key file parsers: a key
 * they accept (an unencrypted one, for the secret key parser: an encrypted
 * one would cost scrypt's work), written again, reads back to the same key.
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

/* data[0..size) as a public key file (secret: a secret key file). */
static void key_file(const uint8_t *data, size_t size, int secret)
{
	char *text = malloc(size + 1), again[512], err[200];
	struct minisign_key a, b;
	if (!text)
		return;
	memcpy(text, data, size);
	text[size] = 0;
	struct minisign_sealed s;
	int rc = secret ? minisign_sec_file_parse(text, size, &s, err, sizeof err)
			: minisign_pub_file_parse(text, size, &a, err, sizeof err);
	if (secret && rc == 0)
		rc = s.encrypted ? -1 : minisign_sec_open(&s, NULL, 0, &a, err, sizeof err);
	if (rc == 0) {
		int n = secret ? minisign_sec_format(&a, again, sizeof again) : minisign_pub_format(&a, again, sizeof again);
		if (n < 0)
			fail("an accepted key cannot be written again");
		rc = secret ? minisign_sec_file_parse(again, (size_t)n, &s, err, sizeof err)
			    : minisign_pub_file_parse(again, (size_t)n, &b, err, sizeof err);
		if (secret && rc == 0)
			rc = s.encrypted ? -1 : minisign_sec_open(&s, NULL, 0, &b, err, sizeof err);
		if (rc < 0 || memcmp(a.id, b.id, sizeof a.id) || memcmp(a.pk, b.pk, sizeof a.pk) ||
		    (secret && memcmp(a.seed, b.seed, sizeof a.seed)))
			fail("an accepted key written again reads back to another key");
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	key_file(data, size, 0);
	key_file(data, size, 1);
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
