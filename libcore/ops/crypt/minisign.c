/*
 * minisign.c - minisign's key and signature files (jedisct1.github.io/
 * minisign; their layout is in crypt_format.h): parsing them, writing
 * them, and checking a signature and its trusted comment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <sodium.h>
#include "crypt_format.h"

#define KEYID_LEN MINISIGN_KEYID_LEN
#define PK_LEN ED25519_PK_LEN
#define SIG_LEN ED25519_SIG_LEN
#define PUB_BLOB (2 + KEYID_LEN + PK_LEN)
#define SEC_BLOB MINISIGN_SEC_BLOB
#define SIG_BLOB (2 + KEYID_LEN + SIG_LEN)
/* Where the salt, the limits, the key id (the part encrypted) and the
 * checksum are in a secret key blob. */
#define SEC_SALT 6
#define SEC_OPS (SEC_SALT + 32)
#define SEC_MEM (SEC_OPS + 8)
#define SEC_KEY (SEC_MEM + 8)
#define SEC_CHK (SEC_KEY + KEYID_LEN + 64)
_Static_assert(SEC_CHK + 32 == SEC_BLOB, "minisign's secret key layout");

/* Padded base64 of a key or signature blob, as libsodium reads it for
 * minisign: the unused bits of the last symbol may be anything. */
static ssize_t b64p_decode(const char *s, uint8_t *out, size_t max)
{
	size_t n = strlen(s), pad = 0;
	char canon[4 * (SEC_BLOB + 2) / 3 + 4];
	if (n % 4 || n >= sizeof canon)
		return -1;
	while (pad < 2 && n > pad && s[n - 1 - pad] == '=')
		pad++;
	n -= pad;
	if (n * 3 / 4 > max)
		return -1;
	memcpy(canon, s, n);
	if (pad) {
		/* 2 or 4 bits of the last symbol follow the last byte. */
		static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		const char *c = canon[n - 1] ? strchr(alphabet, canon[n - 1]) : NULL;
		if (!c)
			return -1;
		canon[n - 1] = alphabet[(c - alphabet) & ~((1 << 2 * pad) - 1)];
	}
	return b64_decode(canon, n, out);
}

static void b64p_encode(const uint8_t *p, size_t n, char *out)
{
	size_t l = b64_encode(p, n, out);
	while (l % 4)
		out[l++] = '=';
	out[l] = 0;
}

/* Cut text[0..n) (a NUL at text[n]) into at most max lines (LF, the CRs
 * before it dropped), in place. Returns the count, or -1 when the text
 * holds a NUL byte. */
static int split_lines(char *text, size_t n, char **lines, int max)
{
	if (memchr(text, 0, n))
		return -1;
	int k = 0;
	for (char *p = text; *p && k < max;) {
		lines[k++] = p;
		char *e = strchr(p, '\n');
		if (!e)
			break;
		*e = 0;
		for (char *c = e; c > p && c[-1] == '\r'; c--)
			c[-1] = 0;
		p = e + 1;
	}
	return k;
}

int minisign_sig_parse(char *text, size_t len, struct minisig *sig)
{
	char *lines[4];
	uint8_t blob[SIG_BLOB + 3], gsig[SIG_LEN + 3];
	int n = split_lines(text, len, lines, 4);
	if (n < 4 || strncmp(lines[0], "untrusted comment: ", 19) || strncmp(lines[2], "trusted comment: ", 17) ||
	    b64p_decode(lines[1], blob, sizeof blob) != SIG_BLOB || b64p_decode(lines[3], gsig, sizeof gsig) != SIG_LEN ||
	    blob[0] != 'E' || (blob[1] != 'D' && blob[1] != 'd'))
		return -1;
	sig->legacy = blob[1] == 'd';
	memcpy(sig->id, blob + 2, KEYID_LEN);
	memcpy(sig->sig, blob + 2 + KEYID_LEN, SIG_LEN);
	memcpy(sig->gsig, gsig, SIG_LEN);
	sig->untrusted = lines[0] + 19;
	sig->trusted = lines[2] + 17;
	return 0;
}

int minisign_sig_verify(const struct minisig *sig, const uint8_t pk[PK_LEN], const uint8_t *msg, size_t n)
{
	if (ed25519_verify(pk, msg, n, sig->sig) < 0)
		return 1;
	size_t tl = strlen(sig->trusted);
	uint8_t *gmsg = malloc(SIG_LEN + tl + 1);
	if (!gmsg)
		return -1;
	memcpy(gmsg, sig->sig, SIG_LEN);
	memcpy(gmsg + SIG_LEN, sig->trusted, tl);
	int rc = ed25519_verify(pk, gmsg, SIG_LEN + tl, sig->gsig) < 0 ? 2 : 0;
	free(gmsg);
	return rc;
}

int minisign_sig_format(const struct minisign_key *k, const uint8_t md[64], const char *untrusted,
			const char *trusted, char *buf, size_t len)
{
	uint8_t blob[SIG_BLOB], gsig[SIG_LEN];
	uint8_t gmsg[SIG_LEN + MINISIGN_COMMENT_MAX];
	size_t tl = strlen(trusted);
	if (tl > MINISIGN_COMMENT_MAX)
		return -1;
	memcpy(blob, "ED", 2);
	memcpy(blob + 2, k->id, KEYID_LEN);
	if (ed25519_sign(k->seed, md, 64, blob + 2 + KEYID_LEN) < 0)
		return -1;
	memcpy(gmsg, blob + 2 + KEYID_LEN, SIG_LEN);
	memcpy(gmsg + SIG_LEN, trusted, tl);
	if (ed25519_sign(k->seed, gmsg, SIG_LEN + tl, gsig) < 0)
		return -1;
	char b1[200], b2[120];
	b64p_encode(blob, sizeof blob, b1);
	b64p_encode(gsig, sizeof gsig, b2);
	int n = snprintf(buf, len, "untrusted comment: %s\n%s\ntrusted comment: %s\n%s\n", untrusted, b1, trusted, b2);
	return n < 0 || (size_t)n >= len ? -1 : n;
}

int minisign_pub_parse(const char *line, struct minisign_key *k)
{
	uint8_t blob[PUB_BLOB + 3];
	if (b64p_decode(line, blob, sizeof blob) != PUB_BLOB || blob[0] != 'E' || blob[1] != 'd')
		return -1;
	memcpy(k->id, blob + 2, KEYID_LEN);
	memcpy(k->pk, blob + 2 + KEYID_LEN, PK_LEN);
	return 0;
}

int minisign_pub_file_parse(char *text, size_t n, struct minisign_key *k, char *err, size_t len)
{
	char *lines[2];
	if (split_lines(text, n, lines, 2) < 2) {
		snprintf(err, len, "not a minisign public key");
		return -1;
	}
	if (minisign_pub_parse(lines[1], k) < 0) {
		snprintf(err, len, "not a minisign Ed25519 public key");
		return -1;
	}
	return 0;
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

int minisign_sec_file_parse(char *text, size_t n, struct minisign_sealed *s, char *err, size_t len)
{
	char *lines[2];
	uint8_t blob[SEC_BLOB + 3];
	ssize_t r = split_lines(text, n, lines, 2) == 2 ? b64p_decode(lines[1], blob, sizeof blob) : -1;
	int rc = -1;
	if (r != SEC_BLOB || blob[0] != 'E' || blob[1] != 'd' || blob[4] != 'B' || blob[5] != '2') {
		snprintf(err, len, "not a minisign Ed25519 secret key");
	} else if ((blob[2] || blob[3]) && (blob[2] != 'S' || blob[3] != 'c')) {
		snprintf(err, len, "a minisign secret key encrypted with an unknown KDF");
	} else if (blob[2] && (le64(blob + SEC_OPS) > MINISIGN_OPSLIMIT_MAX || le64(blob + SEC_MEM) > MINISIGN_MEMLIMIT_MAX)) {
		snprintf(err, len, "the key's scrypt limits are beyond minisign's own (2^25 operations, 1 GiB)");
	} else {
		s->encrypted = blob[2] != 0;
		memcpy(s->blob, blob, SEC_BLOB);
		rc = 0;
	}
	wipe(blob, sizeof blob);
	return rc;
}

int minisign_sec_open(const struct minisign_sealed *s, const char *pass, size_t plen, struct minisign_key *k,
		      char *err, size_t len)
{
	uint8_t key[SEC_BLOB - SEC_KEY], stream[sizeof key], chk[32];
	int rc = -1;
	memcpy(key, s->blob + SEC_KEY, sizeof key);
	if (s->encrypted) {
		if (sodium_init() < 0 ||
		    crypto_pwhash_scryptsalsa208sha256(stream, sizeof stream, pass, plen, s->blob + SEC_SALT,
						       le64(s->blob + SEC_OPS), (size_t)le64(s->blob + SEC_MEM)) != 0) {
			snprintf(err, len, "scrypt failed (out of memory?)");
			goto out;
		}
		for (size_t i = 0; i < sizeof key; i++)
			key[i] ^= stream[i];
		/* "Ed" || key id || seed || public key, as minisign sums them. */
		crypto_generichash_state h;
		crypto_generichash_init(&h, NULL, 0, sizeof chk);
		crypto_generichash_update(&h, s->blob, 2);
		crypto_generichash_update(&h, key, KEYID_LEN + 64);
		crypto_generichash_final(&h, chk, sizeof chk);
		if (CRYPTO_memcmp(chk, key + (SEC_CHK - SEC_KEY), sizeof chk)) {
			rc = 1;
			goto out;
		}
	}
	uint8_t pk[PK_LEN];
	memcpy(k->id, key, KEYID_LEN);
	memcpy(k->seed, key + KEYID_LEN, 32);
	memcpy(k->pk, key + KEYID_LEN + 32, PK_LEN);
	if (ed25519_public(k->seed, pk) < 0 || CRYPTO_memcmp(pk, k->pk, PK_LEN)) {
		snprintf(err, len, "the secret key does not match its public half");
		wipe(k, sizeof *k);
	} else {
		rc = 0;
	}
out:
	wipe(key, sizeof key);
	wipe(stream, sizeof stream);
	return rc;
}

void minisign_pub_b64(const struct minisign_key *k, char b64[MINISIGN_PUB_B64_LEN])
{
	uint8_t pb[PUB_BLOB];
	memcpy(pb, "Ed", 2);
	memcpy(pb + 2, k->id, KEYID_LEN);
	memcpy(pb + 2 + KEYID_LEN, k->pk, PK_LEN);
	b64p_encode(pb, sizeof pb, b64);
}

int minisign_pub_format(const struct minisign_key *k, char *buf, size_t len)
{
	char b64[MINISIGN_PUB_B64_LEN], id[17];
	minisign_pub_b64(k, b64);
	minisign_keyid_hex(k->id, id);
	int n = snprintf(buf, len, "untrusted comment: minisign public key %s\n%s\n", id, b64);
	return n < 0 || (size_t)n >= len ? -1 : n;
}

int minisign_sec_format(const struct minisign_key *k, char *buf, size_t len)
{
	uint8_t blob[SEC_BLOB];
	char b64[300];
	memset(blob, 0, sizeof blob);
	memcpy(blob, "Ed\0\0B2", 6);
	memcpy(blob + SEC_KEY, k->id, KEYID_LEN);
	memcpy(blob + SEC_KEY + KEYID_LEN, k->seed, 32);
	memcpy(blob + SEC_KEY + KEYID_LEN + 32, k->pk, PK_LEN);
	b64p_encode(blob, sizeof blob, b64);
	int n = snprintf(buf, len, "untrusted comment: minisign secret key (unencrypted)\n%s\n", b64);
	wipe(blob, sizeof blob);
	wipe(b64, sizeof b64);
	return n < 0 || (size_t)n >= len ? -1 : n;
}

void minisign_keyid_hex(const uint8_t id[KEYID_LEN], char out[17])
{
	for (int i = 0; i < KEYID_LEN; i++)
		snprintf(out + 2 * i, 3, "%02X", id[KEYID_LEN - 1 - i]);
}
