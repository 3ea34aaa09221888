/*
 * crypt_sums.c - fuzz target for the checksum list lines that `accel-crypt
 * hash -c` reads (libcore/ops/crypt/sums.c). The first byte picks the
 * algorithm of untagged lines, whether tagged lines may name any other,
 * and whether the list is stdin; the rest is the list, cut at
 * each LF as getline cuts it. A line with a NUL byte is never accepted; a
 * name stays inside its line; the "DIGEST NAME" decision, once made,
 * holds; and an accepted line naming a file, written again by the writer
 * `hash` uses (sum_line_format: plain and --tag, the name escaped when it
 * holds a backslash, LF or CR), reads back to the same digest and name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ops/crypt/crypt_format.h"
#include "fuzz.h"

static void fail(const char *what)
{
	fprintf(stderr, "fuzz: crypt_sums: %s\n", what);
	abort();
}

static void round_trip(const struct sum_reader *r, int algo, const uint8_t *digest, const char *name)
{
	size_t dlen = sum_algos[algo].dlen;
	/* An untagged line is of the reader's plain algorithm. */
	for (int tagged = algo != r->plain; tagged < 2; tagged++) {
		size_t n;
		char *line = sum_line_format(tagged ? sum_algos[algo].tags[0] : NULL, digest, dlen, name, 0, &n);
		if (!line)
			fail("out of memory");
		if (n != strlen(line) || line[n - 1] != '\n')
			fail("a line written is not its length, or does not end in LF");
		struct sum_reader fresh = *r;
		uint8_t d2[64];
		char *n2;
		int a2;
		fresh.from_stdin = 0;
		fresh.reversed = -1;
		if (sum_line_parse(&fresh, line, n, &a2, d2, &n2) != 1 || a2 != algo || memcmp(d2, digest, dlen) ||
		    strcmp(n2, name))
			fail(tagged ? "a name written as --tag does not read back" : "a name written as hash does not read back");
		if (!tagged && fresh.reversed != 0)
			fail("a DIGEST  NAME line did not set the standard form");
		free(line);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int plain = data[0] % SUM_NALGOS;
	struct sum_reader r = { plain, data[0] & 0x40 ? -1 : plain, data[0] >> 7, -1 };
	data++;
	size--;
	for (size_t off = 0; off < size;) {
		const uint8_t *nl = memchr(data + off, '\n', size - off);
		size_t n = nl ? (size_t)(nl - (data + off)) + 1 : size - off;
		char *line = malloc(n + 1);
		memcpy(line, data + off, n);
		line[n] = 0;
		int before = r.reversed;
		uint8_t digest[64];
		char *name = NULL;
		int algo = -1;
		int rc = sum_line_parse(&r, line, n, &algo, digest, &name);
		if (rc < -1 || rc > 1)
			fail("a result other than -1, 0, 1");
		if (before != -1 && r.reversed != before)
			fail("the DIGEST NAME decision changed");
		if (rc == 1) {
			if (algo < 0 || algo >= SUM_NALGOS || (r.only >= 0 && algo != r.only))
				fail("an algorithm outside the reader's");
			if (memchr(data + off, 0, n))
				fail("a line holding a NUL byte accepted");
			if (name < line || name + strlen(name) > line + n)
				fail("a name outside its line");
			if (r.from_stdin && !strcmp(name, "-"))
				fail("'-' accepted in a list read from stdin");
			/* 'SHA256 () = ...' names no file, as in sha256sum
			 * (which then fails to open ''); hash never writes it. */
			if (*name)
				round_trip(&r, algo, digest, name);
		}
		free(line);
		off += n;
	}
	return 0;
}
