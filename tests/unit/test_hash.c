/*
 * test_hash.c - accel_hash_run_unit, the file reading every hash engine
 * shares: each byte of the file reaches the digest once and in order, in
 * stretches no longer than the buffer (no file is mapped); done() gets the
 * digest, or the errno that stopped the reading (ENOENT, EIO when the
 * digest failed) and no digest; a unit that
 * names no file is ACCEL_EDATA; standard input ("-") is read and left
 * open. And accel_hash_measure, the timing of a digest a prior comes from.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <accel/ops/age.h>
#include "core.h"

/* A digest that records what it was given: the bytes' sum weighted by
 * their place (order matters), the count, the longest stretch; fail_at:
 * the update call that fails (0: none). */
struct rec {
	uint64_t sum, count;
	size_t longest;
	int inits, updates, fail_at, fail_final;
	/* On the first update call: the file at `path` cut to `cut_to`
	 * bytes (cut), or `grow` bytes appended (pattern i*7+3 going on). */
	const char *path;
	int cut;
	off_t cut_to;
	size_t grow;
	size_t first;      /* bytes given to the first update call */
};

static void change_file(struct rec *r)
{
	if (r->cut) {
		assert_int_equal(truncate(r->path, r->cut_to), 0);
	} else if (r->grow) {
		int fd = open(r->path, O_WRONLY | O_APPEND);
		assert_true(fd >= 0);
		struct stat st;
		assert_int_equal(fstat(fd, &st), 0);
		uint8_t *b = malloc(r->grow);
		assert_non_null(b);
		for (size_t i = 0; i < r->grow; i++)
			b[i] = (uint8_t)(((size_t)st.st_size + i) * 7 + 3);
		assert_int_equal(write(fd, b, r->grow), (ssize_t)r->grow);
		free(b);
		close(fd);
	}
}

static int r_init(void *arg)
{
	struct rec *r = arg;
	r->inits++;
	return 0;
}

static int r_update(void *arg, const uint8_t *data, size_t n)
{
	struct rec *r = arg;
	if (++r->updates == r->fail_at)
		return 1;
	if (r->updates == 1)
		r->first = n;
	if (r->updates == 1 && r->path)
		change_file(r);
	for (size_t i = 0; i < n; i++)
		r->sum += (uint64_t)data[i] * (r->count + i + 1);
	r->count += n;
	if (n > r->longest)
		r->longest = n;
	return 0;
}

static int r_final(void *arg, uint8_t digest[ACCEL_HASH_MAX_DIGEST], size_t *dlen)
{
	struct rec *r = arg;
	if (r->fail_final)
		return 1;
	memcpy(digest, &r->sum, 8);
	memcpy(digest + 8, &r->count, 8);
	*dlen = 16;
	return 0;
}

static const struct accel_hash_digest rec_digest = { r_init, r_update, r_final };

/* What done() was called with. */
struct seen {
	int calls, errnum;
	int had_digest;
	uint8_t digest[16];
	size_t dlen;
};

static int done(void *arg, const struct accel_unit *u, const uint8_t *digest, size_t dlen, int errnum,
		struct accel_buf *out)
{
	struct seen *s = arg;
	s->calls++;
	s->errnum = errnum;
	s->had_digest = digest != NULL;
	s->dlen = dlen;
	if (digest && dlen <= sizeof s->digest)
		memcpy(s->digest, digest, dlen);
	return accel_buf_reserve(out, 1) < 0 ? ACCEL_ENOMEM : 0;
}

/* Run the unit naming `name` (len bytes of it: the NUL included unless
 * cut) with buffer size cap. */
static int run(const char *name, size_t len, size_t cap, struct rec *r, struct seen *s)
{
	struct accel_hash_files h = { done, s };
	struct accel_op op = { .name = "sha256", .ext = &h };
	struct accel_unit u;
	memset(&u, 0, sizeof u);
	u.in.data = (uint8_t *)name;
	u.in.len = len;
	uint8_t *buf = malloc(cap);
	assert_non_null(buf);
	int rc = accel_hash_run_unit(&op, &u, buf, cap, &rec_digest, r);
	free(buf);
	accel_buf_free(&u.out);
	return rc;
}

/* A file of n bytes (pattern i*7+3) at path; its digest in *want. */
static void make_file(char *path, size_t n, struct rec *want)
{
	strcpy(path, "/tmp/test_hash.XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	uint8_t *b = malloc(n ? n : 1);
	assert_non_null(b);
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 7 + 3);
	assert_int_equal(write(fd, b, n), (ssize_t)n);
	close(fd);
	memset(want, 0, sizeof *want);
	r_update(want, b, n);
	free(b);
}

static void every_byte_in_order(void **state)
{
	(void)state;
	char path[64];
	struct rec want;
	size_t sizes[] = { 0, 1, 4095, 65536, 65537, 300001, (1 << 20) - 1, 1 << 20, (1 << 20) + 4097 };
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		make_file(path, sizes[k], &want);
		size_t caps[] = { 1, 4096, 65536 };
		for (size_t c = 0; c < 3; c++) {
			struct rec r = { 0 };
			struct seen s = { 0 };
			assert_int_equal(run(path, strlen(path) + 1, caps[c], &r, &s), 0);
			assert_int_equal(s.calls, 1);
			assert_int_equal(s.errnum, 0);
			assert_true(s.had_digest);
			assert_int_equal(s.dlen, 16);
			assert_int_equal(r.inits, 1);
			/* Read through the buffer, whatever the size. */
			assert_true(r.longest <= caps[c]);
			assert_memory_equal(s.digest, &want.sum, 8);
			assert_memory_equal(s.digest + 8, &want.count, 8);
		}
		unlink(path);
	}
}

static void failures_reach_done(void **state)
{
	(void)state;
	char path[64];
	struct rec want;
	make_file(path, 200000, &want);
	/* the digest's update fails: EIO, no digest, no more reading */
	struct rec r = { .fail_at = 2 };
	struct seen s = { 0 };
	assert_int_equal(run(path, strlen(path) + 1, 65536, &r, &s), 0);
	assert_int_equal(s.errnum, EIO);
	assert_false(s.had_digest);
	assert_int_equal(r.updates, 2);
	/* its final fails: EIO */
	struct rec r2 = { .fail_final = 1 };
	memset(&s, 0, sizeof s);
	assert_int_equal(run(path, strlen(path) + 1, 65536, &r2, &s), 0);
	assert_int_equal(s.errnum, EIO);
	assert_false(s.had_digest);
	unlink(path);
	/* a file that is not there: ENOENT, the digest never started */
	struct rec r3 = { 0 };
	memset(&s, 0, sizeof s);
	assert_int_equal(run(path, strlen(path) + 1, 65536, &r3, &s), 0);
	assert_int_equal(s.errnum, ENOENT);
	assert_false(s.had_digest);
	assert_int_equal(r3.inits, 0);
	/* a folder: EISDIR from read */
	memset(&s, 0, sizeof s);
	struct rec r4 = { 0 };
	assert_int_equal(run("/tmp", 5, 65536, &r4, &s), 0);
	assert_int_equal(s.errnum, EISDIR);
	/* a unit whose name has no NUL, or no bytes: ACCEL_EDATA, no call */
	memset(&s, 0, sizeof s);
	assert_int_equal(run("/tmp", 4, 65536, &r4, &s), ACCEL_EDATA);
	assert_int_equal(run("", 0, 65536, &r4, &s), ACCEL_EDATA);
	assert_int_equal(s.calls, 0);
	/* no accel_hash_files: ACCEL_EINVAL */
	struct accel_op op = { .name = "sha256" };
	struct accel_unit u;
	memset(&u, 0, sizeof u);
	uint8_t buf[16];
	assert_int_equal(accel_hash_run_unit(&op, &u, buf, sizeof buf, &rec_digest, &r4), ACCEL_EINVAL);
}

/* A file that grows while hashed is read to its new end, as a reader to
 * the end of the file would have it; one that shrinks, to its new end too
 * (sha256sum's digest of what it read), and hashing goes on after it. */
static void files_that_change_while_hashed(void **state)
{
	(void)state;
	char path[64];
	struct rec want;
	size_t n = (2 << 20) + 100;
	make_file(path, n + 70000, &want);    /* the digest of the file grown */
	assert_int_equal(truncate(path, (off_t)n), 0);
	struct rec r = { .path = path, .grow = 70000 };
	struct seen s = { 0 };
	assert_int_equal(run(path, strlen(path) + 1, 65536, &r, &s), 0);
	assert_int_equal(s.errnum, 0);
	assert_memory_equal(s.digest, &want.sum, 8);
	assert_memory_equal(s.digest + 8, &want.count, 8);
	assert_true(r.longest <= 65536);
	unlink(path);
	/* cut to 4 KiB after the first stretch: that stretch is all */
	make_file(path, n, &want);
	struct rec c = { .path = path, .cut = 1, .cut_to = 4096 };
	memset(&s, 0, sizeof s);
	assert_int_equal(run(path, strlen(path) + 1, 65536, &c, &s), 0);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.errnum, 0);
	assert_true(s.had_digest);
	assert_int_equal(c.count, 65536);
	unlink(path);
	make_file(path, n, &want);
	struct rec r2 = { 0 };
	memset(&s, 0, sizeof s);
	assert_int_equal(run(path, strlen(path) + 1, 65536, &r2, &s), 0);
	assert_int_equal(s.errnum, 0);
	assert_memory_equal(s.digest, &want.sum, 8);
	unlink(path);
}

static void stdin_is_read_and_left_open(void **state)
{
	(void)state;
	char path[64];
	struct rec want;
	make_file(path, 70000, &want);
	int saved = dup(0);
	assert_true(saved >= 0);
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(dup2(fd, 0), 0);
	close(fd);
	struct rec r = { 0 };
	struct seen s = { 0 };
	assert_int_equal(run("-", 2, 4096, &r, &s), 0);
	assert_int_equal(s.errnum, 0);
	assert_memory_equal(s.digest, &want.sum, 8);
	assert_memory_equal(s.digest + 8, &want.count, 8);
	assert_true(fcntl(0, F_GETFD) >= 0);
	dup2(saved, 0);
	close(saved);
	unlink(path);
}

/* accel_hash_measure: whole digests (init, the n bytes, final) of a
 * pattern it writes, one untimed and 6 timed; a failing digest or n = 0
 * measure nothing (0). */
static void measure_times_whole_digests(void **state)
{
	(void)state;
	uint8_t buf[4096] = { 0 };
	struct rec r = { 0 };
	double mbps = accel_hash_measure(&rec_digest, &r, buf, sizeof buf);
	assert_true(mbps > 0);
	assert_int_equal(r.inits, 7);
	assert_int_equal(r.updates, 7);
	assert_int_equal(r.count, 7 * sizeof buf);
	assert_int_equal(r.longest, sizeof buf);
	size_t zero = 0;
	for (size_t i = 0; i < sizeof buf; i++)
		zero += !buf[i];
	assert_true(zero < sizeof buf / 64);   /* the pattern, not the zeroes given */

	struct rec fail = { .fail_at = 3 };
	assert_true(accel_hash_measure(&rec_digest, &fail, buf, sizeof buf) == 0);
	assert_int_equal(fail.updates, 3);
	struct rec fail_final = { .fail_final = 1 };
	assert_true(accel_hash_measure(&rec_digest, &fail_final, buf, sizeof buf) == 0);
	assert_int_equal(fail_final.updates, 1);
	struct rec none = { 0 };
	assert_true(accel_hash_measure(&rec_digest, &none, buf, 0) == 0);
	assert_int_equal(none.inits, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_byte_in_order),
		cmocka_unit_test(failures_reach_done),
		cmocka_unit_test(files_that_change_while_hashed),
		cmocka_unit_test(stdin_is_read_and_left_open),
		cmocka_unit_test(measure_times_whole_digests),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
