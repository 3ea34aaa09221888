/*
 * keys.c - age identity and recipients files: reading one (bounded),
 * parsing its text into identities (AGE-SECRET-KEY-1 lines, or an OpenSSH
 * or PEM private key) or recipients (age1... and SSH public keys, a line each),
 * and writing an identity file as age-keygen does.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "crypt_format.h"

char *key_file_read(const char *path, size_t *len, mode_t *mode)
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
		snprintf(err, len, "line %d: not an identity (AGE-SECRET-KEY-1..., or an OpenSSH or PEM private key file)", lineno);
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
		int rc = ssh_identity_parse(p, n, &id, err, len);
		return rc ? rc : push_identity(&a, &id, err, len);
	}
	if (pem_key_begin(p, n)) {
		struct identity id;
		if (memchr(p, 0, n)) {
			snprintf(err, len, "malformed PEM private key (a NUL byte)");
			return -1;
		}
		int rc = pem_identity_parse(p, n, &id, err, len);
		return rc ? rc : push_identity(&a, &id, err, len);
	}
	if (each_line_of(p, n, add_identity, &a, err, len) < 0)
		return -1;
	if (*nids == before) {
		snprintf(err, len, "no identity found");
		return -1;
	}
	return 0;
}

struct rcps {
	struct recipient **rs;
	int *n;
	void (*skip)(void *skip_arg, int lineno, const char *type, const char *why);
	void *skip_arg;
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
		char type[72];
		if (ssh_line_key_type(line, type, sizeof type)) {
			if (a->skip)
				a->skip(a->skip_arg, lineno, type, why);
			return 0;
		}
		/* The line is never shown: it may be secret. */
		if (!strncasecmp(line, "AGE-SECRET-KEY-1", 16))
			snprintf(err, len, "line %d: an identity (AGE-SECRET-KEY-1...), not a recipient: identities go to -i",
				 lineno);
		else if (strstr(line, "ssh-ed25519 ") || strstr(line, "ssh-rsa "))
			snprintf(err, len, "line %d: %s", lineno, why);
		else
			snprintf(err, len, "line %d: malformed recipient", lineno);
		return -1;
	}
	(*a->n)++;
	return 0;
}

int recipients_parse(char *p, size_t n, struct recipient **rs, int *nrs,
		     void (*skip)(void *skip_arg, int lineno, const char *type, const char *why), void *skip_arg, char *err, size_t len)
{
	struct rcps a = { rs, nrs, skip, skip_arg };
	int before = *nrs;
	if (each_line_of(p, n, add_recipient, &a, err, len) < 0)
		return -1;
	if (*nrs == before) {
		snprintf(err, len, "no recipient found");
		return -1;
	}
	return 0;
}

int identity_recipient(const struct identity *id, struct recipient *r, char *err, size_t len)
{
	if (id->kind != KEY_X25519)
		return recipient_of_wire(id->wire, id->wire_len, r, err, len);
	memset(r, 0, sizeof *r);
	r->kind = KEY_X25519;
	if (x25519_public(id->priv, r->pub) < 0) {
		snprintf(err, len, "not a valid X25519 identity");
		return -1;
	}
	return 0;
}

int identity_file_format(const uint8_t priv[X25519_LEN], const char *created, char *buf, size_t len)
{
	uint8_t pub[X25519_LEN];
	char secret[128], recipient[128];
	int n = -1;
	if (x25519_public(priv, pub) == 0 && identity_format(priv, secret, sizeof secret) == 0 &&
	    recipient_format(pub, recipient, sizeof recipient) == 0)
		n = snprintf(buf, len, "# created: %s\n# public key: %s\n%s\n", created, recipient, secret);
	wipe(secret, sizeof secret);
	return n >= 0 && (size_t)n < len ? n : -1;
}
