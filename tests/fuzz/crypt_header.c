/*
 * crypt_header.c - fuzz target for accel-crypt's age header parser
 * (libcore/ops/crypt/header.c). The parser is strict, so a header it
 * accepts has exactly one encoding: writing its stanzas back must give the
 * same bytes up to the MAC. It never claims bytes past the input, and a
 * header it calls incomplete stays incomplete or becomes valid or invalid
 * only with more bytes, never by losing them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ops/crypt/crypt_format.h"
#include "fuzz.h"

static void fail(const char *what)
{
	fprintf(stderr, "fuzz: crypt_header: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct header h;
	char err[300];
	int rc = header_parse(data, size, &h, err, sizeof err);
	if (rc < 0 && !err[0])
		fail("an error without a reason");
	if (rc == 1 && size && memchr(data, '\n', size) && header_parse(data, size - 1, &h, err, sizeof err) == 0)
		fail("a prefix parses but the whole is incomplete");
	if (rc != 0)
		return 0;
	if (h.len > size || h.mac_off + 1 + 43 + 1 != h.len || memcmp(h.text, data, h.len))
		fail("header bounds");
	struct text t = { 0 };
	text_add(&t, "age-encryption.org/v1\n", 22);
	for (int i = 0; i < h.n; i++)
		text_stanza(&t, (const char *const *)h.stanzas[i].args, h.stanzas[i].nargs, h.stanzas[i].body,
			    h.stanzas[i].body_len);
	text_add(&t, "---", 3);
	if (t.oom)
		fail("out of memory");
	if (t.len != h.mac_off || memcmp(t.p, data, t.len))
		fail("the stanzas written back differ from the header: a second encoding was accepted");
	/* A prefix that ends before the MAC line is incomplete, never valid. */
	struct header h2;
	if (header_parse(data, h.len - 1, &h2, err, sizeof err) == 0)
		fail("a header without its last byte parsed");
	free(t.p);
	header_free(&h);
	return 0;
}
