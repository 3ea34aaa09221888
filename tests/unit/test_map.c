/*
 * test_map.c - the chunked readers on a mapped input (accel_input_map,
 * accel_read_chunk, accel_read_chunk_claim): each unit borrows its slice of
 * the mapping or claims it (its file offset, for the stream to pread), the last
 * unit is marked as a read() would mark it; and a file that shrinks while
 * being compressed or encrypted ends the process with exit status 1,
 * leaving no output file (the temporary removed).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <accel/ops/age.h>
#include <accel/ops/compress.h>
#include "core.h"

#define CHUNK 4096

/* A fresh folder holding the file "in" of n pseudo-random bytes (written
 * to data when not NULL); its path in dir, the file's in path. */
static void make_input(char *dir, char *path, size_t n, uint8_t *data)
{
	strcpy(dir, "/tmp/test_map.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, PATH_MAX, "%s/in", dir);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	srand(7);
	for (size_t i = 0; i < n; i++) {
		uint8_t b = (uint8_t)rand();
		if (data)
			data[i] = b;
		assert_int_equal(fputc(b, f), b);
	}
	assert_int_equal(fclose(f), 0);
}

/* Names in dir besides "in"; removes them all and dir. */
static int others_removed(const char *dir)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	int others = 0;
	char p[PATH_MAX];
	for (struct dirent *e; (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		others += strcmp(e->d_name, "in") != 0;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(dir);
	return others;
}

static void read_chunk(struct accel_input *in, struct accel_unit *u, uint64_t seq, int want)
{
	u->seq = seq;
	u->in.len = 0;
	assert_int_equal(accel_read_chunk(in, u, CHUNK), want);
}

/* An input file of n bytes (their copy in data) made in a new folder,
 * opened and mapped into in. */
static void open_mapped(struct accel_input *in, char *dir, char *path, size_t n, uint8_t *data)
{
	make_input(dir, path, n, data);
	assert_int_equal(accel_input_open(in, path), 0);
	assert_int_equal(accel_input_map(in), 1);
}

/* Units borrow (cap 0) consecutive slices of the mapping; the one that
 * ends the file is last, also when the file is a whole number of chunks. */
static void chunks_borrow_the_mapping(void **state)
{
	(void)state;
	for (size_t n = 2 * CHUNK; n <= 2 * CHUNK + 100; n += 100) {
		char dir[64], path[PATH_MAX];
		uint8_t *data = malloc(n);
		assert_non_null(data);
		struct accel_input in;
		open_mapped(&in, dir, path, n, data);
		struct accel_unit u = { 0 };
		size_t at = 0;
		for (uint64_t seq = 0; at < n; seq++) {
			read_chunk(&in, &u, seq, 1);
			size_t want = n - at < CHUNK ? n - at : CHUNK;
			assert_int_equal(u.in.cap, 0);
			assert_int_equal(u.in.len, want);
			assert_int_equal(u.offset, at);
			assert_ptr_equal(u.in.data, in.buf + at);
			assert_memory_equal(u.in.data, data + at, want);
			assert_int_equal(u.last, at + want == n);
			at += want;
		}
		read_chunk(&in, &u, 9, 0);
		/* A unit that must own its bytes copies them first. */
		accel_input_seek(&in, 0);
		read_chunk(&in, &u, 0, 1);
		assert_int_equal(accel_buf_reserve(&u.in, CHUNK + 1), 0);
		assert_true(u.in.cap >= CHUNK + 1);
		assert_memory_equal(u.in.data, data, CHUNK);
		accel_buf_free(&u.in);
		accel_input_close(&in);
		assert_int_equal(others_removed(dir), 0);
		free(data);
	}
}

/* accel_read_chunk_claim: whole chunks with more after them are claimed
 * (in_at, the file offset; in.data NULL, nothing borrowed), the chunk that
 * ends the file is borrowed as accel_read_chunk has it; pread at in_at
 * gives each chunk's bytes. A file read through the buffer (not mapped)
 * reads every chunk. */
static void chunks_claim_their_bytes(void **state)
{
	(void)state;
	for (size_t n = 2 * CHUNK; n <= 2 * CHUNK + 100; n += 100) {
		char dir[64], path[PATH_MAX];
		uint8_t *data = malloc(n), *got = malloc(CHUNK);
		assert_non_null(data);
		assert_non_null(got);
		struct accel_input in;
		open_mapped(&in, dir, path, n, data);
		struct accel_unit u = { 0 };
		size_t at = 0;
		for (uint64_t seq = 0; at < n; seq++) {
			u.seq = seq;
			u.in_at = -1;
			assert_int_equal(accel_read_chunk_claim(&in, &u, CHUNK), 1);
			size_t want = n - at < CHUNK ? n - at : CHUNK;
			assert_int_equal(u.in.len, want);
			assert_int_equal(u.offset, at);
			assert_int_equal(u.last, at + want == n);
			if (at + want < n) {
				assert_int_equal(u.in_at, (int64_t)at);
				assert_null(u.in.data);
				assert_int_equal(pread(in.fd, got, want, (off_t)at), (ssize_t)want);
				assert_memory_equal(got, data + at, want);
			} else {
				assert_int_equal(u.in_at, -1);
				assert_ptr_equal(u.in.data, in.buf + at);
			}
			at += want;
		}
		u.seq = 9;
		u.in_at = -1;
		assert_int_equal(accel_read_chunk_claim(&in, &u, CHUNK), 0);
		accel_input_close(&in);
		/* Not mapped: read into the unit. */
		assert_int_equal(accel_input_open(&in, path), 0);
		struct accel_unit r = { 0 };
		r.in_at = -1;
		assert_int_equal(accel_read_chunk_claim(&in, &r, CHUNK), 1);
		assert_int_equal(r.in_at, -1);
		assert_true(r.in.cap >= CHUNK);
		assert_memory_equal(r.in.data, data, CHUNK);
		accel_buf_free(&r.in);
		accel_input_close(&in);
		assert_int_equal(others_removed(dir), 0);
		free(data);
		free(got);
	}
}

/* accel_buf_reserve_fill: the content kept (borrowed bytes copied), and
 * the pages of what the caller will write present before it writes them
 * (MADV_POPULATE_WRITE; a kernel before 5.14 has none: nothing to check). */
/* A sequential decoder's stand-in: reads ctx's count of bytes (all that
 * is left when more) through in, checks them against the file, fails
 * with ACCEL_EDATA when asked to after its reads. */
struct view_reader {
	const uint8_t *data;
	size_t n, take;
	int fail;
	int was_mapped;
};

static int read_through(void *ctx, struct accel_input *in, struct accel_output *out, char *err, size_t len)
{
	(void)out;
	struct view_reader *r = ctx;
	r->was_mapped = in->map_len != 0;
	uint8_t buf[5000];
	for (size_t done = 0; done < r->take;) {
		size_t want = r->take - done < sizeof buf ? r->take - done : sizeof buf;
		uint64_t at = in->offset;
		ssize_t k = accel_input_read(in, buf, want);
		if (k <= 0)
			break;
		assert_memory_equal(buf, r->data + at, (size_t)k);
		done += (size_t)k;
	}
	if (r->fail) {
		snprintf(err, len, "bad at byte offset %llu", (unsigned long long)in->offset);
		return ACCEL_EDATA;
	}
	return 0;
}

/* core_input_viewed: a mapped input is read by the decoder through a
 * buffered view (never the mapping), with the input's own offsets, and
 * the input goes on exactly past what the decoder consumed (not what the
 * view read ahead), failed or not; past the file's end nothing is lost. */
static void sequential_reads_go_through_a_view(void **state)
{
	(void)state;
	const size_t n = 3 * (1u << 20) + 77;
	char dir[64], path[PATH_MAX];
	uint8_t *data = malloc(n);
	assert_non_null(data);
	struct accel_input in;
	open_mapped(&in, dir, path, n, data);
	const uint8_t *p;
	assert_int_equal(accel_input_peek(&in, 10, &p), 10);
	accel_input_consume(&in, 10);
	const size_t takes[] = { 0, 1, 4999, 1u << 20, (1u << 20) + 1, 2 * (1u << 20) + 13, n };
	size_t at = 10;
	for (size_t t = 0; t < sizeof takes / sizeof takes[0]; t++) {
		struct view_reader r = { data, n, takes[t], (int)(t & 1), 1 };
		char err[64] = "";
		int rc = core_input_viewed(&in, read_through, &r, NULL, err, sizeof err);
		assert_int_equal(rc, t & 1 ? ACCEL_EDATA : 0);
		/* At the end there is nothing to view: the input itself. */
		assert_int_equal(r.was_mapped, at == n);
		at = at + takes[t] < n ? at + takes[t] : n;
		assert_int_equal(in.offset, at);
		assert_int_equal(in.start, at);
		assert_int_equal(in.map_len, n);
		if (t & 1) {
			char want[64];
			snprintf(want, sizeof want, "bad at byte offset %zu", at);
			assert_string_equal(err, want);
		}
		if (at < n) {
			assert_true(accel_input_peek(&in, 1, &p) == 1);
			assert_int_equal(p[0], data[at]);
		}
	}
	/* Not mapped: the decoder reads the input itself. */
	accel_input_close(&in);
	assert_int_equal(accel_input_open(&in, path), 0);
	struct view_reader r = { data, n, 100, 0, 1 };
	assert_int_equal(core_input_viewed(&in, read_through, &r, NULL, NULL, 0), 0);
	assert_false(r.was_mapped);
	assert_int_equal(in.offset, 100);
	accel_input_close(&in);
	assert_int_equal(others_removed(dir), 0);
	free(data);
}

static void reserve_fill_makes_pages_present(void **state)
{
	(void)state;
	static const uint8_t text[] = "borrowed bytes";
	struct accel_buf b = { (uint8_t *)text, sizeof text, 0 };
	assert_int_equal(accel_buf_reserve_fill(&b, (size_t)1 << 20), 0);
	assert_true(b.cap >= (size_t)1 << 20);
	assert_ptr_not_equal(b.data, text);
	assert_memory_equal(b.data, text, sizeof text);
	assert_int_equal((uintptr_t)b.data % 64, 0);
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t a = ((uintptr_t)b.data + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	size_t pages = (((uintptr_t)b.data + ((size_t)1 << 20)) & ~((uintptr_t)page - 1)) - a;
	unsigned char vec[300];
	pages /= (size_t)page;
	assert_true(pages > 200 && pages <= sizeof vec);
	void *probe = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(probe != MAP_FAILED);
	int populates = madvise(probe, (size_t)page, MADV_POPULATE_WRITE) == 0;
	munmap(probe, (size_t)page);
	assert_int_equal(mincore((void *)a, pages * (size_t)page, vec), 0);
	for (size_t i = 0; populates && i < pages; i++)
		assert_true(vec[i] & 1);
	/* Growing keeps what is there. */
	memset(b.data, 7, (size_t)1 << 20);
	b.len = (size_t)1 << 20;
	assert_int_equal(accel_buf_reserve_fill(&b, (size_t)3 << 20), 0);
	assert_int_equal((uintptr_t)b.data % ((size_t)2 << 20), 0);
	assert_int_equal(b.data[0], 7);
	assert_int_equal(b.data[((size_t)1 << 20) - 1], 7);
	accel_buf_free(&b);
}

/* The input's path, for the write hook of the child. */
static char shrink_path[PATH_MAX];

/* Writer hook: with the first unit written, the input is cut to nothing,
 * so the units not yet run find it short (pread), or fault (SIGBUS) when
 * their engine reads them from the mapping. */
static int cut_input(void *user, struct accel_output *out, const struct accel_unit *u, char *err,
			  size_t len)
{
	(void)err;
	(void)len;
	(void)user;
	if (u->seq == 0 && truncate(shrink_path, 0) < 0)
		_exit(3);
	return accel_output_write(out, u->out.data, u->out.len);
}

/* Run `age` (1: encrypt) or compression on a 64-unit file whose size drops
 * to 0 after the first unit is written, in a child with SIGBUS at its
 * default (cmocka's handler set aside): the run fails (ACCEL_EIO, "input
 * file shrank") or the SIGBUS handler ends it: exit status 1, nothing left
 * in the folder besides the input. */
static void shrink_during(int age)
{
	char dir[64];
	size_t unit = age ? ACCEL_AGE_CHUNK : CHUNK;
	make_input(dir, shrink_path, 64 * unit, NULL);
	char opath[PATH_MAX];
	snprintf(opath, sizeof opath, "%s/out", dir);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGBUS, SIG_DFL);
		/* The openssl plugin (age's engine) among the build's plugins,
		 * ../plugins from this program's folder. It names libaccel.so.0,
		 * which a program has loaded: the build's, loaded here by its
		 * path; the plugin's calls still bind to the libcore linked in
		 * (exported, -rdynamic). */
		char exe[PATH_MAX], where[PATH_MAX + 32];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		if (n < 0)
			_exit(3);
		exe[n] = 0;
		*strrchr(exe, '/') = 0;
		snprintf(where, sizeof where, "%s/../lib/libaccel.so.0", exe);
		if (age && !dlopen(where, RTLD_NOW | RTLD_LOCAL))
			_exit(3);
		snprintf(where, sizeof where, "%s/../plugins", exe);
		setenv("ACCEL_BACKEND_PATH", where, 1);
		unsetenv("ACCEL_FAULT");
		struct accel_ctx *ctx = accel_ctx_new();
		struct accel_input in;
		struct accel_output out;
		if (!ctx || accel_input_open(&in, shrink_path) < 0 || accel_output_open(&out, opath, 0, 1) < 0)
			_exit(3);
		struct accel_stream_config sc = { .threads = 2, .fallback = ACCEL_FALLBACK_NONE, .total_size = -1,
						  .prog = "test", .write = cut_input };
		char err[256];
		int rc;
		if (age) {
			static const uint8_t key[ACCEL_AGE_KEY_LEN] = { 1 };
			struct accel_age_cfg cfg = { .stream = sc, .key = key, .unit_chunks = 1 };
			rc = accel_age_encrypt(ctx, &cfg, &in, &out, NULL, err, sizeof err);
		} else {
			struct accel_compress_cfg cfg = { .backend = "cpu", .stream = sc, .format = "zstd",
							  .level = 1, .chunk_size = CHUNK };
			rc = accel_compress(ctx, &cfg, &in, &out, NULL, err, sizeof err);
		}
		/* Units that claimed their bytes (pread) find the file short:
		 * the run fails with its line, and the program (as the tools
		 * do) removes its output; one that borrowed them (the last
		 * chunk) faults, and the SIGBUS handler ends the run. */
		if (rc == ACCEL_EIO && strstr(err, "shrank")) {
			accel_output_abort(&out);
			_exit(1);
		}
		fprintf(stderr, "run ended with %d: %s\n", rc, err);
		_exit(4);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 1);
	assert_int_equal(others_removed(dir), 0);
}

static void shrinking_while_compressed_is_exit_1(void **state)
{
	(void)state;
	shrink_during(0);
}

static void shrinking_while_encrypted_is_exit_1(void **state)
{
	(void)state;
	/* age's engine is the openssl plugin, which only the plain build
	 * has (make check runs this there); the sanitizer build
	 * (build/sanitize) makes no plugins and no libaccel.so. */
	char exe[PATH_MAX], where[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	assert_true(n > 0);
	exe[n] = 0;
	*strrchr(exe, '/') = 0;
	snprintf(where, sizeof where, "%s/../lib/libaccel.so.0", exe);
	if (access(where, R_OK) != 0) {
		/* Not cmocka's skip(): its TAP line reads "not ok". */
		fprintf(stderr, "# shrinking_while_encrypted: not run in a build without %s\n", where);
		return;
	}
	shrink_during(1);
}

/* A file under 128 KiB is read through the buffer, not mapped
 * (core_input_map_large), and a buffer sized for the file takes what was
 * appended after it was opened; from 128 KiB on the file is mapped. */
static void small_files_are_read(void **state)
{
	(void)state;
	char dir[64], path[PATH_MAX];
	size_t small = ((size_t)128 << 10) - 1, extra = (size_t)200 << 10;
	uint8_t *data = malloc(small + extra);
	assert_non_null(data);
	make_input(dir, path, small, data);
	struct accel_input in;
	assert_int_equal(accel_input_open(&in, path), 0);
	assert_int_equal(core_input_map_large(&in), 0);
	assert_int_equal(in.map_len, 0);
	/* Grown after the open: every byte is read all the same. */
	FILE *f = fopen(path, "ab");
	assert_non_null(f);
	for (size_t i = 0; i < extra; i++) {
		data[small + i] = (uint8_t)(i * 7 + 1);
		assert_int_equal(fputc(data[small + i], f), data[small + i]);
	}
	assert_int_equal(fclose(f), 0);
	struct accel_unit u = { 0 };
	size_t got = 0;
	for (uint64_t seq = 0;; seq++) {
		u.seq = seq;
		int rc = accel_read_chunk(&in, &u, 3 * CHUNK);
		assert_true(rc == 0 || rc == 1);
		if (rc == 0)
			break;
		assert_true(got + u.in.len <= small + extra);
		assert_memory_equal(u.in.data, data + got, u.in.len);
		got += u.in.len;
		if (u.last)
			break;
	}
	assert_int_equal(got, small + extra);
	accel_buf_free(&u.in);
	accel_input_close(&in);
	/* 128 KiB and more: mapped. */
	assert_int_equal(accel_input_open(&in, path), 0);
	assert_int_equal(core_input_map_large(&in), 1);
	assert_int_equal(in.map_len, small + extra);
	accel_input_close(&in);
	assert_int_equal(others_removed(dir), 0);
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(chunks_borrow_the_mapping),
		cmocka_unit_test(chunks_claim_their_bytes),
		cmocka_unit_test(small_files_are_read),
		cmocka_unit_test(sequential_reads_go_through_a_view),
		cmocka_unit_test(reserve_fill_makes_pages_present),
		cmocka_unit_test(shrinking_while_compressed_is_exit_1),
		cmocka_unit_test(shrinking_while_encrypted_is_exit_1),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
