/*
 * batch.c - the batching reader: one item (an array per model input, read
 * in lockstep from the stream and the --input files) checked against the
 * model, then up to --batch items concatenated along the batch axis into
 * one unit of .npy arrays (what onnx.run takes). With --max-wait, a partial
 * batch goes out when the stream pauses that long after its first item
 * (accel_input_peek_until: no busy waiting).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "infer.h"

int fifo_init(struct batch_fifo *f)
{
	memset(f, 0, sizeof *f);
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	return 0;
}

void fifo_free(struct batch_fifo *f)
{
	pthread_mutex_destroy(&f->lock);
	pthread_cond_destroy(&f->cond);
	free(f->items);
}

/* Entries are kept in a ring: a unit's count, then its items. */
static int fifo_put(struct batch_fifo *f, const struct item_meta *m)
{
	if (f->tail - f->head == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 64;
		struct item_meta *c = malloc(cap * sizeof *c);
		if (!c)
			return ACCEL_ENOMEM;
		for (size_t i = f->head; i < f->tail; i++)
			c[i - f->head] = f->items[i % f->cap];
		free(f->items);
		f->items = c;
		f->tail -= f->head;
		f->head = 0;
		f->cap = cap;
	}
	f->items[f->tail++ % f->cap] = *m;
	return 0;
}

int fifo_push(struct batch_fifo *f, const struct item_meta *items, uint32_t n)
{
	struct item_meta count = { .rows = n };
	pthread_mutex_lock(&f->lock);
	int rc = fifo_put(f, &count);
	for (uint32_t i = 0; !rc && i < n; i++)
		rc = fifo_put(f, &items[i]);
	pthread_cond_signal(&f->cond);
	pthread_mutex_unlock(&f->lock);
	return rc;
}

int fifo_pop(struct batch_fifo *f, struct item_meta *items, uint32_t max)
{
	pthread_mutex_lock(&f->lock);
	while (f->head == f->tail && !f->closed)
		pthread_cond_wait(&f->cond, &f->lock);
	int n = -1;
	if (f->head != f->tail) {
		n = (int)f->items[f->head++ % f->cap].rows;
		for (int i = 0; i < n; i++) {
			struct item_meta v = f->items[f->head++ % f->cap];
			if ((uint32_t)i < max)
				items[i] = v;
		}
	}
	pthread_mutex_unlock(&f->lock);
	return n;
}

void fifo_close(struct batch_fifo *f)
{
	pthread_mutex_lock(&f->lock);
	f->closed = 1;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
}

void reader_free(struct reader *r)
{
	image_free(&r->img);
	for (int i = 0; i < INFER_MAX_IO; i++) {
		accel_buf_free(&r->pend_data[i]);
		accel_buf_free(&r->data[i]);
	}
}

/* The value --dim gives the symbolic dim `name`, or -1. */
static int64_t dim_override(const struct reader *r, const char *name)
{
	for (int i = 0; name[0] && i < r->ndims; i++)
		if (!strcmp(r->dim_names[i], name))
			return r->dim_values[i];
	return -1;
}

/* Whether array t may feed model input i: its dtype, rank and every fixed
 * dim (the batch dim is free when batching). */
static int check_item(const struct reader *r, int i, const struct accel_tensor *t, uint64_t off, char *err,
		      size_t len)
{
	const struct io_desc *d = &r->m->in[i];
	int ok = t->dtype == d->dtype && (d->ndim < 0 || t->ndim == d->ndim);
	for (int j = 0; ok && d->ndim >= 0 && j < d->ndim; j++) {
		int64_t want = d->dims[j] >= 0 ? d->dims[j] : dim_override(r, d->sym[j]);
		if (want >= 0 && t->dims[j] != want && !(j == 0 && r->batch > 1))
			ok = 0;
	}
	if (ok)
		return 0;
	char want[512], got[256];
	struct io_desc shown = *d;
	for (int j = 0; j < d->ndim; j++)
		if (d->dims[j] < 0 && dim_override(r, d->sym[j]) >= 0)
			shown.dims[j] = dim_override(r, d->sym[j]);
	io_desc_str(&shown, want, sizeof want);
	accel_tensor_shape_str(t, got, sizeof got);
	snprintf(err, len, "input '%s': expected %s, got %s %s at byte offset %llu", d->name, want,
		 accel_dtype_name(t->dtype), got, (unsigned long long)off);
	return ACCEL_EDATA;
}

/* The next box of --crops for the image in r->img (number r->images - 1)
 * into the pending slot of input i: 1, or 0 when it has no more. */
static int next_crop(struct reader *r, int i, char *err, size_t len)
{
	uint64_t k = r->images - 1;
	while (r->crop_at < r->ncrops && r->crops[r->crop_at].image != k)
		r->crop_at++;
	if (r->crop_at == r->ncrops) {
		image_free(&r->img);
		return 0;
	}
	const struct crop *c = &r->crops[r->crop_at++];
	int box[4] = { c->box[0], c->box[1], c->box[2], c->box[3] };
	/* Boxes are clipped to the image; one wholly outside is an error. */
	box[0] = box[0] < 0 ? 0 : box[0];
	box[1] = box[1] < 0 ? 0 : box[1];
	box[2] = box[2] > r->img.w ? r->img.w : box[2];
	box[3] = box[3] > r->img.h ? r->img.h : box[3];
	if (box[0] >= box[2] || box[1] >= box[3]) {
		snprintf(err, len, "--crops: box [%d, %d, %d, %d] lies outside image %llu (%dx%d)", c->box[0], c->box[1],
			 c->box[2], c->box[3], (unsigned long long)k, r->img.w, r->img.h);
		return ACCEL_EDATA;
	}
	r->pend_data[i].len = 0;
	int rc = image_tensor(&r->img, box, r->image, &r->pend_t[i], &r->pend_data[i], err, len);
	if (rc < 0)
		return rc;
	r->pend_meta = (struct item_meta){ .rows = 1, .input = k, .src_w = r->img.w, .src_h = r->img.h, .has_box = 1 };
	memcpy(r->pend_meta.box, box, sizeof box);
	return 1;
}

/* Read all of `in` as one image into the pending slot of input i (with
 * --crops, its first box): 1, 0 (--crops: no box for it) or an error. */
static int read_image(struct reader *r, int i, struct accel_input *in, char *err, size_t len)
{
	struct accel_buf file = { 0 };
	int rc = 0;
	uint64_t start = in->offset;
	for (;;) {
		if (file.len == INFER_MAX_IMAGE_FILE) {
			snprintf(err, len, "not a .npy array, and over %zu bytes for an image", INFER_MAX_IMAGE_FILE);
			rc = ACCEL_EDATA;
			break;
		}
		if (accel_buf_reserve(&file, file.len + (1 << 20)) < 0) {
			rc = ACCEL_ENOMEM;
			break;
		}
		ssize_t got = accel_input_read(in, file.data + file.len, 1 << 20);
		if (got < 0) {
			rc = (int)got;
			break;
		}
		file.len += (size_t)got;
		if (got < (1 << 20))
			break;
	}
	image_free(&r->img);
	if (!rc && (rc = image_decode(file.data, file.len, &r->img, err, len)) == ACCEL_EDATA) {
		/* Where the bytes that are neither began: after the arrays
		 * read before them. */
		size_t k = strlen(err);
		snprintf(err + k, len - k, " at byte offset %llu", (unsigned long long)start);
	}
	accel_buf_free(&file);
	if (rc < 0)
		return rc;
	r->images++;
	if (r->crops) {
		r->crop_at = 0;
		return next_crop(r, i, err, len);
	}
	r->pend_data[i].len = 0;
	rc = image_tensor(&r->img, NULL, r->image, &r->pend_t[i], &r->pend_data[i], err, len);
	r->pend_meta = (struct item_meta){ .rows = 1, .input = r->items, .src_w = r->img.w, .src_h = r->img.h };
	image_free(&r->img);
	return rc < 0 ? rc : 1;
}

/* Read one array of source s into the pending slot of input i: 1, 0 at
 * end of input, or an error with its line. */
static int read_array(struct reader *r, int i, struct accel_input *in, char *err, size_t len)
{
	struct source *s = &r->src[i];
	struct accel_buf *b = &r->pend_data[i];
	b->len = 0;
	if (!s->raw && i == r->main_input) {
		/* --crops: the image read last may have more boxes. */
		if (r->img.rgb)
			return next_crop(r, i, err, len);
		/* Not a .npy array: the whole input is one image. */
		const uint8_t *p;
		ssize_t k = accel_input_peek(in, 6, &p);
		if (k < 0)
			return (int)k;
		if (k > 0 && (k < 6 || memcmp(p, "\x93NUMPY", 6)))
			return read_image(r, i, in, err, len);
		if (k > 0 && r->crops) {
			snprintf(err, len, "--crops cuts images, and this input is a .npy array");
			return ACCEL_EDATA;
		}
	}
	if (!s->raw) {
		char why[400];
		int rc = accel_npy_read(in, INFER_MAX_ARRAY, &r->pend_t[i], b, why, sizeof why);
		if (rc < 0)
			snprintf(err, len, "%s%s%s", i == r->main_input ? "" : in->name, i == r->main_input ? "" : ": ", why);
		return rc;
	}
	uint64_t bytes = 0, off = in->offset;
	accel_tensor_size(&s->shape, 0, NULL, &bytes);
	if (accel_buf_reserve(b, (size_t)bytes + 1) < 0)
		return ACCEL_ENOMEM;
	ssize_t got = accel_input_read(in, b->data, (size_t)bytes);
	if (got < 0) {
		return (int)got;
	}
	if (got == 0 && (bytes || in->eof))
		return 0;
	if ((uint64_t)got < bytes) {
		char shape[256];
		accel_tensor_shape_str(&s->shape, shape, sizeof shape);
		snprintf(err, len, "truncated raw tensor at byte offset %llu: shape %s of %s needs %llu bytes, got %zd",
			 (unsigned long long)off, shape, accel_dtype_name(s->shape.dtype),
			 (unsigned long long)bytes, got);
		return ACCEL_EDATA;
	}
	b->len = (size_t)bytes;
	r->pend_t[i] = s->shape;
	return 1;
}

/* Read one item into the pending slots: 1, 0 when the stream has ended
 * (every input with it), or an error. */
static int read_item(struct reader *r, struct accel_input *main_in, char *err, size_t len)
{
	uint64_t off = main_in->offset;
	r->pend_meta = (struct item_meta){ .rows = 1, .input = r->items };
	int rc = read_array(r, r->main_input, main_in, err, len);
	if (rc <= 0) {
		if (rc < 0)
			return rc;
		/* The stream has ended: so must every --input file. */
		for (int i = 0; i < r->m->nin; i++) {
			const uint8_t *p;
			if (i != r->main_input && accel_input_peek(r->src[i].in, 1, &p) > 0) {
				snprintf(err, len, "%s: input '%s' has more arrays than input '%s' (%llu)", r->src[i].in->name,
					 r->m->in[i].name, r->m->in[r->main_input].name, (unsigned long long)r->items);
				return ACCEL_EDATA;
			}
		}
		return 0;
	}
	if ((rc = check_item(r, r->main_input, &r->pend_t[r->main_input], off, err, len)) < 0)
		return rc;
	for (int i = 0; i < r->m->nin; i++) {
		if (i == r->main_input)
			continue;
		uint64_t xoff = r->src[i].in->offset;
		rc = read_array(r, i, r->src[i].in, err, len);
		if (rc == 0) {
			snprintf(err, len, "%s: input '%s' ended after %llu arrays, before input '%s'", r->src[i].in->name,
				 r->m->in[i].name, (unsigned long long)r->items, r->m->in[r->main_input].name);
			return ACCEL_EDATA;
		}
		if (rc < 0)
			return rc;
		if ((rc = check_item(r, i, &r->pend_t[i], xoff, err, len)) < 0) {
			size_t k = strlen(err);
			snprintf(err + k, len - k, " of %s", r->src[i].in->name);
			return rc;
		}
	}
	r->items++;
	accel_progress_set(r->meter, (double)r->items);
	return 1;
}

/* Whether the pending item can join a batch whose first item had shapes
 * first[]: the same dims but the batch axis. */
static int same_item_shape(const struct reader *r, const struct accel_tensor *first)
{
	for (int i = 0; i < r->m->nin; i++) {
		const struct accel_tensor *a = &first[i], *b = &r->pend_t[i];
		if (a->ndim != b->ndim || a->ndim < 1)
			return 0;
		for (int j = 1; j < a->ndim; j++)
			if (a->dims[j] != b->dims[j])
				return 0;
	}
	return 1;
}

/* Whether the pending item's inputs all have the main input's length on
 * axis 0: joined along it, item by item, they stay aligned. One whose
 * inputs differ there (ONNX Runtime broadcasts a length of 1) runs alone:
 * joined, its rows would pair with another item's. */
static int item_rows_agree(const struct reader *r)
{
	const struct accel_tensor *mt = &r->pend_t[r->main_input];
	for (int i = 0; i < r->m->nin; i++)
		if (r->pend_t[i].ndim && mt->ndim && r->pend_t[i].dims[0] != mt->dims[0])
			return 0;
	return 1;
}

/* Bytes of the pending item, all its arrays. */
static uint64_t item_bytes(const struct reader *r)
{
	uint64_t n = 0;
	for (int i = 0; i < r->m->nin; i++)
		n += r->pend_data[i].len;
	return n;
}

int reader_next(void *user, struct accel_input *in, struct accel_unit *u, char *err, size_t len)
{
	struct reader *r = user;
	struct accel_tensor first[INFER_MAX_IO];
	int64_t rows_total[INFER_MAX_IO] = { 0 };
	struct item_meta metas[1024];
	int nitems = 0;
	double deadline = 0;
	uint64_t batch_bytes = 0;
	u->offset = in->offset;
	for (int i = 0; i < r->m->nin; i++)
		r->data[i].len = 0;
	while (nitems < r->batch) {
		if (!r->pending) {
			if (r->finished)
				break;
			if (nitems > 0 && r->max_wait >= 0) {
				/* Wait for the next item's first byte only until
				 * the deadline (0: take it only if it is there
				 * now): a pause flushes the batch. */
				const uint8_t *p;
				ssize_t n = accel_input_peek_until(in, 1, deadline, &p);
				if (n < 0)
					return (int)n;
				if (n == 0 && !in->eof)
					break;
			}
			int rc = read_item(r, in, err, len);
			if (rc < 0)
				return rc;
			if (rc == 0) {
				r->finished = 1;
				break;
			}
			r->pending = 1;
		}
		int agree = item_rows_agree(r);
		if (nitems == 0) {
			memcpy(first, r->pend_t, sizeof first);
			deadline = accel_now() + r->max_wait;
			batch_bytes = 0;
		} else if (!agree || !same_item_shape(r, first) || batch_bytes + item_bytes(r) > INFER_MAX_ARRAY) {
			/* Another shape, inputs of unequal length, or a batch
			 * over the limit of one array: the item starts the
			 * next batch. */
			break;
		}
		batch_bytes += item_bytes(r);
		for (int i = 0; i < r->m->nin; i++) {
			struct accel_buf *d = &r->data[i], *p = &r->pend_data[i];
			if (accel_buf_reserve(d, d->len + p->len + 1) < 0)
				return ACCEL_ENOMEM;
			if (p->len)
				memcpy(d->data + d->len, p->data, p->len);
			d->len += p->len;
			rows_total[i] += r->pend_t[i].ndim ? r->pend_t[i].dims[0] : 1;
		}
		const struct accel_tensor *mt = &r->pend_t[r->main_input];
		metas[nitems] = r->pend_meta;
		metas[nitems++].rows = mt->ndim ? (uint32_t)mt->dims[0] : 1;
		r->pending = 0;
		if (!agree)
			break;
	}
	if (nitems == 0)
		return 0;
	/* The unit: each input's batch as one .npy array. */
	size_t need = 0;
	for (int i = 0; i < r->m->nin; i++)
		need += ACCEL_NPY_HEADER_MAX + r->data[i].len;
	if (accel_buf_reserve(&u->in, need + 1) < 0)
		return ACCEL_ENOMEM;
	u->in.len = 0;
	for (int i = 0; i < r->m->nin; i++) {
		struct accel_tensor t = first[i];
		if (t.ndim)
			t.dims[0] = rows_total[i];
		int h = accel_npy_header_write(&t, u->in.data + u->in.len, ACCEL_NPY_HEADER_MAX);
		if (h < 0)
			return ACCEL_EINVAL;
		u->in.len += (size_t)h;
		if (r->data[i].len)
			memcpy(u->in.data + u->in.len, r->data[i].data, r->data[i].len);
		u->in.len += r->data[i].len;
	}
	u->last = 0;
	u->out_hint = 0;
	if (r->fifo && fifo_push(r->fifo, metas, (uint32_t)nitems) < 0)
		return ACCEL_ENOMEM;
	return 1;
}
