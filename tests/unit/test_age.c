/*
 * test_age.c - the age STREAM module (libcore/ops/age.c): nonces, the cutting
 * of a unit into chunks with their indexes and final flag, and the rules of
 * the final chunk, with a stand-in AEAD whose tag is the nonce (so a chunk
 * opens only under the nonce it was sealed with, as with ChaCha20-Poly1305).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include <accel/ops/age.h>
#include "core.h"

#define SEALED (ACCEL_AGE_CHUNK + ACCEL_AGE_TAG)

static int calls;

/* Stand-in AEAD: ciphertext = plaintext XOR 0x5a, tag = nonce || 4 zero bytes. */
static int fake(void *arg, int decrypt, const uint8_t *nonce, const uint8_t *src, size_t n, uint8_t *dst)
{
	calls++;
	uint8_t tag[ACCEL_AGE_TAG] = { 0 };
	memcpy(tag, nonce, ACCEL_AGE_NONCE_LEN);
	if (decrypt && memcmp(src + n, tag, ACCEL_AGE_TAG))
		return ACCEL_EDATA;
	for (size_t i = 0; i < n; i++)
		dst[i] = src[i] ^ 0x5a;
	if (!decrypt)
		memcpy(dst + n, tag, ACCEL_AGE_TAG);
	return 0;
}

static void nonce_layout(void **state)
{
	uint8_t n[ACCEL_AGE_NONCE_LEN];
	accel_age_nonce(0, 0, n);
	for (int i = 0; i < 12; i++)
		assert_int_equal(n[i], 0);
	accel_age_nonce(0x0102030405060708ull, 1, n);
	static const uint8_t want[12] = { 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 1 };
	assert_memory_equal(n, want, 12);
}

static struct accel_op op4 = { .name = "age.encrypt", .chunk_size = 4 * ACCEL_AGE_CHUNK };

/* Seal `len` bytes as unit `seq` (last or not) into u->out. */
static void seal(struct accel_unit *u, uint64_t seq, int last, size_t len)
{
	char err[200];
	memset(u, 0, sizeof *u);
	u->seq = seq;
	u->last = last;
	assert_int_equal(accel_buf_reserve(&u->in, len + 1), 0);
	for (size_t i = 0; i < len; i++)
		u->in.data[i] = (uint8_t)(i * 7);
	u->in.len = len;
	assert_int_equal(accel_age_run_unit(&op4, u, 0, fake, NULL, err, sizeof err), 0);
}

/* Open u's output as unit seq: returns run_unit's code, err filled. */
static int open_as(struct accel_unit *sealed, uint64_t seq, int last, char *err, size_t len)
{
	struct accel_unit v;
	memset(&v, 0, sizeof v);
	v.seq = seq;
	v.last = last;
	assert_int_equal(accel_buf_reserve(&v.in, sealed->out.len + 1), 0);
	memcpy(v.in.data, sealed->out.data, sealed->out.len);
	v.in.len = sealed->out.len;
	err[0] = 0;
	int rc = accel_age_run_unit(&op4, &v, 1, fake, NULL, err, len);
	if (rc == 0) {
		assert_int_equal(v.out.len, sealed->in.len);
		assert_memory_equal(v.out.data, sealed->in.data, v.out.len);
	}
	accel_buf_free(&v.in);
	accel_buf_free(&v.out);
	return rc;
}

static void free_unit(struct accel_unit *u)
{
	accel_buf_free(&u->in);
	accel_buf_free(&u->out);
}

static void chunks_of_a_unit(void **state)
{
	struct accel_unit u;
	char err[200];
	/* 4 full chunks of unit 2 are chunks 8..11, none final. */
	calls = 0;
	seal(&u, 2, 0, 4 * ACCEL_AGE_CHUNK);
	assert_int_equal(calls, 4);
	assert_int_equal(u.out.len, 4 * SEALED);
	uint8_t want[ACCEL_AGE_TAG] = { 0 };
	accel_age_nonce(9, 0, want);
	assert_memory_equal(u.out.data + SEALED + ACCEL_AGE_CHUNK, want, ACCEL_AGE_NONCE_LEN);
	assert_int_equal(open_as(&u, 2, 0, err, sizeof err), 0);
	/* Opened as another unit: its first chunk fails, named by index. */
	assert_int_equal(open_as(&u, 3, 0, err, sizeof err), ACCEL_EDATA);
	assert_string_equal(err, "chunk 12 at byte offset 0 failed authentication (damaged, reordered or truncated)");
	free_unit(&u);
}

static void final_chunk_rules(void **state)
{
	struct accel_unit u;
	char err[200];
	/* A short final chunk: its flag is set, and it opens only as final. */
	seal(&u, 0, 1, ACCEL_AGE_CHUNK + 100);
	assert_int_equal(u.out.len, SEALED + 100 + ACCEL_AGE_TAG);
	assert_int_equal(u.out.data[u.out.len - ACCEL_AGE_TAG + 11], 1);
	assert_int_equal(open_as(&u, 0, 1, err, sizeof err), 0);
	assert_int_equal(open_as(&u, 0, 0, err, sizeof err), ACCEL_EDATA);
	free_unit(&u);
	/* The empty plaintext is one empty final chunk: a tag alone. */
	seal(&u, 0, 1, 0);
	assert_int_equal(u.out.len, ACCEL_AGE_TAG);
	assert_int_equal(open_as(&u, 0, 1, err, sizeof err), 0);
	/* ... but an empty final chunk after others is refused. */
	assert_int_equal(open_as(&u, 1, 1, err, sizeof err), ACCEL_EDATA);
	assert_string_equal(err, "final chunk 4 is empty");
	free_unit(&u);
	/* A full chunk sealed as final with data after it: trailing data. */
	seal(&u, 0, 1, ACCEL_AGE_CHUNK);
	assert_int_equal(accel_buf_reserve(&u.out, u.out.len + 40), 0);
	memset(u.out.data + u.out.len, 'x', 40);
	u.out.len += 40;
	assert_int_equal(open_as(&u, 0, 1, err, sizeof err), ACCEL_EDATA);
	assert_string_equal(err, "trailing data after the final chunk 0");
	free_unit(&u);
	/* A final piece shorter than a tag is truncated. */
	seal(&u, 0, 1, ACCEL_AGE_CHUNK + 1);
	u.out.len -= 10;
	assert_int_equal(open_as(&u, 0, 1, err, sizeof err), ACCEL_EDATA);
	assert_string_equal(err, "chunk 1 is truncated (7 bytes)");
	u.out.len = 0;
	assert_int_equal(open_as(&u, 0, 1, err, sizeof err), ACCEL_EDATA);
	assert_string_equal(err, "chunk 0 is missing (truncated file)");
	free_unit(&u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nonce_layout),
		cmocka_unit_test(chunks_of_a_unit),
		cmocka_unit_test(final_chunk_rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
