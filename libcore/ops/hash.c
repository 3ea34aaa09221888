/*
 * hash.c - the file a hash unit names (accel-crypt hash), read for the
 * engine that digests it: the engine's digest functions are called on each
 * stretch read, and the digest, or why the file could not be read, goes to
 * the caller's done().
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <accel/ops/age.h>
#include "core.h"

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
