/*
 * plan.h - accel-transcode's choices that need no device to be made: the
 * pixel format an encoder is given (software, or on a hardware device),
 * the filter graph for where frames are decoded and encoded, so that
 * frames stay on a device when decode and encode are both there, and
 * which of an encoder's packets can be written without a hole.
 */
#ifndef TRANSCODE_PLAN_H
#define TRANSCODE_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>

struct tc_job;

/* The pixel format software encoder c is given: `want` (--pix-fmt) when c
 * takes it, else the decoded format `src` when c takes it, else the one
 * of c's formats closest to src (avcodec_find_best_pix_fmt_of_list, as
 * the ffmpeg program picks); c NULL or without a list: want, else src.
 * AV_PIX_FMT_NONE with a line in why[len] when `want` is no pixel format
 * or one c does not take. */
enum AVPixelFormat tc_sw_format(const AVCodec *c, const char *want, enum AVPixelFormat src, char *why, size_t len);

/* The formats of hardware encoder c on device type `type` ("cuda",
 * "vaapi", "qsv"): *hw the frames' format on the device (AV_PIX_FMT_CUDA,
 * VAAPI, QSV, from avcodec_get_hw_config), *sw the layout of their pixels
 * there: `want`, else `src`, when c takes it, else the closest of c's
 * software formats (NVENC: yuv420p, nv12, p010le, yuv444p ...; QSV: nv12,
 * p010le); for an encoder that lists none (VA-API), of nv12 and p010le.
 * 0, or -1 with a line in why[len] (c takes no frames of that type, or not
 * in `want`). */
int tc_hw_formats(const AVCodec *c, const char *type, enum AVPixelFormat src, const char *want,
		  enum AVPixelFormat *hw, enum AVPixelFormat *sw, char *why, size_t len);

/* How many of an encoder's packets not written yet (pkt_pts[0..npkt),
 * decode order) can be written so that what is written holds every frame
 * up to some point: the longest run of them that are, all together, the
 * packets of frames frame_pts[0..n) (the frames given to the encoder whose
 * packets are not written yet, in order: pts unique and rising). With
 * B-frames a reference frame comes out before the frames it is shown
 * after, and waits for them. Returns n, 0 to npkt. */
int tc_written_prefix(const int64_t *pkt_pts, int npkt, const int64_t *frame_pts, int nframes);

/* What the filter graph is asked. */
struct tc_plan_in {
	const struct tc_job *job;   /* the filters: deinterlace, crop, scale, fps */
	const char *dec;            /* device type the frames come on, NULL: memory */
	const char *enc;            /* device type they go to the encoder on, NULL: memory */
	enum AVPixelFormat src;     /* the pixels of decoded frames (sw_format on a device) */
	enum AVPixelFormat out;     /* the pixels to give the encoder (sw_format on enc) */
	int (*have)(const char *filter); /* whether FFmpeg has this filter */
};

/* The filter graph between the buffer source and sink. */
struct tc_plan {
	char chain[768];            /* libavfilter's description */
	int on_device;              /* frames leave on enc's device (the encoder takes the sink's frames context) */
	int hw_filters;             /* filters that ran on the device */
	int download, upload;       /* 1: hwdownload / hwupload in the chain */
	char note[320];             /* -v: where the filters run, and why frames move */
};

/* Plan the graph: each filter asked runs on the device the frames are on
 * when it has a version there (cuda: yadif_cuda, scale_cuda; vaapi:
 * deinterlace_vaapi, scale_vaapi; qsv: vpp_qsv; fps on any), else the
 * frames are downloaded (hwdownload) and it and the rest run in software;
 * the pixel format is converted where the frames are, and frames in
 * memory for a hardware encoder are uploaded last (hwupload). Frames on
 * one device for an encoder on another are downloaded and uploaded.
 * Without a device at either end, the software chain the program always
 * had: yadif, crop, scale (bicubic), fps, format. */
void tc_plan_graph(const struct tc_plan_in *in, struct tc_plan *p);

/* The FFmpeg muxer for --to `to` (NULL: not given) and --container
 * `container` (mkv mp4 mov webm mpegts nut avi; NULL: not given), writing
 * to `output` (NULL: stdout): the container's, else, for encoded video
 * and rawvideo, the one FFmpeg guesses from output's extension
 * (av_guess_format: .mkv .mp4 .m4v .mov .webm .ts .m2ts .nut .avi .y4m
 * .yuv ...), else Matroska (rawvideo: raw frames); y4m is always
 * yuv4mpegpipe. *deflt, when not NULL, gets the --to that muxer implies
 * when none is given, as the ffmpeg program's defaults: vp9 for WebM,
 * y4m for .y4m, rawvideo for raw frames, else h264. NULL with a line in
 * why[len] for an extension FFmpeg knows whose muxer is none of these. */
const char *tc_plan_muxer(const char *to, const char *container, const char *output, const char **deflt, char *why,
			  size_t len);

/* Whether muxer `of` carries the audio of `par` as audio when its packets
 * are copied: 1 yes; 0 no, with the reason in why[len]. The muxer's own
 * table says for most (avformat_query_codec). MPEG-TS has none and writes
 * any codec, those without an audio stream_type as private data that
 * readers take for data (PCM, FLAC, Vorbis: the audio is lost), so there
 * only the codecs with one count (ISO/IEC 13818-1 Table 2-34 and ETSI
 * TS 101 154: MPEG-1/2 audio, AAC in ADTS or LATM, AC-3, E-AC-3, DTS,
 * TrueHD, and Opus and SMPTE 302M PCM through the registration
 * descriptors FFmpeg writes). Last, the muxer is set up with that stream
 * on a scratch output, where FFmpeg refuses what it calls experimental
 * (FLAC in MP4 on FFmpeg 5.1). Opens no file and no device. */
int tc_audio_copy_fits(const AVOutputFormat *of, const AVCodecParameters *par, char *why, size_t len);

#endif
