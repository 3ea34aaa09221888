/*
 * accel/ops/tensor.h - tensors, the .npy format and ONNX run parameters (accel-infer).
 * Part of libaccel's public API; <accel.h> includes every such header.
 */
#ifndef ACCEL_OPS_TENSOR_H
#define ACCEL_OPS_TENSOR_H

#include <accel/io.h>
#include <accel/unit.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/*
 * Tensors as accel-infer and the inference backends exchange them, and the
 * NumPy .npy format they are read and written in (format versions 1.0, 2.0
 * and 3.0 of numpy.lib.format: the magic "\x93NUMPY", two version bytes, a
 * little-endian header length of 2 (1.0) or 4 bytes, and a Python dict
 * literal with 'descr', 'fortran_order' and 'shape', padded with spaces to
 * a multiple of 64 bytes and ended by a newline; then the data, C order).
 * Only little-endian (or byte-sized) numeric dtypes in C order are read.
 * These functions use only their arguments: safe from any thread.
 */
#define ACCEL_TENSOR_MAX_DIMS 16
/* Bytes of the longest .npy header accel_npy_header_write writes. */
#define ACCEL_NPY_HEADER_MAX 512
/* The longest .npy header accel_npy_header_parse reads, in characters
 * (numpy.load's max_header_size: it refuses longer ones). */
#define ACCEL_NPY_HEADER_LIMIT 10000

enum accel_dtype {
	ACCEL_DTYPE_NONE, ACCEL_DTYPE_FLOAT32, ACCEL_DTYPE_FLOAT64, ACCEL_DTYPE_FLOAT16,
	ACCEL_DTYPE_INT8, ACCEL_DTYPE_UINT8, ACCEL_DTYPE_INT16, ACCEL_DTYPE_UINT16,
	ACCEL_DTYPE_INT32, ACCEL_DTYPE_UINT32, ACCEL_DTYPE_INT64, ACCEL_DTYPE_UINT64,
	ACCEL_DTYPE_BOOL, ACCEL_DTYPE_COUNT
};

/* A tensor's element type and shape (dims[0..ndim), each >= 0). */
struct accel_tensor {
	enum accel_dtype dtype;
	int ndim;
	int64_t dims[ACCEL_TENSOR_MAX_DIMS];
};

/* NumPy's name of a dtype ("float32", "uint8", "bool"), "none" for NONE or
 * an unknown value; static. */
const char *accel_dtype_name(enum accel_dtype t);
/* Inverse of accel_dtype_name (also "f4", "f8", "f2", "i1" ... "u8",
 * "b1"): the dtype, or ACCEL_EINVAL. */
int accel_dtype_parse(const char *name);
/* Bytes of one element (1 to 8), 0 for NONE or an unknown value. */
size_t accel_dtype_size(enum accel_dtype t);
/* Elements of t (1 for a scalar, ndim 0) into *count and bytes of its data
 * into *bytes (either may be NULL). ACCEL_EDATA when a dim is negative,
 * the product overflows, or the bytes exceed `max` (0: no limit). */
int accel_tensor_size(const struct accel_tensor *t, uint64_t max, uint64_t *count, uint64_t *bytes);
/* The shape as NumPy prints it, "(1, 3, 224, 224)", "(5,)", "()", into
 * buf[len] (cut to len). Returns the length it needed. */
size_t accel_tensor_shape_str(const struct accel_tensor *t, char *buf, size_t len);

/* Parse the .npy header at p[0..n). Returns 0 with *t set and the header's
 * length (where the data starts) in *header_len; a positive count of bytes
 * needed when n is too short to decide (at least 10 until the length field
 * is seen, then the whole header); ACCEL_EDATA with one line in err[len]
 * ("not a .npy array (bad magic)", "unsupported dtype '>f4'", "fortran_order
 * arrays are not supported", "shape (100000, 100000, 100000) is 4e15 bytes,
 * over the limit of 1073741824") for a header that is malformed, over
 * ACCEL_NPY_HEADER_LIMIT, or whose data would exceed max_bytes (0: no
 * limit): the size is checked before anything is allocated. */
int accel_npy_header_parse(const uint8_t *p, size_t n, uint64_t max_bytes, struct accel_tensor *t,
			   size_t *header_len, char *err, size_t len);
/* Write a version 1.0 header for t into buf[len] (padded to a multiple of
 * 64 bytes). Returns its length, or ACCEL_EINVAL (len too small: it never
 * needs more than ACCEL_NPY_HEADER_MAX; an unknown dtype; ndim out of
 * 0..ACCEL_TENSOR_MAX_DIMS). */
int accel_npy_header_write(const struct accel_tensor *t, uint8_t *buf, size_t len);
/* Read one .npy array from `in`: its header into *t, its data appended to
 * data (data->len grows by its size). Returns 1; 0 at end of input (no
 * byte left); ACCEL_EDATA (malformed or over max_bytes as
 * accel_npy_header_parse says, or truncated: "truncated .npy array at byte
 * offset N: ..."), ACCEL_EIO (errno kept), ACCEL_ENOMEM. One reader thread. */
int accel_npy_read(struct accel_input *in, uint64_t max_bytes, struct accel_tensor *t, struct accel_buf *data,
		   char *err, size_t len);

/* Parameters of the operations "onnx.run" and "onnx.info" (struct
 * accel_op.ext), for the inference backends. onnx.run: a unit's input is
 * one .npy array per model input, in the model's order; its output one
 * .npy array per output asked for (all, in the model's order, when
 * noutputs is 0). onnx.info: the output is a JSON object {"inputs":
 * [{"name", "dtype", "shape"}], "outputs": [...]} where a dim is a number,
 * the name of a symbolic dim, or null. A backend's supports() loads the
 * model (an engine that cannot is left out with the reason) and keeps the
 * session for open(). */
struct accel_onnx_params {
	const char *model;               /* path of the .onnx file */
	int intra_threads;               /* the engine's threads per run, 0: its default */
	int ndims;                       /* symbolic dims set (--dim NAME=N) */
	const char *const *dim_names;
	const int64_t *dim_values;
	int noutputs;                    /* outputs to compute, 0: all */
	const char *const *outputs;
};

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
