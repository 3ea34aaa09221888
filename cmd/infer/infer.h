/*
 * infer.h - what the files of accel-infer share: the model's description
 * (from the onnx.info operation), the batching reader (a stream engine
 * `next` callback) and the post-processing writer (batch splitting, top-k,
 * CTC decoding).
 */
#ifndef ACCEL_INFER_H
#define ACCEL_INFER_H

#include <pthread.h>
#include "accel.h"

/* Arrays larger than this are refused from their header, before anything
 * is allocated. */
#define INFER_MAX_ARRAY ((uint64_t)1 << 30)
#define INFER_MAX_IO 64

/* One model input or output: dims[i] -1 where the dim is free (then
 * sym[i] is its name, or "" when it has none). */
struct io_desc {
	char name[128];
	enum accel_dtype dtype;
	int ndim;                 /* -1: not a tensor or rank unknown */
	int64_t dims[ACCEL_TENSOR_MAX_DIMS];
	char sym[ACCEL_TENSOR_MAX_DIMS][64];
};

struct model_info {
	int nin, nout;
	struct io_desc in[INFER_MAX_IO], out[INFER_MAX_IO];
};

/* Fill *m from onnx.info's JSON. 0, or ACCEL_EDATA with a line in err. */
int model_info_parse(const char *json, size_t n, struct model_info *m, char *err, size_t len);
/* "float32 (N, 3, 224, 224)" into buf: symbolic dims by name, unnamed
 * free dims as "?". */
void io_desc_str(const struct io_desc *d, char *buf, size_t len);

/* How an image becomes a tensor (--resize, --scale, --mean, --std,
 * --layout, --bgr): value = (pixel * scale - mean[c]) / std[c]. */
struct image_opts {
	int width, height;        /* 0: the image's (the other side kept in ratio) */
	float scale, mean[3], std[3];
	int bgr, nhwc;
};
/* The largest image file read. */
#define INFER_MAX_IMAGE_FILE ((size_t)256 << 20)
/* Decode the image in data[0..n) into a float32 tensor (1, 3, H, W) or
 * (1, H, W, 3), its values appended to out. 0, ACCEL_EDATA with a line in
 * err (not an image, not decodable), ACCEL_ENOMEM. */
int image_to_tensor(const uint8_t *data, size_t n, const struct image_opts *o, struct accel_tensor *t,
		    struct accel_buf *out, char *err, size_t len);

/* --version: the FFmpeg libraries images are read with (none when built
 * without them). */
void image_versions(char *buf, size_t len);

/* Where one model input comes from. */
struct source {
	struct accel_input *in;   /* the stream's input, or an --input file */
	int raw;                  /* 1: raw bytes of `shape` (--shape/--dtype) */
	struct accel_tensor shape;
	const char *label;        /* for messages: "stdin", a file name */
};

/* Item counts (rows along the batch axis) of the units in flight, in order,
 * from the reader to the post-processing writer. */
struct batch_fifo {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint32_t *counts;         /* items of each unit, then their rows */
	size_t head, tail, cap;
	int closed;
};
int fifo_init(struct batch_fifo *f);
void fifo_free(struct batch_fifo *f);
/* Push one unit: n items of rows[i] rows each. 0 or ACCEL_ENOMEM. */
int fifo_push(struct batch_fifo *f, const uint32_t *rows, uint32_t n);
/* Pop the next unit into rows[max]: its item count, or -1 when closed and
 * empty. Waits for the reader. */
int fifo_pop(struct batch_fifo *f, uint32_t *rows, uint32_t max);
void fifo_close(struct batch_fifo *f);

/* The batching reader: user data of the stream's `next`. */
struct reader {
	const struct model_info *m;
	struct source src[INFER_MAX_IO];     /* per model input, in its order */
	int main_input;                      /* the input read from the stream's own input */
	const struct image_opts *image;      /* how images on the stream become tensors */
	int batch;                           /* items per unit, >= 1 */
	double max_wait;                     /* seconds, < 0: wait for a full batch */
	const char *const *dim_names;        /* --dim */
	const int64_t *dim_values;
	int ndims;
	struct batch_fifo *fifo;             /* NULL: no post-processing */
	uint64_t items;                      /* items read so far */
	struct accel_progress *meter;        /* --progress: items read, NULL: none */
	/* An item read but not yet batched (shape differs from the batch's). */
	int pending;
	struct accel_tensor pend_t[INFER_MAX_IO];
	struct accel_buf pend_data[INFER_MAX_IO];
	struct accel_buf data[INFER_MAX_IO]; /* the batch being built */
	int finished;                        /* the main input has ended */
};
int reader_next(void *user, struct accel_input *in, struct accel_unit *u, char *err, size_t len);
void reader_free(struct reader *r);

/* The post-processing writer: reads the stream's output (one .npy array per
 * output asked for, per unit) from a pipe and writes what the user asked
 * for to `out`. */
enum post_mode { POST_NPY, POST_TOPK, POST_CTC };
struct post {
	enum post_mode mode;
	int nout;                 /* arrays per unit */
	int score_output;         /* which of them top-k and CTC read */
	int topk;
	char **labels;            /* --labels lines, or NULL */
	int nlabels;
	struct batch_fifo *fifo;
	int fd;                   /* the pipe's read end */
	struct accel_output *out; /* top-k and CTC: the JSON lines */
	struct accel_npy_pack *pack; /* .npy arrays: one group per output */
	uint64_t item;            /* items written */
	int rc;                   /* 0, or an ACCEL_E* code */
	char err[256];
};
void *post_main(void *arg);
/* Read a labels file, one label a line. 0, or ACCEL_EIO (errno) / ENOMEM. */
int labels_load(const char *path, char ***labels, int *n);

#endif
