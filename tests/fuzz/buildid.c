/*
 * buildid.c - fuzz target for the GNU build-id reader (libcore/buildid.c):
 * the input is a plugin file. The reader answers -1 (refused), 0 (an ELF
 * object without a build-id) or the build-id's length, at most its
 * buffer's, and the bytes it gives lie in the file. It reads nothing past
 * the size it is told: told a prefix's size, it answers as it does for a
 * file that holds only that prefix. With a buffer too small for the
 * build-id it refuses; with one just large enough it gives the same bytes.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core.h"
#include "fuzz.h"
#ifndef ACCEL_PLUGIN_DIR
/* The replay driver links libaccel, which does not export core_ functions. */
#include "../../libcore/buildid.c"
#endif

/* The reader over data[0..size) in a memory file, told `told` bytes
 * (<= the file's size); its answer, and the id in id[cap]. */
static int read_id(const uint8_t *data, size_t size, size_t told, unsigned char *id, size_t cap)
{
	int fd = fuzz_memfd("plugin.so", data, size);
	if (fd < 0)
		fuzz_fail("cannot make the file");
	int n = core_elf_build_id(fd, told, id, cap);
	close(fd);
	if (n < -1 || n > (int)cap)
		fuzz_fail("answer %d with a buffer of %zu", n, cap);
	if (n > 0 && !memmem(data, told, id, (size_t)n))
		fuzz_fail("a build-id of %d bytes that is not in the file's %zu", n, told);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char id[64], small[64], part[64];
	int n = read_id(data, size, size, id, sizeof id);
	/* A prefix: the whole file told its size, and the prefix alone. */
	size_t cut = size / 2;
	int a = read_id(data, size, cut, part, sizeof part);
	int b = read_id(data, cut, cut, small, sizeof small);
	if (a != b || (a > 0 && memcmp(part, small, (size_t)a)))
		fuzz_fail("told %zu of %zu bytes: %d; the %zu bytes alone: %d", cut, size, a, cut, b);
	if (n > 0) {
		if (read_id(data, size, size, small, (size_t)n - 1) != -1)
			fuzz_fail("a build-id of %d bytes in a buffer of %d", n, n - 1);
		if (read_id(data, size, size, small, (size_t)n) != n || memcmp(small, id, (size_t)n))
			fuzz_fail("another build-id in a buffer of its size");
	}
	return 0;
}
