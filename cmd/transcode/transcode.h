/*
 * transcode.h - accel-transcode's pieces: the job the options make, the
 * FFmpeg pipeline (demux, decode, filter, encode, mux) that runs it, and
 * the per-stage routing of its stages to hardware or software engines.
 */
#ifndef TRANSCODE_H
#define TRANSCODE_H

#include <stdint.h>
#include "accel.h"

/* What the user asked for. */
struct tc_job {
	const char *input;        /* "-" or NULL: stdin */
	const char *output;       /* NULL: stdout */
	int force;
	const char *to;           /* h264 hevc av1 vp9 rawvideo y4m npy */
	const char *container;    /* mkv mpegts nut mp4; NULL: by destination */
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
	struct accel_common common;
};

/* Run the job: read job->input, write out (opened by the caller). Returns
 * an exit status after printing the one-line error. */
int tc_run(const struct tc_job *job, struct accel_ctx *ctx, struct accel_output *out);
/* The signal (SIGINT, SIGTERM) that stopped a run writing to stdout after
 * it finalized the container; 0 when none did. tc_run then returned 128 +
 * the signal. */
int tc_interrupted(void);

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

#endif
