/*
 * npz.c - a run's .npy arrays as a stream, as one .npy array with a
 * leading axis (the header rewritten at the end with the count), or as a
 * .npz (numpy's ZIP of .npy members, written with minizip).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <zip.h>
#include <accel/ops/tensor.h>
#include "codec_dl.h"
#include "core.h"

/* minizip's functions (codec_dl.h), loaded by npz_write. */
static const struct core_minizip *const mz = &core_minizip_fns;

/* A run of arrays of one shape, in a group's temporary (.npz). */
struct npy_run {
	struct accel_tensor t;
	uint64_t count;
};

struct accel_npy_group {
	char *name;               /* NULL: unnamed (arr_K) */
	int fd;                   /* .npz: the temporary holding the data, -1 */
	uint64_t count;           /* arrays begun */
	uint64_t lead;            /* their axis-0 sizes summed (ACCEL_NPY_CONCAT) */
	uint64_t bytes;           /* their data */
	struct accel_tensor first;
	int joins;                /* 1: every array so far joins the first */
	struct npy_run *runs;     /* .npz: shapes in order, run-length */
	size_t nruns, cap;
};

enum accel_npy_form accel_npy_form_of(const char *path)
{
	size_t n = path ? strlen(path) : 0;
	if (n > 4 && !strcasecmp(path + n - 4, ".npz"))
		return ACCEL_NPY_NPZ;
	if (n > 4 && !strcasecmp(path + n - 4, ".npy"))
		return ACCEL_NPY_ONE;
	return ACCEL_NPY_STREAM;
}

int accel_npy_pack_open(struct accel_npy_pack *p, struct accel_output *out, enum accel_npy_form form,
			enum accel_npy_axis axis, int ngroups, const char *const *names, char *err, size_t len)
{
	memset(p, 0, sizeof *p);
	p->out = out;
	p->form = form;
	p->axis = axis;
	p->cur = -1;
	if (ngroups < 1)
		ngroups = 1;
	if (form == ACCEL_NPY_ONE && ngroups > 1) {
		snprintf(err, len, "a .npy file holds one array, and there are %d outputs; write a .npz", ngroups);
		return ACCEL_EINVAL;
	}
	if (form != ACCEL_NPY_STREAM && accel_output_seek(out, 0, SEEK_CUR) < 0) {
		snprintf(err, len, "a .%s is written with seeks, and the output is not a regular file",
			 form == ACCEL_NPY_NPZ ? "npz" : "npy");
		return ACCEL_EINVAL;
	}
	p->g = calloc((size_t)ngroups, sizeof *p->g);
	if (!p->g)
		return ACCEL_ENOMEM;
	p->ngroups = ngroups;
	for (int i = 0; i < ngroups; i++) {
		p->g[i].fd = -1;
		p->g[i].joins = 1;
		if (names && names[i] && !(p->g[i].name = strdup(names[i])))
			return ACCEL_ENOMEM;
	}
	if (form == ACCEL_NPY_NPZ) {
		/* The temporaries go beside the output: its file system has room. */
		const char *path = out->path ? out->path : ".";
		const char *slash = strrchr(path, '/');
		p->dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
		if (!p->dir)
			return ACCEL_ENOMEM;
	}
	return 0;
}

/* An unlinked temporary in p->dir. */
static int temp_open(const struct accel_npy_pack *p)
{
	int fd = open(p->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd;
	/* File systems without O_TMPFILE: a name, removed at once. */
	size_t n = strlen(p->dir) + 32;
	char *name = malloc(n);
	if (!name)
		return -1;
	snprintf(name, n, "%s/.accel-npz-XXXXXX", p->dir);
	fd = mkostemp(name, O_CLOEXEC);
	if (fd >= 0)
		unlink(name);
	free(name);
	return fd;
}

/* The joined array of group g: its shape into *t. 0, or -1 (too many dims). */
static int joined(const struct accel_npy_pack *p, const struct accel_npy_group *g, struct accel_tensor *t)
{
	if (!g->count) {
		/* No array: an empty one, as np.array([]) is. */
		*t = (struct accel_tensor){ ACCEL_DTYPE_FLOAT64, 1, { 0 } };
		return 0;
	}
	*t = g->first;
	if (p->axis == ACCEL_NPY_CONCAT) {
		t->dims[0] = (int64_t)g->lead;
		return 0;
	}
	if (t->ndim == ACCEL_TENSOR_MAX_DIMS)
		return -1;
	memmove(t->dims + 1, t->dims, (size_t)t->ndim * sizeof t->dims[0]);
	t->dims[0] = (int64_t)g->count;
	t->ndim++;
	return 0;
}

/* Whether an array of shape t joins the first array of g. */
static int joins(const struct accel_npy_pack *p, const struct accel_npy_group *g, const struct accel_tensor *t)
{
	const struct accel_tensor *f = &g->first;
	if (t->dtype != f->dtype || t->ndim != f->ndim)
		return 0;
	if (p->axis == ACCEL_NPY_STACK && t->ndim == ACCEL_TENSOR_MAX_DIMS)
		return 0;
	for (int i = p->axis == ACCEL_NPY_CONCAT; i < t->ndim; i++)
		if (t->dims[i] != f->dims[i])
			return 0;
	return 1;
}

static int same_shape(const struct accel_tensor *a, const struct accel_tensor *b)
{
	return a->dtype == b->dtype && a->ndim == b->ndim &&
	       !memcmp(a->dims, b->dims, (size_t)a->ndim * sizeof a->dims[0]);
}

/* Header of t padded to `total` bytes (a multiple of 64 it fits in), so
 * that it can replace a header of that length. Returns its length, or
 * ACCEL_EINVAL. */
static int header_padded(const struct accel_tensor *t, size_t total, uint8_t *buf, size_t len)
{
	int n = accel_npy_header_write(t, buf, len);
	if (n < 0 || (size_t)n > total || total > len || total - 10 > 0xffff)
		return ACCEL_EINVAL;
	if ((size_t)n < total) {
		memset(buf + n - 1, ' ', total - (size_t)n);
		buf[total - 1] = '\n';
		buf[8] = (uint8_t)((total - 10) & 0xff);
		buf[9] = (uint8_t)((total - 10) >> 8);
	}
	return (int)total;
}

static int write_fd(int fd, const void *data, size_t n)
{
	const uint8_t *b = data;
	while (n) {
		ssize_t w = write(fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return ACCEL_EIO;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static void shape_of(const struct accel_tensor *t, char *buf, size_t len)
{
	char s[ACCEL_TENSOR_MAX_DIMS * 22 + 4];
	accel_tensor_shape_str(t, s, sizeof s);
	snprintf(buf, len, "%s of %s", s, accel_dtype_name(t->dtype));
}

int accel_npy_pack_begin(struct accel_npy_pack *p, int group, const struct accel_tensor *t, char *err,
			 size_t len)
{
	uint64_t bytes;
	if (p->cur >= 0 && p->left) {
		snprintf(err, len, "an array's data ended early");
		return ACCEL_EINVAL;
	}
	if (group < 0 || group >= p->ngroups || accel_tensor_size(t, 0, NULL, &bytes) < 0)
		return ACCEL_EINVAL;
	struct accel_npy_group *g = &p->g[group];
	p->cur = group;
	p->left = bytes;
	if (p->form == ACCEL_NPY_STREAM) {
		uint8_t h[ACCEL_NPY_HEADER_MAX];
		int n = accel_npy_header_write(t, h, sizeof h);
		return n < 0 ? n : accel_output_write(p->out, h, (size_t)n);
	}
	/* A scalar has no axis 0 to join along: one .npy cannot hold it
	 * with others, a .npz holds each as a member of its own. */
	int scalar = p->axis == ACCEL_NPY_CONCAT && t->ndim < 1;
	if (scalar && p->form == ACCEL_NPY_ONE) {
		snprintf(err, len, "array %llu is a scalar: arrays join along their axis 0 in one .npy array; write a .npz",
			 (unsigned long long)g->count);
		return ACCEL_EDATA;
	}
	if (!g->count)
		g->first = *t;
	int ok = !scalar && joins(p, g, t);
	g->joins &= ok;
	if (p->form == ACCEL_NPY_ONE) {
		if (!ok) {
			char a[400], b[400];
			shape_of(t, a, sizeof a);
			shape_of(&g->first, b, sizeof b);
			snprintf(err, len, "array %llu of shape %s cannot join array 0 of shape %s in one .npy array; write a .npz",
				 (unsigned long long)g->count, a, b);
			return ACCEL_EDATA;
		}
		if (!g->count) {
			/* Room for any count: the header of the largest. */
			struct accel_tensor big = *t;
			if (joined(p, g, &big) < 0) {
				snprintf(err, len, "an array of %d dimensions has no room for a leading axis",
					 ACCEL_TENSOR_MAX_DIMS);
				return ACCEL_EDATA;
			}
			big.dims[0] = INT64_MAX;
			uint8_t h[ACCEL_NPY_HEADER_MAX];
			int n = accel_npy_header_write(&big, h, sizeof h);
			if (n < 0)
				return n;
			p->header_len = (size_t)n;
			int rc = accel_output_write(p->out, h, (size_t)n);
			if (rc < 0)
				return rc;
		}
	} else {
		if (g->fd < 0 && (g->fd = temp_open(p)) < 0) {
			snprintf(err, len, "cannot create a temporary file in %s: %s", p->dir, strerror(errno));
			return ACCEL_EIO;
		}
		struct npy_run *r = g->nruns ? &g->runs[g->nruns - 1] : NULL;
		if (!r || !same_shape(&r->t, t)) {
			if (g->nruns == g->cap) {
				size_t cap = g->cap ? g->cap * 2 : 4;
				struct npy_run *nr = realloc(g->runs, cap * sizeof *nr);
				if (!nr)
					return ACCEL_ENOMEM;
				g->runs = nr;
				g->cap = cap;
			}
			r = &g->runs[g->nruns++];
			memset(r, 0, sizeof *r);
			r->t.dtype = t->dtype;
			r->t.ndim = t->ndim;
			memcpy(r->t.dims, t->dims, (size_t)t->ndim * sizeof t->dims[0]);
		}
		r->count++;
	}
	g->count++;
	g->lead += t->ndim ? (uint64_t)t->dims[0] : 0;
	g->bytes += bytes;
	return 0;
}

int accel_npy_pack_write(struct accel_npy_pack *p, const void *data, size_t n)
{
	if (p->cur < 0 || n > p->left)
		return ACCEL_EINVAL;
	p->left -= n;
	if (p->form != ACCEL_NPY_NPZ)
		return accel_output_write(p->out, data, n);
	return write_fd(p->g[p->cur].fd, data, n);
}

/* ------------------------------------------------------- .npz (minizip) */

static voidpf zopen(voidpf opaque, const void *name, int mode)
{
	(void)name, (void)mode;
	return opaque;
}

static uLong zread(voidpf opaque, voidpf stream, void *buf, uLong size)
{
	(void)opaque, (void)stream, (void)buf, (void)size;
	return 0;
}

static uLong zwrite(voidpf opaque, voidpf stream, const void *buf, uLong size)
{
	(void)opaque;
	return accel_output_write(stream, buf, size) < 0 ? 0 : size;
}

static ZPOS64_T ztell(voidpf opaque, voidpf stream)
{
	(void)opaque;
	int64_t at = accel_output_seek(stream, 0, SEEK_CUR);
	return at < 0 ? (ZPOS64_T)-1 : (ZPOS64_T)at;
}

static long zseek(voidpf opaque, voidpf stream, ZPOS64_T off, int origin)
{
	(void)opaque;
	int whence = origin == ZLIB_FILEFUNC_SEEK_CUR ? SEEK_CUR : origin == ZLIB_FILEFUNC_SEEK_END ? SEEK_END : SEEK_SET;
	return accel_output_seek(stream, (int64_t)off, whence) < 0 ? -1 : 0;
}

static int zclose(voidpf opaque, voidpf stream)
{
	(void)opaque, (void)stream;
	return 0;
}

static int zerror(voidpf opaque, voidpf stream)
{
	(void)opaque;
	return ((struct accel_output *)stream)->error;
}

/* One member NAME.npy: the header of t, then `bytes` of fd from offset `at`. */
static int member(zipFile z, const char *name, const struct accel_tensor *t, int fd, uint64_t at, uint64_t bytes,
		  uint8_t *buf, size_t cap)
{
	/* 1980-01-01 00:00, as np.savez's members are dated: the bytes depend
	 * only on the arrays. */
	zip_fileinfo fi = { .tmz_date = { 0, 0, 0, 1, 0, 1980 }, .external_fa = 0600u << 16 };
	uint8_t h[ACCEL_NPY_HEADER_MAX];
	int hl = accel_npy_header_write(t, h, sizeof h);
	if (hl < 0)
		return hl;
	int zip64 = bytes + (uint64_t)hl >= 0xffffffffu;
	/* A name beyond ASCII is UTF-8, said so by general purpose bit 11
	 * (APPNOTE.TXT 4.4.4), as Python's zipfile (np.savez) writes it: else
	 * readers take it for code page 437. */
	uLong flags = 0;
	for (const unsigned char *c = (const unsigned char *)name; *c && !flags; c++)
		flags = *c >= 0x80 ? 0x800 : 0;
	if (mz->zipOpenNewFileInZip4_64(z, name, &fi, NULL, 0, NULL, 0, NULL, 0, 0, 0, -MAX_WBITS, DEF_MEM_LEVEL,
				    Z_DEFAULT_STRATEGY, NULL, 0, 0, flags, zip64) != ZIP_OK ||
	    mz->zipWriteInFileInZip(z, h, (unsigned)hl) != ZIP_OK)
		return ACCEL_EIO;
	while (bytes) {
		size_t n = bytes < cap ? (size_t)bytes : cap;
		ssize_t r = pread(fd, buf, n, (off_t)at);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = EIO;
			return ACCEL_EIO;
		}
		if (mz->zipWriteInFileInZip(z, buf, (unsigned)r) != ZIP_OK)
			return ACCEL_EIO;
		at += (uint64_t)r;
		bytes -= (uint64_t)r;
	}
	return mz->zipCloseFileInZip(z) == ZIP_OK ? 0 : ACCEL_EIO;
}

static int npz_group(const struct accel_npy_pack *p, zipFile z, const struct accel_npy_group *g, uint8_t *buf,
		     size_t cap)
{
	char name[512];
	const char *base = g->name ? g->name : "arr";
	if (!g->count)
		return 0;
	if (g->joins) {
		struct accel_tensor t;
		if (joined(p, g, &t) == 0) {
			snprintf(name, sizeof name, "%s.npy", g->name ? g->name : "arr_0");
			return member(z, name, &t, g->fd, 0, g->bytes, buf, cap);
		}
	}
	uint64_t k = 0, at = 0;
	for (size_t i = 0; i < g->nruns; i++) {
		uint64_t bytes;
		accel_tensor_size(&g->runs[i].t, 0, NULL, &bytes);
		for (uint64_t j = 0; j < g->runs[i].count; j++, k++) {
			snprintf(name, sizeof name, "%s_%llu.npy", base, (unsigned long long)k);
			int rc = member(z, name, &g->runs[i].t, g->fd, at, bytes, buf, cap);
			if (rc < 0)
				return rc;
			at += bytes;
		}
	}
	return 0;
}

static int npz_write(struct accel_npy_pack *p, char *err, size_t len)
{
	char why[200];
	if (!core_minizip(why, sizeof why)) {
		snprintf(err, len, "cannot write the .npz: %s", why);
		return ACCEL_ENOTSUP;
	}
	zlib_filefunc64_def io = { zopen, zread, zwrite, ztell, zseek, zclose, zerror, p->out };
	size_t cap = 1 << 20;
	uint8_t *buf = malloc(cap);
	if (!buf)
		return ACCEL_ENOMEM;
	zipFile z = mz->zipOpen2_64(p->out, APPEND_STATUS_CREATE, NULL, &io);
	int rc = z ? 0 : ACCEL_EIO;
	for (int i = 0; !rc && i < p->ngroups; i++)
		rc = npz_group(p, z, &p->g[i], buf, cap);
	if (z && mz->zipClose(z, NULL) != ZIP_OK && !rc)
		rc = ACCEL_EIO;
	free(buf);
	if (rc == ACCEL_EIO && p->out->broken)
		rc = ACCEL_EPIPE;
	if (rc < 0)
		snprintf(err, len, "cannot write the .npz: %s",
			 rc == ACCEL_EIO ? strerror(p->out->error ? p->out->error : errno) : accel_strerror(rc));
	return rc;
}

int accel_npy_pack_finish(struct accel_npy_pack *p, char *err, size_t len)
{
	if (p->cur >= 0 && p->left) {
		snprintf(err, len, "an array's data ended early");
		return ACCEL_EINVAL;
	}
	if (p->form == ACCEL_NPY_NPZ)
		return npz_write(p, err, len);
	if (p->form != ACCEL_NPY_ONE)
		return 0;
	struct accel_npy_group *g = &p->g[0];
	struct accel_tensor t;
	uint8_t h[ACCEL_NPY_HEADER_MAX];
	joined(p, g, &t);
	int n = g->count ? header_padded(&t, p->header_len, h, sizeof h) : accel_npy_header_write(&t, h, sizeof h);
	if (n < 0)
		return n;
	if (!g->count)
		return accel_output_write(p->out, h, (size_t)n);
	int64_t end = accel_output_seek(p->out, 0, SEEK_CUR);
	int rc = end < 0 ? (int)end : (int)accel_output_seek(p->out, 0, SEEK_SET);
	if (rc >= 0)
		rc = accel_output_write(p->out, h, (size_t)n);
	if (rc >= 0 && accel_output_seek(p->out, end, SEEK_SET) < 0)
		rc = ACCEL_EIO;
	if (rc < 0)
		snprintf(err, len, "cannot rewrite the .npy header: %s", accel_strerror(rc));
	return rc < 0 ? rc : 0;
}

void accel_npy_pack_free(struct accel_npy_pack *p)
{
	for (int i = 0; p->g && i < p->ngroups; i++) {
		if (p->g[i].fd >= 0)
			close(p->g[i].fd);
		free(p->g[i].name);
		free(p->g[i].runs);
	}
	free(p->g);
	free(p->dir);
	memset(p, 0, sizeof *p);
	p->cur = -1;
}
