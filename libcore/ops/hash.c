/*
 * hash.c - the file a hash unit names (accel-crypt hash), read for the
 * engine that digests it: the engine's digest functions are called on each
 * stretch read, and the digest, or why the file could not be read, goes to
 * the caller's done().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <accel/cli.h>
#include <accel/ops/age.h>
#include "core.h"

/* Every file is read through the engine's buffer (ACCEL_HASH_READ at a
 * time), none mapped. A mapping saved the kernel's copy, and on the
 * 16-core Xeon host of an H200 a 64 MiB file in tmpfs hashed (sha256) in
 * 64.1 ms mapped against 69.8 read; but each fault maps 16 pages of the
 * mapping, and where a fault is dear (a VM's shadow page tables: 10.7 us
 * a page on the 2-core EPYC VM) 256 MiB hashed in 377 ms mapped (313 ms
 * of user time, the digest stalled on its first touches) against 212
 * read (176), sha256sum 968. Read, the cost is the copy's, the same on
 * every machine. */

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

/* Timed runs of accel_hash_measure, after the untimed one that faults in
 * the digest's code and state. */
#define MEASURE_RUNS 6

double accel_hash_measure(const struct accel_hash_digest *d, void *arg, uint8_t *buf, size_t n)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (uint8_t)(i * 131 + (i >> 9));
	uint8_t md[ACCEL_HASH_MAX_DIGEST];
	size_t mdlen;
	double best = 0;
	for (int run = 0; n && run <= MEASURE_RUNS; run++) {
		double t0 = accel_now();
		if (d->init(arg) || d->update(arg, buf, n) || d->final(arg, md, &mdlen))
			return 0;
		double t = accel_now() - t0;
		if (run && t > 0 && (best == 0 || t < best))
			best = t;
	}
	return best > 0 ? (double)n / best / 1e6 : 0;
}
