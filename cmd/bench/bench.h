/*
 * bench.h - accel-bench's pieces: the operations it measures and their
 * peers (ops.c), the inputs made from this machine's files (inputs.c), our
 * runs through the libcore calls the programs make (ours.c), the peer
 * tools' runs (peer.c), the measured runs and their statistics
 * (measure.c) and the table, CSV and JSON it prints (output.c).
 * accel-bench.c holds the options and the case list.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdint.h>
#include <sys/resource.h>
#include <sys/time.h>
#include "accel.h"

extern const struct accel_cli cli;

#define MAX_SIZES 16
#define MAX_SAMPLES 100000
/* Bytes of samples per FFT run (at least one frame). */
#define FFT_BYTES ((uint64_t)16 << 20)
#define DEFAULT_BYTES ((uint64_t)16 << 20)
#define DEFAULT_N 1024
/* onnx.run: the batch, 1 to MAX_BATCH (accel-infer --batch's limit). */
#define DEFAULT_BATCH 1
#define MAX_BATCH 1024
/* Video: --size WxH, kept as W << 32 | H (a plain number is never one). */
#define VIDEO_SIZE(w, h) ((uint64_t)(w) << 32 | (uint64_t)(h))
#define VIDEO_W(s) ((int)((s) >> 32))
#define VIDEO_H(s) ((int)((s) & 0xffffffff))
#define DEFAULT_VIDEO VIDEO_SIZE(640, 360)

struct job {
	const char *sizes;       /* --size LIST */
	double time;             /* --time S per case */
	int repeat;              /* --repeat N, 0: by time */
	int warmup;
	int vs, list, csv;
	uint64_t size[MAX_SIZES];
	int nsizes;
	struct accel_common common;   /* -b, -T, --json, -v, -q ... */
};

enum family { FAM_COMPRESS, FAM_DECOMPRESS, FAM_AGE_ENCRYPT, FAM_AGE_DECRYPT, FAM_HASH, FAM_FFT, FAM_ONNX,
	      FAM_DECODE, FAM_ENCODE };
/* Video stages run as accel-transcode processes. */
#define IS_VIDEO(fam) ((fam) == FAM_DECODE || (fam) == FAM_ENCODE)
enum fft_kind { FFT_C2C, FFT_R2C, FFT_C2R };

/* An operation measured here, and its peer: argv[0] and what follows it
 * before the input file (%T: the thread count, %L: the level). */
struct opdef {
	const char *name;
	enum family fam;
	const char *format;      /* compress: "zstd" ...; video: the codec, as --to names it */
	int fft;                 /* enum fft_kind */
	const char *peer[8];
};

extern const struct opdef ops[];
extern const size_t nops;

#define MAX_NAMES 64

struct stats3 {
	double min, median, max;
};

/* One measured run set: ours or the peer's. */
struct series {
	double *t;               /* seconds of each measured run */
	int n;
	double cpu;              /* user + system seconds of the measured runs */
	long rss_kib;            /* peak resident set (ours only: a child's
	                          * ru_maxrss counts its parent's pages at exec) */
	double start;            /* seconds taken off each run: the start-up (the
	                          * peer's; ours for video, its set-up run) */
	double setup;            /* the peer's set-up, reported apart */
};

struct kase {
	const struct opdef *op;
	char engine[80];         /* the -b item this case runs on */
	char ran[160];           /* engines that ran units, from the statistics */
	uint64_t size;           /* bytes, or N for FFTs */
	const char *input;       /* file read by each run (ours and the peer) */
	const char *tiny;        /* the set-up run's input */
	uint64_t in_bytes;       /* bytes read per run */
	uint64_t bytes;          /* bytes the MB/s counts (uncompressed for codecs) */
	uint64_t out_bytes;      /* bytes written per run */
	double transforms;       /* FFT frames per run */
	double units;            /* onnx.run: inferences per run; video: frames */
	double setup;
	struct series ours, peer;
	char peer_cmd[160];      /* "" without a peer */
	char *peer_argv[24];
	int peer_in;             /* the index of the input in peer_argv */
	int failed;
};

struct bench {
	struct job *job;
	struct accel_ctx *ctx;
	char dir[4096];          /* temporary folder */
	char *files[256];        /* made in it, removed at the end */
	int nfiles;
	int threads;             /* the thread count given to peers */
	uint8_t age_key[ACCEL_AGE_KEY_LEN];
	char age_recipient[128], age_identity[4200];
	int age_peer;            /* 1: age-keygen made the identity */
	int progress;            /* 1: the case being measured is shown on stderr */
	long child_rss_kib;      /* video: the peak resident set of our runs */
};

/* ops.c */
/* The operation measured here named `name`, or NULL. */
const struct opdef *opdef(const char *name);
/* The operations of the toolkit into names[MAX_NAMES]: ours, then any
 * other a loaded backend lists (not measured yet). Returns their number. */
int all_ops(struct accel_ctx *ctx, const char **names);

/* inputs.c */
void clear_progress(const struct bench *b);
char *temp_path(struct bench *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void catch_signals(struct bench *b);
void cleanup(struct bench *b);
int make_corpus(const char *path, uint64_t size);
int make_tones(const char *path, uint64_t frames, size_t frame, int complex);
int64_t file_size(const char *path);

/* onnx.c */
/* The parameters of op's route (struct accel_op.ext): onnx.run's model
 * when it is here, else NULL. */
void *op_ext(struct bench *b, const struct opdef *op);
int onnx_prepare(struct bench *b, struct kase *c);
int onnx_run(struct bench *b, const struct kase *c, struct accel_input *in, struct accel_output *out,
	     struct accel_stream_stats *st, char *err, size_t len);
int onnx_peer_command(struct bench *b, struct kase *c);
int onnx_peer_start(struct bench *b, struct kase *c);
int onnx_peer_run(struct kase *c, double *dt, double *cpu);
void onnx_peer_close(void);
/* At the end: the peer and the last case's context go. */
void onnx_end(void);
/* The p50, p90 and p99 of the series' times into p[3]. */
void percentiles(const struct series *s, double p[3]);

/* video.c */
/* The path `rel` from accel-bench's own folder ("accel-transcode",
 * "libexec/infer-direct") into buf[len]: 0, or -1 when nothing is there. */
int sibling(const char *rel, char *buf, size_t len);
int video_engines(struct bench *b, const char *list, char (*items)[80], int max);
int video_prepare(struct bench *b, struct kase *c);
int video_run(struct bench *b, const struct kase *c, const char *path, struct accel_stream_stats *st,
	      uint64_t *written, char *err, size_t len);
int video_peer_command(struct bench *b, struct kase *c, const char *input);

/* ours.c */
int run_op(struct bench *b, const struct kase *c, const char *path, const char *dest,
	   struct accel_stream_stats *st, uint64_t *written, char *err, size_t len);

/* peer.c */
int on_path(const char *prog);
int spawn(char *const argv[], const char *out, struct rusage *ru);
int age_keys(struct bench *b);
int peer_command(struct bench *b, struct kase *c, const char *input);
int peer_start(struct bench *b, struct kase *c, const char *input);

/* measure.c */
int cmp_double(const void *a, const void *b);
double tv(struct timeval t);
int measure(struct bench *b, struct kase *c);
struct stats3 rate(const struct series *s, double per);
double flops_per_transform(const struct kase *c);

/* output.c */
void size_text(const struct kase *c, char *buf, size_t len);
/* Our median throughput over the peer's; 0 without a peer. */
double ratio(const struct kase *c);
void print_table(struct kase *cs, int n);
void print_csv(struct kase *cs, int n);
int print_json(struct bench *b, struct kase *cs, int n, const char **skipped, int nskipped);

#endif
