/*
 * keys.c - age identity and recipient files, and `accel-crypt keygen`,
 * which writes an X25519 identity as age-keygen does:
 *
 *   # created: 2026-11-23T10:52:20Z
 *   # public key: age1...
 *   AGE-SECRET-KEY-1...
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

/* Key files are at most this large (age's limit for identity files). */
#define KEY_FILE_MAX ((size_t)16 << 20)

/* Read all of path ("-": stdin) into a malloc'd buffer of *len bytes (a NUL
 * after them, not part of the text); *mode: the permission bits of a
 * regular file, else 0. NULL with errno set. */
static char *slurp(const char *path, size_t *len, mode_t *mode)
{
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	if (fd < 0)
		return NULL;
	struct stat st;
	*mode = fd > 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? st.st_mode & 07777 : 0;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	int e = ENOMEM;
	while (buf) {
		if (n > KEY_FILE_MAX) {
			e = EFBIG;
		} else if (n + 1 == cap) {
			char *nb = malloc(cap * 2);
			if (nb)
				memcpy(nb, buf, n);
			wipe(buf, n);
			free(buf);
			buf = nb;
			cap *= 2;
			continue;
		} else {
			ssize_t r = read(fd, buf + n, cap - 1 - n);
			if (r < 0 && errno == EINTR)
				continue;
			if (r == 0)
				break;
			if (r > 0) {
				n += (size_t)r;
				continue;
			}
			e = errno;
		}
		wipe(buf, n);
		free(buf);
		buf = NULL;
	}
	if (fd > 0)
		close(fd);
	if (!buf) {
		errno = e;
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

/* Call fn on each line of p[0..n) that is not blank or a '#' comment: the
 * line without its LF and a CR before it, cut in place (NUL-terminated).
 * A line holding a NUL byte is malformed. 0, or -1 with the reason in
 * err[len] ("line N: ..."). */
static int each_line_of(char *p, size_t n, int (*fn)(void *arg, const char *line, int lineno, char *err, size_t len),
			void *arg, char *err, size_t len)
{
	int lineno = 0;
	for (size_t off = 0; off < n;) {
		char *l = p + off, *e = memchr(l, '\n', n - off);
		size_t ll = e ? (size_t)(e - l) : n - off;
		off += ll + (e != NULL);
		lineno++;
		if (ll && l[ll - 1] == '\r')
			ll--;
		if (memchr(l, 0, ll)) {
			snprintf(err, len, "line %d: a NUL byte", lineno);
			return -1;
		}
		l[ll] = 0;
		if (ll && l[0] != '#' && fn(arg, l, lineno, err, len) < 0)
			return -1;
	}
	return 0;
}

struct ids {
	struct identity **ids;
	int *n;
};

/* Append id to a->ids (id is wiped). */
static int push_identity(struct ids *a, struct identity *id, char *err, size_t len)
{
	struct identity *ni = malloc((size_t)(*a->n + 1) * sizeof *ni);
	if (!ni) {
		wipe(id, sizeof *id);
		snprintf(err, len, "out of memory");
		return -1;
	}
	if (*a->n)
		memcpy(ni, *a->ids, (size_t)*a->n * sizeof *ni);
	wipe(*a->ids, (size_t)*a->n * sizeof **a->ids);
	free(*a->ids);
	ni[(*a->n)++] = *id;
	*a->ids = ni;
	wipe(id, sizeof *id);
	return 0;
}

static int add_identity(void *arg, const char *line, int lineno, char *err, size_t len)
{
	struct identity id;
	if (identity_parse(line, &id) < 0) {
		snprintf(err, len, "line %d: not an identity (AGE-SECRET-KEY-1..., or an OpenSSH private key file)", lineno);
		return -1;
	}
	return push_identity(arg, &id, err, len);
}

int identities_parse(char *p, size_t n, struct identity **ids, int *nids, char *err, size_t len)
{
	static const char begin[] = "-----BEGIN OPENSSH PRIVATE KEY-----";
	struct ids a = { ids, nids };
	int before = *nids;
	if (memmem(p, n, begin, sizeof begin - 1)) {
		struct identity id;
		if (memchr(p, 0, n)) {
			snprintf(err, len, "malformed OpenSSH private key (a NUL byte)");
			return -1;
		}
		if (ssh_identity_parse(p, n, &id, err, len) < 0)
			return -1;
		return push_identity(&a, &id, err, len);
	}
	if (each_line_of(p, n, add_identity, &a, err, len) < 0)
		return -1;
	if (*nids == before) {
		snprintf(err, len, "no identity found");
		return -1;
	}
	return 0;
}

int identities_read(const char *path, struct identity **ids, int *n)
{
	size_t len;
	mode_t mode;
	char *buf = slurp(path, &len, &mode);
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

struct rcps {
	struct recipient **rs;
	int *n;
};

static int add_recipient(void *arg, const char *line, int lineno, char *err, size_t len)
{
	struct rcps *a = arg;
	struct recipient *nr = realloc(*a->rs, (size_t)(*a->n + 1) * sizeof *nr);
	char why[200];
	if (!nr) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	*a->rs = nr;
	if (recipient_parse(line, &nr[*a->n], why, sizeof why) < 0) {
		snprintf(err, len, "line %d: %s", lineno, why);
		return -1;
	}
	(*a->n)++;
	return 0;
}

int recipients_parse(char *p, size_t n, struct recipient **rs, int *nrs, char *err, size_t len)
{
	struct rcps a = { rs, nrs };
	int before = *nrs;
	if (each_line_of(p, n, add_recipient, &a, err, len) < 0)
		return -1;
	if (*nrs == before) {
		snprintf(err, len, "no recipient found");
		return -1;
	}
	return 0;
}

int recipients_read(const char *path, struct recipient **rs, int *n)
{
	size_t len;
	mode_t mode;
	char *buf = slurp(path, &len, &mode);
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
