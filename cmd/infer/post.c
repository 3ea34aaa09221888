/*
 * post.c - the post-processing writer, a thread of its own: it reads what
 * the stream engine wrote (per unit, one .npy array per output asked for,
 * each holding the unit's whole batch) from a pipe, cuts each array back
 * into the items of the batch along axis 0, and writes per item, in input
 * order, its arrays (.npy, through the accel_npy_pack), its top-k classes, its CTC-decoded text
 * or its DB text boxes (JSON lines).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "infer.h"

int labels_load(const char *path, char ***labels, int *n)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return ACCEL_EIO;
	char **v = NULL, *line = NULL;
	size_t cap = 0, k = 0;
	int count = 0, rc = 0;
	ssize_t got;
	while ((got = getline(&line, &cap, f)) >= 0) {
		while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r'))
			line[--got] = 0;
		if ((size_t)count == k) {
			k = k ? k * 2 : 256;
			char **nv = realloc(v, k * sizeof *v);
			if (!nv) {
				rc = ACCEL_ENOMEM;
				break;
			}
			v = nv;
		}
		if (!(v[count] = strdup(line))) {
			rc = ACCEL_ENOMEM;
			break;
		}
		count++;
	}
	if (!rc && ferror(f))
		rc = ACCEL_EIO;
	free(line);
	fclose(f);
	if (rc) {
		for (int i = 0; i < count; i++)
			free(v[i]);
		free(v);
		return rc;
	}
	*labels = v;
	*n = count;
	return 0;
}

/* Element i of an array of dtype t, as a double. */
static double elem(const uint8_t *p, enum accel_dtype t, uint64_t i)
{
	switch (t) {
	case ACCEL_DTYPE_FLOAT32: { float f; memcpy(&f, p + i * 4, 4); return f; }
	case ACCEL_DTYPE_FLOAT64: { double d; memcpy(&d, p + i * 8, 8); return d; }
	case ACCEL_DTYPE_FLOAT16: { _Float16 h; memcpy(&h, p + i * 2, 2); return (double)h; }
	case ACCEL_DTYPE_INT64: { int64_t v; memcpy(&v, p + i * 8, 8); return (double)v; }
	case ACCEL_DTYPE_UINT64: { uint64_t v; memcpy(&v, p + i * 8, 8); return (double)v; }
	case ACCEL_DTYPE_INT32: { int32_t v; memcpy(&v, p + i * 4, 4); return v; }
	case ACCEL_DTYPE_UINT32: { uint32_t v; memcpy(&v, p + i * 4, 4); return v; }
	case ACCEL_DTYPE_INT16: { int16_t v; memcpy(&v, p + i * 2, 2); return v; }
	case ACCEL_DTYPE_UINT16: { uint16_t v; memcpy(&v, p + i * 2, 2); return v; }
	case ACCEL_DTYPE_INT8: return (int8_t)p[i];
	case ACCEL_DTYPE_UINT8: return p[i];
	case ACCEL_DTYPE_BOOL: return p[i] != 0;
	default: return NAN;
	}
}

static int put_json(struct post *ps, cJSON *o)
{
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!text)
		return ACCEL_ENOMEM;
	size_t n = strlen(text);
	text[n] = '\n';
	int rc = accel_output_write(ps->out, text, n + 1);
	free(text);
	return rc;
}

/* The top-k of one item's scores (all its elements), best first. */
static int put_topk(struct post *ps, const struct item_meta *m, const struct accel_tensor *t, const uint8_t *p,
		    uint64_t n)
{
	int k = ps->topk < (int)n ? ps->topk : (int)n;
	uint64_t idx[256];
	double val[256];
	int have = 0;
	for (uint64_t i = 0; i < n; i++) {
		double v = elem(p, t->dtype, i);
		/* NaN ranks last, as numpy's argsort(-p) puts it. */
		if (isnan(v))
			v = -INFINITY;
		if (have == k && !(v > val[k - 1]))
			continue;
		int j = have < k ? have++ : k - 1;
		while (j > 0 && v > val[j - 1]) {
			val[j] = val[j - 1];
			idx[j] = idx[j - 1];
			j--;
		}
		val[j] = v;
		idx[j] = i;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "input", (double)m->input);
	if (m->has_box)
		cJSON_AddItemToObject(o, "box", cJSON_CreateIntArray(m->box, 4));
	cJSON *arr = cJSON_AddArrayToObject(o, "topk");
	for (int i = 0; i < have; i++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "index", (double)idx[i]);
		cJSON_AddNumberToObject(e, "score", val[i]);
		if (ps->labels && idx[i] < (uint64_t)ps->nlabels)
			cJSON_AddStringToObject(e, "label", ps->labels[idx[i]]);
		cJSON_AddItemToArray(arr, e);
	}
	return put_json(ps, o);
}

/*
 * Greedy CTC decoding of one item's scores (T steps of C classes, the last
 * axis): the best class of each step, repeats merged, blanks (class 0)
 * dropped. Class c >= 1 is line c of the labels (1-based); with exactly one
 * class past the last line, that class is a space (PaddleOCR's
 * use_space_char). The score is the mean best score of the kept steps.
 */
static int put_ctc(struct post *ps, const struct item_meta *m, const struct accel_tensor *t, const uint8_t *p,
		   uint64_t n)
{
	uint64_t c = t->ndim ? (uint64_t)t->dims[t->ndim - 1] : n;
	uint64_t steps = c ? n / c : 0;
	size_t cap = 256, len = 0;
	char *text = malloc(cap);
	if (!text)
		return ACCEL_ENOMEM;
	uint64_t prev = 0;
	double sum = 0;
	int kept = 0;
	for (uint64_t s = 0; s < steps; s++) {
		uint64_t best = 0;
		double bv = -INFINITY;
		for (uint64_t k = 0; k < c; k++) {
			double v = elem(p, t->dtype, s * c + k);
			if (v > bv) {
				bv = v;
				best = k;
			}
		}
		if (best != 0 && best != prev) {
			const char *l = best <= (uint64_t)ps->nlabels ? ps->labels[best - 1]
				      : best == (uint64_t)ps->nlabels + 1 && c == (uint64_t)ps->nlabels + 2 ? " " : "?";
			size_t ln = strlen(l);
			if (len + ln + 1 > cap) {
				cap = (len + ln + 1) * 2;
				char *nt = realloc(text, cap);
				if (!nt) {
					free(text);
					return ACCEL_ENOMEM;
				}
				text = nt;
			}
			memcpy(text + len, l, ln);
			len += ln;
			sum += bv;
			kept++;
		}
		prev = best;
	}
	text[len] = 0;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "input", (double)m->input);
	if (m->has_box)
		cJSON_AddItemToObject(o, "box", cJSON_CreateIntArray(m->box, 4));
	cJSON_AddStringToObject(o, "text", text);
	cJSON_AddNumberToObject(o, "score", kept ? sum / kept : 0);
	free(text);
	return put_json(ps, o);
}

/*
 * The text boxes of one item's probability map (the last two axes, H x W;
 * the others of size 1), scaled to its image, one JSON line each.
 */
static int put_db(struct post *ps, const struct item_meta *m, const struct accel_tensor *t, const uint8_t *p,
		  uint64_t n)
{
	int64_t h = t->ndim >= 2 ? t->dims[t->ndim - 2] : 0, w = t->ndim >= 2 ? t->dims[t->ndim - 1] : 0;
	if (t->dtype != ACCEL_DTYPE_FLOAT32 || !w || !h || (uint64_t)(w * h) != n || w > INT32_MAX || h > INT32_MAX) {
		char shape[96];
		accel_tensor_shape_str(t, shape, sizeof shape);
		snprintf(ps->err, sizeof ps->err,
			 "--decode db reads a float32 probability map of one channel per input, not %s %s",
			 accel_dtype_name(t->dtype), shape);
		return ACCEL_EINVAL;
	}
	struct db_box *boxes;
	int nb = db_boxes((const float *)p, (int)w, (int)h, m->src_w, m->src_h, &ps->db, &boxes);
	if (nb < 0)
		return nb;
	int rc = 0;
	for (int i = 0; !rc && i < nb; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "input", (double)m->input);
		cJSON_AddItemToObject(o, "box", cJSON_CreateIntArray(boxes[i].box, 4));
		cJSON_AddNumberToObject(o, "score", boxes[i].score);
		rc = put_json(ps, o);
	}
	free(boxes);
	return rc;
}

/* Write item m (rows [row0, row0 + m->rows) of the batch) of each array. */
static int put_item(struct post *ps, struct accel_tensor *t, struct accel_buf *d, int64_t row0,
		    const struct item_meta *m, int whole)
{
	int64_t nrows = m->rows;
	for (int j = 0; j < ps->nout; j++) {
		if (ps->mode != POST_NPY && j != ps->score_output)
			continue;
		struct accel_tensor it = t[j];
		uint64_t row_bytes = 0, count = 0;
		if (!whole)
			it.dims[0] = 1;
		accel_tensor_size(&it, 0, &count, &row_bytes);
		static const uint8_t none[1];
		const uint8_t *p = d[j].data ? d[j].data + (whole ? 0 : (size_t)row0 * row_bytes) : none;
		if (!whole) {
			it.dims[0] = nrows;
			row_bytes *= (uint64_t)nrows;
			count *= (uint64_t)nrows;
		}
		int rc;
		if (ps->mode == POST_TOPK) {
			rc = put_topk(ps, m, &it, p, count);
		} else if (ps->mode == POST_CTC) {
			rc = put_ctc(ps, m, &it, p, count);
		} else if (ps->mode == POST_DB) {
			rc = put_db(ps, m, &it, p, count);
		} else {
			rc = accel_npy_pack_begin(ps->pack, j, &it, ps->err, sizeof ps->err);
			/* Arrays that cannot join in one .npy are not bad input: exit 1. */
			if (rc == ACCEL_EDATA)
				rc = ACCEL_EINVAL;
			if (!rc)
				rc = accel_npy_pack_write(ps->pack, p, (size_t)row_bytes);
		}
		if (rc < 0)
			return rc;
	}
	ps->item++;
	return 0;
}

void *post_main(void *arg)
{
	struct post *ps = arg;
	struct accel_input in;
	char path[64];
	snprintf(path, sizeof path, "/dev/fd/%d", ps->fd);
	if (accel_input_open(&in, path) < 0) {
		ps->rc = ACCEL_EIO;
		snprintf(ps->err, sizeof ps->err, "cannot read the engine's output: %s", strerror(errno));
		close(ps->fd);
		return NULL;
	}
	close(ps->fd);
	struct accel_tensor t[INFER_MAX_IO];
	struct accel_buf d[INFER_MAX_IO];
	memset(d, 0, sizeof d);
	struct item_meta items[1024];
	int rc = 0;
	for (;;) {
		int n = fifo_pop(ps->fifo, items, 1024);
		if (n < 0)
			break;
		for (int j = 0; !rc && j < ps->nout; j++) {
			d[j].len = 0;
			rc = accel_npy_read(&in, 0, &t[j], &d[j], ps->err, sizeof ps->err);
			if (rc == 0) {
				snprintf(ps->err, sizeof ps->err, "the engine's output ended early");
				rc = ACCEL_EIO;
			}
			rc = rc < 0 ? rc : 0;
		}
		int64_t row = 0, total = 0;
		for (int i = 0; i < n; i++)
			total += items[i].rows;
		for (int j = 0; !rc && n > 1 && j < ps->nout; j++)
			if (t[j].ndim < 1 || t[j].dims[0] != total) {
				snprintf(ps->err, sizeof ps->err,
					 "output %d has no batch axis of %lld rows: cannot split a batch (use --batch 1)", j,
					 (long long)total);
				rc = ACCEL_EDATA;
			}
		for (int i = 0; !rc && i < n; i++) {
			rc = put_item(ps, t, d, row, &items[i], n == 1);
			row += items[i].rows;
		}
		if (rc)
			break;
	}
	/* Drain the pipe, so the stream's writer never blocks on it. */
	if (rc) {
		const uint8_t *p;
		ssize_t k;
		while ((k = accel_input_peek(&in, 65536, &p)) > 0)
			accel_input_consume(&in, (size_t)k);
	}
	for (int j = 0; j < INFER_MAX_IO; j++)
		accel_buf_free(&d[j]);
	accel_input_close(&in);
	ps->rc = rc;
	return NULL;
}
