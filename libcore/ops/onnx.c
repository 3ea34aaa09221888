/*
 * onnx.c - the protobuf wire format, the messages of onnx/onnx.proto that
 * libaccel's readers share (onnx_read.h), and a .onnx file's graph inputs
 * and outputs read from them. Wire format:
 * https://protobuf.dev/programming-guides/encoding/ (varint keys: field << 3
 * | wire type; types 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32).
 * Field numbers from onnx/onnx.proto: ModelProto graph 7, opset_import 8;
 * OperatorSetIdProto domain 1, version 2; GraphProto initializer 5, input
 * 11, output 12; TensorProto dims 1, data_type 2, int32_data 5, int64_data
 * 7, name 8, raw_data 9; ValueInfoProto name 1, type 2; TypeProto
 * tensor_type 1; TypeProto.Tensor elem_type 1, shape 2; TensorShapeProto dim
 * 1; Dimension dim_value 1, dim_param 2.
 */
#include <stdio.h>
#include <string.h>
#include "onnx_read.h"

int accel_onnx_pb_varint(struct accel_onnx_pb *b, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (b->p >= b->end)
			return ACCEL_EDATA;
		uint8_t c = *b->p++;
		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 0;
	}
	return ACCEL_EDATA;
}

int accel_onnx_pb_next(struct accel_onnx_pb *b, uint32_t *field, int *wt, uint64_t *v, struct accel_onnx_pb *sub)
{
	if (b->p >= b->end)
		return 0;
	uint64_t key, n;
	if (accel_onnx_pb_varint(b, &key) < 0)
		return ACCEL_EDATA;
	*field = (uint32_t)(key >> 3);
	*wt = (int)(key & 7);
	*v = 0;
	switch (*wt) {
	case 0:
		return accel_onnx_pb_varint(b, v) < 0 ? ACCEL_EDATA : 1;
	case 1:
	case 5:
		n = *wt == 1 ? 8 : 4;
		if ((uint64_t)(b->end - b->p) < n)
			return ACCEL_EDATA;
		b->p += n;
		return 1;
	case 2:
		if (accel_onnx_pb_varint(b, &n) < 0 || n > (uint64_t)(b->end - b->p))
			return ACCEL_EDATA;
		sub->p = b->p;
		sub->end = b->p + n;
		b->p += n;
		*v = n;
		return 1;
	default:
		return ACCEL_EDATA;
	}
}

static int str_is(const struct accel_onnx_pb *s, const char *w)
{
	size_t n = strlen(w);
	return (size_t)(s->end - s->p) == n && !memcmp(s->p, w, n);
}

int onnx_model_read(const uint8_t *buf, size_t len, struct accel_onnx_pb *graph, int *opset)
{
	struct accel_onnx_pb m = { buf, buf + len }, s, o;
	uint32_t f;
	int wt, r;
	uint64_t v;
	graph->p = graph->end = NULL;
	*opset = -1;
	while ((r = accel_onnx_pb_next(&m, &f, &wt, &v, &s)) > 0) {
		if (f == 7 && wt == 2) {
			*graph = s;
		} else if (f == 8 && wt == 2) {
			int dflt = 1;
			int64_t ver = -1;
			while (accel_onnx_pb_next(&s, &f, &wt, &v, &o) > 0) {
				if (f == 1 && wt == 2)
					dflt = o.end == o.p || str_is(&o, "ai.onnx");
				if (f == 2 && wt == 0)
					ver = (int64_t)v;
			}
			if (dflt)
				*opset = (int)ver;
		}
	}
	return r;
}

/* TypeProto.Tensor: its elem_type and shape into vi. */
static int tensor_type_read(struct accel_onnx_pb b, struct onnx_value_info *vi)
{
	uint32_t f;
	int wt, r;
	uint64_t v;
	struct accel_onnx_pb s, d;
	while ((r = accel_onnx_pb_next(&b, &f, &wt, &v, &s)) > 0) {
		if (f == 1 && wt == 0) {
			vi->elem_type = v;
		} else if (f == 2 && wt == 2) {
			vi->shape = s;
			vi->rank = 0;
			while ((r = accel_onnx_pb_next(&s, &f, &wt, &v, &d)) > 0)
				vi->rank += f == 1 && wt == 2;
			if (r < 0)
				return r;
		}
	}
	return r;
}

int onnx_value_info_read(struct accel_onnx_pb b, struct onnx_value_info *vi)
{
	uint32_t f;
	int wt, r;
	uint64_t v;
	struct accel_onnx_pb s, t;
	memset(vi, 0, sizeof *vi);
	vi->rank = -1;
	while ((r = accel_onnx_pb_next(&b, &f, &wt, &v, &s)) > 0) {
		if (f == 1 && wt == 2) {
			vi->name = s;
		} else if (f == 2 && wt == 2) {
			/* TypeProto: only tensor_type (1) is a tensor. */
			while ((r = accel_onnx_pb_next(&s, &f, &wt, &v, &t)) > 0)
				if (f == 1 && wt == 2 && tensor_type_read(t, vi) < 0)
					return ACCEL_EDATA;
			if (r < 0)
				return r;
		}
	}
	return r;
}

/* The next of t's dims, d. */
static void tensor_dim(struct onnx_tensor *t, uint64_t d)
{
	if (t->rank++ == 0)
		t->dim0 = (int64_t)d;
	t->count = !t->count || !d ? 0 : t->count > UINT64_MAX / d ? UINT64_MAX : t->count * d;
}

int onnx_tensor_read(struct accel_onnx_pb b, struct onnx_tensor *t)
{
	uint32_t f;
	int wt, r;
	uint64_t v;
	struct accel_onnx_pb s;
	memset(t, 0, sizeof *t);
	t->dim0 = -1;
	t->count = 1;
	while ((r = accel_onnx_pb_next(&b, &f, &wt, &v, &s)) > 0) {
		if (f == 1 && wt == 0) {
			tensor_dim(t, v);
		} else if (f == 1 && wt == 2) {
			while (s.p < s.end) {
				if (accel_onnx_pb_varint(&s, &v) < 0)
					return ACCEL_EDATA;
				tensor_dim(t, v);
			}
		} else if (f == 2 && wt == 0) {
			t->data_type = (int)v;
		} else if (f == 8 && wt == 2) {
			t->name = s;
		} else if (f == 9 && wt == 2) {
			t->raw = s;
		} else if ((f == 5 || f == 7) && wt == 2) {
			/* Only packed int32_data or int64_data is read (what
			 * writers write). */
			t->ints = s;
			t->ints_field = (int)f;
		}
	}
	return r;
}

static int copy_str(char *dst, size_t cap, const struct accel_onnx_pb *s)
{
	size_t n = (size_t)(s->end - s->p);
	if (n >= cap)
		return -1;
	memcpy(dst, s->p, n);
	dst[n] = 0;
	return memchr(dst, 0, n) ? -1 : 0;
}

/* A Dimension: the next of x's dims. */
static int dim_read(struct accel_onnx_pb b, struct accel_onnx_value *x)
{
	uint32_t f;
	int wt, r, i = x->ndim;
	uint64_t v;
	struct accel_onnx_pb s;
	if (i >= ACCEL_ONNX_MAX_DIMS)
		return -1;
	x->ndim++;
	x->dims[i] = -1;
	x->sym[i][0] = 0;
	while ((r = accel_onnx_pb_next(&b, &f, &wt, &v, &s)) > 0) {
		if (f == 1 && wt == 0)
			x->dims[i] = (int64_t)v >= 0 ? (int64_t)v : -1;
		else if (f == 2 && wt == 2 && copy_str(x->sym[i], sizeof x->sym[i], &s) < 0)
			return -1;
	}
	return r;
}

static int value_read(struct accel_onnx_pb b, struct accel_onnx_value *x)
{
	struct onnx_value_info vi;
	uint32_t f;
	int wt, r;
	uint64_t v;
	struct accel_onnx_pb d;
	memset(x, 0, sizeof *x);
	x->ndim = -1;
	if (onnx_value_info_read(b, &vi) < 0 || (vi.name.p && copy_str(x->name, sizeof x->name, &vi.name) < 0))
		return -1;
	x->elem_type = vi.elem_type < 64 ? (int)vi.elem_type : 0;
	if (!vi.shape.p)
		return 0;
	x->ndim = 0;
	while ((r = accel_onnx_pb_next(&vi.shape, &f, &wt, &v, &d)) > 0)
		if (f == 1 && wt == 2 && dim_read(d, x) < 0)
			return -1;
	return r;
}

int accel_onnx_io_parse(const uint8_t *buf, size_t len, struct accel_onnx_io *io, char *err, size_t errlen)
{
	struct accel_onnx_pb g, s;
	uint32_t f;
	int wt, r, opset;
	uint64_t v;
	memset(io, 0, sizeof *io);
	r = onnx_model_read(buf, len, &g, &opset);
	if (r < 0 || !g.p) {
		snprintf(err, errlen, "not an ONNX model (%s)", r < 0 ? "malformed protobuf" : "no graph");
		return ACCEL_EDATA;
	}
	/* The inputs and outputs, then the initializers (below). */
	struct accel_onnx_pb gi = g;
	struct accel_onnx_value x;
	while ((r = accel_onnx_pb_next(&gi, &f, &wt, &v, &s)) > 0) {
		if ((f == 11 || f == 12) && wt == 2) {
			if (value_read(s, &x) < 0) {
				snprintf(err, errlen, "a malformed graph %s", f == 11 ? "input" : "output");
				return ACCEL_EDATA;
			}
			int *n = f == 11 ? &io->nin : &io->nout;
			if (*n >= ACCEL_ONNX_MAX_IO) {
				snprintf(err, errlen, "more than %d graph %ss", ACCEL_ONNX_MAX_IO, f == 11 ? "input" : "output");
				return ACCEL_EDATA;
			}
			(f == 11 ? io->in : io->out)[(*n)++] = x;
		}
	}
	if (r < 0) {
		snprintf(err, errlen, "not an ONNX model (malformed graph)");
		return ACCEL_EDATA;
	}
	/* Drop the inputs an initializer sets: not inputs a run must give
	 * (IR version < 4 lists them as inputs). */
	gi = g;
	while ((r = accel_onnx_pb_next(&gi, &f, &wt, &v, &s)) > 0) {
		struct onnx_tensor t;
		if (f != 5 || wt != 2)
			continue;
		if ((r = onnx_tensor_read(s, &t)) < 0)
			break;
		for (int i = 0; t.name.p && i < io->nin; i++)
			if (str_is(&t.name, io->in[i].name)) {
				memmove(&io->in[i], &io->in[i + 1], sizeof io->in[0] * (size_t)(io->nin - i - 1));
				io->nin--;
				break;
			}
	}
	if (r < 0) {
		snprintf(err, errlen, "not an ONNX model (malformed initializer)");
		return ACCEL_EDATA;
	}
	return 0;
}
