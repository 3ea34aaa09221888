/*
 * age.c - the age STREAM payload as an operation family (age.encrypt,
 * age.decrypt): how the payload is cut into units of whole 64 KiB chunks,
 * the chunk nonces, and the rules of the final chunk, as the age v1 spec
 * states them (age-encryption.org/v1, C2SP age.md, "Payload"). The AEAD of
 * one chunk (ChaCha20-Poly1305) is the engine's; nothing here is
 * cryptography.
 */
#include <stdlib.h>
#include <string.h>
#include <accel/ops/age.h>
#include "core.h"

#define SEALED (ACCEL_AGE_CHUNK + ACCEL_AGE_TAG)

void accel_age_nonce(uint64_t counter, int last, uint8_t nonce[ACCEL_AGE_NONCE_LEN])
{
	/* 11-byte big-endian counter (its top three bytes are always zero
	 * here), then the last-chunk flag. */
	memset(nonce, 0, ACCEL_AGE_NONCE_LEN);
	for (int i = 0; i < 8; i++)
		nonce[10 - i] = (uint8_t)(counter >> (8 * i));
	nonce[11] = last ? 1 : 0;
}

/* Chunks per unit of op (op->chunk_size plaintext bytes per unit). */
static uint64_t unit_chunks(const struct accel_op *op)
{
	uint64_t k = op->chunk_size / ACCEL_AGE_CHUNK;
	return k ? k : 1;
}

int accel_age_run_unit(const struct accel_op *op, struct accel_unit *u, int decrypt,
		       int (*aead)(void *arg, int decrypt, const uint8_t *nonce, const uint8_t *src, size_t n,
				   uint8_t *dst),
		       void *arg, char *err, size_t len)
{
	uint64_t first = u->seq * unit_chunks(op);
	size_t step = decrypt ? SEALED : ACCEL_AGE_CHUNK;
	size_t nchunks = u->in.len ? (u->in.len + step - 1) / step : 1;
	size_t outlen = decrypt ? u->in.len : u->in.len + nchunks * ACCEL_AGE_TAG;
	if (decrypt && u->in.len == 0) {
		snprintf(err, len, "chunk %llu is missing (truncated file)", (unsigned long long)first);
		return ACCEL_EDATA;
	}
	if (accel_buf_reserve_fill(&u->out, outlen + 1))
		return ACCEL_ENOMEM;
	const uint8_t *src = u->in.data;
	uint8_t *dst = u->out.data;
	size_t left = u->in.len;
	for (size_t i = 0; i < nchunks; i++) {
		uint64_t idx = first + i;
		size_t n = left < step ? left : step;
		int last = u->last && i == nchunks - 1;
		uint8_t nonce[ACCEL_AGE_NONCE_LEN];
		if (decrypt) {
			if (n < ACCEL_AGE_TAG) {
				snprintf(err, len, "chunk %llu is truncated (%zu bytes)", (unsigned long long)idx, n);
				goto bad;
			}
			if (last && n == ACCEL_AGE_TAG && idx > 0) {
				snprintf(err, len, "final chunk %llu is empty", (unsigned long long)idx);
				goto bad;
			}
		}
		accel_age_nonce(idx, last, nonce);
		int rc = aead(arg, decrypt, nonce, src, decrypt ? n - ACCEL_AGE_TAG : n, dst);
		if (rc == ACCEL_EDATA && !last && n == SEALED) {
			/* A full chunk sealed as the final one, with more
			 * after it: the file goes on past its end. Its
			 * plaintext is good output. */
			accel_age_nonce(idx, 1, nonce);
			if (aead(arg, decrypt, nonce, src, n - ACCEL_AGE_TAG, dst) == 0) {
				snprintf(err, len, "trailing data after the final chunk %llu", (unsigned long long)idx);
				dst += n - ACCEL_AGE_TAG;
				goto bad;
			}
		}
		if (rc == ACCEL_EDATA) {
			snprintf(err, len, "chunk %llu at byte offset %llu failed authentication (damaged, reordered or truncated)",
				 (unsigned long long)idx, (unsigned long long)(u->offset + i * step));
			goto bad;
		}
		if (rc < 0)
			return rc;
		src += n;
		left -= n;
		dst += decrypt ? n - ACCEL_AGE_TAG : n + ACCEL_AGE_TAG;
	}
	u->out.len = (size_t)(dst - u->out.data);
	return 0;
bad:
	/* What authenticated before the bad chunk is good output: age writes
	 * it before it fails, and so does the stream (out_good). */
	u->out.len = u->out_good = (size_t)(dst - u->out.data);
	return ACCEL_EDATA;
}

/* What the reader callback needs: input bytes per unit, the direction, and
 * the program's header writer. */
struct cut {
	size_t size;
	int decrypt;
	const struct accel_age_cfg *cfg;
};

static int next_unit(void *user, struct accel_input *in, struct accel_unit *u, char *err, size_t len)
{
	struct cut *c = user;
	int rc = accel_read_chunk_claim(in, u, c->size);
	if (rc == 1)
		u->out_hint = c->decrypt ? u->in.len
					 : u->in.len + (u->in.len / ACCEL_AGE_CHUNK + 1) * ACCEL_AGE_TAG;
	return rc;
}

static int begin_header(void *user, struct accel_output *out)
{
	const struct accel_age_cfg *cfg = ((struct cut *)user)->cfg;
	return cfg->begin(cfg->user, out);
}

static int age_run(struct accel_ctx *ctx, const struct accel_age_cfg *cfg, int decrypt, struct accel_input *in,
		   struct accel_output *out, struct accel_stream_stats *stats, char *err, size_t len)
{
	err[0] = 0;
	if (stats)
		memset(stats, 0, sizeof *stats);
	uint64_t chunks = cfg->unit_chunks ? cfg->unit_chunks : ACCEL_AGE_UNIT_CHUNKS;
	struct accel_age_key key;
	memcpy(key.key, cfg->key, sizeof key.key);
	struct accel_op op = {
		.name = decrypt ? "age.decrypt" : "age.encrypt",
		.chunk_size = (size_t)(chunks * ACCEL_AGE_CHUNK),
		.ext = &key,
	};
	struct accel_route route;
	struct accel_route_req req = { &op, cfg->backend, in->size, NULL };
	int rc = accel_route_job(ctx, &req, cfg->verbose, cfg->report, &route, err, len);
	if (rc == 0) {
		struct cut c = { (size_t)(chunks * (decrypt ? SEALED : ACCEL_AGE_CHUNK)), decrypt, cfg };
		struct accel_stream_ops ops = { next_unit, cfg->begin ? begin_header : NULL, NULL, NULL };
		/* A regular file (of 128 KiB or more) is mapped, and the
		 * workers cut their units themselves (a few sums under the
		 * run's lock): no reader thread waking a worker per unit (180
		 * context switches for 64 MiB at -T2 became 10-20, 4-8% off the
		 * wall time). Each unit's chunks are claimed, not borrowed
		 * (accel_read_chunk_claim): preads into the worker's buffer,
		 * which the cipher then reads from its cache. Borrowed, the
		 * cipher's first touch of each page faulted: 256 MiB encrypted
		 * in 143.5 ms (201 ms of user time) against 64.7 (79) claimed,
		 * age 178 (2-core VM, 10.7 us a fault). */
		core_input_map_large(in);
		struct accel_stream_config sc = cfg->stream;
		sc.worker_reads = 1;
		rc = accel_stream_run(ctx, &sc, &route, &op, &ops, &c, in, out, stats, err, len);
		/* A chunk's own message names it and its offset: the unit's
		 * offset the stream engine adds would mislead. */
		char *at = NULL;
		for (char *q = strstr(err, " at byte offset "); q; q = strstr(q + 1, " at byte offset "))
			at = q;
		char *name = strstr(err, "chunk ");
		if (rc == ACCEL_EDATA && at && strstr(at, " (unit ") && name && name < at)
			*at = 0;
	}
	explicit_bzero(&key, sizeof key);
	return rc;
}

int accel_age_encrypt(struct accel_ctx *ctx, const struct accel_age_cfg *cfg, struct accel_input *in,
		      struct accel_output *out, struct accel_stream_stats *stats, char *err, size_t len)
{
	return age_run(ctx, cfg, 0, in, out, stats, err, len);
}

int accel_age_decrypt(struct accel_ctx *ctx, const struct accel_age_cfg *cfg, struct accel_input *in,
		      struct accel_output *out, struct accel_stream_stats *stats, char *err, size_t len)
{
	return age_run(ctx, cfg, 1, in, out, stats, err, len);
}
