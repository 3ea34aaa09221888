/*
 * ssh.c - SSH keys as age recipients and identities, as age defines them
 * (filippo.io/age/agessh): "ssh-ed25519" stanzas (X25519 with the
 * Ed25519 key mapped to Montgomery form and a tweak from the key) and
 * "ssh-rsa" stanzas (RSA-OAEP-SHA-256, label "age-encryption.org/v1/
 * ssh-rsa"), both tagged with the first 4 bytes of SHA-256 of the key's
 * SSH wire form. Public keys come as authorized_keys lines, private keys as
 * OpenSSH files (PROTOCOL.key: "openssh-key-v1"), read here when they are
 * unencrypted; an encrypted one (bcrypt_pbkdf, AES) is checked here and
 * opened by libssh, dlopen'ed when the first one is met. PEM private keys
 * are pem.c's.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <libssh/libssh.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>
#include <accel/backend.h>
#include "crypt_format.h"

#define LIBSSH_SONAME "libssh.so.4"

static const char ed_label[] = "age-encryption.org/v1/ssh-ed25519";
static const char rsa_label[] = "age-encryption.org/v1/ssh-rsa";

/* A reader of the SSH wire format (RFC 4251: uint32, string, mpint). */
struct wire {
	const uint8_t *p;
	size_t n;
};

static int get_u32(struct wire *w, uint32_t *v)
{
	if (w->n < 4)
		return -1;
	*v = (uint32_t)w->p[0] << 24 | (uint32_t)w->p[1] << 16 | (uint32_t)w->p[2] << 8 | w->p[3];
	w->p += 4;
	w->n -= 4;
	return 0;
}

static int get_string(struct wire *w, const uint8_t **s, size_t *len)
{
	uint32_t l;
	if (get_u32(w, &l) < 0 || l > w->n)
		return -1;
	*s = w->p;
	*len = l;
	w->p += l;
	w->n -= l;
	return 0;
}

static int get_is(struct wire *w, const char *want)
{
	const uint8_t *s;
	size_t l;
	return get_string(w, &s, &l) == 0 && l == strlen(want) && !memcmp(s, want, l) ? 0 : -1;
}

/* An mpint as a BIGNUM (positive only). */
static BIGNUM *get_bn(struct wire *w)
{
	const uint8_t *s;
	size_t l;
	if (get_string(w, &s, &l) < 0 || (l && s[0] & 0x80))
		return NULL;
	return BN_bin2bn(s, (int)l, NULL);
}

/* The tag of a key: base64 of the first 4 bytes of SHA-256 of its wire form. */
static void ssh_tag(const uint8_t *wire, size_t n, char out[8])
{
	uint8_t h[SHA256_DIGEST_LENGTH];
	SHA256(wire, n, h);
	b64_encode(h, 4, out);
}

/* u = (1 + y) / (1 - y) mod 2^255 - 19: the Montgomery form of an Ed25519
 * public key (RFC 7748, section 4.1). 0 or -1. */
static int ed_to_x25519(const uint8_t ed[32], uint8_t out[32])
{
	uint8_t le[32];
	memcpy(le, ed, 32);
	le[31] &= 0x7f;
	BN_CTX *c = BN_CTX_new();
	BIGNUM *p = BN_new(), *y = BN_lebin2bn(le, 32, NULL), *one = BN_new(), *num = BN_new(), *den = BN_new();
	int rc = -1;
	if (c && p && y && one && num && den && BN_set_word(p, 1) && BN_lshift(p, p, 255) && BN_sub_word(p, 19) &&
	    BN_cmp(y, p) < 0 && BN_one(one) && BN_mod_add(num, one, y, p, c) && BN_mod_sub(den, one, y, p, c) &&
	    !BN_is_zero(den) && BN_mod_inverse(den, den, p, c) && BN_mod_mul(num, num, den, p, c) &&
	    BN_bn2lebinpad(num, out, 32) == 32)
		rc = 0;
	BN_free(p);
	BN_free(y);
	BN_free(one);
	BN_free(num);
	BN_free(den);
	BN_CTX_free(c);
	return rc;
}

/* An RSA key from n, e and (private) d. */
static EVP_PKEY *rsa_key(BIGNUM *n, BIGNUM *e, BIGNUM *d)
{
	OSSL_PARAM_BLD *b = OSSL_PARAM_BLD_new();
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
	EVP_PKEY *k = NULL;
	if (b && c && OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_N, n) &&
	    OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_E, e) &&
	    (!d || OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_D, d)) && (params = OSSL_PARAM_BLD_to_param(b)) &&
	    EVP_PKEY_fromdata_init(c) == 1)
		EVP_PKEY_fromdata(c, &k, d ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY, params);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(b);
	EVP_PKEY_CTX_free(c);
	return k;
}

int ssh_public_from_wire(const uint8_t *blob, size_t n, enum key_kind *kind, uint8_t pub[32], void **rsa, char *err,
			 size_t len)
{
	struct wire w = { blob, n };
	const uint8_t *type, *k;
	size_t tl, kl;
	if (get_string(&w, &type, &tl) < 0)
		goto bad;
	if (tl == 11 && !memcmp(type, "ssh-ed25519", 11)) {
		if (get_string(&w, &k, &kl) < 0 || kl != 32 || w.n || ed_to_x25519(k, pub) < 0)
			goto bad;
		*kind = KEY_SSH_ED25519;
		return 0;
	}
	if (tl == 7 && !memcmp(type, "ssh-rsa", 7)) {
		BIGNUM *e = get_bn(&w), *m = get_bn(&w);
		EVP_PKEY *key = e && m && !w.n ? rsa_key(m, e, NULL) : NULL;
		int bits = m ? BN_num_bits(m) : 0;
		BN_free(e);
		BN_free(m);
		if (!key)
			goto bad;
		if (bits < 2048) {
			EVP_PKEY_free(key);
			snprintf(err, len, "the RSA key has %d bits; at least 2048 are needed", bits);
			return -1;
		}
		*kind = KEY_SSH_RSA;
		*rsa = key;
		return 0;
	}
	snprintf(err, len, "unsupported SSH key type '%.*s' (ssh-ed25519 and ssh-rsa are)", (int)(tl < 40 ? tl : 40),
		 (const char *)type);
	return -1;
bad:
	snprintf(err, len, "malformed SSH public key");
	return -1;
}

/* One base64 word b[0..bl) of an authorized_keys line (padded, a
 * multiple of 4 long) decoded into a malloc'd buffer of *n bytes; NULL
 * when it is not base64 (or out of memory). */
static uint8_t *b64_word(const char *b, size_t bl, size_t *n)
{
	size_t pad = 0;
	if (!bl || bl % 4)
		return NULL;
	while (pad < 2 && b[bl - 1 - pad] == '=')
		pad++;
	uint8_t *blob = malloc(bl);
	ssize_t k = blob ? b64_decode(b, bl - pad, blob) : -1;
	if (k < 0) {
		free(blob);
		return NULL;
	}
	*n = (size_t)k;
	return blob;
}

int ssh_line_key_type(const char *line, char *type, size_t len)
{
	/* Each word followed by another: a TYPE and a BASE64 blob whose
	 * first string is that TYPE (options before them are skipped). */
	const char *ws = " \t\r\n";
	for (const char *t = line + strspn(line, ws); *t; t += strcspn(t, ws), t += strspn(t, ws)) {
		size_t tl = strcspn(t, ws), n = 0;
		const char *b = t + tl + strspn(t + tl, ws);
		uint8_t *blob = tl < len && tl <= 64 ? b64_word(b, strcspn(b, ws), &n) : NULL;
		struct wire w = { blob, n };
		const uint8_t *s;
		size_t sl;
		int ok = blob && get_string(&w, &s, &sl) == 0 && sl == tl && !memcmp(s, t, tl);
		free(blob);
		if (ok) {
			memcpy(type, t, tl);
			type[tl] = 0;
			return 1;
		}
	}
	return 0;
}

int ssh_recipient_parse(const char *line, struct recipient *r, char *err, size_t len)
{
	/* An authorized_keys line: [options] TYPE BASE64 [comment]. */
	const char *t = strstr(line, "ssh-ed25519 ");
	const char *t2 = strstr(line, "ssh-rsa ");
	if (!t || (t2 && t2 < t))
		t = t2;
	if (!t) {
		snprintf(err, len, "not a supported SSH public key (ssh-ed25519 or ssh-rsa)");
		return -1;
	}
	const char *b = strchr(t, ' ') + 1;
	size_t n;
	uint8_t *blob = b64_word(b, strcspn(b, " \t\r\n"), &n);
	if (!blob) {
		memset(r, 0, sizeof *r);
		snprintf(err, len, "malformed SSH public key (base64)");
		return -1;
	}
	int rc = recipient_of_wire(blob, n, r, err, len);
	free(blob);
	return rc;
}

/* The tweak of an Ed25519 key: HKDF-SHA-256 with no secret, the key's wire
 * form as salt. */
static int ed_tweak(const uint8_t *wire, size_t n, uint8_t tweak[32])
{
	return hkdf_sha256(NULL, 0, wire, n, ed_label, tweak, 32);
}

int ssh_wrap(const struct recipient *r, const uint8_t fk[FILE_KEY_LEN], struct text *t)
{
	char tag[8];
	ssh_tag(r->wire, r->wire_len, tag);
	if (r->kind == KEY_SSH_RSA) {
		EVP_PKEY_CTX *c = EVP_PKEY_CTX_new(r->rsa, NULL);
		char *label = OPENSSL_strdup(rsa_label);
		uint8_t out[1024];
		size_t ol = sizeof out;
		int rc = -1;
		if (c && label && EVP_PKEY_encrypt_init(c) == 1 && EVP_PKEY_CTX_set_rsa_padding(c, RSA_PKCS1_OAEP_PADDING) == 1 &&
		    EVP_PKEY_CTX_set_rsa_oaep_md(c, EVP_sha256()) == 1 && EVP_PKEY_CTX_set_rsa_mgf1_md(c, EVP_sha256()) == 1 &&
		    EVP_PKEY_CTX_set0_rsa_oaep_label(c, label, sizeof rsa_label - 1) == 1) {
			label = NULL;   /* owned by the context now */
			if (EVP_PKEY_encrypt(c, out, &ol, fk, FILE_KEY_LEN) == 1) {
				const char *args[] = { "ssh-rsa", tag };
				text_stanza(t, args, 2, out, ol);
				rc = t->oom ? -1 : 0;
			}
		}
		OPENSSL_free(label);
		EVP_PKEY_CTX_free(c);
		return rc;
	}
	uint8_t eph[32], share[32], shared[32], tweak[32], key[32], body[FILE_KEY_LEN + 16], salt[64];
	int rc = -1;
	if (random_bytes(eph, sizeof eph) == 0 && x25519_public(eph, share) == 0 &&
	    x25519_shared(eph, r->pub, shared) == 0 && ed_tweak(r->wire, r->wire_len, tweak) == 0 &&
	    x25519_shared(tweak, shared, shared) == 0) {
		memcpy(salt, share, 32);
		memcpy(salt + 32, r->pub, 32);
		if (hkdf_sha256(shared, 32, salt, 64, ed_label, key, 32) == 0 && wrap_seal(key, fk, FILE_KEY_LEN, body) == 0) {
			char arg[48];
			b64_encode(share, 32, arg);
			const char *args[] = { "ssh-ed25519", tag, arg };
			text_stanza(t, args, 3, body, sizeof body);
			rc = t->oom ? -1 : 0;
		}
	}
	wipe(eph, sizeof eph);
	wipe(shared, sizeof shared);
	wipe(key, sizeof key);
	return rc;
}

int ssh_unwrap(const struct identity *id, const struct stanza *s, uint8_t fk[FILE_KEY_LEN], char *err, size_t len)
{
	const char *type = id->kind == KEY_SSH_RSA ? "ssh-rsa" : "ssh-ed25519";
	if (strcmp(s->args[0], type))
		return 0;
	char tag[8];
	ssh_tag(id->wire, id->wire_len, tag);
	if (id->kind == KEY_SSH_RSA) {
		if (s->nargs != 2) {
			snprintf(err, len, "malformed ssh-rsa stanza");
			return -1;
		}
		if (strcmp(s->args[1], tag))
			return 0;
		EVP_PKEY_CTX *c = EVP_PKEY_CTX_new(id->rsa, NULL);
		char *label = OPENSSL_strdup(rsa_label);
		uint8_t out[1024];
		size_t ol = sizeof out;
		int rc = -1;
		if (c && label && EVP_PKEY_decrypt_init(c) == 1 && EVP_PKEY_CTX_set_rsa_padding(c, RSA_PKCS1_OAEP_PADDING) == 1 &&
		    EVP_PKEY_CTX_set_rsa_oaep_md(c, EVP_sha256()) == 1 && EVP_PKEY_CTX_set_rsa_mgf1_md(c, EVP_sha256()) == 1 &&
		    EVP_PKEY_CTX_set0_rsa_oaep_label(c, label, sizeof rsa_label - 1) == 1) {
			label = NULL;
			if (EVP_PKEY_decrypt(c, out, &ol, s->body, s->body_len) == 1 && ol == FILE_KEY_LEN) {
				memcpy(fk, out, FILE_KEY_LEN);
				rc = 1;
			}
		}
		wipe(out, sizeof out);
		OPENSSL_free(label);
		EVP_PKEY_CTX_free(c);
		if (rc < 0)
			snprintf(err, len, "the ssh-rsa stanza for this key does not decrypt");
		return rc;
	}
	uint8_t share[32 + 2], shared[32], tweak[32], key[32], salt[64];
	if (s->nargs != 3 || b64_decode(s->args[2], strlen(s->args[2]), share) != 32 || s->body_len != FILE_KEY_LEN + 16) {
		snprintf(err, len, "malformed ssh-ed25519 stanza");
		return -1;
	}
	if (strcmp(s->args[1], tag))
		return 0;
	int rc = 0;
	if (x25519_shared(id->priv, share, shared) < 0 || ed_tweak(id->wire, id->wire_len, tweak) < 0 ||
	    x25519_shared(tweak, shared, shared) < 0) {
		snprintf(err, len, "malformed ssh-ed25519 stanza (its share)");
		rc = -1;
	} else {
		memcpy(salt, share, 32);
		memcpy(salt + 32, id->pub, 32);
		if (hkdf_sha256(shared, 32, salt, 64, ed_label, key, 32) == 0 && wrap_open(key, s->body, FILE_KEY_LEN, fk) == 0)
			rc = 1;
	}
	wipe(shared, sizeof shared);
	wipe(key, sizeof key);
	return rc;
}

/* The ciphers of an encrypted key that ssh_identity_open hands to libssh:
 * ssh-keygen's default (aes256-ctr) and the other AES ones in CTR and CBC
 * modes (PROTOCOL.key; PROTOCOL: "aes256-ctr" ...). libssh 0.10 crashes
 * on the AEAD ones (chacha20-poly1305@openssh.com, aes256-gcm@openssh.com),
 * so they are refused here. All have 16-byte blocks. */
static const char *const sealed_ciphers[] = {
	"aes256-ctr", "aes192-ctr", "aes128-ctr", "aes256-cbc", "aes192-cbc", "aes128-cbc", NULL,
};

/* The body of an OpenSSH private key file: its base64 decoded into *bin
 * (*n bytes of a buffer of *cap; wipe and free it), and the span of the
 * key from its BEGIN line to the end of its END line, [*kb, *ke). */
static int key_decode(const char *text, size_t tn, uint8_t **bin, size_t *n, size_t *cap, const char **kb,
		      const char **ke, char *err, size_t len)
{
	static const char begin[] = "-----BEGIN OPENSSH PRIVATE KEY-----", end[] = "-----END OPENSSH PRIVATE KEY-----";
	const char *b = memmem(text, tn, begin, sizeof begin - 1);
	*bin = NULL;
	*kb = b;
	/* The end line is looked for after the whole begin line: the two
	 * share dashes, so a search from b finds an end inside it. */
	if (b)
		b += sizeof begin - 1;
	const char *e = b ? memmem(b, tn - (size_t)(b - text), end, sizeof end - 1) : NULL;
	if (!b || !e) {
		snprintf(err, len, "not an OpenSSH private key");
		return -1;
	}
	*ke = e + sizeof end - 1;
	/* The base64 between the lines, without the line breaks. */
	size_t k = 0;
	*cap = (size_t)(e - b);
	char *s = malloc(*cap + 1);
	*bin = malloc(*cap + 1);
	if (!s || !*bin) {
		free(s);
		free(*bin);
		*bin = NULL;
		snprintf(err, len, "out of memory");
		return -1;
	}
	for (const char *c = b; c < e; c++)
		if (*c != '\n' && *c != '\r' && *c != ' ' && *c != '\t')
			s[k++] = *c;
	while (k && s[k - 1] == '=')
		k--;
	ssize_t r = b64_decode(s, k, *bin);
	wipe(s, *cap);
	free(s);
	*n = r > 0 ? (size_t)r : 0;
	return 0;
}

/* Parse a decoded openssh-key-v1 body, bin[0..n): 0 with an unencrypted
 * key in id; 1 for an encrypted one that ssh_identity_open can open (its
 * public key's wire form in bin[*pub..*pub + *publ)); -1 with err. */
static int key_parse(const uint8_t *bin, size_t n, struct identity *id, size_t *pub, size_t *publ, char *err,
		     size_t len)
{
	static const char magic[] = "openssh-key-v1";
	struct wire w = { bin, n };
	const uint8_t *pubw, *priv, *cipher, *kdf, *opts;
	size_t pwl, privl, cl, kl, ol;
	uint32_t nkeys, c1, c2;
	memset(id, 0, sizeof *id);
	if (n < sizeof magic || memcmp(bin, magic, sizeof magic)) {
		snprintf(err, len, "malformed OpenSSH private key");
		return -1;
	}
	w.p += sizeof magic;
	w.n -= sizeof magic;
	if (get_string(&w, &cipher, &cl) < 0 || get_string(&w, &kdf, &kl) < 0 || get_string(&w, &opts, &ol) < 0 ||
	    get_u32(&w, &nkeys) < 0 || nkeys != 1 || get_string(&w, &pubw, &pwl) < 0 ||
	    get_string(&w, &priv, &privl) < 0) {
		snprintf(err, len, "malformed OpenSSH private key");
		return -1;
	}
	int plain = cl == 4 && !memcmp(cipher, "none", 4);
	if (plain != (kl == 4 && !memcmp(kdf, "none", 4))) {
		snprintf(err, len, "malformed OpenSSH private key (a cipher without a KDF, or a KDF without one)");
		return -1;
	}
	void *rsa = NULL;
	if (!plain) {
		int known = 0;
		for (const char *const *c = sealed_ciphers; *c && !known; c++)
			known = cl == strlen(*c) && !memcmp(cipher, *c, cl);
		if (!(kl == 6 && !memcmp(kdf, "bcrypt", 6))) {
			snprintf(err, len, "an encrypted OpenSSH private key with KDF '%.*s' (bcrypt is supported)",
				 (int)(kl < 40 ? kl : 40), (const char *)kdf);
			return -1;
		}
		if (!known) {
			snprintf(err, len,
				 "an encrypted OpenSSH private key with cipher '%.*s' (AES in CTR or CBC mode is supported; ssh-keygen -p -Z aes256-ctr rewrites it)",
				 (int)(cl < 40 ? cl : 40), (const char *)cipher);
			return -1;
		}
		/* bcrypt's options: string salt, uint32 rounds (PROTOCOL.key). */
		struct wire ow = { opts, ol };
		const uint8_t *salt;
		size_t sl;
		uint32_t rounds;
		if (get_string(&ow, &salt, &sl) < 0 || !sl || get_u32(&ow, &rounds) < 0 || !rounds || ow.n ||
		    !privl || privl % 16) {
			snprintf(err, len, "malformed encrypted OpenSSH private key");
			return -1;
		}
		if (ssh_public_from_wire(pubw, pwl, &id->kind, id->pub, &rsa, err, len) < 0)
			return -1;
		EVP_PKEY_free(rsa);
		*pub = (size_t)(pubw - bin);
		*publ = pwl;
		return 1;
	}
	struct wire pw = { priv, privl };
	if (get_u32(&pw, &c1) < 0 || get_u32(&pw, &c2) < 0 || c1 != c2) {
		snprintf(err, len, "malformed OpenSSH private key (check words differ)");
		return -1;
	}
	if (ssh_public_from_wire(pubw, pwl, &id->kind, id->pub, &rsa, err, len) < 0)
		return -1;
	if (id->kind == KEY_SSH_ED25519) {
		const uint8_t *pk, *sk;
		size_t pkl, skl;
		uint8_t h[SHA512_DIGEST_LENGTH];
		if (get_is(&pw, "ssh-ed25519") < 0 || get_string(&pw, &pk, &pkl) < 0 || pkl != 32 ||
		    get_string(&pw, &sk, &skl) < 0 || skl != 64) {
			snprintf(err, len, "malformed OpenSSH Ed25519 private key");
			goto bad;
		}
		SHA512(sk, 32, h);
		memcpy(id->priv, h, 32);
		wipe(h, sizeof h);
		uint8_t check[32];
		if (x25519_public(id->priv, check) < 0 || CRYPTO_memcmp(check, id->pub, 32)) {
			snprintf(err, len, "the OpenSSH private key does not match its public key");
			goto bad;
		}
	} else {
		EVP_PKEY_free(rsa);
		BIGNUM *m = NULL, *pe = NULL, *d = NULL;
		if (get_is(&pw, "ssh-rsa") == 0) {
			m = get_bn(&pw);
			pe = get_bn(&pw);
			d = get_bn(&pw);
		}
		EVP_PKEY *key = m && pe && d ? rsa_key(m, pe, d) : NULL;
		BN_free(m);
		BN_free(pe);
		BN_clear_free(d);
		if (!key) {
			snprintf(err, len, "malformed OpenSSH RSA private key");
			goto bad;
		}
		id->rsa = key;
	}
	if (!(id->wire = malloc(pwl))) {
		snprintf(err, len, "out of memory");
		goto bad;
	}
	memcpy(id->wire, pubw, pwl);
	id->wire_len = pwl;
	return 0;
bad:
	EVP_PKEY_free(id->rsa);
	wipe(id, sizeof *id);
	return -1;
}

int ssh_identity_parse(const char *text, size_t tn, struct identity *id, char *err, size_t len)
{
	uint8_t *bin;
	size_t n, cap, pub, publ;
	const char *kb, *ke;
	memset(id, 0, sizeof *id);
	if (key_decode(text, tn, &bin, &n, &cap, &kb, &ke, err, len) < 0)
		return -1;
	int rc = key_parse(bin, n, id, &pub, &publ, err, len);
	wipe(bin, cap);
	free(bin);
	return rc;
}

int recipient_of_wire(const uint8_t *wire, size_t n, struct recipient *r, char *err, size_t len)
{
	memset(r, 0, sizeof *r);
	uint8_t *copy = malloc(n ? n : 1);
	if (!copy) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	memcpy(copy, wire, n);
	if (ssh_public_from_wire(copy, n, &r->kind, r->pub, &r->rsa, err, len) < 0) {
		free(copy);
		return -1;
	}
	r->wire = copy;
	r->wire_len = n;
	return 0;
}

int ssh_sealed_public(const char *text, size_t tn, uint8_t **wire, size_t *wire_len)
{
	uint8_t *bin;
	size_t n, cap, pub, publ;
	const char *kb, *ke;
	char err[200];
	struct identity id;
	*wire = NULL;
	*wire_len = 0;
	if (key_decode(text, tn, &bin, &n, &cap, &kb, &ke, err, sizeof err) < 0)
		return -1;
	int rc = key_parse(bin, n, &id, &pub, &publ, err, sizeof err);
	if (rc == 1 && publ && (*wire = malloc(publ))) {
		memcpy(*wire, bin + pub, publ);
		*wire_len = publ;
	}
	if (rc == 0) {
		free(id.wire);
		EVP_PKEY_free(id.rsa);
		wipe(&id, sizeof id);
	}
	wipe(bin, cap);
	free(bin);
	return *wire ? 0 : -1;
}

int ssh_stanza_for(const uint8_t *wire, size_t n, const struct stanza *s)
{
	struct wire w = { wire, n };
	const uint8_t *type;
	size_t tl;
	char tag[8];
	if (s->nargs < 2 || get_string(&w, &type, &tl) < 0 || strlen(s->args[0]) != tl || memcmp(s->args[0], type, tl) ||
	    (strcmp(s->args[0], "ssh-ed25519") && strcmp(s->args[0], "ssh-rsa")))
		return 0;
	ssh_tag(wire, n, tag);
	return !strcmp(s->args[1], tag);
}

/* libssh (libssh.so.4), loaded by the first encrypted key: its OpenSSH
 * key reader runs bcrypt_pbkdf, which OpenSSL lacks. */
static struct {
	int tried;
	char why[200];
	__typeof__(ssh_pki_import_privkey_base64) *import;
	__typeof__(ssh_pki_export_privkey_base64) *export;
	/* libssh 0.11's: the key in OpenSSH's format (1) whatever its type;
	 * 0.10's export writes RSA keys as PEM, and fails on those it reads
	 * from OpenSSH files (they lack the CRT values). */
	int (*export_format)(const ssh_key, const char *, ssh_auth_callback, void *, char **, int);
	__typeof__(ssh_key_free) *key_free;
	__typeof__(ssh_string_free_char) *free_char;
	__typeof__(ssh_version) *version;
} libssh;

static int libssh_load(char *err, size_t len)
{
	if (!libssh.tried) {
		libssh.tried = 1;
		void *h = accel_dlopen(LIBSSH_SONAME, libssh.why, sizeof libssh.why);
		if (h) {
			libssh.import = (__typeof__(libssh.import))dlsym(h, "ssh_pki_import_privkey_base64");
			libssh.export = (__typeof__(libssh.export))dlsym(h, "ssh_pki_export_privkey_base64");
			libssh.export_format = (__typeof__(libssh.export_format))dlsym(h, "ssh_pki_export_privkey_base64_format");
			libssh.key_free = (__typeof__(libssh.key_free))dlsym(h, "ssh_key_free");
			libssh.free_char = (__typeof__(libssh.free_char))dlsym(h, "ssh_string_free_char");
			libssh.version = (__typeof__(libssh.version))dlsym(h, "ssh_version");
			if (!libssh.import || !libssh.export || !libssh.key_free || !libssh.free_char || !libssh.version)
				snprintf(libssh.why, sizeof libssh.why, "%s lacks the functions of libssh 0.9", LIBSSH_SONAME);
			else
				libssh.why[0] = 0;
		}
	}
	if (libssh.why[0]) {
		snprintf(err, len, "an encrypted OpenSSH private key needs libssh (%s; Debian: libssh-4)", libssh.why);
		return -1;
	}
	return 0;
}

/* name as a shell word: as it is, or in single quotes. */
static void shell_word(const char *name, char *out, size_t len)
{
	if (!name[0] || name[strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./+:,@%=-")]) {
		size_t k = 0;
		out[k++] = '\'';
		for (const char *c = name; *c && k + 5 < len; c++) {
			if (*c == '\'') {
				memcpy(out + k, "'\\''", 4);
				k += 4;
			} else {
				out[k++] = *c;
			}
		}
		out[k++] = '\'';
		out[k] = 0;
	} else {
		snprintf(out, len, "%s", name);
	}
}

int ssh_identity_open(const char *text, size_t tn, const char *pass, size_t plen, const char *name,
		      struct identity *id, char *err, size_t len)
{
	static const char openssh[] = "-----BEGIN OPENSSH PRIVATE KEY-----";
	if (!memmem(text, tn, openssh, sizeof openssh - 1) && pem_key_begin(text, tn))
		return pem_identity_open(text, tn, pass, plen, id, err, len);
	uint8_t *bin;
	size_t n, cap, pub = 0, publ = 0;
	const char *kb, *ke;
	char *k = NULL, *p = NULL, *out = NULL;
	ssh_key key = NULL;
	memset(id, 0, sizeof *id);
	if (key_decode(text, tn, &bin, &n, &cap, &kb, &ke, err, len) < 0)
		return -1;
	int rc = key_parse(bin, n, id, &pub, &publ, err, len);
	if (rc != 1)
		goto out;
	rc = -1;
	if (memchr(pass, 0, plen)) {
		snprintf(err, len, "the passphrase holds a NUL byte");
		goto out;
	}
	if (libssh_load(err, len) < 0)
		goto out;
	/* libssh reads C strings: the key alone, the passphrase. */
	k = malloc((size_t)(ke - kb) + 1);
	p = malloc(plen + 1);
	if (!k || !p) {
		snprintf(err, len, "out of memory");
		goto out;
	}
	memcpy(k, kb, (size_t)(ke - kb));
	k[ke - kb] = 0;
	memcpy(p, pass, plen);
	p[plen] = 0;
	if (libssh.import(k, p, NULL, NULL, &key) != SSH_OK) {
		/* The structure was checked above: what fails now is the
		 * check words of the decrypted part. */
		rc = 1;
		goto out;
	}
	int ok = libssh.export_format ? libssh.export_format(key, NULL, NULL, NULL, &out, 1)
				      : libssh.export(key, NULL, NULL, NULL, &out);
	if (ok != SSH_OK || !out) {
		/* OpenSSL reads the same key as PEM (pem.c). */
		char file[300];
		shell_word(name, file, sizeof file);
		if (id->kind == KEY_SSH_RSA)
			snprintf(err, len,
				 "libssh %s cannot hand over the decrypted ssh-rsa key; convert it once with `ssh-keygen -p -m PEM -f %s` (same passphrase)",
				 libssh.version(0), file);
		else
			snprintf(err, len,
				 "libssh %s cannot hand over the decrypted ssh-ed25519 key (libssh 0.11 can; or remove its passphrase with ssh-keygen -p)",
				 libssh.version(0));
		goto out;
	}
	uint8_t *bin2;
	size_t n2, cap2, pub2, publ2;
	const char *kb2, *ke2;
	if (key_decode(out, strlen(out), &bin2, &n2, &cap2, &kb2, &ke2, err, len) == 0) {
		rc = key_parse(bin2, n2, id, &pub2, &publ2, err, len);
		wipe(bin2, cap2);
		free(bin2);
		if (rc == 1) {
			snprintf(err, len, "libssh gave the key back encrypted");
			rc = -1;
		} else if (rc == 0 && (id->wire_len != publ || memcmp(id->wire, bin + pub, publ))) {
			snprintf(err, len, "the decrypted key does not match its public key");
			free(id->wire);
			EVP_PKEY_free(id->rsa);
			wipe(id, sizeof *id);
			rc = -1;
		}
	}
out:
	if (out) {
		wipe(out, strlen(out));
		libssh.free_char(out);
	}
	if (key)
		libssh.key_free(key);
	if (k) {
		wipe(k, (size_t)(ke - kb));
		free(k);
	}
	if (p) {
		wipe(p, plen);
		free(p);
	}
	wipe(bin, cap);
	free(bin);
	return rc;
}

void keys_free(struct recipient *rs, int nrs, struct identity *ids, int nids)
{
	for (int i = 0; i < nrs; i++) {
		free(rs[i].wire);
		EVP_PKEY_free(rs[i].rsa);
	}
	for (int i = 0; i < nids; i++) {
		free(ids[i].wire);
		EVP_PKEY_free(ids[i].rsa);   /* clears the private key */
	}
	wipe(ids, (size_t)nids * sizeof *ids);
	free(ids);
	free(rs);
}
