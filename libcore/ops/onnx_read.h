/*
 * onnx_read.h - the messages of onnx/onnx.proto that libaccel's two readers
 * of a model share (libcore/ops/onnx.c: inputs and outputs; onnx_graph.c:
 * the batch check), each read in one place, onnx.c:
 * ModelProto (graph 7, opset_import 8: OperatorSetIdProto domain 1,
 * version 2); ValueInfoProto (name 1, type 2; TypeProto tensor_type 1;
 * Tensor elem_type 1, shape 2; TensorShapeProto dim 1); TensorProto (dims 1,
 * data_type 2, int32_data 5, int64_data 7, name 8, raw_data 9).
 * A field given twice counts as its last (what a singular field is in
 * protobuf). Internal to libaccel, not installed.
 */
#ifndef ACCEL_ONNX_READ_H
#define ACCEL_ONNX_READ_H

#include <accel/ops/onnx.h>

/* The model in buf[len]: its main graph (p NULL when it has none) and the
 * version of the default domain's opset ("" or "ai.onnx"; -1 when not
 * imported). An opset_import that does not parse is passed over. Returns 0,
 * or ACCEL_EDATA when buf is not protobuf. */
int onnx_model_read(const uint8_t *buf, size_t len, struct accel_onnx_pb *graph, int *opset);

/* A ValueInfoProto as far as a tensor's type goes. */
struct onnx_value_info {
	struct accel_onnx_pb name;   /* p NULL: none */
	uint64_t elem_type;          /* TensorProto.DataType, 0: none */
	struct accel_onnx_pb shape;  /* TensorShapeProto, p NULL: none */
	int rank;                    /* its dims, -1: no shape */
};

/* Read b into vi: 0, or ACCEL_EDATA when b or a message in it down to the
 * shape does not parse (a Dimension's own bytes are the caller's). */
int onnx_value_info_read(struct accel_onnx_pb b, struct onnx_value_info *vi);

/* A TensorProto's name, type, shape and integer data. */
struct onnx_tensor {
	struct accel_onnx_pb name;   /* p NULL: none */
	int data_type;               /* TensorProto.DataType (6 int32, 7 int64) */
	int rank;
	int64_t dim0;                /* dims[0], -1 when rank 0 */
	uint64_t count;              /* elements: the product of dims, UINT64_MAX past it */
	struct accel_onnx_pb raw;    /* raw_data, p NULL: none */
	struct accel_onnx_pb ints;   /* int32_data or int64_data packed, p NULL: none */
	int ints_field;              /* 5 or 7 */
};

/* Read b into t: 0, or ACCEL_EDATA when b or its packed dims do not
 * parse. */
int onnx_tensor_read(struct accel_onnx_pb b, struct onnx_tensor *t);

#endif
