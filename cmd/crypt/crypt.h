/*
 * crypt.h - what accel-crypt's own files share: the subcommands, the
 * passphrase prompt, and writing key files. The formats they read and
 * write are in libcore/ops/crypt (crypt_format.h).
 */
#ifndef ACCEL_CRYPT_H
#define ACCEL_CRYPT_H

#include "accel.h"
#include "ops/crypt/crypt_format.h"

#define PROG "accel-crypt"

/* ---- recipients and identities files (keygen.c) */
/* Where a passphrase comes from: --passphrase-file, --passphrase-fd (-1:
 * none), else the terminal. */
struct pass_from {
	const char *file;
	int fd;
};
/* An encrypted OpenSSH key given with -i, opened only once a stanza is
 * for it: its public key is in the clear in the file, so no passphrase is
 * asked for a key the file was not encrypted to, as age asks none. */
struct sealed_key {
	char *path;
	char *text;          /* the key file, text[0..n) */
	size_t n;
	uint8_t *wire;       /* its public key's wire form */
	size_t wire_len;
	struct pass_from pf;
};
struct sealed_keys {
	struct sealed_key *v;
	int n;
};
/* Read an identity file (crypt_format.h: identities_parse; "-": stdin):
 * appends to *ids. Warns when other users may read it. 0, SSH_KEY_SEALED
 * for an encrypted OpenSSH key (nothing appended, no message), or -1
 * after a message. */
int identities_read(const char *path, struct identity **ids, int *n);
/* The same for the text buf[0..len) read from path (mode: its permission
 * bits, key_file_read's), buf cut in place; an encrypted OpenSSH key is
 * opened with the passphrase from pf (asked as "Enter passphrase for
 * "PATH": " at the terminal), or with `later` (may be NULL) kept there to
 * be opened when needed (an OpenSSH key: sealed_key). 0, or the exit
 * status after a message (3: a wrong passphrase). */
int identities_take(const char *path, char *buf, size_t len, mode_t mode, const struct pass_from *pf,
		    struct identity **ids, int *n, struct sealed_keys *later);
/* Open the keys of `later` that stanza s is for (sealed_key), appending
 * them to *ids: 0, with *opened the number opened, or the exit status
 * after a message (3: a wrong passphrase). */
int sealed_open_for(struct sealed_keys *later, const struct stanza *s, struct identity **ids, int *n, int *opened);
void sealed_keys_free(struct sealed_keys *later);
/* Read a recipients file (recipients_parse): appends to *rs. */
int recipients_read(const char *path, struct recipient **rs, int *n);

/* ---- passphrases (pass.c) */
/* Read a passphrase: from file (first line), fd N, or the terminal (no
 * echo; twice when confirm; the prompt names `of`, a key file, unless it
 * is NULL). Returns a malloc'd buffer of *len bytes (wipe and free), or
 * NULL after an error message (empty, or a NUL byte in it). */
char *passphrase_get(const char *file, int fd, int confirm, const char *of, size_t *len);

/* ---- key files (keygen.c) */
/* Create path for a secret: mode 0600, never over an existing file. An
 * fd, or -1 after a message. */
int secret_create(const char *path);
/* Write text to fd (1: stdout) and close it; on failure remove path
 * (NULL: stdout). 0, or -1 after a message. */
int secret_finish(int fd, const char *path, const char *text, size_t n);
/* keygen --sign: a minisign key pair, the secret unencrypted (0600). */
int minisign_keygen(const char *secpath, const char *pubpath, int quiet);

/* ---- OpenSSL's set-up for a run (accel-crypt.c) */
/* Before OpenSSL's first use: its error strings left out unless -v or
 * --json (their reports are what reads them). */
void openssl_setup(const struct accel_common *common);
/* Once nothing left looks up a cipher or digest by legacy name: OpenSSL's
 * legacy name tables left out of its first fetch. */
void openssl_no_legacy_names(void);

/* ---- subcommands */
int cmd_keygen(int argc, char **argv);
int cmd_hash(int argc, char **argv);
int cmd_sign(int argc, char **argv);
int cmd_verify(int argc, char **argv);

#endif
