/*
 * bench.h - accel-bench's pieces: the operations it measures and their
 * peers (ops.c), the inputs made from this machine's files (inputs.c), our
 * runs through the libcore calls the programs make (ours.c), the peer
 * tools' runs (peer.c), our programs' runs beside them (program.c), the
 * measured runs and their statistics (measure.c), the machine's memcpy
 * ceiling (ceiling.c), the table, CSV and JSON it prints (output.c) and
 * the comparison with a baseline (compare.c) and the plot gnuplot draws
 * (plot.c). accel-bench.c holds the options and the case list.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include "accel.h"

extern const struct accel_cli cli;

#define MAX_SIZES 16
#define MAX_SAMPLES 100000
/* Bytes of samples per FFT run (at least one frame); with --vs,
 * DEFAULT_VS_BYTES, as the codecs. */
#define FFT_BYTES ((uint64_t)16 << 20)
#define DEFAULT_BYTES ((uint64_t)16 << 20)
/* With --vs: long enough that a program's start-up is a few % of a run
 * (16 MiB of FFTs are 2-8 ms of work on 2 cores, about a program's
 * start-up, and 1-3 ms on 16). */
#define DEFAULT_VS_BYTES ((uint64_t)64 << 20)
#define MAX_LEVELS 22
#define DEFAULT_N 1024
/* onnx.run: the batch, 1 to MAX_BATCH (accel-infer --batch's limit). */
#define DEFAULT_BATCH 1
#define MAX_BATCH 1024
/* onnx.stream: the batches of one run, a stream of them as accel-infer
 * runs it (several at once on one session). */
#define STREAM_BATCHES 32
/* Video: --size WxH, kept as 1 << 63 | W << 32 | H (no count of bytes). */
#define VIDEO_SIZE(w, h) ((uint64_t)1 << 63 | (uint64_t)(w) << 32 | (uint64_t)(h))
#define IS_VIDEO_SIZE(s) ((int)((s) >> 63))
#define VIDEO_W(s) ((int)((s) >> 32 & 0x7fffffff))
#define VIDEO_H(s) ((int)((s) & 0xffffffff))
#define DEFAULT_VIDEO VIDEO_SIZE(640, 360)
/* The --json document's schema_version. */
#define RESULTS_SCHEMA 2

struct job {
	const char *sizes;       /* --size LIST */
	double time;             /* --time S per case */
	int repeat;              /* --repeat N, 0: by time */
	int warmup;
	int vs, list, csv;
	int save;                /* --save[=FILE] */
	const char *save_path;   /* its FILE, NULL: the default profile */
	const char *peer;        /* --peer LIST: peers preferred where an operation has several */
	const char *compare;     /* --compare BASELINE.json */
	const char *against;     /* --against RESULTS.json */
	double max_regression;   /* --max-regression, percent; -1: not given */
	const char *plot;        /* --plot FILE.svg|FILE.png */
	uint64_t size[MAX_SIZES];
	int nsizes;
	const char *levels;      /* --level LIST */
	int level[MAX_LEVELS];
	int nlevels;
	struct accel_common common;   /* -b, -T, --json, -v, -q ... */
};

enum family { FAM_COMPRESS, FAM_DECOMPRESS, FAM_AGE_ENCRYPT, FAM_AGE_DECRYPT, FAM_HASH, FAM_FFT, FAM_ONNX,
	      FAM_DECODE, FAM_ENCODE };
/* Video stages run as accel-transcode processes. */
#define IS_VIDEO(fam) ((fam) == FAM_DECODE || (fam) == FAM_ENCODE)
enum fft_kind { FFT_C2C, FFT_R2C, FFT_C2R };

#define MAX_PEERS 3

/* An operation measured here, and its peers: argv[0] and what follows it
 * before the input file (%T: the thread count, %L: the level, %G: ISA-L's
 * level for it, %N: the FFT's N; argv[0] accel-bench-fftw: the helper
 * beside accel-bench). */
struct opdef {
	const char *name;
	enum family fam;
	const char *format;      /* compress: "zstd" ...; video: the codec, as --to names it */
	int fft;                 /* enum fft_kind */
	const char *peer[MAX_PEERS][8];  /* in order of preference */
};

/* Whether op is onnx.stream: onnx.run on a stream of batches, as
 * accel-infer runs one (several at once on the engine's session). */
static inline int op_stream(const struct opdef *op)
{
	return !strcmp(op->name, "onnx.stream");
}

/* The library's operation that op measures. */
static inline const char *op_lib(const struct opdef *op)
{
	return op_stream(op) ? "onnx.run" : op->name;
}

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
	double start;            /* a program's start-up: median seconds of 3 runs
	                          * on the empty input (reported apart) */
};

struct kase {
	const struct opdef *op;
	char engine[80];         /* the -b item this case runs on */
	char ran[160];           /* engines that ran units, from the statistics */
	uint64_t size;           /* bytes, N for FFTs, the batch for onnx.run,
	                          * VIDEO_SIZE(W, H) for video */
	int level;               /* codecs: the compression level; else 0 */
	const char *input;       /* file read by each run (ours and the peer) */
	const char *tiny;        /* the set-up run's input */
	uint64_t in_bytes;       /* bytes read per run */
	uint64_t bytes;          /* bytes the MB/s counts (uncompressed for codecs) */
	uint64_t out_bytes;      /* bytes written per run */
	double transforms;       /* FFT frames per run */
	double units;            /* onnx.run: inferences per run; video: frames */
	double setup;
	struct series ours, peer;
	struct series prog;      /* our program's runs (--vs), as the peer's */
	char peer_cmd[160];      /* "" without a peer */
	char *peer_argv[28];
	int peer_in;             /* the index of the input in peer_argv */
	char ref_cmd[160];       /* openssl speed's command, "" without a reference */
	double ref_mbps;         /* its MB/s (10^6 bytes a second) */
	char prog_cmd[160];      /* "" without our program's runs */
	char *prog_argv[24];
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
	char profile[4096];      /* --save: the profile's path */
	char bindir[4096];       /* the folder of accel-bench, and of our programs */
	struct {
		double mbps_1t, mbps_all;   /* memcpy MB/s on 1 thread and on `cores`; 0: not measured */
		int cores;
	} ceiling;
};

/* ops.c */
/* The operation measured here named `name`, or NULL. */
const struct opdef *opdef(const char *name);
/* The operations of the toolkit into names[MAX_NAMES]: ours, then any
 * other a loaded backend lists (not measured yet). Returns their number. */
int all_ops(struct accel_ctx *ctx, const char **names);
/* One word of --size ("64K", "1024", "640x360": WxH of even sides from
 * 16 to 8192, as VIDEO_SIZE) into *v: 0, or -1 when it is not a size. */
int size_word(const char *word, uint64_t *v);

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
/* /dev/null, opened for writing on the first call and kept until
 * onnx_end(): the fd, or -1 when it cannot be opened. */
int onnx_sink(void);
int onnx_peer_command(struct bench *b, struct kase *c);
/* Start case c's peer (infer-direct --serve): its model load into
 * c->peer.start. 0, or -1 when it failed. */
int onnx_peer_start(struct kase *c);
int onnx_peer_run(struct kase *c, double *dt, double *cpu);
void onnx_peer_close(void);
/* At the end: the peer and the last case's context go. */
void onnx_end(void);

/* video.c */
/* The path `rel` from accel-bench's own folder ("accel-transcode",
 * "libexec/infer-direct") into buf[len]: 0, or -1 when nothing is there. */
int sibling(const char *rel, char *buf, size_t len);
int video_engines(struct bench *b, const char *list, char (*items)[80], int max);
int video_prepare(struct bench *b, struct kase *c);
int video_run(struct bench *b, const struct kase *c, const char *path, struct accel_stream_stats *st,
	      uint64_t *written, char *err, size_t len);
int video_peer_command(struct bench *b, struct kase *c, const char *input);
/* accel-transcode's command for case c into c->prog_argv and c->prog_cmd
 * (its input last): 0, or -1 when out of memory. */
int video_program_command(struct bench *b, struct kase *c);

/* ours.c */
int run_op(struct bench *b, const struct kase *c, const char *path, const char *dest,
	   struct accel_stream_stats *st, uint64_t *written, char *err, size_t len);

/* peer.c */
int on_path(const char *prog);
/* --peer's LIST: 0, or -1 with the first name that is no operation's
 * peer in bad[len]. */
int peer_list_check(const char *list, char *bad, size_t len);
int spawn(char *const argv[], const char *out, struct rusage *ru);
int age_keys(struct bench *b);
int peer_command(struct bench *b, struct kase *c, const char *input);
int reference(struct bench *b, struct kase *c);
/* The median of 3 runs of argv on c's start-up input (argv[in], else its
 * last word, replaced by it) into *start: 0, or -1 with the input named in
 * input[input_len] ("an empty input", "its start-up input of N bytes") and
 * how the run failed in why[len] (its exit status or signal, and the first
 * line it wrote on stderr). */
int start_up(struct bench *b, struct kase *c, char **argv, int in, double *start, char *input, size_t input_len,
	     char *why, size_t len);

/* program.c */
int program_command(struct bench *b, struct kase *c, const char *input);

/* ceiling.c */
void measure_ceiling(struct bench *b);

/* measure.c */
int cmp_double(const void *a, const void *b);
double tv(struct timeval t);
int measure(struct bench *b, struct kase *c);
struct stats3 rate(const struct series *s, double per);
struct latency {
	double p50, p90, p99;    /* seconds */
};
struct latency percentiles(const struct series *s);
double flops_per_transform(const struct kase *c);

/* output.c */
/* s bytes as --size writes them (16M, 4K, 1000) into buf[len]. */
void bytes_text(uint64_t s, char *buf, size_t len);
void size_text(const struct kase *c, char *buf, size_t len);
/* The size as a number in its unit: pixels of a frame for video, else
 * c->size. */
uint64_t size_value(const struct kase *c);
/* Our program's median throughput over the peer's (onnx.run: our library
 * call's); 0 without both. */
double ratio(const struct kase *c);
void print_table(const struct bench *b, struct kase *cs, int n);
void print_csv(struct kase *cs, int n);
/* The results as the --json document, or NULL when out of memory. */
struct cJSON *results_json(struct bench *b, struct kase *cs, int n, const char **skipped, int nskipped);
int print_json(struct bench *b, struct kase *cs, int n, const char **skipped, int nskipped);

/* profile.c */
/* --save's profile path into b->profile: 0, or -1 after the message. */
int profile_target(struct bench *b);
/* Save the median MB/s of the cases that ran on one engine into
 * b->profile, merged with its entries for this machine (one from another
 * machine is replaced); one line on stderr unless -q. 0, or -1 after the
 * message. */
int save_profile(struct bench *b, const struct kase *cs, int n);
/* compare.c */
/* --max-regression P[%]: the ACCEL_CALL. */
int regression_option(void *job, const char *arg);
/* The checks of --compare, --against and --max-regression against the
 * other options, and the bound's default: 0, or the usage status after the
 * message. */
int compare_usage(struct job *job);
/* --compare BASE --against RESULTS: compare the two files; the exit status. */
int compare_files(struct job *job);
/* The baseline of --compare read and checked, its settings (runs, warm-up,
 * threads) taken where the command line gives none: the document, or NULL
 * with the exit status in *status after the message. */
struct cJSON *compare_load(struct job *job, int *status);
/* The baseline's cases chosen by the operands, -b and --size, those that
 * can run here, into *cs (realloc'd) and *n: 0, or the exit status after
 * the message. */
int compare_cases(struct bench *b, struct cJSON *base, struct kase **cs, int *n);
/* Compare the measured cases with the baseline and print the changes:
 * ACCEL_EXIT_REGRESSION, 0, or -1 when out of memory. */
int compare_run(struct bench *b, struct cJSON *base, struct kase *cs, int n, const char **skipped, int nskipped);
/* plot.c */
/* --plot's FILE before the measurements: its suffix (usage error) and,
 * without -f, that it does not exist. 0, or the exit status after the
 * message. */
int plot_check(const struct job *job);
/* Draw the measured cases into --plot's FILE with gnuplot. 0, or -1 after
 * the message (nothing written). */
int plot(struct bench *b, struct kase *cs, int n);

#endif
