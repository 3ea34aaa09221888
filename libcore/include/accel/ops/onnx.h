/*
 * accel/ops/onnx.h - ONNX model files read without a protobuf library: the
 * protobuf wire format, a model's declared inputs and outputs, and whether
 * its graph keeps the items of a batch apart (accel-infer --batch).
 * Part of libaccel's public API; <accel.h> includes every such header.
 *
 * Wire format: https://protobuf.dev/programming-guides/encoding/ (a key is
 * a varint, field << 3 | wire type; types 0 varint, 1 fixed64, 2
 * length-delimited, 5 fixed32). Field numbers are onnx/onnx.proto's, named
 * beside each use in libcore/ops/onnx.c and onnx_graph.c. Every length is
 * checked against the bytes left in its enclosing message: a size that
 * lies is a malformed model, never a read past the buffer.
 */
#ifndef ACCEL_OPS_ONNX_H
#define ACCEL_OPS_ONNX_H

#include <accel/errors.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* A protobuf message: the bytes p[0 .. end - p). */
struct accel_onnx_pb {
	const uint8_t *p, *end;
};

/* Read a varint (at most 10 bytes) at the start of b into *v and advance
 * past it: 0, or ACCEL_EDATA when b ends inside it or it is longer. For
 * the elements of a packed repeated field. */
int accel_onnx_pb_varint(struct accel_onnx_pb *b, uint64_t *v);
/* Read the next field of b: its number, wire type, and its value (type 0)
 * or its bytes in *sub with their length in *v (type 2); fixed32 and
 * fixed64 fields are skipped (*v 0). Returns 1 for a field, 0 at the end
 * of b, or ACCEL_EDATA for a malformed one (a varint over 10 bytes, a
 * length past the end of b, an unknown wire type); b advances past the
 * field. Reads nothing outside b. */
int accel_onnx_pb_next(struct accel_onnx_pb *b, uint32_t *field, int *wt, uint64_t *v, struct accel_onnx_pb *sub);

#define ACCEL_ONNX_MAX_IO 32
#define ACCEL_ONNX_MAX_DIMS 8

/* A graph input or output as the file declares it (ValueInfoProto). */
struct accel_onnx_value {
	char name[128];
	int elem_type;                           /* TensorProto.DataType, 0: not a tensor */
	int ndim;                                /* -1: no shape declared */
	int64_t dims[ACCEL_ONNX_MAX_DIMS];       /* -1: symbolic or unknown */
	char sym[ACCEL_ONNX_MAX_DIMS][32];       /* dim_param, "" when none */
};

struct accel_onnx_io {
	int nin, nout;
	struct accel_onnx_value in[ACCEL_ONNX_MAX_IO], out[ACCEL_ONNX_MAX_IO];
};

/* The inputs of the model in buf[len] that are not initializers (IR
 * versions before 4 list those among the inputs), and its outputs.
 * Returns 0, or ACCEL_EDATA with the reason in err[errlen] (not protobuf,
 * no graph, more than ACCEL_ONNX_MAX_IO inputs or outputs, a name or rank
 * over the limits). Reads nothing outside buf. */
int accel_onnx_io_parse(const uint8_t *buf, size_t len, struct accel_onnx_io *io, char *err, size_t errlen);

/* Whether the items of a batch stay apart through the model in the .onnx
 * file at path: every node of its main graph an operator known to work
 * item by item along axis 0 with the attributes and constant inputs it
 * has (ranks from the declared inputs, outputs and value_info, carried
 * through the nodes). Returns 0 yes; 1 no, with the reason in why ("its
 * node 'c' (CumSum) runs along axis 0"); ACCEL_EIO, ACCEL_EDATA (not a
 * graph it can read) or ACCEL_ENOMEM, with a line in why. */
int accel_onnx_batch_check(const char *path, char *why, size_t len);
/* The same for the model in buf[size], named `name` in messages. Reads
 * nothing outside buf. */
int accel_onnx_batch_check_mem(const uint8_t *buf, size_t size, const char *name, char *why, size_t len);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
