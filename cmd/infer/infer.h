/*
 * infer.h - what the files of accel-infer share: the model's description
 * (from the onnx.info operation), images and their crops, the batching
 * reader (a stream engine `next` callback) and the post-processing writer
 * (batch splitting, top-k, CTC decoding, DB text boxes).
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

/* How an image becomes a tensor (--resize, --align, --scale, --mean,
 * --std, --layout, --bgr): value = (pixel * scale - mean[c]) / std[c]. */
struct image_opts {
	int width, height;        /* 0: the image's (the other side kept in ratio) */
	int align;                /* > 1: each side rounded to a multiple of it */
	float scale, mean[3], std[3];
	int bgr, nhwc;
};
/* The largest image file read. */
#define INFER_MAX_IMAGE_FILE ((size_t)256 << 20)
/* A decoded image: 8-bit RGB, rows of w * 3 bytes. */
struct image {
	uint8_t *rgb;
	int w, h;
};
/* Decode the image in data[0..n) into *im. 0, ACCEL_EDATA with a line in
 * err (not an image, not decodable, too large), ACCEL_ENOMEM. */
int image_decode(const uint8_t *data, size_t n, struct image *im, char *err, size_t len);
void image_free(struct image *im);
/* The box [x0, y0, x1, y1) of im (NULL: all of it), scaled as o says, into
 * a float32 tensor (1, 3, H, W) or (1, H, W, 3), its values appended to
 * out. The box must lie inside the image. 0, ACCEL_EDATA, ACCEL_ENOMEM. */
int image_tensor(const struct image *im, const int *box, const struct image_opts *o, struct accel_tensor *t,
		 struct accel_buf *out, char *err, size_t len);

/* One box of --crops: a rectangle [x0, y0, x1, y1) of image number
 * `image` (0 for the first image read). */
struct crop {
	uint64_t image;
	int box[4];
};
/* One line of a --crops file (a JSON object with "box": [x0, y0, x1, y1],
 * integers, x0 < x1, y0 < y1, and "input": the image's number, default
 * 0) into *c. 0, or ACCEL_EDATA with the reason in err. */
int crop_parse(const char *line, size_t n, struct crop *c, char *err, size_t len);
/* Read every line of the --crops file at path ("-": stdin). 0, ACCEL_EIO
 * (errno), ACCEL_EDATA with "PATH:LINE: reason" in err, ACCEL_ENOMEM. */
int crops_load(const char *path, struct crop **crops, size_t *n, char *err, size_t len);

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

/* What the post-processing writer learns of one item: its rows along the
 * batch axis, and, for an image, its number, its size and the box it was
 * cut from (--crops). */
struct item_meta {
	uint32_t rows;
	uint64_t input;           /* the "input" of JSON lines: the item's number, or its image's */
	int src_w, src_h;         /* the image's size in pixels; 0: not an image */
	int has_box;
	int box[4];
};

/* The items of the units in flight, in order, from the reader to the
 * post-processing writer. */
struct batch_fifo {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct item_meta *items;  /* per unit: an entry whose rows is its item count, then its items */
	size_t head, tail, cap;
	int closed;
};
int fifo_init(struct batch_fifo *f);
void fifo_free(struct batch_fifo *f);
/* Push one unit of n items. 0 or ACCEL_ENOMEM. */
int fifo_push(struct batch_fifo *f, const struct item_meta *items, uint32_t n);
/* Pop the next unit into items[max]: its item count, or -1 when closed and
 * empty. Waits for the reader. */
int fifo_pop(struct batch_fifo *f, struct item_meta *items, uint32_t max);
void fifo_close(struct batch_fifo *f);

/* The batching reader: user data of the stream's `next`. */
struct reader {
	const struct model_info *m;
	struct source src[INFER_MAX_IO];     /* per model input, in its order */
	int main_input;                      /* the input read from the stream's own input */
	const struct image_opts *image;      /* how images on the stream become tensors */
	const struct crop *crops;            /* --crops: each image's boxes, or NULL */
	size_t ncrops;
	struct image img;                    /* --crops: the image being cut */
	size_t crop_at;                      /* the next of crops[] to look at for it */
	uint64_t images;                     /* images read so far */
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
	struct item_meta pend_meta;
	struct accel_tensor pend_t[INFER_MAX_IO];
	struct accel_buf pend_data[INFER_MAX_IO];
	struct accel_buf data[INFER_MAX_IO]; /* the batch being built */
	int finished;                        /* the main input has ended */
};
int reader_next(void *user, struct accel_input *in, struct accel_unit *u, char *err, size_t len);
void reader_free(struct reader *r);

/* --decode db: PaddleOCR's DB post-processing of a text detector's
 * probability map (its det_db_thresh, det_db_box_thresh,
 * det_db_unclip_ratio). */
struct db_opts {
	double thresh;            /* a pixel is text above this probability */
	double box_thresh;        /* a box is kept when its mean probability is at least this */
	double unclip;            /* each box grows by area * unclip / perimeter on every side */
};
/* A text box found in a probability map, in the map's pixels or, scaled,
 * the image's: [x0, y0, x1, y1) and its mean probability. */
struct db_box {
	int box[4];
	double score;
};
/* The boxes of the H x W probability map p (row-major), scaled to an image
 * of src_w x src_h (0: the map's size), top to bottom, then left to right,
 * into a malloc'd *boxes (free it). The count, or ACCEL_ENOMEM. */
int db_boxes(const float *p, int w, int h, int src_w, int src_h, const struct db_opts *o, struct db_box **boxes);
/* Load the Leptonica --decode db uses, once. 0, or ACCEL_ENOTSUP with the
 * reason (not built with it, the library missing) in err. */
int db_ready(char *err, size_t len);
/* --version: the Leptonica --decode db uses (none when built without it). */
void db_versions(char *buf, size_t len);

/* The post-processing writer: reads the stream's output (one .npy array per
 * output asked for, per unit) from a pipe and writes what the user asked
 * for to `out`. */
enum post_mode { POST_NPY, POST_TOPK, POST_CTC, POST_DB };
struct post {
	enum post_mode mode;
	int nout;                 /* arrays per unit */
	int score_output;         /* which of them top-k and CTC read */
	int topk;
	struct db_opts db;
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
