/*
 * engine.c - the openssl:cpu0 engine: age STREAM chunks (ChaCha20-Poly1305,
 * the cutting and final-chunk rules from libcore's age module) and file
 * hashes (EVP digests), through OpenSSL 3's default library context, which
 * picks the CPU's AVX2/AVX-512/SHA-NI code paths itself.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <accel/ops/age.h>
#include "engine.h"

static const struct {
	const char *op, *md;
	double mbps;     /* static prior: one core of a recent x86 */
	int measure;     /* 1: the prior is timed here (measured_prior), as another engine's is */
} digests[] = {
	{ "sha256", "SHA256", 1000, 0 },
	{ "sha512", "SHA512", 700, 0 },
	{ "sha3-256", "SHA3-256", 400, 0 },
	{ "blake2b512", "BLAKE2B-512", 800, 1 },   /* sodium:cpu0 offers it too */
	{ "sha1", "SHA1", 1200, 0 },
	{ "md5", "MD5", 700, 0 },
};
#define NDIGESTS (sizeof digests / sizeof digests[0])

static int digest_index(const char *op)
{
	for (size_t i = 0; i < NDIGESTS; i++)
		if (!strcmp(digests[i].op, op))
			return (int)i;
	return -1;
}

static int is_age(const char *op, int *decrypt)
{
	if (!strcmp(op, "age.encrypt") || !strcmp(op, "age.decrypt")) {
		*decrypt = op[4] == 'd';
		return 1;
	}
	return 0;
}

static double measured_prior(int d);

static int openssl_supports(const struct accel_engine *e, const struct accel_op *op, double *prior_mbps,
			    char *reason, size_t len)
{
	int decrypt, d;
	if (is_age(op->name, &decrypt)) {
		if (op->chunk_size % ACCEL_AGE_CHUNK) {
			snprintf(reason, len, "%s runs on whole 64 KiB chunks", op->name);
			return ACCEL_ENOTSUP;
		}
		*prior_mbps = 1500;
		return 0;
	}
	if ((d = digest_index(op->name)) >= 0) {
		double m = digests[d].measure ? measured_prior(d) : 0;
		*prior_mbps = m > 0 ? m : digests[d].mbps;
		if (m > 0)
			snprintf(reason, len, "%s", ACCEL_HASH_MEASURED);
		return 0;
	}
	snprintf(reason, len, "openssl does not implement %s", op->name);
	return ACCEL_ENOTSUP;
}

struct engine_ctx {
	const struct accel_op *op;
	int decrypt;
	EVP_CIPHER_CTX *cipher;    /* age: keyed once, a nonce per chunk */
	EVP_MD_CTX *md;            /* hashes */
	EVP_MD *digest;
	uint8_t *buf;              /* ACCEL_HASH_READ bytes */
};

static void openssl_close(void *ctx)
{
	struct engine_ctx *c = ctx;
	if (!c)
		return;
	EVP_CIPHER_CTX_free(c->cipher);   /* clears the key schedule */
	EVP_MD_CTX_free(c->md);
	EVP_MD_free(c->digest);
	free(c->buf);
	free(c);
}

static int openssl_open(const struct accel_engine *e, const struct accel_op *op, void **ctx)
{
	struct engine_ctx *c = calloc(1, sizeof *c);
	if (!c)
		return ACCEL_ENOMEM;
	c->op = op;
	int d, ok;
	if (!op->ext) {
		ok = 0;   /* a key, or the file hashing callbacks, are required */
	} else if (is_age(op->name, &c->decrypt)) {
		const struct accel_age_key *k = op->ext;
		ok = (c->cipher = EVP_CIPHER_CTX_new()) &&
		     EVP_CipherInit_ex(c->cipher, EVP_chacha20_poly1305(), NULL, k->key, NULL, !c->decrypt) == 1;
	} else if ((d = digest_index(op->name)) >= 0) {
		ok = (c->md = EVP_MD_CTX_new()) && (c->digest = EVP_MD_fetch(NULL, digests[d].md, NULL)) &&
		     (c->buf = malloc(ACCEL_HASH_READ));
	} else {
		ok = 0;
	}
	if (!ok) {
		openssl_close(c);
		return op->ext ? ACCEL_EDEVICE : ACCEL_EINVAL;
	}
	*ctx = c;
	return 0;
}

/* One age chunk: see accel_age_run_unit. */
static int chunk(void *arg, int decrypt, const uint8_t *nonce, const uint8_t *src, size_t n, uint8_t *dst)
{
	EVP_CIPHER_CTX *c = arg;
	int outl = 0, fin = 0;
	if (EVP_CipherInit_ex(c, NULL, NULL, NULL, nonce, -1) != 1)
		return ACCEL_EDEVICE;
	if (n && EVP_CipherUpdate(c, dst, &outl, src, (int)n) != 1)
		return ACCEL_EDEVICE;
	if (decrypt) {
		if (EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, ACCEL_AGE_TAG, (void *)(src + n)) != 1)
			return ACCEL_EDEVICE;
		return EVP_CipherFinal_ex(c, dst + outl, &fin) == 1 ? 0 : ACCEL_EDATA;
	}
	if (EVP_CipherFinal_ex(c, dst + outl, &fin) != 1 ||
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, ACCEL_AGE_TAG, dst + n) != 1)
		return ACCEL_EDEVICE;
	return 0;
}

/* The EVP digest of a file (accel_hash_run_unit's functions). */
static int md_init(void *arg)
{
	struct engine_ctx *c = arg;
	return EVP_DigestInit_ex(c->md, c->digest, NULL) != 1;
}

static int md_update(void *arg, const uint8_t *data, size_t n)
{
	struct engine_ctx *c = arg;
	return EVP_DigestUpdate(c->md, data, n) != 1;
}

static int md_final(void *arg, uint8_t digest[ACCEL_HASH_MAX_DIGEST], size_t *dlen)
{
	struct engine_ctx *c = arg;
	unsigned len = 0;
	if (EVP_MD_CTX_get_size(c->md) > ACCEL_HASH_MAX_DIGEST || EVP_DigestFinal_ex(c->md, digest, &len) != 1)
		return 1;
	*dlen = len;
	return 0;
}

static const struct accel_hash_digest evp_digest = { md_init, md_update, md_final };

/* The prior of a digest whose table entry says measure: this CPU's MB/s
 * of one core (accel_hash_measure), timed once a process by the first
 * openssl_supports that asks (0.1 ms at 1 GB/s), since another
 * engine's code for it is faster on one x86 and slower on another
 * (BLAKE2b: libsodium's AVX2 code against this library's scalar C); 0
 * when the timing failed. */
static pthread_mutex_t measure_lock = PTHREAD_MUTEX_INITIALIZER;
static double measured[NDIGESTS];   /* > 0 measured, < 0 failed */

static double measured_prior(int d)
{
	pthread_mutex_lock(&measure_lock);
	if (!measured[d]) {
		struct engine_ctx c = { 0 };
		double m = 0;
		if ((c.md = EVP_MD_CTX_new()) && (c.digest = EVP_MD_fetch(NULL, digests[d].md, NULL)) &&
		    (c.buf = malloc(ACCEL_HASH_MEASURE)))
			m = accel_hash_measure(&evp_digest, &c, c.buf, ACCEL_HASH_MEASURE);
		EVP_MD_CTX_free(c.md);
		EVP_MD_free(c.digest);
		free(c.buf);
		measured[d] = m > 0 ? m : -1;
	}
	double m = measured[d];
	pthread_mutex_unlock(&measure_lock);
	return m > 0 ? m : 0;
}

static int openssl_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	struct engine_ctx *c = ctx;
	if (c->cipher)
		return accel_age_run_unit(c->op, u, c->decrypt, chunk, c->cipher, err, len);
	return accel_hash_run_unit(c->op, u, c->buf, ACCEL_HASH_READ, &evp_digest, c);
}

const struct openssl_api openssl_api_crypto = {
	.version = ACCEL_OPENSSL_API_VERSION,
	.probe = openssl_providers_probe,
	.supports = openssl_supports,
	.open = openssl_open,
	.run = openssl_run,
	.close = openssl_close,
};
