/*
 * transcode.h - accel-transcode's pieces: the job the options make, the
 * FFmpeg pipeline that runs it, and the per-stage routing of its stages
 * to hardware or software engines. pipeline.c runs the stages, each in a
 * file of its own with its state in a sub-struct of struct tc: input.c
 * (demux), decode.c, filter.c (the video filter graph), encode.c, audio.c,
 * output.c (the muxer, or --to npy; the destination FILE through a
 * temporary), report.c (-v, --progress, --progress-json); plan.c makes the
 * choices that need no device, hw.c finds the devices.
 */
#ifndef TRANSCODE_H
#define TRANSCODE_H

#include <stdint.h>
#include <libavcodec/avcodec.h>
#include <libavcodec/bsf.h>
#include <libavfilter/avfilter.h>
#include <libavformat/avformat.h>
#include <libswscale/swscale.h>
#include "accel.h"
#include "plan.h"

/* What the user asked for. */
struct tc_job {
	const char *input;        /* "-" or NULL: stdin */
	const char *output;       /* NULL: stdout */
	int force;
	const char *to;           /* h264 hevc av1 vp9 rawvideo y4m npy */
	const char *container;    /* --container: mkv mp4 mov webm mpegts nut avi; NULL: by destination */
	const char *muxer;        /* FFmpeg's muxer for it (tc_plan_muxer) */
	const char *audio;        /* copy aac opus none; NULL: copy when the container allows, else aac */
	int scale_w, scale_h;     /* 0: no scaling; -1: keep the aspect ratio */
	int fps_num, fps_den;     /* 0: keep the input's rate */
	const char *pix_fmt;      /* NULL: the encoder's choice */
	int crop[4];              /* W, H, X, Y; crop[0] 0: none */
	int deinterlace;
	int quality;              /* 0-51; -1: the encoder's default */
	int64_t bitrate;          /* bits per second; 0: none */
	const char *preset;       /* fast medium slow, or the encoder's own name; NULL */
	int keyint;               /* frames; 0: the encoder's default */
	int nchw, normalize;      /* --to npy layout */
	const char *hw;           /* none auto cuda vaapi qsv */
	const char *device;       /* device string for the hardware type, NULL */
	int strict;
	int progress_json;
	struct accel_report *report; /* --json: the run's report, on stderr at the end */
	int64_t start, duration;  /* --start, --duration (--end less --start), in µs; -1: none */
	int64_t end;              /* --end in µs; -1: none */
	const char *start_arg;    /* --start as given */
	struct accel_common common;
};

/* The stages that are routed separately. */
enum tc_stage { TC_DECODE, TC_FILTER, TC_ENCODE, TC_NSTAGES };

/* One hardware device type that a stage may use, found in the registry. */
struct tc_hw {
	char type[16];            /* FFmpeg's device type name: "cuda", "vaapi", "qsv" */
	char engine[48];          /* "ffmpeg.cuda:gpu0" */
	char device[64];          /* device string for av_hwdevice_ctx_create, "" default */
	int usable;
	char reason[200];         /* why not usable */
};

/* Find the hardware device types job->hw allows, through the registry
 * (the ffmpeg backend's video engines). Fills hw[0..max), returns how
 * many; each unusable one carries the probe's reason. */
int tc_hw_find(struct accel_ctx *ctx, const struct tc_job *job, struct tc_hw *hw, int max);

/* The name of the engine of FFmpeg's software codecs on the CPU device
 * ("ffmpeg:cpu0") when discovery found it, else "software". */
void tc_sw_engine(const struct accel_ctx *ctx, char *buf, size_t len);

#define TC_IO_BUF 65536           /* bytes of the input's and the output's I/O buffers */
#define TC_MAX_GOP 1024           /* video packets kept to decode again after a failure */
#define TC_MAX_HELD 256           /* frames kept to encode again after a failure */

/* What one stage runs on, and what it did. */
struct tc_stage_stat {
	char engine[48];          /* "ffmpeg.cuda:gpu0", "ffmpeg:cpu0" */
	char what[64];            /* "h264 (libavcodec)", "libx264", "scale,format" */
	int hw;                   /* 1: on a hardware device */
	uint64_t frames;
	double seconds;
	char before[160];         /* after a reopening: where it ran first */
	char fallback[256];       /* why it runs in software: the hardware open that failed, or "" */
};

/* input.c: the demuxer, reading through the core's accel_input. */
struct tc_input {
	struct accel_input io;
	int open;                 /* 1: io is open */
	int64_t base;             /* file offset of the input's first byte */
	AVFormatContext *fmt;
	AVIOContext *pb;          /* the demuxer's I/O (ours) */
	int vidx, aidx;           /* the video and audio streams, -1: none */
	double duration;          /* seconds of media, <= 0 unknown */
};

/* decode.c: the video decoder, on a hardware device or in software. */
struct tc_decode {
	AVCodecContext *ctx;
	AVBufferRef *hwdev;       /* its device, NULL: software */
	enum AVPixelFormat hw_pix_fmt;
	const struct tc_hw *hw;   /* NULL: software */
	uint64_t packets;         /* video packets given to it (the fault's unit) */
};

/* A decode stage that fails mid-stream reopens once, in software
 * (decode.c, reopen_decoder), and decodes again what it had not passed on. */
struct tc_decode_recovery {
	AVPacket *gop[TC_MAX_GOP]; /* video packets since the last keyframe */
	int ngop, gop_whole;      /* gop_whole: gop[] starts at a keyframe */
	int64_t last_pts;         /* pts of the last frame passed on */
	int64_t skip_upto;        /* after a reopen: frames up to this pts are dropped */
	int reopened, wait_key, replayed;
	uint64_t redecoded, skipped;
	char note[256];           /* what failed, for the warning at the end */
};

/* filter.c: the video filter graph (tc_plan_graph's chain). */
struct tc_filter {
	AVFilterGraph *graph;
	AVFilterContext *src, *sink;
	AVBufferRef *src_frames;  /* the graph takes frames on this device, NULL: in memory */
	struct tc_plan plan;
};

/* encode.c: the video encoder, on a hardware device or in software. */
struct tc_encode {
	AVCodecContext *ctx;
	const struct tc_hw *hw;   /* NULL: software */
	AVBufferRef *hwdev;       /* a device of its own (not the decoder's), or NULL */
	uint64_t sent;            /* frames given to it (the fault's unit) */
};

/* An encode stage that fails mid-stream reopens once, in software
 * (encode.c, reopen_encoder). While `holding`, the frames given to the
 * encoder are kept until the packets written cover them, and its packets
 * are held until they are all those of a run of frames from the first
 * kept one: what is written is then always every frame up to some point,
 * which a new encoder continues from. */
struct tc_encode_recovery {
	AVFrame *held[TC_MAX_HELD]; /* frames in the encoder, pts in its time base, in order */
	int nheld;
	AVPacket *pend[TC_MAX_HELD]; /* its packets not written yet, in decode order */
	int npend;
	int holding;
	int reopened;
	uint64_t reencoded, from;
	int64_t last_dts;         /* of the last video packet written, encoder time base */
	char note[320];           /* what failed, for the warning at the end */
	struct SwsContext *sws;   /* to the takeover encoder's pixel format */
};

/* audio.c: the audio, copied or decoded, filtered and encoded again. */
struct tc_audio {
	AVCodecContext *dec, *enc;
	AVFilterGraph *graph;
	AVFilterContext *src, *sink;
	int copy;                 /* 1: packets copied */
	AVBSFContext *adts;       /* ADTS headers off copied AAC, or NULL */
	int64_t next;             /* the next decoded sample's pts (1/rate), or AV_NOPTS_VALUE */
};

/* output.c: the muxer, writing through the core's accel_output. */
struct tc_output {
	struct accel_output *dst;
	int werr;                 /* dst's ACCEL_E* error, 0 */
	AVFormatContext *fmt;
	AVStream *vst, *ast;      /* the video and audio streams written */
	int header;               /* 1: header written */
	int raw;                  /* 1: --to npy (written here, no muxer) */
	struct accel_npy_pack pack; /* --to npy: a stream, one .npy or a .npz, as -o names */
	AVPacket **queue;         /* audio packets waiting for the header */
	int nqueue;
};

/* trim.c: --start and --duration, as ffmpeg's -ss and -t before its -i:
 * the input seeks to the keyframe before the start, the timestamps of
 * every stream are shifted so that the start is 0, and the frames before
 * it and from the duration on are dropped (trim, atrim). */
struct tc_trim {
	int on;                   /* 1: --start or --duration */
	int64_t vshift, ashift;   /* the shift, in the video and audio streams' time bases */
	int64_t vlen, alen;       /* --duration in those time bases, 0: none */
	int64_t vfirst;           /* pts of the first video frame passed, or AV_NOPTS_VALUE */
	int vdone, adone;         /* 1: that stream is complete */
	int acopied;              /* copied audio packets written */
	AVPacket *held[TC_MAX_GOP]; /* read after the seek, to be read again (tc_trim_read) */
	int nheld, next;
};

/* report.c: what -v, --progress and --progress-json tell. */
struct tc_report {
	double t0;                /* accel_now() at the start */
	double last;              /* of the last progress line */
	double media_pos;         /* seconds reached at the encoder */
	int meter;                /* 1: draw the progress line on stderr; 2: a
	                           * line of its own each second (not a terminal) */
	uint64_t packets, bad_packets, written_frames;
};

/* One run of a job: the pipeline's state, one sub-struct per stage. */
struct tc {
	const struct tc_job *job;
	struct accel_ctx *ctx;
	char sw_engine[48];       /* the software engine's name */
	int status;               /* the exit status of the first error, 0 */
	char err[512];            /* its line */
	struct tc_stage_stat st[TC_NSTAGES];
	struct tc_input in;
	struct tc_decode dec;
	struct tc_decode_recovery dec_rec;
	struct tc_filter vf;
	struct tc_encode enc;
	struct tc_encode_recovery enc_rec;
	struct tc_audio au;
	struct tc_trim trim;
	struct tc_output out;
	struct tc_report rep;
	AVFrame *frame, *sw, *filt; /* decoded, moved to or from a device, filtered */
	AVPacket *pkt;
};

/* pipeline.c: the driver. */

/* Run the job: read job->input, write out (tc_output_create). Returns an
 * exit status after printing the one-line error. */
int tc_run(const struct tc_job *job, struct accel_ctx *ctx, struct accel_output *out);
/* The signal (SIGINT, SIGTERM) that stopped a run writing to stdout after
 * it finalized the container; 0 when none did. tc_run then returned 128 +
 * the signal. */
int tc_interrupted(void);
/* Set t->status and t->err once: the first error wins. Returns -1. */
int tc_fail(struct tc *t, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* FFmpeg's message for AVERROR code rc, in buf[len]; returns buf. */
const char *tc_averr(int rc, char *buf, size_t len);

/* input.c: open job->input and find its streams. 0, or -1 (tc_fail). */
int tc_input_open(struct tc *t);
void tc_input_close(struct tc *t);

/* decode.c: open the video decoder on the first usable of hw[0..nhw), else
 * in software. 0, or -1 (tc_fail). */
int tc_decode_open(struct tc *t, const struct tc_hw *hw, int nhw);
/* One video packet (NULL: end of stream) through the decoder, its frames
 * on to tc_filter_frame; a device that fails reopens the stage. 0, or -1. */
int tc_decode_packet(struct tc *t, AVPacket *pkt, const struct tc_hw *hw, int nhw);
void tc_decode_free(struct tc *t);

/* filter.c: whether FFmpeg has filter `name` (struct tc_plan_in's have). */
int tc_filter_have(const char *name);
/* Build the graph of plan t->vf.plan (tc_plan_graph) for the first frame
 * f; dev is the device hwupload uploads to (NULL: none). 0, or an AVERROR
 * code, the graph freed. */
int tc_filter_build(struct tc *t, const AVFrame *f, AVBufferRef *dev);
/* A decoded frame (NULL: end of stream) into the filters (set up, with the
 * encoder, at the first), and what they give on to tc_encode_frame. 0, or
 * -1 (tc_fail). */
int tc_filter_frame(struct tc *t, AVFrame *f, const struct tc_hw *hw, int nhw);
void tc_filter_free(struct tc *t);

/* encode.c: at the first decoded frame f, the filter graph and the encoder
 * that takes its frames. 0, or -1 (tc_fail). */
int tc_encode_open(struct tc *t, const AVFrame *f, const struct tc_hw *hw, int nhw);
/* Encode (or write, --to npy) one filtered frame; NULL flushes the
 * encoder. An encoder that fails reopens in software. 0, or -1. */
int tc_encode_frame(struct tc *t, AVFrame *f, const struct tc_hw *hw, int nhw);
void tc_encode_free(struct tc *t);

/* trim.c: after tc_input_open, the shift and the seek to --start. 0. */
int tc_trim_open(struct tc *t);
/* The next packet of the input: those the seek's check read, then
 * av_read_frame's. */
int tc_trim_read(struct tc *t, AVPacket *pkt);
void tc_trim_free(struct tc *t);
/* A decoded video frame, its pts shifted: 1 to pass it on, 0 to drop it
 * (before --start, or from --duration on: then t->trim.vdone). */
int tc_trim_video(struct tc *t, AVFrame *f);
/* A copied audio packet, its timestamps shifted: 1 to write it, 0 to drop
 * it (it starts before --start, or from --duration on: t->trim.adone),
 * as ffmpeg drops copied packets. */
int tc_trim_audio_packet(struct tc *t, AVPacket *pkt);
/* The atrim filter for decoded audio ("" without trimming), in buf[len]. */
void tc_trim_audio_filter(const struct tc *t, char *buf, size_t len);
/* Whether nothing more needs to be read: each stream written is complete. */
int tc_trim_done(const struct tc *t);

/* audio.c: set up the audio the job asks for (copied or encoded again),
 * after tc_output_muxer. 0, or -1 (tc_fail). */
int tc_audio_open(struct tc *t);
/* Add the audio stream to the muxer (none when the audio is left out). 0,
 * or -1 (tc_fail). */
int tc_audio_stream(struct tc *t);
/* One audio packet (NULL: end of stream) to the output. 0, or -1. */
int tc_audio_packet(struct tc *t, AVPacket *pkt);
void tc_audio_free(struct tc *t);

/* output.c: open the destination, job->output (written to a temporary
 * there, made FILE by tc_output_commit) or stdout. 0, or an exit status
 * after the one-line error. */
int tc_output_create(const struct tc_job *job, struct accel_output *out);
/* After tc_run's `status`: the temporary becomes job->output (or is
 * removed, after a failure). Returns the exit status. */
int tc_output_commit(const struct tc_job *job, struct accel_output *out, int status);
/* Allocate the muxer and its I/O. 0, or -1 (tc_fail). */
int tc_output_muxer(struct tc *t);
/* Add the streams, write the header, then the audio held so far. 0, or
 * -1 (tc_fail). */
int tc_output_start(struct tc *t);
/* Write packet pkt (or hold it, before the header). 0, or -1. */
int tc_output_packet(struct tc *t, AVPacket *pkt);
/* Write frame f as a .npy array (--to npy). 0, or -1 (t->out.werr). */
int tc_output_npy(struct tc *t, const AVFrame *f);
/* Write the container's trailer (after a header). 0, or -1 (tc_fail). */
int tc_output_trailer(struct tc *t);
/* Flush what the muxer's I/O holds (but after a write error). */
void tc_output_flush(struct tc *t);
void tc_output_free(struct tc *t);

/* report.c: the progress line (--progress) and JSON object
 * (--progress-json), at most every 0.2 s or 1 s unless `last`. */
void tc_report_progress(struct tc *t, int last);
/* -v: the engines each stage may run on, in the order they are tried. */
void tc_report_route(const struct tc *t, const struct tc_hw *hw, int nhw);
/* At the end of a run: the warnings about stages reopened and packets
 * skipped, and with -v what each stage ran on and did. */
void tc_report_end(const struct tc *t);
/* --json: the run as an entry of job->report's runs (accel_report_job):
 * input, bytes out, frames, seconds, the error, and each stage's engine
 * with why it runs in software when hardware was tried or found wanting. */
void tc_report_json(const struct tc *t, const struct tc_hw *hw, int nhw);

#endif
