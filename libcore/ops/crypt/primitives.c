/*
 * primitives.c - the cryptography of the age header and of minisign
 * signatures. The age header's from libsodium: HKDF-SHA-256 (RFC 5869,
 * over its HMAC-SHA-256), HMAC-SHA-256, ChaCha20-Poly1305 (RFC 8439) with
 * the zero nonce for key wrapping, X25519 (RFC 7748): they cost a run no
 * set-up, where OpenSSL 3's first use of each kind of algorithm (key
 * management, KDF, MAC, cipher) builds its method store, more than a small
 * file's whole run. From OpenSSL 3: scrypt (RFC 7914, its cost dwarfs
 * any set-up), Ed25519 (RFC 8032; minisign). Random bytes from the kernel
 * (getrandom(2)).
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <sodium.h>
#include "crypt_format.h"

void wipe(void *p, size_t n)
{
	if (p && n)
		OPENSSL_cleanse(p, n);
}

/* libsodium, initialised once (sodium_init(3): thread-safe, picks the
 * CPU's code paths); 0 or -1. */
static int sodium_ready(void)
{
	return sodium_init() < 0 ? -1 : 0;
}

int hkdf_sha256(const uint8_t *ikm, size_t ikm_len, const uint8_t *salt, size_t salt_len, const char *info,
		uint8_t *out, size_t out_len)
{
	/* RFC 5869 section 2 over libsodium's HMAC-SHA-256: PRK =
	 * HMAC(salt, IKM), an empty salt being HashLen zeros (HMAC pads its
	 * key with zeros: the empty key is the same key); then T(i) =
	 * HMAC(PRK, T(i - 1) | info | i), i from 1, out = T(1) | T(2) ... */
	static const uint8_t nosalt[1];
	size_t info_len = strlen(info);
	uint8_t prk[MAC_LEN], t[MAC_LEN];
	crypto_auth_hmacsha256_state st;
	if (sodium_ready() < 0 || out_len > 255 * MAC_LEN)
		return -1;
	if (crypto_auth_hmacsha256_init(&st, salt_len ? salt : nosalt, salt_len) ||
	    crypto_auth_hmacsha256_update(&st, ikm_len ? ikm : nosalt, ikm_len) ||
	    crypto_auth_hmacsha256_final(&st, prk))
		return -1;
	int rc = 0;
	for (size_t done = 0, i = 1; done < out_len && rc == 0; i++) {
		uint8_t ctr = (uint8_t)i;
		size_t n = out_len - done < MAC_LEN ? out_len - done : MAC_LEN;
		rc = crypto_auth_hmacsha256_init(&st, prk, sizeof prk) ||
		     (i > 1 && crypto_auth_hmacsha256_update(&st, t, sizeof t)) ||
		     crypto_auth_hmacsha256_update(&st, (const uint8_t *)info, info_len) ||
		     crypto_auth_hmacsha256_update(&st, &ctr, 1) || crypto_auth_hmacsha256_final(&st, t) ? -1 : 0;
		if (rc == 0)
			memcpy(out + done, t, n);
		done += n;
	}
	wipe(prk, sizeof prk);
	wipe(t, sizeof t);
	wipe(&st, sizeof st);
	return rc;
}

int hmac_sha256(const uint8_t *key, size_t key_len, const uint8_t *msg, size_t n, uint8_t mac[MAC_LEN])
{
	static const uint8_t none[1];
	crypto_auth_hmacsha256_state st;
	int rc = sodium_ready() == 0 && crypto_auth_hmacsha256_init(&st, key_len ? key : none, key_len) == 0 &&
			 crypto_auth_hmacsha256_update(&st, n ? msg : none, n) == 0 &&
			 crypto_auth_hmacsha256_final(&st, mac) == 0 ? 0 : -1;
	wipe(&st, sizeof st);
	return rc;
}

/* age's key wrapping: ChaCha20-Poly1305 (RFC 8439, libsodium's IETF
 * construction: 96-bit nonce, the tag after the ciphertext) with the
 * all-zero nonce and no associated data. */
static const uint8_t zero_nonce[crypto_aead_chacha20poly1305_IETF_NPUBBYTES];

int wrap_seal(const uint8_t key[32], const uint8_t *src, size_t n, uint8_t *dst)
{
	return sodium_ready() == 0 && crypto_aead_chacha20poly1305_ietf_encrypt(dst, NULL, src, n, NULL, 0, NULL,
										   zero_nonce, key) == 0 ? 0 : -1;
}

int wrap_open(const uint8_t key[32], const uint8_t *src, size_t n, uint8_t *dst)
{
	return sodium_ready() == 0 && crypto_aead_chacha20poly1305_ietf_decrypt(dst, NULL, NULL, src, n + 16, NULL, 0,
										   zero_nonce, key) == 0 ? 0 : -1;
}

/* X25519 (RFC 7748) by libsodium's crypto_scalarmult(3), which clamps the
 * scalar as the RFC does. */
int x25519_public(const uint8_t priv[X25519_LEN], uint8_t pub[X25519_LEN])
{
	return sodium_ready() == 0 && crypto_scalarmult_base(pub, priv) == 0 ? 0 : -1;
}

int x25519_shared(const uint8_t priv[X25519_LEN], const uint8_t pub[X25519_LEN], uint8_t out[X25519_LEN])
{
	/* libsodium refuses a low-order point (an all-zero shared secret), as
	 * age does. out may be pub: the product goes through s. */
	uint8_t s[X25519_LEN];
	int rc = sodium_ready() == 0 && crypto_scalarmult(s, priv, pub) == 0 ? 0 : -1;
	if (rc == 0)
		memcpy(out, s, X25519_LEN);
	wipe(s, sizeof s);
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
