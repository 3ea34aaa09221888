/*
 * keygen.c - `accel-crypt keygen`, which writes an X25519 identity as
 * age-keygen does (keys.c: identity_file_format), and the key files the
 * program names: identities and recipients files read (crypt_format.h
 * parses them), secret key files created.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <openssl/evp.h>
#include "crypt.h"

/* The encrypted OpenSSH or PEM key buf[0..len) of path, opened with the
 * passphrase from pf: appended to *ids. 0, or the exit status after a
 * message. */
static int ssh_key_open(const char *path, const char *buf, size_t len, const struct pass_from *pf,
			struct identity **ids, int *n)
{
	size_t plen;
	char *pass = passphrase_get(pf->file, pf->fd, 0, path, &plen);
	if (!pass)
		return ACCEL_EXIT_FAILURE;
	struct identity id, *more = NULL;
	char err[300];
	int rc = ssh_identity_open(buf, len, pass, plen, path, &id, err, sizeof err);
	wipe(pass, plen);
	free(pass);
	if (rc == 1) {
		accel_msg_error("%s: wrong passphrase for this key (it does not decrypt)", path);
		return ACCEL_EXIT_DATA;
	}
	if (rc == 0 && !(more = realloc(*ids, (size_t)(*n + 1) * sizeof **ids))) {
		snprintf(err, sizeof err, "out of memory");
		free(id.wire);
		EVP_PKEY_free(id.rsa);
		wipe(&id, sizeof id);
	}
	if (rc < 0 || !more) {
		accel_msg_error("%s: %s", path, err);
		return ACCEL_EXIT_FAILURE;
	}
	more[*n] = id;
	wipe(&id, sizeof id);
	*ids = more;
	(*n)++;
	return 0;
}

/* Not fatal, unlike ssh's refusal: age itself does not check. */
static void warn_mode(const char *path, mode_t mode)
{
	if (mode & (S_IRGRP | S_IROTH))
		accel_msg_warn("%s: the identity file is readable by other users (chmod 600 it)", path);
}

/* Keep the encrypted OpenSSH key buf[0..len) of path in later: 1; 0 when
 * it has no public key to match stanzas with (a PEM key); -1 out of
 * memory. */
static int sealed_keep(struct sealed_keys *later, const char *path, const char *buf, size_t len,
		       const struct pass_from *pf)
{
	struct sealed_key k = { .n = len, .pf = *pf };
	if (ssh_sealed_public(buf, len, &k.wire, &k.wire_len) < 0)
		return 0;
	struct sealed_key *v = realloc(later->v, (size_t)(later->n + 1) * sizeof *v);
	if (v)
		later->v = v;
	if (!v || !(k.path = strdup(path)) || !(k.text = malloc(len + 1))) {
		free(k.path);
		free(k.wire);
		return -1;
	}
	memcpy(k.text, buf, len);
	k.text[len] = 0;
	later->v[later->n++] = k;
	return 1;
}

int sealed_open_for(struct sealed_keys *later, const struct stanza *s, struct identity **ids, int *n, int *opened)
{
	*opened = 0;
	for (int i = 0; later && i < later->n; i++) {
		struct sealed_key *k = &later->v[i];
		if (!k->text || !ssh_stanza_for(k->wire, k->wire_len, s))
			continue;
		int st = ssh_key_open(k->path, k->text, k->n, &k->pf, ids, n);
		wipe(k->text, k->n);
		free(k->text);
		k->text = NULL;
		if (st)
			return st;
		(*opened)++;
	}
	return 0;
}

void sealed_keys_free(struct sealed_keys *later)
{
	for (int i = 0; i < later->n; i++) {
		if (later->v[i].text) {
			wipe(later->v[i].text, later->v[i].n);
			free(later->v[i].text);
		}
		free(later->v[i].path);
		free(later->v[i].wire);
	}
	free(later->v);
	later->v = NULL;
	later->n = 0;
}

int identities_take(const char *path, char *buf, size_t len, mode_t mode, const struct pass_from *pf,
		    struct identity **ids, int *n, struct sealed_keys *later)
{
	warn_mode(path, mode);
	char err[300];
	int rc = identities_parse(buf, len, ids, n, err, sizeof err);
	if (rc == SSH_KEY_SEALED && later) {
		int kept = sealed_keep(later, path, buf, len, pf);
		if (kept < 0) {
			accel_msg_error("out of memory");
			return ACCEL_EXIT_FAILURE;
		}
		if (kept)
			return 0;
	}
	if (rc == SSH_KEY_SEALED)
		return ssh_key_open(path, buf, len, pf, ids, n);
	if (rc < 0)
		accel_msg_error("%s: %s", path, err);
	return rc < 0 ? ACCEL_EXIT_FAILURE : 0;
}

int identities_read(const char *path, struct identity **ids, int *n)
{
	size_t len;
	mode_t mode;
	char *buf = key_file_read(path, &len, &mode);
	if (!buf) {
		accel_msg_error("cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	warn_mode(path, mode);
	char err[300];
	int rc = identities_parse(buf, len, ids, n, err, sizeof err);
	if (rc < 0)
		accel_msg_error("%s: %s", path, err);
	wipe(buf, len);
	free(buf);
	return rc;
}

/* An SSH key of a type age does not encrypt to, in recipients file
 * `path`: skipped with a warning, as age skips it. */
static void skipped_key(void *path, int lineno, const char *type, const char *why)
{
	/* Why a key of a type we know is refused (an RSA key too short). */
	int known = !strcmp(type, "ssh-rsa") || !strcmp(type, "ssh-ed25519");
	accel_msg_warn("%s: ignoring unsupported SSH key of type %s at line %d%s%s", (const char *)path, type, lineno,
		       known ? ": " : "", known ? why : "");
}

int recipients_read(const char *path, struct recipient **rs, int *n)
{
	size_t len;
	mode_t mode;
	char *buf = key_file_read(path, &len, &mode);
	if (!buf) {
		accel_msg_error("cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	char err[300];
	int rc = recipients_parse(buf, len, rs, n, skipped_key, (void *)path, err, sizeof err);
	free(buf);
	if (rc < 0)
		accel_msg_error("%s: %s", path, err);
	return rc;
}

/* ------------------------------------------------------------ keygen */

struct keygen {
	int public, sign;
	const char *pubfile;
	struct accel_common common;   /* -o, -q */
};
#define KEYGEN(field) ACCEL_AT(struct keygen, field)

static const struct accel_option keygen_options[] = {
	{ 'o', "output", "FILE", "write the identity (secret key) to FILE, mode 0600, never over an existing file", "file", ACCEL_COMMON(ACCEL_OPT_OUTPUT) },
	{ 'y', NULL, NULL, "print the recipient (public key) of each identity in FILE (or stdin)", ACCEL_SET(KEYGEN(public), 1) },
	{ 0, "sign", NULL, "make a minisign (Ed25519) key pair instead: -o the secret key (default minisign.key, unencrypted, 0600)", ACCEL_SET(KEYGEN(sign), 1) },
	{ 'p', "public-key", "FILE", "with --sign: the public key file (default minisign.pub)", "file", ACCEL_STRING(KEYGEN(pubfile)) },
	{ 'q', "quiet", NULL, "do not print the public key on stderr", ACCEL_COMMON(ACCEL_OPT_QUIET) },
	ACCEL_HELP_OPTIONS,
	{ 0 },
};

const struct accel_cli keygen_cli = {
	PROG " keygen", "[-o FILE] | -y [FILE] | --sign [-o SECKEY] [-p PUBKEY]",
	"Make an age X25519 identity (or, with --sign, a minisign key pair), or print the recipient of an identity.",
	keygen_options, NULL, NULL, NULL,
};

/* Now as RFC 3339 in local time, as age-keygen writes it. */
static void rfc3339(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	long off = tm.tm_gmtoff;
	if (off == 0)
		snprintf(buf + n, len - n, "Z");
	else
		snprintf(buf + n, len - n, "%c%02ld:%02ld", off < 0 ? '-' : '+', labs(off) / 3600, labs(off) % 3600 / 60);
}

/* Create path for a secret (0600, never over an existing file): an fd, or
 * -1 after a message. */
int secret_create(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST)
		accel_msg_error("%s already exists; not overwriting a key file", path);
	else if (fd < 0)
		accel_msg_error("cannot create %s: %s", path, strerror(errno));
	return fd;
}

/* Write text to fd and close it; on failure remove path. 0 or -1. */
int secret_finish(int fd, const char *path, const char *text, size_t n)
{
	size_t off = 0;
	int rc = 0;
	while (off < n) {
		ssize_t w = write(fd, text + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			rc = -1;
			break;
		}
		off += (size_t)w;
	}
	if (fd != 1 && (fsync(fd) < 0 && errno != EINVAL && errno != EROFS))
		rc = -1;
	int e = errno;
	if (fd != 1 && close(fd) < 0)
		rc = -1;
	if (rc < 0) {
		accel_msg_error("cannot write %s: %s", path ? path : "stdout", strerror(errno ? errno : e));
		if (path)
			unlink(path);
	}
	return rc;
}

static int keygen_public(const char *path)
{
	struct identity *ids = NULL;
	int n = 0;
	int rc = identities_read(path, &ids, &n);
	if (rc == SSH_KEY_SEALED) {
		accel_msg_error("%s: an SSH key; its recipient is its public key (the .pub file)", path);
		return ACCEL_EXIT_FAILURE;
	}
	if (rc < 0)
		return ACCEL_EXIT_FAILURE;
	int status = 0;
	for (int i = 0; i < n && !status; i++) {
		uint8_t pub[X25519_LEN];
		char r[128];
		if (ids[i].kind != KEY_X25519) {
			accel_msg_error("%s: an SSH key; its recipient is its public key (the .pub file)", path);
			status = ACCEL_EXIT_FAILURE;
		} else if (x25519_public(ids[i].priv, pub) < 0 || recipient_format(pub, r, sizeof r) < 0) {
			accel_msg_error("%s: identity %d is not a valid X25519 key", path, i + 1);
			status = ACCEL_EXIT_DATA;
		} else {
			printf("%s\n", r);
		}
	}
	keys_free(NULL, 0, ids, n);
	if (fflush(stdout) != 0 && errno != EPIPE) {
		accel_msg_error("cannot write stdout: %s", strerror(errno));
		return ACCEL_EXIT_FAILURE;
	}
	return status;
}

int cmd_keygen(int argc, char **argv)
{
	struct keygen k = { 0 };
	int rc = accel_parse(&keygen_cli, argc, argv, &k, &k.common);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (k.public && (k.common.output || k.sign)) {
		accel_msg_usage("-y takes no -o or --sign");
		return ACCEL_EXIT_USAGE;
	}
	if (k.public) {
		if (k.common.noperands > 1) {
			accel_msg_usage("-y reads one identity file");
			return ACCEL_EXIT_USAGE;
		}
		return keygen_public(k.common.noperands ? k.common.operands[0] : "-");
	}
	if (k.common.noperands) {
		accel_msg_usage("unexpected operand '%s'", k.common.operands[0]);
		return ACCEL_EXIT_USAGE;
	}

	if (k.sign)
		return minisign_keygen(k.common.output, k.pubfile, k.common.quiet);
	if (k.pubfile) {
		accel_msg_usage("-p goes with --sign");
		return ACCEL_EXIT_USAGE;
	}
	uint8_t priv[X25519_LEN], pub[X25519_LEN];
	char recipient[128], when[40], text[512];
	rfc3339(when, sizeof when);
	int n = -1;
	if (random_bytes(priv, sizeof priv) == 0 && x25519_public(priv, pub) == 0 &&
	    recipient_format(pub, recipient, sizeof recipient) == 0)
		n = identity_file_format(priv, when, text, sizeof text);
	wipe(priv, sizeof priv);
	if (n < 0) {
		wipe(text, sizeof text);
		accel_msg_error("cannot make a key: OpenSSL failed");
		return ACCEL_EXIT_FAILURE;
	}
	int fd = k.common.output ? secret_create(k.common.output) : 1;
	if (fd < 0) {
		wipe(text, sizeof text);
		return ACCEL_EXIT_FAILURE;
	}
	int tty = isatty(fd);
	rc = secret_finish(fd, k.common.output, text, (size_t)n);
	wipe(text, sizeof text);
	if (rc < 0)
		return ACCEL_EXIT_FAILURE;
	if (!tty && !k.common.quiet)
		fprintf(stderr, "Public key: %s\n", recipient);
	return 0;
}
