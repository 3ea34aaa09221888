/*
 * onnxpb.c - a .onnx file's graph inputs and outputs from its protobuf
 * encoding. Wire format: https://protobuf.dev/programming-guides/encoding/
 * (varint keys: field << 3 | wire type; types 0 varint, 1 fixed64, 2
 * length-delimited, 5 fixed32). Field numbers from onnx/onnx.proto:
 * ModelProto.graph = 7; GraphProto.initializer = 5, input = 11, output = 12;
 * TensorProto.name = 8; ValueInfoProto.name = 1, type = 2;
 * TypeProto.tensor_type = 1; TypeProto.Tensor.elem_type = 1, shape = 2;
 * TensorShapeProto.dim = 1; Dimension.dim_value = 1, dim_param = 2.
 */
#include <stdio.h>
#include <string.h>
#include "onnxpb.h"

struct pb {
	const uint8_t *p, *end;
};

/* One field: its number, wire type, and value (varint) or bytes (type 2).
 * 1: a field read, 0: at the end, -1: malformed. */
static int pb_next(struct pb *b, uint32_t *field, int *wt, uint64_t *v, struct pb *sub)
{
	if (b->p >= b->end)
		return 0;
	uint64_t key = 0;
	for (int shift = 0;; shift += 7) {
		if (b->p >= b->end || shift > 63)
			return -1;
		uint8_t c = *b->p++;
		key |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			break;
	}
	*field = (uint32_t)(key >> 3);
	*wt = (int)(key & 7);
	*v = 0;
	switch (*wt) {
	case 0:
		for (int shift = 0;; shift += 7) {
			if (b->p >= b->end || shift > 63)
				return -1;
			uint8_t c = *b->p++;
			*v |= (uint64_t)(c & 0x7f) << shift;
			if (!(c & 0x80))
				break;
		}
		return 1;
	case 1:
	case 5: {
		size_t n = *wt == 1 ? 8 : 4;
		if ((size_t)(b->end - b->p) < n)
			return -1;
		b->p += n;
		return 1;
	}
	case 2: {
		uint64_t n = 0;
		for (int shift = 0;; shift += 7) {
			if (b->p >= b->end || shift > 63)
				return -1;
			uint8_t c = *b->p++;
			n |= (uint64_t)(c & 0x7f) << shift;
			if (!(c & 0x80))
				break;
		}
		if (n > (uint64_t)(b->end - b->p))
			return -1;
		sub->p = b->p;
		sub->end = b->p + n;
		b->p += n;
		*v = n;
		return 1;
	}
	default:
		return -1;
	}
}

static int copy_str(char *dst, size_t cap, const struct pb *s)
{
	size_t n = (size_t)(s->end - s->p);
	if (n >= cap)
		return -1;
	memcpy(dst, s->p, n);
	dst[n] = 0;
	return memchr(dst, 0, n) ? -1 : 0;
}

static int parse_dim(struct pb b, struct onnxpb_value *x)
{
	uint32_t f;
	int wt, r, i = x->ndim;
	uint64_t v;
	struct pb s;
	if (i >= ONNXPB_MAX_DIMS)
		return -1;
	x->ndim++;
	x->dims[i] = -1;
	x->sym[i][0] = 0;
	while ((r = pb_next(&b, &f, &wt, &v, &s)) > 0) {
		if (f == 1 && wt == 0)
			x->dims[i] = (int64_t)v >= 0 ? (int64_t)v : -1;
		else if (f == 2 && wt == 2 && copy_str(x->sym[i], sizeof x->sym[i], &s) < 0)
			return -1;
	}
	return r;
}

static int parse_tensor_type(struct pb b, struct onnxpb_value *x)
{
	uint32_t f;
	int wt, r;
	uint64_t v;
	struct pb s, d;
	while ((r = pb_next(&b, &f, &wt, &v, &s)) > 0) {
		if (f == 1 && wt == 0) {
			x->elem_type = v < 64 ? (int)v : 0;
		} else if (f == 2 && wt == 2) {
			x->ndim = 0;
			while ((r = pb_next(&s, &f, &wt, &v, &d)) > 0)
				if (f == 1 && wt == 2 && parse_dim(d, x) < 0)
					return -1;
			if (r < 0)
				return -1;
		}
	}
	return r;
}

static int parse_value_info(struct pb b, struct onnxpb_value *x)
{
	uint32_t f;
	int wt, r;
	uint64_t v;
	struct pb s, t;
	memset(x, 0, sizeof *x);
	x->ndim = -1;
	while ((r = pb_next(&b, &f, &wt, &v, &s)) > 0) {
		if (f == 1 && wt == 2) {
			if (copy_str(x->name, sizeof x->name, &s) < 0)
				return -1;
		} else if (f == 2 && wt == 2) {
			/* TypeProto: only tensor_type (1) is a tensor. */
			while ((r = pb_next(&s, &f, &wt, &v, &t)) > 0)
				if (f == 1 && wt == 2 && parse_tensor_type(t, x) < 0)
					return -1;
			if (r < 0)
				return -1;
		}
	}
	return r;
}

int onnxpb_parse(const uint8_t *buf, size_t len, struct onnxpb_io *io, char *err, size_t errlen)
{
	struct pb m = { buf, buf + len }, g = { NULL, NULL }, s, t;
	uint32_t f;
	int wt, r;
	uint64_t v;
	memset(io, 0, sizeof *io);
	while ((r = pb_next(&m, &f, &wt, &v, &s)) > 0)
		if (f == 7 && wt == 2)
			g = s;
	if (r < 0 || !g.p) {
		snprintf(err, errlen, "not an ONNX model (%s)", r < 0 ? "malformed protobuf" : "no graph");
		return -1;
	}
	/* The inputs and outputs, then the initializers (below). */
	struct pb gi = g;
	struct onnxpb_value x;
	while ((r = pb_next(&gi, &f, &wt, &v, &s)) > 0) {
		if ((f == 11 || f == 12) && wt == 2) {
			if (parse_value_info(s, &x) < 0) {
				snprintf(err, errlen, "a malformed graph %s", f == 11 ? "input" : "output");
				return -1;
			}
			int *n = f == 11 ? &io->nin : &io->nout;
			if (*n >= ONNXPB_MAX_IO) {
				snprintf(err, errlen, "more than %d graph %ss", ONNXPB_MAX_IO, f == 11 ? "input" : "output");
				return -1;
			}
			(f == 11 ? io->in : io->out)[(*n)++] = x;
		}
	}
	if (r < 0) {
		snprintf(err, errlen, "not an ONNX model (malformed graph)");
		return -1;
	}
	/* Drop the inputs an initializer (TensorProto, name = 8) sets: not
	 * inputs a run must give (IR version < 4 lists them as inputs). */
	gi = g;
	while ((r = pb_next(&gi, &f, &wt, &v, &s)) > 0) {
		if (f != 5 || wt != 2)
			continue;
		while ((r = pb_next(&s, &f, &wt, &v, &t)) > 0) {
			if (f != 8 || wt != 2)
				continue;
			size_t n = (size_t)(t.end - t.p);
			for (int i = 0; i < io->nin; i++)
				if (strlen(io->in[i].name) == n && !memcmp(io->in[i].name, t.p, n)) {
					memmove(&io->in[i], &io->in[i + 1], sizeof io->in[0] * (size_t)(io->nin - i - 1));
					io->nin--;
					break;
				}
		}
		if (r < 0)
			break;
	}
	if (r < 0) {
		snprintf(err, errlen, "not an ONNX model (malformed initializer)");
		return -1;
	}
	return 0;
}
