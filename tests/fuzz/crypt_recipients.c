/*
 * crypt_recipients.c - fuzz target for accel-crypt's recipients files
 * (libcore/ops/crypt/keys.c: age1... and SSH authorized_keys lines,
 * comments, blank lines). A file with a NUL byte is never accepted; an
 * accepted file gives at least one recipient; each recipient written again
 * (an age1... string, or "TYPE BASE64" of an SSH key's wire form) reads
 * back to the same key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ops/crypt/crypt_format.h"
#include "fuzz.h"

static void fail(const char *what)
{
	fprintf(stderr, "fuzz: crypt_recipients: %s\n", what);
	abort();
}

static void round_trip(const struct recipient *r)
{
	struct recipient again;
	char err[300];
	if (r->kind == KEY_X25519) {
		char s[128];
		if (recipient_format(r->pub, s, sizeof s) < 0 || recipient_parse(s, &again, err, sizeof err) < 0 ||
		    again.kind != KEY_X25519 || memcmp(again.pub, r->pub, X25519_LEN))
			fail("an age1 recipient written again reads back to another key");
		return;
	}
	char *line = malloc(r->wire_len * 2 + 40);
	size_t o = (size_t)sprintf(line, "%s ", r->kind == KEY_SSH_RSA ? "ssh-rsa" : "ssh-ed25519");
	size_t l = b64_encode(r->wire, r->wire_len, line + o);
	while (l % 4)
		line[o + l++] = '=';
	line[o + l] = 0;
	if (recipient_parse(line, &again, err, sizeof err) < 0 || again.kind != r->kind ||
	    again.wire_len != r->wire_len || memcmp(again.wire, r->wire, r->wire_len) ||
	    (r->kind == KEY_SSH_ED25519 && memcmp(again.pub, r->pub, X25519_LEN)))
		fail("an SSH recipient written again reads back to another key");
	struct recipient *one = malloc(sizeof *one);
	*one = again;
	keys_free(one, 1, NULL, 0);
	free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = 0;
	struct recipient *rs = NULL;
	int n = 0;
	char err[300] = "";
	int rc = recipients_parse(text, size, &rs, &n, NULL, NULL, err, sizeof err);
	if (rc < 0 && !err[0])
		fail("an error without a reason");
	if (rc == 0 && memchr(data, 0, size))
		fail("a file holding a NUL byte accepted");
	if (rc == 0 && n < 1)
		fail("accepted with no recipient");
	for (int i = 0; i < n; i++)
		round_trip(&rs[i]);
	keys_free(rs, n, NULL, 0);
	free(text);
	return 0;
}
