/*
 * onnxpb.h - the inputs and outputs a .onnx file declares (ModelProto.graph
 * input/output, onnx/onnx.proto), read from its protobuf encoding without
 * a protobuf library. OpenCV DNN cannot tell them; onnx.info needs them.
 */
#ifndef ACCEL_OPENCV_ONNXPB_H
#define ACCEL_OPENCV_ONNXPB_H
#include <stddef.h>
#include <stdint.h>

#define ONNXPB_MAX_IO 32
#define ONNXPB_MAX_DIMS 8

struct onnxpb_value {
	char name[128];
	int elem_type;                        /* TensorProto.DataType, 0: not a tensor */
	int ndim;                             /* -1: no shape declared */
	int64_t dims[ONNXPB_MAX_DIMS];        /* -1: symbolic or unknown */
	char sym[ONNXPB_MAX_DIMS][32];        /* dim_param, "" when none */
};

struct onnxpb_io {
	int nin, nout;
	struct onnxpb_value in[ONNXPB_MAX_IO], out[ONNXPB_MAX_IO];
};

/* Parse the model at buf[len] into *io: the graph's inputs that are not
 * initializers, and its outputs. Returns 0, or -1 with the reason in
 * err[errlen] (not protobuf, no graph, more than ONNXPB_MAX_IO inputs or
 * outputs, a name or rank over the limits). Reads nothing outside buf. */
int onnxpb_parse(const uint8_t *buf, size_t len, struct onnxpb_io *io, char *err, size_t errlen);

#endif
