/*
 * primitives.c - the cryptography of the age header and of minisign
 * signatures, all from OpenSSL 3: HKDF-SHA-256 (RFC 5869), HMAC-SHA-256,
 * ChaCha20-Poly1305 (RFC 8439) with the zero nonce for key wrapping, X25519
 * (RFC 7748), scrypt (RFC 7914), Ed25519 (RFC 8032); random bytes from the
 * kernel (getrandom(2)).
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include "crypt_format.h"

void wipe(void *p, size_t n)
{
	if (p && n)
		OPENSSL_cleanse(p, n);
}

int hkdf_sha256(const uint8_t *ikm, size_t ikm_len, const uint8_t *salt, size_t salt_len, const char *info,
		uint8_t *out, size_t out_len)
{
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	EVP_KDF_CTX *kctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
	EVP_KDF_free(kdf);
	if (!kctx)
		return -1;
	/* An empty salt is HKDF's default (a string of zeros), as age has it.
	 * OpenSSL refuses an empty secret: then the extract step (RFC 5869,
	 * PRK = HMAC(salt, secret)) is done here and OpenSSL only expands. */
	static const uint8_t nosalt[1];
	uint8_t prk[MAC_LEN];
	int expand_only = ikm_len == 0;
	if (expand_only && hmac_sha256(salt_len ? salt : nosalt, salt_len, nosalt, 0, prk) < 0) {
		EVP_KDF_CTX_free(kctx);
		return -1;
	}
	OSSL_PARAM params[] = {
		OSSL_PARAM_utf8_string(OSSL_KDF_PARAM_DIGEST, "SHA256", 0),
		OSSL_PARAM_octet_string(OSSL_KDF_PARAM_KEY, expand_only ? prk : (void *)ikm, expand_only ? sizeof prk : ikm_len),
		OSSL_PARAM_octet_string(OSSL_KDF_PARAM_SALT, (void *)(salt_len ? salt : nosalt), salt_len),
		OSSL_PARAM_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, strlen(info)),
		OSSL_PARAM_utf8_string(OSSL_KDF_PARAM_MODE, expand_only ? "EXPAND_ONLY" : "EXTRACT_AND_EXPAND", 0),
		OSSL_PARAM_END,
	};
	int rc = EVP_KDF_derive(kctx, out, out_len, params) == 1 ? 0 : -1;
	wipe(prk, sizeof prk);
	EVP_KDF_CTX_free(kctx);
	return rc;
}

int hmac_sha256(const uint8_t *key, size_t key_len, const uint8_t *msg, size_t n, uint8_t mac[MAC_LEN])
{
	unsigned len = 0;
	return HMAC(EVP_sha256(), key, (int)key_len, msg, n, mac, &len) && len == MAC_LEN ? 0 : -1;
}

static int aead_zero(const uint8_t key[32], const uint8_t *src, size_t n, uint8_t *dst, int enc)
{
	static const uint8_t nonce[12];
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int outl = 0, fin = 0, rc = -1;
	if (!c)
		return -1;
	if (EVP_CipherInit_ex(c, EVP_chacha20_poly1305(), NULL, key, nonce, enc) != 1)
		goto out;
	if (n && EVP_CipherUpdate(c, dst, &outl, src, (int)n) != 1)
		goto out;
	if (!enc && EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, 16, (void *)(src + n)) != 1)
		goto out;
	if (EVP_CipherFinal_ex(c, dst + outl, &fin) != 1)
		goto out;
	if (enc && EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, 16, dst + n) != 1)
		goto out;
	rc = 0;
out:
	EVP_CIPHER_CTX_free(c);
	return rc;
}

int wrap_seal(const uint8_t key[32], const uint8_t *src, size_t n, uint8_t *dst)
{
	return aead_zero(key, src, n, dst, 1);
}

int wrap_open(const uint8_t key[32], const uint8_t *src, size_t n, uint8_t *dst)
{
	return aead_zero(key, src, n, dst, 0);
}

int x25519_public(const uint8_t priv[X25519_LEN], uint8_t pub[X25519_LEN])
{
	EVP_PKEY *k = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, priv, X25519_LEN);
	size_t len = X25519_LEN;
	int rc = k && EVP_PKEY_get_raw_public_key(k, pub, &len) == 1 && len == X25519_LEN ? 0 : -1;
	EVP_PKEY_free(k);
	return rc;
}

int x25519_shared(const uint8_t priv[X25519_LEN], const uint8_t pub[X25519_LEN], uint8_t out[X25519_LEN])
{
	EVP_PKEY *k = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, priv, X25519_LEN);
	EVP_PKEY *peer = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, NULL, pub, X25519_LEN);
	EVP_PKEY_CTX *c = k ? EVP_PKEY_CTX_new(k, NULL) : NULL;
	size_t len = X25519_LEN;
	int rc = -1;
	if (c && peer && EVP_PKEY_derive_init(c) == 1 && EVP_PKEY_derive_set_peer(c, peer) == 1 &&
	    EVP_PKEY_derive(c, out, &len) == 1 && len == X25519_LEN)
		rc = 0;
	EVP_PKEY_CTX_free(c);
	EVP_PKEY_free(peer);
	EVP_PKEY_free(k);
	/* An all-zero shared secret means a low-order point: refused. */
	static const uint8_t zero[X25519_LEN];
	if (rc == 0 && CRYPTO_memcmp(out, zero, X25519_LEN) == 0)
		rc = -1;
	return rc;
}

int ed25519_public(const uint8_t seed[ED25519_SEED_LEN], uint8_t pk[ED25519_PK_LEN])
{
	EVP_PKEY *k = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, ED25519_SEED_LEN);
	size_t len = ED25519_PK_LEN;
	int rc = k && EVP_PKEY_get_raw_public_key(k, pk, &len) == 1 && len == ED25519_PK_LEN ? 0 : -1;
	EVP_PKEY_free(k);
	return rc;
}

int ed25519_sign(const uint8_t seed[ED25519_SEED_LEN], const uint8_t *msg, size_t n, uint8_t sig[ED25519_SIG_LEN])
{
	EVP_PKEY *p = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, ED25519_SEED_LEN);
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	size_t len = ED25519_SIG_LEN;
	int rc = p && c && EVP_DigestSignInit(c, NULL, NULL, NULL, p) == 1 &&
			 EVP_DigestSign(c, sig, &len, msg, n) == 1 && len == ED25519_SIG_LEN ? 0 : -1;
	EVP_MD_CTX_free(c);
	EVP_PKEY_free(p);
	return rc;
}

int ed25519_verify(const uint8_t pk[ED25519_PK_LEN], const uint8_t *msg, size_t n, const uint8_t sig[ED25519_SIG_LEN])
{
	EVP_PKEY *p = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pk, ED25519_PK_LEN);
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	int rc = p && c && EVP_DigestVerifyInit(c, NULL, NULL, NULL, p) == 1 &&
			 EVP_DigestVerify(c, sig, ED25519_SIG_LEN, msg, n) == 1 ? 0 : -1;
	EVP_MD_CTX_free(c);
	EVP_PKEY_free(p);
	return rc;
}

int random_bytes(uint8_t *p, size_t n)
{
	/* The kernel's generator (getrandom(2), as age itself reads it):
	 * OpenSSL's would be seeded from it first, which costs more than a
	 * run that encrypts a small file. Blocks only until the kernel's pool
	 * is initialised at boot. */
	while (n) {
		ssize_t r = getrandom(p, n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int scrypt_key(const char *pass, size_t pass_len, const uint8_t *salt, size_t salt_len, int log_n,
	       uint8_t out[32])
{
	uint64_t n = (uint64_t)1 << log_n;
	/* 128 * r * N bytes for V, plus the block buffers; r = 8, p = 1. */
	uint64_t maxmem = 128 * 8 * (n + 2) + (1u << 20);
	return EVP_PBE_scrypt(pass, pass_len, salt, salt_len, n, 8, 1, maxmem, out, 32) == 1 ? 0 : -1;
}
