/*
 * accel/ops/age.h - age STREAM (age-encryption.org/v1) payloads and file hashes (accel-crypt).
 * Part of libaccel's public API; <accel.h> includes every such header.
 */
#ifndef ACCEL_OPS_AGE_H
#define ACCEL_OPS_AGE_H

#include <accel/stream.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/*
 * The payload of an age v1 file (age-encryption.org/v1, C2SP age.md,
 * "Payload"): the plaintext cut into chunks of ACCEL_AGE_CHUNK bytes, each
 * sealed with ChaCha20-Poly1305 under the payload key with the nonce
 * "11-byte big-endian chunk counter || last-chunk flag" (0x01 on the final
 * chunk, else 0x00). The final chunk may be short; it is empty only when
 * the whole plaintext is. Chunks depend only on their index, so units of
 * whole chunks run in parallel. Operations "age.encrypt" and "age.decrypt":
 * op->ext points to a struct accel_age_key, op->chunk_size is the plaintext
 * bytes of one unit (a multiple of ACCEL_AGE_CHUNK); unit u holds the
 * chunks from index u->seq * op->chunk_size / ACCEL_AGE_CHUNK on. The
 * functions of this section use only their arguments: safe from any thread.
 */
#define ACCEL_AGE_CHUNK 65536
#define ACCEL_AGE_TAG 16
#define ACCEL_AGE_NONCE_LEN 12
#define ACCEL_AGE_KEY_LEN 32
/* Chunks per unit by default (256 KiB of plaintext): a quarter of the
 * memory of 1 MiB units at the same CPU per byte, and from a pipe the
 * workers start on the first 256 KiB rather than waiting for 1 MiB. */
#define ACCEL_AGE_UNIT_CHUNKS 4

/* op->ext of age.encrypt and age.decrypt: the payload key (HKDF-SHA256 of
 * the file key and the payload nonce, info "payload"). */
struct accel_age_key {
	uint8_t key[ACCEL_AGE_KEY_LEN];
};

/* The STREAM nonce of chunk `counter` (last: 1 for the final chunk). */
void accel_age_nonce(uint64_t counter, int last, uint8_t nonce[ACCEL_AGE_NONCE_LEN]);

/*
 * For an engine's run(): seal (decrypt 0) or open (decrypt 1) every chunk
 * of unit u into u->out, calling aead(arg, decrypt, nonce, src, n, dst) per
 * chunk: n plaintext bytes; sealing writes n + ACCEL_AGE_TAG bytes
 * (ciphertext, then tag) to dst, opening reads them from src and writes n
 * bytes, returning 0, ACCEL_EDATA when the tag does not verify, or another
 * ACCEL_E* code. Checks the final-chunk rules while opening. Returns 0;
 * ACCEL_EDATA with one line in err[len] naming the chunk ("chunk 3 failed
 * authentication (...)", "final chunk 2 is empty", "chunk 0 is missing
 * (truncated file)", "trailing data after the final chunk 5"), and
 * u->out_good set to the bytes of the chunks that authenticated before it
 * (with a final chunk followed by more data, that chunk too), as age
 * writes them before it fails; aead's other codes; ACCEL_ENOMEM.
 */
int accel_age_run_unit(const struct accel_op *op, struct accel_unit *u, int decrypt,
		       int (*aead)(void *arg, int decrypt, const uint8_t *nonce, const uint8_t *src, size_t n,
				   uint8_t *dst),
		       void *arg, char *err, size_t len);

/* How accel_age_encrypt and accel_age_decrypt run. */
struct accel_age_cfg {
	const char *backend;          /* --backend list; NULL: $ACCEL_BACKEND, else auto */
	struct accel_stream_config stream;
	int verbose;                  /* > 0: print the route on stderr */
	struct accel_report *report;  /* non-NULL: the route goes to this report
	                               * (accel_report_route) instead of stderr */
	const uint8_t *key;           /* ACCEL_AGE_KEY_LEN bytes: the payload key (copied) */
	uint64_t unit_chunks;         /* chunks per unit; 0: ACCEL_AGE_UNIT_CHUNKS */
	/* Optional (encryption): write the header and the payload nonce
	 * before the first chunk; 0 or a negative ACCEL_E* code. */
	int (*begin)(void *user, struct accel_output *out);
	void *user;
};

/*
 * Encrypt the rest of `in` (the plaintext; an empty input is one empty
 * final chunk) to `out` as an age payload, or decrypt the rest of `in`
 * (the chunks after the payload nonce) to `out`: routed as "age.encrypt"
 * or "age.decrypt" for in->size, units in parallel on the route's engines,
 * written in order. Decryption writes a unit only after each of its chunks
 * verified, and stops at the first that does not: earlier units may have
 * been written (the caller aborts a FILE output). Returns 0; ACCEL_EDATA
 * (err names the chunk and byte offset); ACCEL_EINVAL (malformed backend
 * list or $ACCEL_FAULT); ACCEL_ENOENGINE; ACCEL_EIO; ACCEL_EPIPE;
 * ACCEL_ENOMEM; ACCEL_EDEVICE. One line in err[len]; stats may be NULL.
 * Memory and threads as accel_stream_run (units of unit_chunks chunks).
 */
int accel_age_encrypt(struct accel_ctx *ctx, const struct accel_age_cfg *cfg, struct accel_input *in,
		      struct accel_output *out, struct accel_stream_stats *stats, char *err, size_t len);
int accel_age_decrypt(struct accel_ctx *ctx, const struct accel_age_cfg *cfg, struct accel_input *in,
		      struct accel_output *out, struct accel_stream_stats *stats, char *err, size_t len);

/*
 * Hashing files in parallel (accel-crypt hash): operations "sha256",
 * "sha512", "sha3-256", "blake2b512", "sha1", "md5". Each unit is one
 * file: u->in holds its name (NUL-terminated; "-" is standard input), then
 * any bytes of the caller's. The engine reads and hashes the file itself
 * (so files are hashed at once on several workers, each in bounded
 * memory) and calls done() with the digest, or with errnum set when the
 * file cannot be read (digest NULL); done() fills u->out and returns 0 or
 * a negative ACCEL_E* code. op->ext points to this struct; done runs on
 * worker threads, several at once.
 */
struct accel_hash_files {
	int (*done)(void *arg, const struct accel_unit *u, const uint8_t *digest, size_t dlen, int errnum,
		    struct accel_buf *out);
	void *arg;
};

/* The longest digest of the operations above: 64 bytes (SHA-512, BLAKE2b-512). */
#define ACCEL_HASH_MAX_DIGEST 64
/* Bytes a hash engine reads at a time (its buffer for accel_hash_run_unit):
 * a buffer that stays in the core's L2, so the kernel's copy and the digest
 * both hit the cache. With 1 MiB reads (and 128 KiB) the copy ran from
 * memory: md5 of 512 MiB on tmpfs spent 0.33 s in the kernel against 0.07 s
 * at 64 KiB (md5sum reads 32 KiB), 1.16 s wall against 0.89 s; sha256 0.62 s
 * against 0.42 s (2-core EPYC VM, 512 KiB of L2 a core). */
#define ACCEL_HASH_READ 65536

/* A hash engine's digest, for accel_hash_run_unit: each returns 0, or
 * nonzero when the library failed (the file's line then says EIO). */
struct accel_hash_digest {
	int (*init)(void *arg);                                     /* a new digest */
	int (*update)(void *arg, const uint8_t *data, size_t n);    /* n more bytes of the file */
	int (*final)(void *arg, uint8_t digest[ACCEL_HASH_MAX_DIGEST], size_t *dlen);
};

/*
 * For a hash engine's run(): read the file unit u names (accel_hash_files:
 * "-" is standard input, left open) through buf, cap bytes at a time
 * (ACCEL_HASH_READ keeps the kernel's copy and the digest in L2), passing
 * each stretch to d->update(arg, ...) between d->init and d->final, then
 * hand the digest, or the errno that stopped the reading (digest NULL), to
 * op->ext's done(), which fills u->out. Every file is read, none mapped
 * (hash.c says why); a file that shrinks meanwhile is hashed as far as it
 * is read, as sha256sum does. Returns done()'s result;
 * ACCEL_EDATA when u->in holds no NUL-terminated name, ACCEL_EINVAL when
 * op->ext is NULL.
 */
int accel_hash_run_unit(const struct accel_op *op, struct accel_unit *u, uint8_t *buf, size_t cap,
			const struct accel_hash_digest *d, void *arg);

/*
 * For a hash engine's supports(), where another engine of this machine
 * offers the same digest and no constant can say which is faster (BLAKE2b:
 * libsodium's AVX2 code ran at 0.86 GB/s a core against OpenSSL's scalar C
 * at 0.62 on one EPYC VM, and at 0.56 against 1.12 on a Zen 5 one): the MB/s
 * (1e6 bytes a second) of one core running d over n bytes of buf (filled
 * here with a pattern), init to final, the best of 6 timed runs after an
 * untimed one, on accel_now()'s clock. ACCEL_HASH_MEASURE bytes take 0.2 ms
 * in all at 0.5 GB/s. Returns 0 when d fails or n is 0.
 */
#define ACCEL_HASH_MEASURE 16384
/* What such an engine's supports() writes to its reason, for the route. */
#define ACCEL_HASH_MEASURED "timed on 16 KiB at start, not profiled"
double accel_hash_measure(const struct accel_hash_digest *d, void *arg, uint8_t *buf, size_t n);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
