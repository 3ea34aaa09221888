/*
 * crypt_identity.c - fuzz target for accel-crypt's identity files
 * (libcore/ops/crypt/keys.c: AGE-SECRET-KEY-1 lines, comments, blank
 * lines, or an OpenSSH or PEM private key). A file with a NUL byte is never
 * accepted; an accepted file gives at least one identity; an X25519
 * identity written again (identity_format, and as a whole file as keygen
 * writes it, identity_file_format) reads back to the same key. An
 * encrypted OpenSSH key is checked as far as it can be without its
 * passphrase (KDF, cipher, bcrypt's options, the public key, the sealed
 * part's length): accepted as SSH_KEY_SEALED with no identity and nothing
 * held. So is an encrypted PEM key (PKCS#1 with a DEK-Info this OpenSSL
 * can undo, an EncryptedPrivateKeyInfo); a plain PEM key (PKCS#1, PKCS#8)
 * gives an ssh-rsa or ssh-ed25519 identity with its public key. The
 * passphrase and libssh (ssh_identity_open) are not fuzzed: a run never
 * asks for one (OpenSSL's prompt, its UI method, aborts here) nor loads
 * libssh (checked after each input).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/ui.h>
#include "ops/crypt/crypt_format.h"
#include "fuzz.h"

static void fail(const char *what)
{
	fprintf(stderr, "fuzz: crypt_identity: %s\n", what);
	abort();
}

/* OpenSSL's default passphrase prompt (PEM_def_callback reads through the
 * default UI method, the terminal): reaching it is a failure. */
static int no_prompt(UI *ui)
{
	(void)ui;
	fail("OpenSSL opened its passphrase prompt");
	return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static UI_METHOD *ui;
	if (!ui) {
		ui = UI_create_method("fuzz: no passphrase prompt");
		if (!ui || UI_method_set_opener(ui, no_prompt) < 0)
			fail("cannot set OpenSSL's UI method");
		UI_set_default_method(ui);
	}
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = 0;
	struct identity *ids = NULL;
	int n = 0;
	char err[300] = "";
	int rc = identities_parse(text, size, &ids, &n, err, sizeof err);
	if (rc < 0 && !err[0])
		fail("an error without a reason");
	if (rc >= 0 && memchr(data, 0, size))
		fail("a file holding a NUL byte accepted");
	if (rc == SSH_KEY_SEALED && (n || ids))
		fail("an encrypted OpenSSH key gave an identity without its passphrase");
	if (rc != 0 && rc != -1 && rc != SSH_KEY_SEALED)
		fail("a result other than 0, -1 and SSH_KEY_SEALED");
	if (rc == 0 && n < 1)
		fail("accepted with no identity");
	for (int i = 0; i < n; i++) {
		if (ids[i].kind == KEY_X25519) {
			char s[128];
			struct identity again;
			if (identity_format(ids[i].priv, s, sizeof s) < 0 || identity_parse(s, &again) < 0 ||
			    memcmp(again.priv, ids[i].priv, X25519_LEN))
				fail("an identity written again reads back to another key");
			char file[512];
			struct identity *back = NULL;
			int nback = 0;
			int fl = identity_file_format(ids[i].priv, "2026-11-23T10:52:20Z", file, sizeof file);
			if (fl < 0 || identities_parse(file, (size_t)fl, &back, &nback, err, sizeof err) < 0 ||
			    nback != 1 || memcmp(back[0].priv, ids[i].priv, X25519_LEN))
				fail("an identity file written as keygen writes it reads back to another key");
			keys_free(NULL, 0, back, nback);
		} else if (!ids[i].wire || !ids[i].wire_len) {
			fail("an SSH identity without its public key");
		}
	}
	keys_free(NULL, 0, ids, n);
	free(text);
	if (dlopen("libssh.so.4", RTLD_LAZY | RTLD_NOLOAD))
		fail("libssh loaded without a passphrase");
	return 0;
}
