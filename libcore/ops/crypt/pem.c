/*
 * pem.c - PEM private keys as SSH identities, the ones age reads through
 * golang.org/x/crypto/ssh (ParseRawPrivateKey, ...WithPassphrase):
 * "RSA PRIVATE KEY" (PKCS#1 RSAPrivateKey, RFC 8017 appendix A.1.2),
 * plain or encrypted with OpenSSL's "Proc-Type: 4,ENCRYPTED" and
 * "DEK-Info: CIPHER,IV" headers (RFC 1421 section 4.6.1.1; ssh-keygen -m
 * PEM, openssl genrsa -traditional -aes256), and "PRIVATE KEY" (PKCS#8
 * PrivateKeyInfo, RFC 5958) holding an RSA or an Ed25519 key (RFC 8410);
 * and one age does not read, "ENCRYPTED PRIVATE KEY" (PKCS#8
 * EncryptedPrivateKeyInfo, RFC 5958 section 3, PBES2 of RFC 8018;
 * ssh-keygen -m PKCS8, openssl genpkey -aes256). An RSA key is an ssh-rsa
 * identity, an Ed25519 one an ssh-ed25519 identity, with the SSH public key
 * (the stanzas' tag) derived from it. OpenSSL decodes them and never asks
 * for a passphrase itself: the caller's is handed to it.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include "crypt_format.h"

const char *pem_key_begin(const char *text, size_t n)
{
	static const char begin[] = "-----BEGIN ", tail[] = "PRIVATE KEY-----", openssh[] = "OPENSSH ";
	const char *end = text + n;
	for (const char *b = text; (b = memmem(b, (size_t)(end - b), begin, sizeof begin - 1)); b++) {
		const char *l = b + sizeof begin - 1, *e = memchr(l, '\n', (size_t)(end - l));
		if (!e)
			e = end;
		while (e > l && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
			e--;
		/* The label: "PRIVATE KEY" or "WORDS PRIVATE KEY", not OpenSSH's. */
		size_t ll = (size_t)(e - l), tl = sizeof tail - 1;
		if (ll >= tl && !memcmp(e - tl, tail, tl) && (ll == tl || e[-(ptrdiff_t)tl - 1] == ' ') &&
		    !(ll == tl + sizeof openssh - 1 && !memcmp(l, openssh, sizeof openssh - 1)))
			return b;
	}
	return NULL;
}

enum pem_form { PEM_PKCS1, PEM_PKCS8, PEM_PKCS8_SEALED };

/* A PEM block as PEM_read_bio_ex gives it: its label, headers and DER body
 * (in the secure heap: the body of a plain key is the key). */
struct pem {
	char *name, *header;
	unsigned char *der;
	long len;
	enum pem_form form;
	EVP_CIPHER_INFO ci;     /* PKCS#1: DEK-Info's cipher and IV, or none */
};

static void pem_free(struct pem *p)
{
	OPENSSL_free(p->name);
	OPENSSL_free(p->header);
	if (p->der)
		OPENSSL_secure_clear_free(p->der, (size_t)p->len);
	memset(p, 0, sizeof *p);
}

/* Whether this OpenSSL can run the cipher named by nid (a name OpenSSL
 * knows may still lack a provider: DES and RC2 are in the legacy one). */
static int cipher_here(int nid)
{
	EVP_CIPHER *c = nid != NID_undef ? EVP_CIPHER_fetch(NULL, OBJ_nid2sn(nid), NULL) : NULL;
	EVP_CIPHER_free(c);
	return c != NULL;
}

/* Whether an EncryptedPrivateKeyInfo names an encryption this OpenSSL can
 * undo: PBES2 (PBKDF2 or scrypt, and a cipher it has) or a PKCS#5 v1 or
 * PKCS#12 scheme whose cipher it has. -1 malformed, 0 no, 1 yes. */
static int pkcs8_sealed_check(const unsigned char *der, long len)
{
	const unsigned char *q = der;
	X509_SIG *sig = d2i_X509_SIG(NULL, &q, len);
	if (!sig)
		return -1;
	const X509_ALGOR *alg;
	const ASN1_OBJECT *obj;
	const void *pval;
	int ptype, cipher = NID_undef, ok = 0;
	X509_SIG_get0(sig, &alg, NULL);
	X509_ALGOR_get0(&obj, &ptype, &pval, alg);
	int nid = OBJ_obj2nid(obj);
	if (nid == NID_pbes2) {
		PBE2PARAM *pb = ptype == V_ASN1_SEQUENCE ? ASN1_item_unpack(pval, ASN1_ITEM_rptr(PBE2PARAM)) : NULL;
		ok = -1;
		if (pb) {
			const ASN1_OBJECT *kdf, *enc;
			X509_ALGOR_get0(&kdf, NULL, NULL, pb->keyfunc);
			X509_ALGOR_get0(&enc, NULL, NULL, pb->encryption);
			int k = OBJ_obj2nid(kdf);
			ok = (k == NID_id_pbkdf2 || k == NID_id_scrypt) && cipher_here(OBJ_obj2nid(enc));
			PBE2PARAM_free(pb);
		}
	} else if (EVP_PBE_find(EVP_PBE_TYPE_OUTER, nid, &cipher, NULL, NULL)) {
		ok = cipher_here(cipher);
	}
	X509_SIG_free(sig);
	return ok;
}

/* Read the PEM block of the first private key BEGIN line of text[0..n)
 * into p and check what can be checked without a passphrase: 0 a plain
 * key, 1 an encrypted one, -1 with err. */
static int pem_read(const char *text, size_t n, struct pem *p, char *err, size_t len)
{
	memset(p, 0, sizeof *p);
	const char *b = pem_key_begin(text, n);
	if (!b || n - (size_t)(b - text) > INT_MAX) {
		snprintf(err, len, "not a PEM private key");
		return -1;
	}
	BIO *bio = BIO_new_mem_buf(b, (int)(n - (size_t)(b - text)));
	int ok = bio && PEM_read_bio_ex(bio, &p->name, &p->header, &p->der, &p->len,
					PEM_FLAG_SECURE | PEM_FLAG_EAY_COMPATIBLE) == 1 && p->len > 0;
	BIO_free(bio);
	ERR_clear_error();
	if (!ok) {
		snprintf(err, len, "malformed PEM private key");
		return -1;
	}
	if (!strcmp(p->name, "RSA PRIVATE KEY")) {
		p->form = PEM_PKCS1;
		ok = PEM_get_EVP_CIPHER_INFO(p->header, &p->ci);
		ERR_clear_error();
		if (!ok) {
			snprintf(err, len, "a PEM private key with an unknown cipher or malformed Proc-Type or DEK-Info header");
			return -1;
		}
		if (!p->ci.cipher)
			return 0;
		if (!cipher_here(EVP_CIPHER_get_nid(p->ci.cipher))) {
			snprintf(err, len, "a PEM private key encrypted with %s, which this OpenSSL cannot decrypt",
				 EVP_CIPHER_get0_name(p->ci.cipher));
			return -1;
		}
		if (p->len % EVP_CIPHER_get_block_size(p->ci.cipher)) {
			snprintf(err, len, "malformed encrypted PEM private key (its length)");
			return -1;
		}
		return 1;
	}
	if (!strcmp(p->name, "PRIVATE KEY")) {
		p->form = PEM_PKCS8;
		return 0;
	}
	if (!strcmp(p->name, "ENCRYPTED PRIVATE KEY")) {
		p->form = PEM_PKCS8_SEALED;
		ok = pkcs8_sealed_check(p->der, p->len);
		ERR_clear_error();
		if (ok < 0)
			snprintf(err, len, "malformed encrypted PKCS#8 private key");
		else if (!ok)
			snprintf(err, len, "an encrypted PKCS#8 private key whose encryption this OpenSSL cannot undo (PBES2 with PBKDF2 or scrypt and AES is what ssh-keygen and openssl write)");
		return ok > 0 ? 1 : -1;
	}
	int printable = strlen(p->name) <= 40;
	for (const char *c = p->name; *c && printable; c++)
		printable = *c >= ' ' && *c <= '~';
	snprintf(err, len, "unsupported PEM key '%s' (RSA and Ed25519 keys are, as PKCS#1 or PKCS#8)",
		 printable ? p->name : "?");
	return -1;
}

/* The private key in a plain DER body of form. NULL when malformed. */
static EVP_PKEY *der_key(enum pem_form form, const unsigned char *der, long len)
{
	const unsigned char *q = der;
	EVP_PKEY *k = NULL;
	if (form == PEM_PKCS1) {
		k = d2i_PrivateKey(EVP_PKEY_RSA, NULL, &q, len);
	} else {
		PKCS8_PRIV_KEY_INFO *inf = d2i_PKCS8_PRIV_KEY_INFO(NULL, &q, len);
		k = inf ? EVP_PKCS82PKEY(inf) : NULL;
		PKCS8_PRIV_KEY_INFO_free(inf);      /* clears the key */
	}
	ERR_clear_error();
	return k;
}

static void put_string(uint8_t *w, const void *s, size_t n)
{
	w[0] = (uint8_t)(n >> 24);
	w[1] = (uint8_t)(n >> 16);
	w[2] = (uint8_t)(n >> 8);
	w[3] = (uint8_t)n;
	memcpy(w + 4, s, n);
}

/* The identity of private key k (taken: freed, or kept in id->rsa): its
 * SSH public key's wire form (RFC 4253 section 6.6 "ssh-rsa": e, n as
 * mpints; RFC 8709 "ssh-ed25519": the 32-byte key), checked as a
 * recipient's is (an RSA key of at least 2048 bits). 0, or -1 with err. */
static int key_identity(EVP_PKEY *k, struct identity *id, char *err, size_t len)
{
	uint8_t *w = NULL;
	size_t wl = 0;
	void *pub = NULL;
	memset(id, 0, sizeof *id);
	if (EVP_PKEY_is_a(k, "RSA")) {
		BIGNUM *n = NULL, *e = NULL;
		if (EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_N, &n) == 1 &&
		    EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_E, &e) == 1) {
			/* BN_bn2mpi writes SSH's mpint: a 4-byte length, then
			 * big-endian with a 0 byte before a high bit set. */
			int el = BN_bn2mpi(e, NULL), nl = BN_bn2mpi(n, NULL);
			wl = 11 + (size_t)el + (size_t)nl;
			if ((w = malloc(wl))) {
				put_string(w, "ssh-rsa", 7);
				BN_bn2mpi(e, w + 11);
				BN_bn2mpi(n, w + 11 + el);
			}
		}
		BN_free(n);
		BN_free(e);
	} else if (EVP_PKEY_is_a(k, "ED25519")) {
		uint8_t seed[32], ed[32], h[SHA512_DIGEST_LENGTH];
		size_t sl = sizeof seed, el = sizeof ed;
		if (EVP_PKEY_get_raw_private_key(k, seed, &sl) == 1 && sl == 32 &&
		    EVP_PKEY_get_raw_public_key(k, ed, &el) == 1 && el == 32 && (w = malloc(wl = 51))) {
			put_string(w, "ssh-ed25519", 11);
			put_string(w + 15, ed, 32);
			/* The X25519 scalar, as for an OpenSSH key: SHA-512 of the seed. */
			SHA512(seed, sizeof seed, h);
			memcpy(id->priv, h, 32);
		}
		wipe(seed, sizeof seed);
		wipe(h, sizeof h);
	} else {
		snprintf(err, len, "unsupported key type '%s' in a PKCS#8 private key (RSA and Ed25519 are)",
			 EVP_PKEY_get0_type_name(k) ? EVP_PKEY_get0_type_name(k) : "?");
		goto bad;
	}
	ERR_clear_error();
	if (!w) {
		snprintf(err, len, "malformed PEM private key (its public part)");
		goto bad;
	}
	if (ssh_public_from_wire(w, wl, &id->kind, id->pub, &pub, err, len) < 0)
		goto bad;
	EVP_PKEY_free(pub);
	if (id->kind == KEY_SSH_ED25519) {
		uint8_t check[32];
		if (x25519_public(id->priv, check) < 0 || CRYPTO_memcmp(check, id->pub, 32)) {
			snprintf(err, len, "the Ed25519 private key does not match its public key");
			goto bad;
		}
		EVP_PKEY_free(k);
	} else {
		id->rsa = k;
	}
	id->wire = w;
	id->wire_len = wl;
	return 0;
bad:
	free(w);
	EVP_PKEY_free(k);
	wipe(id, sizeof *id);
	return -1;
}

/* A plain key's identity. */
static int plain_identity(const struct pem *p, struct identity *id, char *err, size_t len)
{
	EVP_PKEY *k = der_key(p->form, p->der, p->len);
	if (!k) {
		snprintf(err, len, "malformed %s private key", p->form == PEM_PKCS1 ? "PKCS#1 RSA" : "PKCS#8");
		return -1;
	}
	return key_identity(k, id, err, len);
}

int pem_identity_parse(const char *text, size_t n, struct identity *id, char *err, size_t len)
{
	struct pem p;
	memset(id, 0, sizeof *id);
	int rc = pem_read(text, n, &p, err, len);
	if (rc == 0)
		rc = plain_identity(&p, id, err, len);
	pem_free(&p);
	return rc;
}

struct passphrase {
	const char *p;
	size_t n;
};

/* PEM_do_header's pem_password_cb: the caller's passphrase into OpenSSL's
 * buffer (which it wipes), never a prompt. */
static int give_passphrase(char *buf, int size, int rwflag, void *u)
{
	const struct passphrase *pp = u;
	(void)rwflag;
	if (size < 0 || pp->n > (size_t)size)
		return -1;
	memcpy(buf, pp->p, pp->n);
	return (int)pp->n;
}

int pem_identity_open(const char *text, size_t n, const char *pass, size_t plen, struct identity *id, char *err,
		      size_t len)
{
	struct pem p;
	memset(id, 0, sizeof *id);
	int rc = pem_read(text, n, &p, err, len);
	if (rc == 0)
		rc = plain_identity(&p, id, err, len);
	if (rc != 1)
		goto out;
	if (plen > PEM_BUFSIZE) {
		snprintf(err, len, "the passphrase is longer than OpenSSL reads for a PEM key (%d bytes)", PEM_BUFSIZE);
		rc = -1;
		goto out;
	}
	/* From here a key that does not decrypt, or decrypts to something
	 * that is not a key, had the wrong passphrase: its cipher and
	 * structure were checked by pem_read. */
	EVP_PKEY *k = NULL;
	if (p.form == PEM_PKCS1) {
		struct passphrase pp = { pass, plen };
		long dl = p.len;
		if (PEM_do_header(&p.ci, p.der, &dl, give_passphrase, &pp))
			k = der_key(PEM_PKCS1, p.der, dl);
	} else {
		const unsigned char *q = p.der;
		X509_SIG *sig = d2i_X509_SIG(NULL, &q, p.len);
		PKCS8_PRIV_KEY_INFO *inf = sig ? PKCS8_decrypt(sig, pass, (int)plen) : NULL;
		k = inf ? EVP_PKCS82PKEY(inf) : NULL;
		PKCS8_PRIV_KEY_INFO_free(inf);
		X509_SIG_free(sig);
	}
	ERR_clear_error();
	rc = k ? key_identity(k, id, err, len) : 1;
out:
	pem_free(&p);
	return rc;
}
