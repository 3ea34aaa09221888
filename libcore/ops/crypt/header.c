/*
 * header.c - the age v1 header (age-encryption.org/v1, C2SP age.md,
 * "Header"): its strict parser, its writer, the header MAC, and the X25519
 * and scrypt recipient stanzas.
 *
 *   age-encryption.org/v1
 *   -> TYPE ARG...            (arguments: 1+ bytes of VCHAR, one space apart)
 *   BODY                      (base64 lines of 64 columns, the last shorter)
 *   --- MAC                   (HMAC-SHA-256 of the header up to "---")
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include "crypt_format.h"

static const char version_line[] = "age-encryption.org/v1\n";

void header_free(struct header *h)
{
	for (int i = 0; i < h->n; i++) {
		for (int a = 0; a < h->stanzas[i].nargs; a++)
			free(h->stanzas[i].args[a]);
		if (h->stanzas[i].body)
			wipe(h->stanzas[i].body, h->stanzas[i].body_len);
		free(h->stanzas[i].body);
	}
	free(h->stanzas);
	free(h->text);
	memset(h, 0, sizeof *h);
}

/* The line at p[off..n): its length without the newline, or -1 when no
 * newline comes before n. */
static ssize_t line_at(const uint8_t *p, size_t n, size_t off)
{
	const uint8_t *nl = memchr(p + off, '\n', n - off);
	return nl ? (ssize_t)(nl - (p + off)) : -1;
}

static void fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

/* Parse the "-> " line at q[0..l) into s. 0 or -1. */
static int parse_args(const uint8_t *q, size_t l, struct stanza *s, char *err, size_t len, int lineno)
{
	size_t i = 3;
	while (i <= l) {
		size_t start = i;
		while (i < l && q[i] != ' ') {
			if (q[i] < 33 || q[i] > 126) {
				fail(err, len, "header line %d: a stanza argument holds a byte other than VCHAR", lineno);
				return -1;
			}
			i++;
		}
		if (i == start) {
			fail(err, len, "header line %d: empty stanza argument", lineno);
			return -1;
		}
		if (s->nargs == STANZA_ARGS_MAX) {
			fail(err, len, "header line %d: more than %d stanza arguments", lineno, STANZA_ARGS_MAX);
			return -1;
		}
		if (!(s->args[s->nargs] = strndup((const char *)q + start, i - start))) {
			fail(err, len, "out of memory");
			return -1;
		}
		s->nargs++;
		i++;   /* past the space, or past the end */
	}
	return 0;
}

int header_parse(const uint8_t *p, size_t n, struct header *h, char *err, size_t len)
{
	memset(h, 0, sizeof *h);
	size_t vl = sizeof version_line - 1;
	if (n < vl && !memcmp(p, version_line, n))
		return 1;
	if (n < vl || memcmp(p, version_line, vl)) {
		ssize_t l = line_at(p, n, 0);
		if (n >= 4 && !memcmp(p, "age-", 4) && l > 0 && memchr(p, '/', (size_t)l))
			fail(err, len, "unsupported age version or malformed first line");
		else
			fail(err, len, "not an age file (no 'age-encryption.org/v1' line)");
		return -1;
	}
	size_t off = vl;
	int lineno = 2, cap = 0;
	for (;;) {
		ssize_t l = line_at(p, n, off);
		if (l < 0) {
			if (n >= HEADER_MAX)
				goto toolong;
			header_free(h);
			return 1;
		}
		const uint8_t *q = p + off;
		if ((size_t)l >= 3 && !memcmp(q, "---", 3)) {
			if (h->n == 0) {
				fail(err, len, "header has no recipient stanza");
				goto bad;
			}
			uint8_t mac[MAC_LEN + 2];
			if ((size_t)l != 4 + 43 || q[3] != ' ' || b64_decode((const char *)q + 4, 43, mac) != MAC_LEN) {
				fail(err, len, "header line %d: malformed MAC line", lineno);
				goto bad;
			}
			memcpy(h->mac, mac, MAC_LEN);
			h->mac_off = off + 3;
			h->len = off + (size_t)l + 1;
			if (!(h->text = malloc(h->len))) {
				fail(err, len, "out of memory");
				goto bad;
			}
			memcpy(h->text, p, h->len);
			return 0;
		}
		if ((size_t)l < 3 || memcmp(q, "-> ", 3)) {
			fail(err, len, "header line %d: expected a stanza ('-> ') or the MAC line ('---')", lineno);
			goto bad;
		}
		if (h->n == cap) {
			int nc = cap ? cap * 2 : 4;
			struct stanza *ns = realloc(h->stanzas, (size_t)nc * sizeof *ns);
			if (!ns) {
				fail(err, len, "out of memory");
				goto bad;
			}
			h->stanzas = ns;
			cap = nc;
		}
		struct stanza *s = &h->stanzas[h->n++];
		memset(s, 0, sizeof *s);
		if (parse_args(q, (size_t)l, s, err, len, lineno) < 0)
			goto bad;
		off += (size_t)l + 1;
		lineno++;
		/* The body: full lines of 64 columns, then one shorter line
		 * (possibly empty) that ends it. Its buffer grows by doubling
		 * (a body may be megabytes long, as age accepts). */
		size_t bcap = 0;
		for (;;) {
			l = line_at(p, n, off);
			if (l < 0) {
				if (n >= HEADER_MAX)
					goto toolong;
				header_free(h);
				return 1;
			}
			if (l > 64) {
				fail(err, len, "header line %d: stanza body line longer than 64 columns", lineno);
				goto bad;
			}
			uint8_t chunk[48];
			ssize_t d = b64_decode((const char *)p + off, (size_t)l, chunk);
			if (d < 0) {
				fail(err, len, "header line %d: stanza body is not canonical unpadded base64", lineno);
				goto bad;
			}
			if (s->body_len + (size_t)d + 1 > bcap) {
				size_t nc = bcap ? 2 * bcap : 64;
				uint8_t *nb = realloc(s->body, nc);
				if (!nb) {
					fail(err, len, "out of memory");
					goto bad;
				}
				s->body = nb;
				bcap = nc;
			}
			memcpy(s->body + s->body_len, chunk, (size_t)d);
			s->body_len += (size_t)d;
			off += (size_t)l + 1;
			lineno++;
			if (l < 64)
				break;
		}
	}
toolong:
	fail(err, len, "the header is longer than %zu MiB", HEADER_MAX >> 20);
bad:
	header_free(h);
	return -1;
}

static int mac_of(const char *text, size_t n, const uint8_t fk[FILE_KEY_LEN], uint8_t mac[MAC_LEN])
{
	uint8_t key[32];
	int rc = hkdf_sha256(fk, FILE_KEY_LEN, NULL, 0, "header", key, sizeof key);
	if (rc == 0)
		rc = hmac_sha256(key, sizeof key, (const uint8_t *)text, n, mac);
	wipe(key, sizeof key);
	return rc;
}

int header_mac_check(const struct header *h, const uint8_t fk[FILE_KEY_LEN])
{
	uint8_t mac[MAC_LEN];
	if (mac_of(h->text, h->mac_off, fk, mac) < 0)
		return -1;
	return CRYPTO_memcmp(mac, h->mac, MAC_LEN) == 0 ? 0 : -1;
}

void text_add(struct text *t, const void *s, size_t n)
{
	if (t->oom)
		return;
	if (t->len + n + 1 > t->cap) {
		size_t nc = (t->len + n + 1) * 2;
		char *np = realloc(t->p, nc);
		if (!np) {
			t->oom = 1;
			return;
		}
		t->p = np;
		t->cap = nc;
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = 0;
}

void text_addf(struct text *t, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof buf)
		t->oom = 1;
	else
		text_add(t, buf, (size_t)n);
}

void text_stanza(struct text *t, const char *const *args, int nargs, const uint8_t *body, size_t n)
{
	text_add(t, "->", 2);
	for (int i = 0; i < nargs; i++) {
		text_add(t, " ", 1);
		text_add(t, args[i], strlen(args[i]));
	}
	text_add(t, "\n", 1);
	/* 48 bytes make one full line of 64 columns. */
	size_t i = 0;
	for (;;) {
		size_t k = n - i < 48 ? n - i : 48;
		char line[65];
		size_t l = b64_encode(body + i, k, line);
		text_add(t, line, l);
		text_add(t, "\n", 1);
		i += k;
		if (l < 64)
			break;
	}
}

int text_mac(struct text *t, const uint8_t fk[FILE_KEY_LEN])
{
	text_add(t, "---", 3);
	if (t->oom)
		return -1;
	uint8_t mac[MAC_LEN];
	if (mac_of(t->p, t->len, fk, mac) < 0)
		return -1;
	char b64[48];
	b64_encode(mac, MAC_LEN, b64);
	text_addf(t, " %s\n", b64);
	return t->oom ? -1 : 0;
}

/* ------------------------------------------------------------ X25519 */

int recipient_parse(const char *s, struct recipient *r, char *err, size_t len)
{
	if (strncmp(s, "age1", 4) && (strstr(s, "ssh-") || strchr(s, ' ')))
		return ssh_recipient_parse(s, r, err, len);
	memset(r, 0, sizeof *r);
	char hrp[16];
	uint8_t data[64];
	ssize_t n = bech32_decode(s, hrp, sizeof hrp, data, sizeof data);
	if (n < 0 || strcmp(hrp, "age") || s[0] != 'a') {
		fail(err, len, "'%s' is not an age1... recipient", s);
		return -1;
	}
	if (n != X25519_LEN) {
		fail(err, len, "'%s' is not an X25519 recipient (%zd bytes)", s, n);
		return -1;
	}
	r->kind = KEY_X25519;
	memcpy(r->pub, data, X25519_LEN);
	return 0;
}

int recipient_format(const uint8_t pub[X25519_LEN], char *buf, size_t len)
{
	return bech32_encode("age", pub, X25519_LEN, 0, buf, len);
}

int identity_parse(const char *s, struct identity *id)
{
	char hrp[32];
	uint8_t data[64];
	ssize_t n = bech32_decode(s, hrp, sizeof hrp, data, sizeof data);
	int rc = -1;
	if (n == X25519_LEN && !strcmp(hrp, "age-secret-key-") && s[0] == 'A') {
		memset(id, 0, sizeof *id);
		id->kind = KEY_X25519;
		memcpy(id->priv, data, X25519_LEN);
		rc = 0;
	}
	wipe(data, sizeof data);
	return rc;
}

int identity_format(const uint8_t priv[X25519_LEN], char *buf, size_t len)
{
	return bech32_encode("AGE-SECRET-KEY-", priv, X25519_LEN, 1, buf, len);
}

static const char x25519_label[] = "age-encryption.org/v1/X25519";

/* The wrap key of a share and a recipient. */
static int x25519_key(const uint8_t shared[X25519_LEN], const uint8_t share[X25519_LEN],
		      const uint8_t pub[X25519_LEN], uint8_t key[32])
{
	uint8_t salt[2 * X25519_LEN];
	memcpy(salt, share, X25519_LEN);
	memcpy(salt + X25519_LEN, pub, X25519_LEN);
	return hkdf_sha256(shared, X25519_LEN, salt, sizeof salt, x25519_label, key, 32);
}

int x25519_wrap(const struct recipient *r, const uint8_t fk[FILE_KEY_LEN], struct text *t)
{
	uint8_t eph[X25519_LEN], share[X25519_LEN], shared[X25519_LEN], key[32], body[FILE_KEY_LEN + 16];
	int rc = -1;
	if (random_bytes(eph, sizeof eph) == 0 && x25519_public(eph, share) == 0 &&
	    x25519_shared(eph, r->pub, shared) == 0 && x25519_key(shared, share, r->pub, key) == 0 &&
	    wrap_seal(key, fk, FILE_KEY_LEN, body) == 0) {
		char arg[48];
		b64_encode(share, X25519_LEN, arg);
		const char *args[] = { "X25519", arg };
		text_stanza(t, args, 2, body, sizeof body);
		rc = t->oom ? -1 : 0;
	}
	wipe(eph, sizeof eph);
	wipe(shared, sizeof shared);
	wipe(key, sizeof key);
	return rc;
}

int x25519_unwrap(const struct identity *id, const struct stanza *s, uint8_t fk[FILE_KEY_LEN], char *err,
		  size_t len)
{
	if (strcmp(s->args[0], "X25519"))
		return 0;
	uint8_t share[X25519_LEN + 2];
	if (s->nargs != 2 || b64_decode(s->args[1], strlen(s->args[1]), share) != X25519_LEN) {
		fail(err, len, "malformed X25519 stanza (its share)");
		return -1;
	}
	if (s->body_len != FILE_KEY_LEN + 16) {
		fail(err, len, "malformed X25519 stanza (its body is %zu bytes, not 32)", s->body_len);
		return -1;
	}
	uint8_t pub[X25519_LEN], shared[X25519_LEN], key[32];
	int rc = 0;
	if (x25519_public(id->priv, pub) < 0) {
		fail(err, len, "invalid X25519 identity");
		return -1;
	}
	if (x25519_shared(id->priv, share, shared) < 0) {
		fail(err, len, "malformed X25519 stanza (a low-order share)");
		return -1;
	}
	if (x25519_key(shared, share, pub, key) == 0 && wrap_open(key, s->body, FILE_KEY_LEN, fk) == 0)
		rc = 1;
	wipe(shared, sizeof shared);
	wipe(key, sizeof key);
	return rc;
}

/* ------------------------------------------------------------ scrypt */

static const char scrypt_label[] = "age-encryption.org/v1/scrypt";

static int scrypt_wrap_key(const char *pass, size_t n, const uint8_t salt[SCRYPT_SALT_LEN], int log_n,
			   uint8_t key[32])
{
	uint8_t full[sizeof scrypt_label - 1 + SCRYPT_SALT_LEN];
	memcpy(full, scrypt_label, sizeof scrypt_label - 1);
	memcpy(full + sizeof scrypt_label - 1, salt, SCRYPT_SALT_LEN);
	return scrypt_key(pass, n, full, sizeof full, log_n, key);
}

int scrypt_wrap(const char *pass, size_t n, int log_n, const uint8_t fk[FILE_KEY_LEN], struct text *t)
{
	uint8_t salt[SCRYPT_SALT_LEN], key[32], body[FILE_KEY_LEN + 16];
	int rc = -1;
	if (random_bytes(salt, sizeof salt) == 0 && scrypt_wrap_key(pass, n, salt, log_n, key) == 0 &&
	    wrap_seal(key, fk, FILE_KEY_LEN, body) == 0) {
		char arg[32], logs[8];
		b64_encode(salt, sizeof salt, arg);
		snprintf(logs, sizeof logs, "%d", log_n);
		const char *args[] = { "scrypt", arg, logs };
		text_stanza(t, args, 3, body, sizeof body);
		rc = t->oom ? -1 : 0;
	}
	wipe(key, sizeof key);
	return rc;
}

int scrypt_unwrap(const char *pass, size_t n, const struct stanza *s, uint8_t fk[FILE_KEY_LEN], char *err,
		  size_t len)
{
	if (strcmp(s->args[0], "scrypt"))
		return 0;
	uint8_t salt[SCRYPT_SALT_LEN + 2];
	if (s->nargs != 3 || b64_decode(s->args[1], strlen(s->args[1]), salt) != SCRYPT_SALT_LEN) {
		fail(err, len, "malformed scrypt stanza (its salt)");
		return -1;
	}
	/* The work factor: decimal, no leading zero, no sign. */
	const char *w = s->args[2];
	int log_n = 0;
	for (const char *c = w; *c; c++) {
		if (*c < '0' || *c > '9' || (c == w && *c == '0') || log_n > 100) {
			fail(err, len, "malformed scrypt stanza (work factor '%s')", w);
			return -1;
		}
		log_n = log_n * 10 + (*c - '0');
	}
	if (log_n < 1) {
		fail(err, len, "malformed scrypt stanza (work factor '%s')", w);
		return -1;
	}
	if (log_n > SCRYPT_LOG_N_MAX) {
		fail(err, len, "scrypt work factor %d is over the limit of %d", log_n, SCRYPT_LOG_N_MAX);
		return -1;
	}
	if (s->body_len != FILE_KEY_LEN + 16) {
		fail(err, len, "malformed scrypt stanza (its body is %zu bytes, not 32)", s->body_len);
		return -1;
	}
	uint8_t key[32];
	int rc = 0;
	if (scrypt_wrap_key(pass, n, salt, log_n, key) < 0) {
		fail(err, len, "scrypt failed (out of memory?)");
		return -1;
	}
	if (wrap_open(key, s->body, FILE_KEY_LEN, fk) == 0)
		rc = 1;
	wipe(key, sizeof key);
	return rc;
}
