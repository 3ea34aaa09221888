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

/*
 * A run's arrays written in the form the output's name asks for (struct
 * accel_npy_pack): a stream of .npy arrays back to back (any other name,
 * stdout, a pipe: np.load reads one array per call), one .npy array
 * (FILE.npy: the arrays joined along a leading axis, the header written
 * first with room for any count and rewritten at the end), or a .npz
 * (FILE.npz: numpy's ZIP of NAME.npy members, stored, as np.savez writes
 * it, built at the end from one temporary file per group made beside
 * FILE and unlinked at once). Arrays come in groups (accel-infer: one per
 * model output). In one .npy array or one .npz member per group, arrays
 * join by ACCEL_NPY_STACK (a new leading axis: N arrays of shape S give
 * (N,) + S) or ACCEL_NPY_CONCAT (along their axis 0, which they must
 * have); in a .npz a group whose arrays cannot join (other dtypes, other
 * shapes) is one member per array, NAME_K (arr_K for an unnamed group, as
 * np.savez(f, *arrays) names them), and a group that joins is one member
 * NAME (arr_0 unnamed). Memory: a few hundred bytes per group and per run
 * of arrays of one shape; disk for a .npz: its data twice until the end.
 * One thread at a time.
 */
enum accel_npy_form { ACCEL_NPY_STREAM, ACCEL_NPY_ONE, ACCEL_NPY_NPZ };
enum accel_npy_axis { ACCEL_NPY_STACK, ACCEL_NPY_CONCAT };
struct accel_npy_group;
struct accel_npy_pack {
	struct accel_output *out;
	enum accel_npy_form form;
	enum accel_npy_axis axis;
	int ngroups;
	struct accel_npy_group *g;
	int cur;                  /* group of the array being written, -1 none */
	uint64_t left;            /* bytes of its data still to come */
	size_t header_len;        /* ACCEL_NPY_ONE: bytes of the header rewritten at the end */
	char *dir;                /* ACCEL_NPY_NPZ: folder of the temporaries */
};
/* The form FILE's name asks for: ACCEL_NPY_NPZ for a name ending in
 * ".npz", ACCEL_NPY_ONE for ".npy" (either case), else (NULL: stdout)
 * ACCEL_NPY_STREAM. */
enum accel_npy_form accel_npy_form_of(const char *path);
/* Start writing arrays to out (open, nothing written yet) in `form`, in
 * ngroups groups named names[0..ngroups) (names NULL: one unnamed group;
 * the names are copied). Returns 0; ACCEL_EINVAL with one line in err[len]
 * for ACCEL_NPY_ONE with more than one group, or ACCEL_NPY_ONE and
 * ACCEL_NPY_NPZ to an output that cannot seek (a FIFO, a device);
 * ACCEL_ENOMEM. */
int accel_npy_pack_open(struct accel_npy_pack *p, struct accel_output *out, enum accel_npy_form form,
			enum accel_npy_axis axis, int ngroups, const char *const *names, char *err, size_t len);
/* Begin an array of shape t in group `group`; its data follows through
 * accel_npy_pack_write, all of it before the next begin. Returns 0;
 * ACCEL_EDATA with one line in err[len] when ACCEL_NPY_ONE cannot join it
 * to the arrays before ("array 3 of shape (2, 5) of uint8 cannot join
 * array 0 of shape (3, 5) of uint8 in one .npy array; write a .npz"), or
 * ACCEL_NPY_CONCAT meets a scalar; ACCEL_EINVAL (the last array's data is
 * incomplete, a bad group or tensor); what accel_output_write returns;
 * ACCEL_EIO (errno kept) for a temporary; ACCEL_ENOMEM. */
int accel_npy_pack_begin(struct accel_npy_pack *p, int group, const struct accel_tensor *t, char *err,
			 size_t len);
/* n bytes of the current array's data. 0; ACCEL_EINVAL for more than it
 * holds; what accel_output_write returns; ACCEL_EIO (errno kept). */
int accel_npy_pack_write(struct accel_npy_pack *p, const void *data, size_t n);
/* Finish: the .npy header with the final count, or the .npz from the
 * temporaries (nothing for a stream). The caller then commits out.
 * Returns 0, ACCEL_EINVAL (the last array's data is incomplete), what
 * accel_output_write and accel_output_seek return, ACCEL_EIO (errno
 * kept), ACCEL_ENOMEM; one line in err[len]. */
int accel_npy_pack_finish(struct accel_npy_pack *p, char *err, size_t len);
/* Free what p holds (its temporaries); out is left to the caller. */
void accel_npy_pack_free(struct accel_npy_pack *p);

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
