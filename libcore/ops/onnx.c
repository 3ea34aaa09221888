/*
 * onnx.c - the protobuf wire format, and a .onnx file's graph inputs and
 * outputs read from it. Wire format: https://protobuf.dev/programming-guides/encoding/
 * (varint keys: field << 3 | wire type; types 0 varint, 1 fixed64, 2
 * length-delimited, 5 fixed32). Field numbers from onnx/onnx.proto:
 * ModelProto.graph = 7; GraphProto.initializer = 5, input = 11, output = 12;
 * TensorProto.name = 8; ValueInfoProto.name = 1, type = 2;
 * TypeProto.tensor_type = 1; TypeProto.Tensor.elem_type = 1, shape = 2;
 * TensorShapeProto.dim = 1; Dimension.dim_value = 1, dim_param = 2.
 */
#include <stdio.h>
#include <string.h>
#include <accel/ops/onnx.h>

int accel_pb_varint(struct accel_pb *b, uint64_t *v)
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

int accel_pb_next(struct accel_pb *b, uint32_t *field, int *wt, uint64_t *v, struct accel_pb *sub)
{
	if (b->p >= b->end)
		return 0;
	uint64_t key, n;
	if (accel_pb_varint(b, &key) < 0)
		return ACCEL_EDATA;
	*field = (uint32_t)(key >> 3);
	*wt = (int)(key & 7);
	*v = 0;
	switch (*wt) {
	case 0:
		return accel_pb_varint(b, v) < 0 ? ACCEL_EDATA : 1;
	case 1:
	case 5:
		n = *wt == 1 ? 8 : 4;
		if ((uint64_t)(b->end - b->p) < n)
			return ACCEL_EDATA;
		b->p += n;
		return 1;
	case 2:
		if (accel_pb_varint(b, &n) < 0 || n > (uint64_t)(b->end - b->p))
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

static int copy_str(char *dst, size_t cap, const struct accel_pb *s)
{
	size_t n = (size_t)(s->end - s->p);
	if (n >= cap)
		return -1;
	memcpy(dst, s->p, n);
	dst[n] = 0;
	return memchr(dst, 0, n) ? -1 : 0;
}

static int parse_dim(struct accel_pb b, struct accel_onnx_value *x)
{
	uint32_t f;
	int wt, r, i = x->ndim;
	uint64_t v;
	struct accel_pb s;
	if (i >= ACCEL_ONNX_MAX_DIMS)
		return -1;
	x->ndim++;
	x->dims[i] = -1;
	x->sym[i][0] = 0;
	while ((r = accel_pb_next(&b, &f, &wt, &v, &s)) > 0) {
		if (f == 1 && wt == 0)
			x->dims[i] = (int64_t)v >= 0 ? (int64_t)v : -1;
		else if (f == 2 && wt == 2 && copy_str(x->sym[i], sizeof x->sym[i], &s) < 0)
			return -1;
	}
	return r;
}

static int parse_tensor_type(struct accel_pb b, struct accel_onnx_value *x)
{
	uint32_t f;
	int wt, r;
	uint64_t v;
	struct accel_pb s, d;
	while ((r = accel_pb_next(&b, &f, &wt, &v, &s)) > 0) {
		if (f == 1 && wt == 0) {
			x->elem_type = v < 64 ? (int)v : 0;
		} else if (f == 2 && wt == 2) {
			x->ndim = 0;
			while ((r = accel_pb_next(&s, &f, &wt, &v, &d)) > 0)
				if (f == 1 && wt == 2 && parse_dim(d, x) < 0)
					return -1;
			if (r < 0)
				return -1;
		}
	}
	return r;
}

static int parse_value_info(struct accel_pb b, struct accel_onnx_value *x)
{
	uint32_t f;
	int wt, r;
	uint64_t v;
	struct accel_pb s, t;
	memset(x, 0, sizeof *x);
	x->ndim = -1;
	while ((r = accel_pb_next(&b, &f, &wt, &v, &s)) > 0) {
		if (f == 1 && wt == 2) {
			if (copy_str(x->name, sizeof x->name, &s) < 0)
				return -1;
		} else if (f == 2 && wt == 2) {
			/* TypeProto: only tensor_type (1) is a tensor. */
			while ((r = accel_pb_next(&s, &f, &wt, &v, &t)) > 0)
				if (f == 1 && wt == 2 && parse_tensor_type(t, x) < 0)
					return -1;
			if (r < 0)
				return -1;
		}
	}
	return r;
}

int accel_onnx_io_parse(const uint8_t *buf, size_t len, struct accel_onnx_io *io, char *err, size_t errlen)
{
	struct accel_pb m = { buf, buf + len }, g = { NULL, NULL }, s, t;
	uint32_t f;
	int wt, r;
	uint64_t v;
	memset(io, 0, sizeof *io);
	while ((r = accel_pb_next(&m, &f, &wt, &v, &s)) > 0)
		if (f == 7 && wt == 2)
			g = s;
	if (r < 0 || !g.p) {
		snprintf(err, errlen, "not an ONNX model (%s)", r < 0 ? "malformed protobuf" : "no graph");
		return ACCEL_EDATA;
	}
	/* The inputs and outputs, then the initializers (below). */
	struct accel_pb gi = g;
	struct accel_onnx_value x;
	while ((r = accel_pb_next(&gi, &f, &wt, &v, &s)) > 0) {
		if ((f == 11 || f == 12) && wt == 2) {
			if (parse_value_info(s, &x) < 0) {
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
	/* Drop the inputs an initializer (TensorProto, name = 8) sets: not
	 * inputs a run must give (IR version < 4 lists them as inputs). */
	gi = g;
	while ((r = accel_pb_next(&gi, &f, &wt, &v, &s)) > 0) {
		if (f != 5 || wt != 2)
			continue;
		while ((r = accel_pb_next(&s, &f, &wt, &v, &t)) > 0) {
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
		return ACCEL_EDATA;
	}
	return 0;
}
