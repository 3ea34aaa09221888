/*
 * keygen.c - `accel-crypt keygen`, which writes an X25519 identity as
 * age-keygen does:
 *
 *   # created: 2026-11-23T10:52:20Z
 *   # public key: age1...
 *   AGE-SECRET-KEY-1...
 *
 * and the key files the program names: identities and recipients files
 * read (crypt_format.h parses them), secret key files created.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "crypt.h"

int identities_read(const char *path, struct identity **ids, int *n)
{
	size_t len;
	mode_t mode;
	char *buf = key_file_read(path, &len, &mode);
	if (!buf) {
		accel_msg_error("cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	/* Not fatal, unlike ssh's refusal: age itself does not check. */
	if (mode & (S_IRGRP | S_IROTH))
		accel_msg_warn("%s: the identity file is readable by other users (chmod 600 it)", path);
	char err[300];
	int rc = identities_parse(buf, len, ids, n, err, sizeof err);
	wipe(buf, len);
	free(buf);
	if (rc < 0)
		accel_msg_error("%s: %s", path, err);
	return rc;
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
	int rc = recipients_parse(buf, len, rs, n, err, sizeof err);
	free(buf);
	if (rc < 0)
		accel_msg_error("%s: %s", path, err);
	return rc;
}

/* ------------------------------------------------------------ keygen */

enum { OPT_OUTPUT = 1, OPT_PUBLIC, OPT_SIGN, OPT_PUBFILE };

static const struct accel_option keygen_options[] = {
	{ OPT_OUTPUT, 'o', "output", "FILE", "write the identity (secret key) to FILE, mode 0600, never over an existing file", "file", 0 },
	{ OPT_PUBLIC, 'y', NULL, NULL, "print the recipient (public key) of each identity in FILE (or stdin)", NULL, 0 },
	{ OPT_SIGN, 0, "sign", NULL, "make a minisign (Ed25519) key pair instead: -o the secret key (default minisign.key, unencrypted, 0600)", NULL, 0 },
	{ OPT_PUBFILE, 'p', "public-key", "FILE", "with --sign: the public key file (default minisign.pub)", "file", 0 },
	{ ACCEL_OPT_QUIET, 'q', "quiet", NULL, "do not print the public key on stderr", NULL, 0 },
	{ ACCEL_OPT_HELP, 'h', "help", NULL, "show this help and exit", NULL, 0 },
	{ ACCEL_OPT_VERSION, 'V', "version", NULL, "show the version and exit", NULL, 0 },
	{ 0 },
};

const struct accel_cli keygen_cli = {
	PROG " keygen", "[-o FILE] | -y [FILE] | --sign [-o SECKEY] [-p PUBKEY]",
	"Make an age X25519 identity (or, with --sign, a minisign key pair), or print the recipient of an identity.",
	keygen_options, NULL, NULL,
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
	if (identities_read(path, &ids, &n) < 0)
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
	struct accel_common common;
	struct accel_optparse p;
	const char *output = NULL, *pubfile = NULL;
	int public = 0, sign = 0;
	if (accel_common_init(&common, &keygen_cli) < 0)
		return ACCEL_EXIT_USAGE;
	accel_msg_prog(PROG);
	accel_optparse_init(&p, &keygen_cli, argc, argv);
	int id, rc;
	const char *arg;
	while ((rc = accel_getopt(&p, &id, &arg)) == 1) {
		int c = accel_common_option(&common, &keygen_cli, id, arg);
		if (c == 2)
			return 0;
		if (c < 0)
			return accel_exit_status(c);
		if (c == 1)
			continue;
		switch (id) {
		case OPT_OUTPUT: output = arg; break;
		case OPT_PUBLIC: public = 1; break;
		case OPT_SIGN: sign = 1; break;
		case OPT_PUBFILE: pubfile = arg; break;
		}
	}
	if (rc < 0) {
		accel_msg_usage("%s", p.errbuf);
		return ACCEL_EXIT_USAGE;
	}
	if (public && (output || sign)) {
		accel_msg_usage("-y takes no -o or --sign");
		return ACCEL_EXIT_USAGE;
	}
	if (public) {
		if (p.noperands > 1) {
			accel_msg_usage("-y reads one identity file");
			return ACCEL_EXIT_USAGE;
		}
		return keygen_public(p.noperands ? p.operands[0] : "-");
	}
	if (p.noperands) {
		accel_msg_usage("unexpected operand '%s'", p.operands[0]);
		return ACCEL_EXIT_USAGE;
	}

	if (sign)
		return minisign_keygen(output, pubfile, common.quiet);
	if (pubfile) {
		accel_msg_usage("-p goes with --sign");
		return ACCEL_EXIT_USAGE;
	}
	uint8_t priv[X25519_LEN], pub[X25519_LEN];
	char secret[128], recipient[128], when[40];
	if (random_bytes(priv, sizeof priv) < 0 || x25519_public(priv, pub) < 0 ||
	    identity_format(priv, secret, sizeof secret) < 0 || recipient_format(pub, recipient, sizeof recipient) < 0) {
		wipe(priv, sizeof priv);
		accel_msg_error("cannot make a key: OpenSSL failed");
		return ACCEL_EXIT_FAILURE;
	}
	wipe(priv, sizeof priv);
	rfc3339(when, sizeof when);
	char text[512];
	int n = snprintf(text, sizeof text, "# created: %s\n# public key: %s\n%s\n", when, recipient, secret);
	wipe(secret, sizeof secret);
	int fd = output ? secret_create(output) : 1;
	if (fd < 0) {
		wipe(text, sizeof text);
		return ACCEL_EXIT_FAILURE;
	}
	int tty = isatty(fd);
	rc = secret_finish(fd, output, text, (size_t)n);
	wipe(text, sizeof text);
	if (rc < 0)
		return ACCEL_EXIT_FAILURE;
	if (!tty && !common.quiet)
		fprintf(stderr, "Public key: %s\n", recipient);
	return 0;
}
