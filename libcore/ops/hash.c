/*
 * hash.c - the file a hash unit names (accel-crypt hash), read for the
 * engine that digests it: the engine's digest functions are called on each
 * stretch read, and the digest, or why the file could not be read, goes to
 * the caller's done().
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <accel/ops/age.h>
#include "core.h"

/* A regular file of at least HASH_MAP bytes is hashed from a mapping of
 * it, not read through the engine's buffer: the kernel's copy into the
 * buffer was a sixth of the CPU time. accel-crypt hash (sha256) of a file
 * in tmpfs, medians of 11 runs on the 16-core Xeon host of an H200:
 * 64 MiB read 69.8 ms (sys 11.6), mapped 64.1 (sys 4.1), sha256sum 69.9;
 * 1 GiB 978, 896 and 980 ms. Under 1 MiB the mmap and munmap (a TLB
 * flush on every core the process runs on) cost more than the copy
 * saves. */
#define HASH_MAP ((off_t)1 << 20)

/* A mapped file is given to the digest this many bytes at a time, each
 * stretch then let go of, so that hashing a file larger than memory does
 * not fill the resident set with it: 14 MiB peak for 512 MiB (6 MiB read,
 * 520 MiB mapped whole), 457 ms against 463 ms with 2 MiB stretches and
 * 497 ms read (2-core VM, medians of 9). */
#define HASH_WINDOW ((size_t)8 << 20)

/* The first `size` bytes of the file fd, mapped, given to d->update. 0;
 * -1 when the file could not be mapped (the caller reads it instead); an
 * errno when the file shrank while being hashed (a SIGBUS in the mapping,
 * which core_bus_guard turns into a jump back here): EIO, the digest
 * state then spoilt. */
static int hash_mapped(int fd, size_t size, const struct accel_hash_digest *d, void *arg)
{
	uint8_t *map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -1;
	madvise(map, size, MADV_SEQUENTIAL);
	sigjmp_buf jb;
	volatile int rc = 0;
	if (!core_bus_guard(&jb, map, size))
		rc = -1;
	else if (sigsetjmp(jb, 1))
		rc = EIO;
	else
		for (size_t at = 0; at < size && !rc; at += HASH_WINDOW) {
			size_t n = size - at < HASH_WINDOW ? size - at : HASH_WINDOW;
			if (d->update(arg, map + at, n))
				rc = EIO;
			/* Hashed: out of the process's resident set (the
			 * pages stay in the page cache). */
			madvise(map + at, n, MADV_DONTNEED);
		}
	core_bus_guard(NULL, NULL, 0);
	munmap(map, size);
	return rc;
}

int accel_hash_run_unit(const struct accel_op *op, struct accel_unit *u, uint8_t *buf, size_t cap,
			const struct accel_hash_digest *d, void *arg)
{
	const struct accel_hash_files *h = op->ext;
	if (!h)
		return ACCEL_EINVAL;
	if (!u->in.len || !memchr(u->in.data, 0, u->in.len))
		return ACCEL_EDATA;
	const char *name = (const char *)u->in.data;
	int own = strcmp(name, "-") != 0;
	int fd = own ? open(name, O_RDONLY | O_CLOEXEC) : 0;
	int errnum = 0;
	if (fd < 0) {
		errnum = errno;
	} else {
		posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
		if (d->init(arg))
			errnum = EIO;
		/* A large regular file is hashed mapped, then what it grew
		 * by since is read below; any other file is read whole. */
		struct stat st;
		if (!errnum && own && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= HASH_MAP &&
		    (uint64_t)st.st_size <= SIZE_MAX) {
			int m = hash_mapped(fd, (size_t)st.st_size, d, arg);
			if (m > 0)
				errnum = m;
			else if (m == 0 && lseek(fd, st.st_size, SEEK_SET) < 0)
				errnum = errno;
		}
		for (ssize_t r; !errnum;) {
			r = read(fd, buf, cap);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				errnum = errno;
			else if (r == 0)
				break;
			else if (d->update(arg, buf, (size_t)r))
				errnum = EIO;
		}
		if (own)
			close(fd);
	}
	uint8_t md[ACCEL_HASH_MAX_DIGEST];
	size_t mdlen = 0;
	if (!errnum && d->final(arg, md, &mdlen))
		errnum = EIO;
	return h->done(h->arg, u, errnum ? NULL : md, mdlen, errnum, &u->out);
}
