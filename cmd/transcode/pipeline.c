/*
 * pipeline.c - accel-transcode's pipeline on the FFmpeg libraries: demux
 * (libavformat, reading through the core's accel_input), decode
 * (libavcodec, on a hardware device when the route says so), filter
 * (libavfilter: deinterlace, crop, scale, fps, pixel format), encode, and
 * mux (libavformat, writing through the core's accel_output), or NumPy
 * arrays. Audio is copied or re-encoded beside the video.
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libavcodec/avcodec.h>
#include <libavcodec/bsf.h>
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavformat/avformat.h>
#include <libavutil/hwcontext.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
#include "plan.h"
#include "transcode.h"

#define IO_BUF 65536
#define MAX_QUEUED 8192          /* audio packets held before the header */
#define MAX_GOP 1024             /* video packets kept to decode again after a failure */
#define MAX_HELD 256             /* frames kept to encode again after a failure */

static const char *const stage_names[TC_NSTAGES] = { "decode", "filter", "encode" };

/* What one stage runs on, and what it did. */
struct stage {
	char engine[48];          /* "ffmpeg.cuda:gpu0", "ffmpeg:cpu0" */
	char what[64];            /* "h264 (libavcodec)", "libx264", "scale,format" */
	int hw;                   /* 1: on a hardware device */
	uint64_t frames;
	double seconds;
	char before[160];         /* after a reopening: where it ran first */
};

struct tc {
	const struct tc_job *job;
	struct accel_ctx *ctx;
	struct accel_input in;
	int in_open;
	struct accel_output *out;
	int64_t in_base;          /* file offset of the input's first byte */
	int werr;                 /* the output's ACCEL_E* error, 0 */

	AVFormatContext *ifmt, *ofmt;
	AVIOContext *ipb;         /* the input's I/O (ours) */
	int vidx, aidx;
	AVCodecContext *dec, *enc, *adec, *aenc;
	AVBufferRef *hwdev;       /* decode device, NULL: software */
	enum AVPixelFormat hw_pix_fmt;
	const struct tc_hw *dec_hw, *enc_hw;
	AVBufferRef *enc_hwdev;
	AVFilterGraph *vgraph, *agraph;
	AVBufferRef *src_frames;  /* the graph takes frames on this device, NULL: in memory */
	struct tc_plan plan;
	AVFilterContext *vsrc, *vsink, *asrc, *asink;
	AVStream *ovst, *oast;
	int acopy;
	AVBSFContext *adts;       /* ADTS headers off copied AAC, or NULL */
	int64_t anext;            /* the next decoded sample's pts (1/rate), or AV_NOPTS_VALUE */
	int header;               /* 1: output header written */
	int raw;                  /* 1: --to npy (written here, no muxer) */
	enum AVPixelFormat out_fmt;
	AVPacket **queue;         /* audio packets waiting for the header */
	int nqueue;
	AVFrame *frame, *sw, *filt;
	AVPacket *pkt;

	struct stage st[TC_NSTAGES];
	uint64_t packets, bad_packets, written_frames;
	double t0;
	double duration;          /* seconds of media, <= 0 unknown */
	double media_pos;         /* seconds reached at the encoder */
	double last_report;
	int meter;                /* 1: draw the progress line on stderr */
	char err[512];
	int status;
	char sw_engine[48];       /* the software engine's name */

	/* A decode stage that fails mid-stream reopens once (reopen_decoder). */
	AVPacket *gop[MAX_GOP];   /* video packets since the last keyframe */
	int ngop, gop_whole;      /* gop_whole: gop[] starts at a keyframe */
	uint64_t vpackets;        /* video packets given to the decoder */
	int64_t last_pts;         /* pts of the last frame passed on */
	int64_t skip_upto;        /* after a reopen: frames up to this pts are dropped */
	int reopened, wait_key, replayed;
	uint64_t redecoded, skipped;
	char reopen_note[256];

	/* An encode stage that fails mid-stream reopens once, in software
	 * (reopen_encoder). While `holding`, the frames given to the encoder
	 * are kept until the packets written cover them, and its packets are
	 * held until they are all those of a run of frames from the first
	 * kept one: what is written is then always every frame up to some
	 * point, which a new encoder continues from. */
	AVFrame *held[MAX_HELD];  /* frames in the encoder, pts in its time base, in order */
	int nheld;
	AVPacket *pend[MAX_HELD]; /* its packets not written yet, in decode order */
	int npend;
	int holding;
	uint64_t enc_sent;        /* frames given to the encoder (the fault's unit) */
	int enc_reopened;
	uint64_t reencoded, enc_from;
	int64_t last_dts;         /* of the last video packet written, encoder time base */
	char enc_note[320];
	struct SwsContext *sws;   /* to the takeover encoder's pixel format */
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

static const char *averr(int rc, char *buf, size_t len)
{
	av_strerror(rc, buf, len);
	return buf;
}

/* Set t->status and t->err once: the first error wins. */
static int fail(struct tc *t, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct tc *t, int status, const char *fmt, ...)
{
	if (!t->status) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(t->err, sizeof t->err, fmt, ap);
		va_end(ap);
		t->status = status;
	}
	return -1;
}

/* ------------------------------------------------------------ input */

/* Read what the input has (at least a byte), waiting in steps of a
 * quarter second so that SIGINT or SIGTERM stops a run whose input pauses. */
static int read_cb(void *opaque, uint8_t *buf, int n)
{
	struct tc *t = opaque;
	const uint8_t *p;
	for (;;) {
		if (interrupted)
			return AVERROR_EXIT;
		ssize_t r = accel_input_peek_until(&t->in, 1, accel_now() + 0.25, &p);
		if (r < 0)
			return AVERROR(errno ? errno : EIO);
		if (r == 0 && t->in.eof)
			return AVERROR_EOF;
		if (r == 0)
			continue;
		/* A deadline already passed: what is buffered, up to n. */
		r = accel_input_peek_until(&t->in, (size_t)n, 0, &p);
		if (r < 0)
			return AVERROR(errno ? errno : EIO);
		memcpy(buf, p, (size_t)r);
		accel_input_consume(&t->in, (size_t)r);
		return (int)r;
	}
}

/* Seeking a regular file (a file argument, or stdin redirected from one):
 * the input's buffer is dropped and reading starts again at the offset. */
static int64_t iseek_cb(void *opaque, int64_t off, int whence)
{
	struct tc *t = opaque;
	struct accel_input *in = &t->in;
	if (whence & AVSEEK_SIZE)
		return in->size;
	whence &= ~AVSEEK_FORCE;
	int64_t to = whence == SEEK_SET ? off : whence == SEEK_CUR ? (int64_t)in->offset + off
		   : whence == SEEK_END ? in->size + off : -1;
	if (to < 0 || lseek(in->fd, t->in_base + to, SEEK_SET) < 0)
		return AVERROR(EINVAL);
	in->start = in->end = 0;
	in->eof = 0;
	in->offset = (uint64_t)to;
	return to;
}

/* Whether the input is an MP4 with its index at the end (peeked, not
 * consumed). */
static int mp4_index_at_end(struct accel_input *in)
{
	const uint8_t *p;
	ssize_t n = accel_input_peek(in, IO_BUF, &p);
	return n > 0 && accel_mp4_index_at_end(p, (size_t)n);
}

static int open_input(struct tc *t)
{
	const struct tc_job *job = t->job;
	if (accel_input_open(&t->in, job->input) < 0)
		return fail(t, ACCEL_EXIT_FAILURE, "cannot read %s: %s", job->input ? job->input : "stdin",
			    strerror(errno));
	t->in_open = 1;
	if (t->in.fd == 0 && isatty(0) && !job->force)
		return fail(t, ACCEL_EXIT_FAILURE, "stdin is a terminal; give a FILE, a pipe or -f");
	int seekable = t->in.size >= 0 && t->in.fd >= 0;
	if (seekable)
		t->in_base = lseek(t->in.fd, 0, SEEK_CUR);
	if (!seekable && mp4_index_at_end(&t->in))
		return fail(t, ACCEL_EXIT_FAILURE, "%s: an MP4 with its index (moov) at the end cannot be read "
			    "from a pipe; give the file as an argument", t->in.name);
	t->ifmt = avformat_alloc_context();
	uint8_t *buf = av_malloc(IO_BUF);
	if (!t->ifmt || !buf) {
		av_free(buf);
		return fail(t, ACCEL_EXIT_FAILURE, "out of memory");
	}
	/* Ours to free: avformat_open_input frees the context, not its I/O. */
	t->ipb = avio_alloc_context(buf, IO_BUF, 0, t, read_cb, NULL, seekable ? iseek_cb : NULL);
	if (!t->ipb) {
		av_free(buf);
		return fail(t, ACCEL_EXIT_FAILURE, "out of memory");
	}
	t->ifmt->pb = t->ipb;
	t->ifmt->pb->seekable = seekable ? AVIO_SEEKABLE_NORMAL : 0;
	t->ifmt->flags |= AVFMT_FLAG_CUSTOM_IO;
	char e[128];
	int rc = avformat_open_input(&t->ifmt, t->in.name, NULL, NULL);
	if (rc < 0)
		return fail(t, ACCEL_EXIT_DATA, "%s: not a media file FFmpeg can read (%s)", t->in.name,
			    averr(rc, e, sizeof e));
	rc = avformat_find_stream_info(t->ifmt, NULL);
	if (rc < 0)
		return fail(t, ACCEL_EXIT_DATA, "%s: cannot read the streams (%s)", t->in.name, averr(rc, e, sizeof e));
	t->vidx = av_find_best_stream(t->ifmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
	if (t->vidx < 0)
		return fail(t, ACCEL_EXIT_DATA, "%s: no video stream", t->in.name);
	t->aidx = av_find_best_stream(t->ifmt, AVMEDIA_TYPE_AUDIO, -1, t->vidx, NULL, 0);
	if (t->ifmt->duration > 0)
		t->duration = (double)t->ifmt->duration / AV_TIME_BASE;
	return 0;
}

/* ----------------------------------------------------------- decoder */

static enum AVPixelFormat get_hw_format(AVCodecContext *c, const enum AVPixelFormat *fmts)
{
	struct tc *t = c->opaque;
	for (const enum AVPixelFormat *f = fmts; *f != AV_PIX_FMT_NONE; f++)
		if (*f == t->hw_pix_fmt)
			return *f;
	/* The device cannot decode this stream: the software format. */
	return fmts[0] == t->hw_pix_fmt ? fmts[1] : fmts[0];
}

/* Open the decoder on hardware `hw`: 0, or -1 with the reason in why. */
static int open_hw_decoder(struct tc *t, const AVCodec *codec, const struct tc_hw *hw, char *why, size_t len)
{
	enum AVHWDeviceType type = av_hwdevice_find_type_by_name(hw->type);
	const AVCodecHWConfig *cfg = NULL;
	for (int i = 0; (cfg = avcodec_get_hw_config(codec, i)); i++)
		if (cfg->device_type == type && cfg->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX)
			break;
	if (!cfg) {
		snprintf(why, len, "%.40s has no %.15s decoding in this FFmpeg", codec->name, hw->type);
		return -1;
	}
	char e[128];
	int rc = av_hwdevice_ctx_create(&t->hwdev, type, hw->device[0] ? hw->device : NULL, NULL, 0);
	if (rc < 0) {
		snprintf(why, len, "cannot open the %.15s device: %.120s", hw->type, averr(rc, e, sizeof e));
		return -1;
	}
	t->hw_pix_fmt = cfg->pix_fmt;
	t->dec->hw_device_ctx = av_buffer_ref(t->hwdev);
	t->dec->opaque = t;
	t->dec->get_format = get_hw_format;
	return 0;
}

static int open_decoder(struct tc *t, const struct tc_hw *hw, int nhw)
{
	AVStream *st = t->ifmt->streams[t->vidx];
	const AVCodec *codec = avcodec_find_decoder(st->codecpar->codec_id);
	if (!codec)
		return fail(t, ACCEL_EXIT_DATA, "%s: no decoder for %s video", t->in.name,
			    avcodec_get_name(st->codecpar->codec_id));
	struct stage *s = &t->st[TC_DECODE];
	char e[128];
	for (int i = 0; i <= nhw; i++) {
		int sw = i == nhw;
		if (!sw && !hw[i].usable)
			continue;
		t->dec = avcodec_alloc_context3(codec);
		if (!t->dec || avcodec_parameters_to_context(t->dec, st->codecpar) < 0)
			return fail(t, ACCEL_EXIT_FAILURE, "out of memory");
		t->dec->pkt_timebase = st->time_base;
		t->dec->thread_count = t->job->common.threads;
		/* Frames kept on the device by the filters and the encoder
		 * (and for its reopening) come from the decoder's pool. */
		if (!sw)
			t->dec->extra_hw_frames = 16;
		char why[200] = "";
		int rc = sw ? 0 : open_hw_decoder(t, codec, &hw[i], why, sizeof why);
		if (rc == 0 && (rc = avcodec_open2(t->dec, codec, NULL)) < 0)
			snprintf(why, sizeof why, "%s", averr(rc, e, sizeof e));
		if (rc >= 0) {
			snprintf(s->engine, sizeof s->engine, "%s", sw ? t->sw_engine : hw[i].engine);
			snprintf(s->what, sizeof s->what, "%s%s%s", codec->name, sw ? "" : " via ", sw ? "" : hw[i].type);
			s->hw = !sw;
			t->dec_hw = sw ? NULL : &hw[i];
			return 0;
		}
		avcodec_free_context(&t->dec);
		av_buffer_unref(&t->hwdev);
		if (sw)
			return fail(t, ACCEL_EXIT_DATA, "%s: cannot open the %s decoder: %s", t->in.name, codec->name, why);
		if (t->job->common.fallback == ACCEL_FALLBACK_NONE)
			return fail(t, ACCEL_EXIT_FAILURE, "decode on %s failed: %s (--fallback none)", hw[i].engine, why);
		if (!t->job->common.quiet)
			accel_msg_warn("decode on %s failed: %s; decoding in software", hw[i].engine, why);
	}
	return -1;
}

/* ------------------------------------------------------------ output */

static int write_cb(void *opaque, uint8_t *buf, int n)
{
	struct tc *t = opaque;
	int rc = accel_output_write(t->out, buf, (size_t)n);
	if (rc < 0) {
		t->werr = rc;
		return rc == ACCEL_EPIPE ? AVERROR(EPIPE) : AVERROR(EIO);
	}
	return n;
}

static int64_t oseek_cb(void *opaque, int64_t off, int whence)
{
	struct tc *t = opaque;
	if (whence & AVSEEK_SIZE)
		return AVERROR(ENOSYS);
	int64_t r = accel_output_seek(t->out, off, whence & ~AVSEEK_FORCE);
	return r < 0 ? AVERROR(ESPIPE) : r;
}

/* The muxer for the job: its FFmpeg name. */
static const char *muxer_name(const struct tc_job *job)
{
	const char *c = job->container;
	if (!c && !job->output && !strcmp(job->to, "rawvideo"))
		return "rawvideo";
	if (!c && !strcmp(job->to, "y4m"))
		return "yuv4mpegpipe";
	if (!c && !strcmp(job->to, "rawvideo"))
		return "rawvideo";
	if (!c && job->output) {
		const char *dot = strrchr(job->output, '.');
		if (dot && (!strcmp(dot, ".mp4") || !strcmp(dot, ".m4v") || !strcmp(dot, ".mov")))
			c = "mp4";
		else if (dot && (!strcmp(dot, ".ts") || !strcmp(dot, ".m2ts")))
			c = "mpegts";
		else if (dot && !strcmp(dot, ".nut"))
			c = "nut";
		else if (dot && !strcmp(dot, ".webm"))
			c = "webm";
	}
	if (!c || !strcmp(c, "mkv"))
		return "matroska";
	return c;
}

/* The software encoders of each --to, best first. */
static const char *const *sw_encoders(const char *to)
{
	static const char *const h264[] = { "libx264", NULL }, *const hevc[] = { "libx265", NULL },
		*const av1[] = { "libsvtav1", "libaom-av1", NULL }, *const vp9[] = { "libvpx-vp9", NULL },
		*const raw[] = { "rawvideo", NULL }, *const y4m[] = { "wrapped_avframe", NULL };
	return !strcmp(to, "h264") ? h264 : !strcmp(to, "hevc") ? hevc : !strcmp(to, "av1") ? av1
	       : !strcmp(to, "vp9") ? vp9 : !strcmp(to, "y4m") ? y4m : raw;
}

/* Options of encoder `name` for --quality, --preset and -T. */
static void encoder_options(const struct tc_job *job, const char *name, AVDictionary **o)
{
	int q = job->quality, q63 = q < 0 ? -1 : (q * 63 + 25) / 51;
	int threads = job->common.threads > 0 ? job->common.threads : accel_cpu_count();
	const char *p = job->preset;
	int fast = p && !strcmp(p, "fast"), med = p && !strcmp(p, "medium"), slow = p && !strcmp(p, "slow");
	char v[64];
	if (!strcmp(name, "libx264") || !strcmp(name, "libx265")) {
		if (q >= 0)
			av_dict_set_int(o, "crf", q, 0);
		if (p)
			av_dict_set(o, "preset", p, 0);
		if (!strcmp(name, "libx265")) {
			/* x265's pools otherwise take every core. */
			snprintf(v, sizeof v, "pools=%d:frame-threads=%d:log-level=error", threads,
				 threads < 4 ? threads : 4);
			av_dict_set(o, "x265-params", v, 0);
		}
	} else if (!strcmp(name, "libsvtav1") || !strcmp(name, "libaom-av1")) {
		if (q63 >= 0)
			av_dict_set_int(o, "crf", q63, 0);
		if (!strcmp(name, "libsvtav1")) {
			if (p)
				av_dict_set(o, "preset", fast ? "10" : med ? "8" : slow ? "5" : p, 0);
			/* SVT-AV1 otherwise starts threads for every core. */
			snprintf(v, sizeof v, "lp=%d", threads);
			av_dict_set(o, "svtav1-params", v, 0);
		} else if (p) {
			av_dict_set(o, "cpu-used", fast ? "6" : med ? "4" : slow ? "2" : p, 0);
		}
	} else if (!strcmp(name, "libvpx-vp9")) {
		if (q63 >= 0)
			av_dict_set_int(o, "crf", q63, 0);
		if (p)
			av_dict_set(o, "cpu-used", fast ? "5" : med ? "3" : slow ? "1" : p, 0);
		av_dict_set(o, "row-mt", "1", 0);
	} else if (strstr(name, "_nvenc")) {
		if (q >= 0) {
			av_dict_set(o, "rc", "vbr", 0);
			av_dict_set_int(o, "cq", q, 0);
		}
		if (p)
			av_dict_set(o, "preset", fast ? "p2" : med ? "p4" : slow ? "p6" : p, 0);
	} else if (strstr(name, "_vaapi")) {
		if (q >= 0) {
			av_dict_set(o, "rc_mode", "CQP", 0);
			av_dict_set_int(o, "qp", q, 0);
		}
	} else if (strstr(name, "_qsv")) {
		if (q >= 0)
			av_dict_set_int(o, "global_quality", q, 0);
		if (p)
			av_dict_set(o, "preset", fast ? "veryfast" : med ? "medium" : slow ? "veryslow" : p, 0);
	}
}

/* SVT-AV1 gives the threads it starts real-time scheduling (SCHED_FIFO)
 * when run as root, where they can starve the rest of the machine: should
 * any have it still, put every real-time thread of this process back to
 * normal scheduling. Returns how many were moved. */
static int demote_rt_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return 0;
	int moved = 0;
	struct dirent *e;
	struct sched_param normal = { 0 };
	while ((e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		if (tid <= 0)
			continue;
		int pol = sched_getscheduler(tid);
		if ((pol == SCHED_FIFO || pol == SCHED_RR) && sched_setscheduler(tid, SCHED_OTHER, &normal) == 0)
			moved++;
	}
	closedir(d);
	return moved;
}

static int write_packet(struct tc *t, AVPacket *pkt)
{
	if (!t->header) {
		if (t->nqueue >= MAX_QUEUED)
			return fail(t, ACCEL_EXIT_DATA, "%s: more than %d audio packets before the first video frame",
				    t->in.name, MAX_QUEUED);
		AVPacket **q = av_realloc_array(t->queue, (size_t)t->nqueue + 1, sizeof *q);
		if (!q)
			return fail(t, ACCEL_EXIT_FAILURE, "out of memory");
		t->queue = q;
		if (!(q[t->nqueue] = av_packet_clone(pkt)))
			return fail(t, ACCEL_EXIT_FAILURE, "out of memory");
		t->nqueue++;
		av_packet_unref(pkt);
		return 0;
	}
	int rc = av_interleaved_write_frame(t->ofmt, pkt);
	if (rc < 0) {
		char e[128];
		if (t->werr)
			return -1;
		return fail(t, ACCEL_EXIT_FAILURE, "cannot write %s: %s", t->job->output ? t->job->output : "stdout",
			    averr(rc, e, sizeof e));
	}
	return 0;
}

/* Allocate the muxer and its output I/O. */
static int open_muxer(struct tc *t)
{
	const struct tc_job *job = t->job;
	const char *mux = muxer_name(job);
	char e[128];
	int rc = avformat_alloc_output_context2(&t->ofmt, NULL, mux, NULL);
	if (rc < 0)
		return fail(t, ACCEL_EXIT_USAGE, "--container: FFmpeg has no %s muxer (%s)", mux, averr(rc, e, sizeof e));
	uint8_t *buf = av_malloc(IO_BUF);
	/* A FILE is written to a temporary, which seeks (mp4's index goes
	 * last); stdout and devices do not. */
	int seekable = t->out->tmp != NULL;
	if (!buf || !(t->ofmt->pb = avio_alloc_context(buf, IO_BUF, 1, t, NULL, write_cb, seekable ? oseek_cb : NULL))) {
		av_free(buf);
		return fail(t, ACCEL_EXIT_FAILURE, "out of memory");
	}
	t->ofmt->pb->seekable = seekable ? AVIO_SEEKABLE_NORMAL : 0;
	t->ofmt->flags |= AVFMT_FLAG_CUSTOM_IO;
	return 0;
}

/* The software format of what the graph gives: the sink's, or for frames
 * on a device, that of their frames context. */
static enum AVPixelFormat sink_sw_format(const struct tc *t)
{
	AVBufferRef *fr = av_buffersink_get_hw_frames_ctx(t->vsink);
	if (fr)
		return ((AVHWFramesContext *)fr->data)->sw_format;
	return av_buffersink_get_format(t->vsink);
}

/* Open encoder c for what the filter graph gives, on hardware h (NULL:
 * software; on h, the frames the graph leaves there). A takeover (reopen_encoder) writes its parameter sets in
 * band (no global header: the container's header holds the first
 * encoder's) and no B-frames, so that its timestamps follow those
 * written already. 0, or an AVERROR code (t->enc freed). */
static int try_encoder(struct tc *t, const AVCodec *c, const struct tc_hw *h, int takeover)
{
	const struct tc_job *job = t->job;
	AVRational rate = av_buffersink_get_frame_rate(t->vsink);
	if (rate.num <= 0 || rate.den <= 0)
		rate = av_guess_frame_rate(t->ifmt, t->ifmt->streams[t->vidx], NULL);
	if (rate.num <= 0 || rate.den <= 0)
		rate = (AVRational){ 25, 1 };
	t->enc = avcodec_alloc_context3(c);
	if (!t->enc)
		return AVERROR(ENOMEM);
	t->enc->width = av_buffersink_get_w(t->vsink);
	t->enc->height = av_buffersink_get_h(t->vsink);
	t->enc->sample_aspect_ratio = av_buffersink_get_sample_aspect_ratio(t->vsink);
	t->enc->pix_fmt = av_buffersink_get_format(t->vsink);
	if (takeover) {
		char why[200];
		t->enc->pix_fmt = tc_sw_format(c, NULL, sink_sw_format(t), why, sizeof why);
	}
	t->enc->framerate = rate;
	t->enc->time_base = av_inv_q(rate);
	t->enc->thread_count = job->common.threads;
	if (job->keyint)
		t->enc->gop_size = job->keyint;
	if (job->bitrate)
		t->enc->bit_rate = job->bitrate;
	if (takeover)
		t->enc->max_b_frames = 0;
	else if (t->ofmt->oformat->flags & AVFMT_GLOBALHEADER)
		t->enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
	int rc = 0;
	if (h) {
		/* The frames the graph leaves on the device. */
		AVBufferRef *fr = av_buffersink_get_hw_frames_ctx(t->vsink);
		rc = !fr ? AVERROR(EINVAL) : !(t->enc->hw_frames_ctx = av_buffer_ref(fr)) ? AVERROR(ENOMEM) : 0;
	}
	AVDictionary *o = NULL;
	encoder_options(job, c->name, &o);
	/* SVT-AV1 asks for real-time scheduling when it runs as root (it
	 * looks at the effective uid): open it as nobody, then take root
	 * back. */
	int drop = !strcmp(c->name, "libsvtav1") && geteuid() == 0 && seteuid(65534) == 0;
	if (rc >= 0)
		rc = avcodec_open2(t->enc, c, &o);
	if (drop && seteuid(0) < 0) {
		fail(t, ACCEL_EXIT_FAILURE, "cannot take back the effective uid 0: %s", strerror(errno));
		rc = AVERROR_EXIT;
	}
	av_dict_free(&o);
	if (rc < 0) {
		avcodec_free_context(&t->enc);
		return rc;
	}
	if (!strcmp(c->name, "libsvtav1"))
		demote_rt_threads();
	return 0;
}

/* An AAC AudioSpecificConfig (ISO/IEC 14496-3, 1.6.2.1: 5 bits of object
 * type, 4 of sampling frequency index, 4 of channel configuration, 3 zero)
 * for AAC copied from ADTS (MPEG-TS), which carries none: a muxer writing
 * to a pipe needs it in its header. 0, or -1 when the stream has no index
 * for its rate or an unknown profile. */
static int aac_config(AVCodecParameters *par)
{
	static const int rates[] = { 96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025,
				     8000, 7350 };
	int idx = -1, ch = par->ch_layout.nb_channels;
	for (int i = 0; i < 13; i++)
		if (rates[i] == par->sample_rate)
			idx = i;
	if (idx < 0 || ch < 1 || ch > 7 || par->profile < 0 || par->profile > 30)
		return -1;
	uint8_t *x = av_mallocz(2 + AV_INPUT_BUFFER_PADDING_SIZE);
	if (!x)
		return -1;
	int aot = par->profile + 1;
	x[0] = (uint8_t)(aot << 3 | idx >> 1);
	x[1] = (uint8_t)((idx & 1) << 7 | ch << 3);
	par->extradata = x;
	par->extradata_size = 2;
	return 0;
}

/* Add the output streams, write the header, then the audio held so far. */
static int start_output(struct tc *t)
{
	char e[128];
	/* Frames are kept to encode again should the encoder fail: for a
	 * hardware one, or any when $ACCEL_FAULT may make it fail. */
	const char *faults = getenv("ACCEL_FAULT");
	t->holding = t->st[TC_ENCODE].hw || (faults && *faults);
	t->ovst = avformat_new_stream(t->ofmt, NULL);
	if (!t->ovst || avcodec_parameters_from_context(t->ovst->codecpar, t->enc) < 0)
		return fail(t, ACCEL_EXIT_FAILURE, "out of memory");
	t->ovst->time_base = t->enc->time_base;
	t->ovst->avg_frame_rate = t->enc->framerate;
	if (avformat_query_codec(t->ofmt->oformat, t->enc->codec_id, FF_COMPLIANCE_NORMAL) == 0)
		return fail(t, ACCEL_EXIT_USAGE, "%s cannot go in a %s container; choose another --container",
			    avcodec_get_name(t->enc->codec_id), t->ofmt->oformat->name);
	if (t->aidx >= 0 && (t->acopy || t->aenc)) {
		t->oast = avformat_new_stream(t->ofmt, NULL);
		if (!t->oast)
			return fail(t, ACCEL_EXIT_FAILURE, "out of memory");
		AVStream *ist = t->ifmt->streams[t->aidx];
		if (t->acopy) {
			if (avcodec_parameters_copy(t->oast->codecpar, ist->codecpar) < 0)
				return fail(t, ACCEL_EXIT_FAILURE, "out of memory");
			t->oast->codecpar->codec_tag = 0;
			if (t->adts)
				aac_config(t->oast->codecpar);
			t->oast->time_base = ist->time_base;
		} else {
			if (avcodec_parameters_from_context(t->oast->codecpar, t->aenc) < 0)
				return fail(t, ACCEL_EXIT_FAILURE, "out of memory");
			t->oast->time_base = t->aenc->time_base;
		}
	}
	AVDictionary *o = NULL;
	if (!strcmp(t->ofmt->oformat->name, "mp4") && !(t->ofmt->pb->seekable & AVIO_SEEKABLE_NORMAL))
		av_dict_set(&o, "movflags", "frag_keyframe+empty_moov+default_base_moof", 0);
	int rc = avformat_write_header(t->ofmt, &o);
	av_dict_free(&o);
	if (rc < 0) {
		if (t->werr)
			return -1;
		return fail(t, ACCEL_EXIT_FAILURE, "cannot write the %s header: %s", t->ofmt->oformat->name,
			    averr(rc, e, sizeof e));
	}
	t->header = 1;
	for (int i = 0; i < t->nqueue; i++) {
		AVPacket *p = t->queue[i];
		p->stream_index = t->oast->index;
		AVRational tb = t->acopy ? t->ifmt->streams[t->aidx]->time_base : t->aenc->time_base;
		av_packet_rescale_ts(p, tb, t->oast->time_base);
		if (t->status == 0)
			write_packet(t, p);
		av_packet_free(&t->queue[i]);
	}
	t->nqueue = 0;
	return t->status ? -1 : 0;
}

/* ------------------------------------------------------------ filters */

/* The pixel format frames leave the graph in for a software encoder (or
 * as frames): AV_PIX_FMT_NONE after fail() for a --pix-fmt it does not
 * take. */
static enum AVPixelFormat output_format(struct tc *t, enum AVPixelFormat src)
{
	const struct tc_job *job = t->job;
	if (!strcmp(job->to, "npy"))
		return job->pix_fmt ? av_get_pix_fmt(job->pix_fmt) : AV_PIX_FMT_RGB24;
	if (!strcmp(job->to, "y4m") && !job->pix_fmt)
		return src == AV_PIX_FMT_YUV422P || src == AV_PIX_FMT_YUV444P || src == AV_PIX_FMT_GRAY8
		       ? src : AV_PIX_FMT_YUV420P;
	const char *const *sws = sw_encoders(job->to);
	const AVCodec *c = NULL;
	for (int k = 0; sws[k] && !c; k++)
		c = avcodec_find_encoder_by_name(sws[k]);
	char why[512];
	enum AVPixelFormat f = tc_sw_format(c, job->pix_fmt, src, why, sizeof why);
	if (f == AV_PIX_FMT_NONE)
		fail(t, ACCEL_EXIT_USAGE, "%s", why);
	return f;
}

static int have_filter(const char *name)
{
	return avfilter_get_by_name(name) != NULL;
}

/* Build the graph of plan t->plan for the first frame f; `dev` is the
 * device hwupload uploads to (NULL: none). An AVERROR code, the graph
 * freed, on failure. */
static int build_graph(struct tc *t, const AVFrame *f, AVBufferRef *dev)
{
	AVStream *st = t->ifmt->streams[t->vidx];
	char args[512];
	t->vgraph = avfilter_graph_alloc();
	if (!t->vgraph)
		return AVERROR(ENOMEM);
	/* As the ffmpeg program does: bicubic for the scalers it inserts. */
	t->vgraph->scale_sws_opts = av_strdup("flags=bicubic");
	t->vgraph->nb_threads = t->job->common.threads;
	AVRational sar = f->sample_aspect_ratio.num ? f->sample_aspect_ratio : (AVRational){ 0, 1 };
	AVRational fr = av_guess_frame_rate(t->ifmt, st, NULL);
	snprintf(args, sizeof args, "video_size=%dx%d:pix_fmt=%d:time_base=%d/%d:pixel_aspect=%d/%d", f->width,
		 f->height, f->format, st->time_base.num, st->time_base.den, sar.num, sar.den > 0 ? sar.den : 1);
	if (fr.num > 0 && fr.den > 0) {
		size_t n = strlen(args);
		snprintf(args + n, sizeof args - n, ":frame_rate=%d/%d", fr.num, fr.den);
	}
	int rc = avfilter_graph_create_filter(&t->vsrc, avfilter_get_by_name("buffer"), "in", args, NULL, t->vgraph);
	if (rc >= 0 && f->hw_frames_ctx) {
		/* Frames on the device: the source says on which frames. */
		AVBufferSrcParameters *par = av_buffersrc_parameters_alloc();
		if (!par) {
			rc = AVERROR(ENOMEM);
		} else {
			par->format = f->format;
			par->hw_frames_ctx = f->hw_frames_ctx;
			rc = av_buffersrc_parameters_set(t->vsrc, par);
			av_free(par);
		}
	}
	if (rc >= 0)
		rc = avfilter_graph_create_filter(&t->vsink, avfilter_get_by_name("buffersink"), "out", NULL, NULL,
						  t->vgraph);
	AVFilterInOut *outs = avfilter_inout_alloc(), *ins = avfilter_inout_alloc();
	if (rc >= 0 && (!outs || !ins))
		rc = AVERROR(ENOMEM);
	if (rc >= 0) {
		outs->name = av_strdup("in");
		outs->filter_ctx = t->vsrc;
		ins->name = av_strdup("out");
		ins->filter_ctx = t->vsink;
		rc = avfilter_graph_parse_ptr(t->vgraph, t->plan.chain, &ins, &outs, NULL);
	}
	avfilter_inout_free(&outs);
	avfilter_inout_free(&ins);
	/* hwupload uploads to the encoder's device. */
	for (unsigned i = 0; rc >= 0 && i < t->vgraph->nb_filters; i++) {
		AVFilterContext *fc = t->vgraph->filters[i];
		if (!strcmp(fc->filter->name, "hwupload") && !(rc = dev ? 0 : AVERROR(EINVAL)) &&
		    !(fc->hw_device_ctx = av_buffer_ref(dev)))
			rc = AVERROR(ENOMEM);
	}
	if (rc >= 0)
		rc = avfilter_graph_config(t->vgraph, NULL);
	if (rc < 0)
		avfilter_graph_free(&t->vgraph);
	return rc;
}

/* At the first decoded frame f: plan and build the filter graph and open
 * the encoder that takes its frames, trying the hardware encoders first
 * (CODEC_TYPE: h264_nvenc, hevc_vaapi ...; their own frames, on the
 * device: tc_hw_formats), then software. A hardware encoder that cannot
 * open, or whose graph cannot be built, falls back with one line (or
 * fails, --fallback none). */
static int open_video(struct tc *t, const AVFrame *f, const struct tc_hw *hw, int nhw)
{
	const struct tc_job *job = t->job;
	struct stage *fs = &t->st[TC_FILTER], *es = &t->st[TC_ENCODE];
	const char *dec = f->hw_frames_ctx && t->dec_hw ? t->dec_hw->type : NULL;
	enum AVPixelFormat src = f->hw_frames_ctx ? ((AVHWFramesContext *)f->hw_frames_ctx->data)->sw_format : f->format;
	int frames_out = t->raw || !strcmp(job->to, "rawvideo") || !strcmp(job->to, "y4m");
	char e[128], why[512] = "";
	struct tc_plan_in in = { job, dec, NULL, src, AV_PIX_FMT_NONE, have_filter };
	for (int i = 0; i <= nhw; i++) {
		int sw = i == nhw, rc = 0;
		if (!sw && (!hw[i].usable || frames_out))
			continue;
		const AVCodec *c = NULL;
		AVBufferRef *dev = NULL;
		if (sw) {
			in.enc = NULL;
			if ((in.out = output_format(t, src)) == AV_PIX_FMT_NONE)
				return -1;
		} else {
			char name[32];
			snprintf(name, sizeof name, "%s_%s", job->to, !strcmp(hw[i].type, "cuda") ? "nvenc" : hw[i].type);
			enum AVPixelFormat hwf;
			in.enc = hw[i].type;
			if (!(c = avcodec_find_encoder_by_name(name))) {
				snprintf(why, sizeof why, "%s is not in this FFmpeg", name);
				rc = -1;
			} else if (tc_hw_formats(c, hw[i].type, src, job->pix_fmt, &hwf, &in.out, why, sizeof why) < 0) {
				rc = -1;
			} else if (dec && !strcmp(dec, hw[i].type)) {
				dev = t->hwdev;
			} else {
				enum AVHWDeviceType type = av_hwdevice_find_type_by_name(hw[i].type);
				rc = av_hwdevice_ctx_create(&t->enc_hwdev, type, hw[i].device[0] ? hw[i].device : NULL, NULL, 0);
				if (rc < 0)
					snprintf(why, sizeof why, "cannot open the %s device: %s", hw[i].type, averr(rc, e, sizeof e));
				dev = t->enc_hwdev;
			}
		}
		if (rc >= 0) {
			tc_plan_graph(&in, &t->plan);
			if ((rc = build_graph(t, f, dev)) < 0)
				snprintf(why, sizeof why, "cannot set up the filters '%s': %s", t->plan.chain,
					 averr(rc, e, sizeof e));
		}
		if (rc >= 0 && sw && !t->raw) {
			/* The software encoders of --to, best first. */
			const char *const *sws = sw_encoders(job->to);
			rc = AVERROR_ENCODER_NOT_FOUND;
			for (int k = 0; sws[k] && rc < 0 && !t->status; k++) {
				if (!(c = avcodec_find_encoder_by_name(sws[k]))) {
					snprintf(why, sizeof why, "%s is not in this FFmpeg", sws[k]);
					continue;
				}
				if ((rc = try_encoder(t, c, NULL, 0)) < 0)
					snprintf(why, sizeof why, "%s: %s", c->name, averr(rc, e, sizeof e));
			}
		} else if (rc >= 0 && !sw && (rc = try_encoder(t, c, &hw[i], 0)) < 0) {
			snprintf(why, sizeof why, "%s: %s", c->name, averr(rc, e, sizeof e));
		}
		if (t->status)
			return -1;
		if (rc >= 0) {
			t->out_fmt = in.out;
			snprintf(fs->engine, sizeof fs->engine, "%s",
				 t->plan.hw_filters && t->dec_hw ? t->dec_hw->engine : t->sw_engine);
			snprintf(fs->what, sizeof fs->what, "%.63s", t->plan.chain);
			fs->hw = t->plan.hw_filters > 0;
			if (f->hw_frames_ctx && !(t->src_frames = av_buffer_ref(f->hw_frames_ctx)))
				return fail(t, ACCEL_EXIT_FAILURE, "out of memory");
			if (job->common.verbose)
				fprintf(stderr, "accel-transcode: filter graph: %s (%s)\n", t->plan.chain, t->plan.note);
			if (c) {
				snprintf(es->engine, sizeof es->engine, "%s", sw ? t->sw_engine : hw[i].engine);
				snprintf(es->what, sizeof es->what, "%s", c->name);
				es->hw = !sw;
				t->enc_hw = sw ? NULL : &hw[i];
			}
			return 0;
		}
		avfilter_graph_free(&t->vgraph);
		av_buffer_unref(&t->enc_hwdev);
		if (sw)
			break;
		if (job->common.fallback == ACCEL_FALLBACK_NONE)
			return fail(t, ACCEL_EXIT_FAILURE, "encode on %s failed: %s (--fallback none)", hw[i].engine, why);
		if (!job->common.quiet)
			accel_msg_warn("encode on %s failed: %s; encoding in software", hw[i].engine, why);
	}
	if (!strncmp(why, "cannot set up the filters", 25))
		return fail(t, ACCEL_EXIT_USAGE, "%s", why);
	return fail(t, ACCEL_EXIT_FAILURE, "cannot open a %s encoder: %s", job->to, why);
}

/* ------------------------------------------------------------ audio */

static int open_audio(struct tc *t)
{
	const struct tc_job *job = t->job;
	if (t->aidx < 0 || !strcmp(job->to, "npy") || (job->audio && !strcmp(job->audio, "none"))) {
		t->aidx = -1;
		return 0;
	}
	if (!strcmp(t->ofmt->oformat->name, "rawvideo") || !strcmp(t->ofmt->oformat->name, "yuv4mpegpipe")) {
		if (job->audio)
			return fail(t, ACCEL_EXIT_USAGE, "--audio %s: --to %s has no audio", job->audio, job->to);
		t->aidx = -1;
		return 0;
	}
	AVStream *ist = t->ifmt->streams[t->aidx];
	if (!job->audio || !strcmp(job->audio, "copy")) {
		char why[200];
		if (tc_audio_copy_fits(t->ofmt->oformat, ist->codecpar, why, sizeof why)) {
			t->acopy = 1;
			if (ist->codecpar->codec_id != AV_CODEC_ID_AAC || ist->codecpar->extradata_size)
				return 0;
			/* ADTS (MPEG-TS): the header of each packet comes off,
			 * its config goes in the container's header. */
			const AVBitStreamFilter *f = av_bsf_get_by_name("aac_adtstoasc");
			if (!f || av_bsf_alloc(f, &t->adts) < 0 ||
			    avcodec_parameters_copy(t->adts->par_in, ist->codecpar) < 0)
				return fail(t, ACCEL_EXIT_FAILURE, "out of memory");
			t->adts->time_base_in = ist->time_base;
			if (av_bsf_init(t->adts) < 0)
				return fail(t, ACCEL_EXIT_FAILURE, "cannot set up aac_adtstoasc");
			return 0;
		}
		if (job->audio)
			return fail(t, ACCEL_EXIT_USAGE, "--audio copy: %s; use --audio aac, opus or none", why);
		if (job->common.verbose)
			fprintf(stderr, "accel-transcode: audio: not copied (%s): encoded to aac\n", why);
	}
	int opus = job->audio && !strcmp(job->audio, "opus");
	const AVCodec *ec = opus ? avcodec_find_encoder_by_name("libopus") : avcodec_find_encoder(AV_CODEC_ID_AAC);
	if (!ec && opus)
		ec = avcodec_find_encoder(AV_CODEC_ID_OPUS);
	const AVCodec *dc = avcodec_find_decoder(ist->codecpar->codec_id);
	char e[128];
	if (!ec || !dc)
		return fail(t, ACCEL_EXIT_FAILURE, "no %s for the audio", !ec ? "encoder" : "decoder");
	if (avformat_query_codec(t->ofmt->oformat, ec->id, FF_COMPLIANCE_NORMAL) == 0)
		return fail(t, ACCEL_EXIT_USAGE, "--audio %s: %s cannot go in a %s container", opus ? "opus" : "aac",
			    ec->name, t->ofmt->oformat->name);
	t->adec = avcodec_alloc_context3(dc);
	t->aenc = avcodec_alloc_context3(ec);
	if (!t->adec || !t->aenc || avcodec_parameters_to_context(t->adec, ist->codecpar) < 0)
		return fail(t, ACCEL_EXIT_FAILURE, "out of memory");
	t->adec->pkt_timebase = ist->time_base;
	int rc = avcodec_open2(t->adec, dc, NULL);
	if (rc < 0)
		return fail(t, ACCEL_EXIT_DATA, "%s: cannot open the audio decoder: %s", t->in.name, averr(rc, e, sizeof e));
	int rate = opus ? 48000 : t->adec->sample_rate;
	if (ec->supported_samplerates) {
		int best = ec->supported_samplerates[0];
		for (const int *r = ec->supported_samplerates; *r; r++)
			if (*r == t->adec->sample_rate)
				best = *r;
		rate = best;
	}
	enum AVSampleFormat sf = ec->sample_fmts ? ec->sample_fmts[0] : AV_SAMPLE_FMT_FLTP;
	t->aenc->sample_fmt = sf;
	t->aenc->sample_rate = rate;
	t->aenc->time_base = (AVRational){ 1, rate };
	if (av_channel_layout_copy(&t->aenc->ch_layout, &t->adec->ch_layout) < 0)
		return fail(t, ACCEL_EXIT_FAILURE, "out of memory");
	if (t->aenc->ch_layout.order == AV_CHANNEL_ORDER_UNSPEC)
		av_channel_layout_default(&t->aenc->ch_layout, t->aenc->ch_layout.nb_channels);
	if (t->aenc->ch_layout.nb_channels > 2 && opus) {
		av_channel_layout_uninit(&t->aenc->ch_layout);
		t->aenc->ch_layout = (AVChannelLayout)AV_CHANNEL_LAYOUT_STEREO;
	}
	if (t->ofmt->oformat->flags & AVFMT_GLOBALHEADER)
		t->aenc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
	if ((rc = avcodec_open2(t->aenc, ec, NULL)) < 0)
		return fail(t, ACCEL_EXIT_FAILURE, "cannot open the %s encoder: %s", ec->name, averr(rc, e, sizeof e));

	char args[256], layout[64], chain[256];
	AVChannelLayout inl;
	av_channel_layout_copy(&inl, &t->adec->ch_layout);
	if (inl.order == AV_CHANNEL_ORDER_UNSPEC)
		av_channel_layout_default(&inl, inl.nb_channels);
	av_channel_layout_describe(&inl, layout, sizeof layout);
	av_channel_layout_uninit(&inl);
	snprintf(args, sizeof args, "time_base=1/%d:sample_rate=%d:sample_fmt=%s:channel_layout=%s",
		 t->adec->sample_rate, t->adec->sample_rate, av_get_sample_fmt_name(t->adec->sample_fmt), layout);
	t->agraph = avfilter_graph_alloc();
	if (!t->agraph)
		return fail(t, ACCEL_EXIT_FAILURE, "out of memory");
	rc = avfilter_graph_create_filter(&t->asrc, avfilter_get_by_name("abuffer"), "ain", args, NULL, t->agraph);
	if (rc >= 0)
		rc = avfilter_graph_create_filter(&t->asink, avfilter_get_by_name("abuffersink"), "aout", NULL, NULL,
						  t->agraph);
	av_channel_layout_describe(&t->aenc->ch_layout, layout, sizeof layout);
	snprintf(chain, sizeof chain, "aresample=%d,aformat=sample_fmts=%s:sample_rates=%d:channel_layouts=%s", rate,
		 av_get_sample_fmt_name(sf), rate, layout);
	AVFilterInOut *outs = avfilter_inout_alloc(), *ins = avfilter_inout_alloc();
	if (rc >= 0 && outs && ins) {
		outs->name = av_strdup("in");
		outs->filter_ctx = t->asrc;
		ins->name = av_strdup("out");
		ins->filter_ctx = t->asink;
		rc = avfilter_graph_parse_ptr(t->agraph, chain, &ins, &outs, NULL);
		if (rc >= 0)
			rc = avfilter_graph_config(t->agraph, NULL);
	} else if (rc >= 0) {
		rc = AVERROR(ENOMEM);
	}
	avfilter_inout_free(&outs);
	avfilter_inout_free(&ins);
	if (rc < 0)
		return fail(t, ACCEL_EXIT_FAILURE, "cannot set up the audio filters: %s", averr(rc, e, sizeof e));
	if (!(ec->capabilities & AV_CODEC_CAP_VARIABLE_FRAME_SIZE) && t->aenc->frame_size > 0)
		av_buffersink_set_frame_size(t->asink, (unsigned)t->aenc->frame_size);
	return 0;
}

static int drain_audio_encoder(struct tc *t)
{
	int rc;
	while ((rc = avcodec_receive_packet(t->aenc, t->pkt)) >= 0) {
		t->pkt->stream_index = t->oast ? t->oast->index : 0;
		if (t->header)
			av_packet_rescale_ts(t->pkt, t->aenc->time_base, t->oast->time_base);
		if (write_packet(t, t->pkt) < 0)
			return -1;
	}
	return rc == AVERROR(EAGAIN) || rc == AVERROR_EOF ? 0 : fail(t, ACCEL_EXIT_FAILURE, "audio encoder failed");
}

/* Push decoded audio (NULL: end) through the filters into the encoder. */
static int audio_frames(struct tc *t, AVFrame *f)
{
	if (av_buffersrc_add_frame(t->asrc, f) < 0)
		return fail(t, ACCEL_EXIT_FAILURE, "audio filter failed");
	for (;;) {
		int rc = av_buffersink_get_frame(t->asink, t->filt);
		if (rc == AVERROR(EAGAIN))
			return 0;
		if (rc == AVERROR_EOF) {
			avcodec_send_frame(t->aenc, NULL);
			return drain_audio_encoder(t);
		}
		if (rc < 0)
			return fail(t, ACCEL_EXIT_FAILURE, "audio filter failed");
		t->filt->pts = av_rescale_q(t->filt->pts, av_buffersink_get_time_base(t->asink), t->aenc->time_base);
		rc = avcodec_send_frame(t->aenc, t->filt);
		av_frame_unref(t->filt);
		if (rc < 0)
			return fail(t, ACCEL_EXIT_FAILURE, "audio encoder failed");
		if (drain_audio_encoder(t) < 0)
			return -1;
	}
}

/* A copied audio packet to the muxer (or the queue before the header). */
static int copy_packet(struct tc *t, AVPacket *pkt)
{
	if (t->header) {
		av_packet_rescale_ts(pkt, t->ifmt->streams[t->aidx]->time_base, t->oast->time_base);
		pkt->stream_index = t->oast->index;
	}
	pkt->pos = -1;
	return write_packet(t, pkt);
}

/* A decoded frame's pts in samples (1/sample_rate, the abuffer's time
 * base; the decoder gives the stream's). Frames follow on sample for
 * sample unless the stream's timestamps jump ahead by more than half a
 * frame (a gap, kept); earlier ones or jitter (an MP3's 26 ms frames in
 * mkv's milliseconds) would run the encoder and muxer backwards. */
static void audio_pts(struct tc *t, AVFrame *f)
{
	AVRational tb = { 1, t->adec->sample_rate };
	int64_t ts = f->best_effort_timestamp;
	int64_t pts = ts == AV_NOPTS_VALUE ? AV_NOPTS_VALUE : av_rescale_q(ts, t->ifmt->streams[t->aidx]->time_base, tb);
	if (pts == AV_NOPTS_VALUE)
		pts = t->anext == AV_NOPTS_VALUE ? 0 : t->anext;
	else if (t->anext != AV_NOPTS_VALUE && pts < t->anext + f->nb_samples / 2)
		pts = t->anext;
	f->pts = pts;
	t->anext = pts + f->nb_samples;
}

static int audio_packet(struct tc *t, AVPacket *pkt)
{
	if (t->acopy && !t->adts) {
		if (!pkt)
			return 0;
		return copy_packet(t, pkt);
	}
	if (t->acopy) {
		if (av_bsf_send_packet(t->adts, pkt) < 0) {
			if (pkt)
				av_packet_unref(pkt);
			t->bad_packets++;
			return t->job->strict ? fail(t, ACCEL_EXIT_DATA, "%s: bad ADTS audio packet (--strict)",
						     t->in.name) : 0;
		}
		AVPacket *o = t->pkt == pkt ? av_packet_alloc() : t->pkt;
		if (!o)
			return fail(t, ACCEL_EXIT_FAILURE, "out of memory");
		int rc = 0;
		while (rc == 0 && av_bsf_receive_packet(t->adts, o) >= 0) {
			/* The config went in the header (aac_config): a muxer
			 * that seeks (mkv to a file) would write it there again
			 * over what follows. */
			if (av_packet_get_side_data(o, AV_PKT_DATA_NEW_EXTRADATA, NULL))
				av_packet_free_side_data(o);
			rc = copy_packet(t, o);
		}
		if (o != t->pkt)
			av_packet_free(&o);
		return rc;
	}
	int rc = avcodec_send_packet(t->adec, pkt);
	if (pkt)
		av_packet_unref(pkt);
	if (rc < 0 && rc != AVERROR_EOF) {
		t->bad_packets++;
		return t->job->strict ? fail(t, ACCEL_EXIT_DATA, "%s: undecodable audio packet (--strict)", t->in.name) : 0;
	}
	while ((rc = avcodec_receive_frame(t->adec, t->frame)) >= 0) {
		audio_pts(t, t->frame);
		rc = audio_frames(t, t->frame);
		av_frame_unref(t->frame);
		if (rc < 0)
			return -1;
	}
	if (rc == AVERROR_EOF)
		return audio_frames(t, NULL);
	return 0;
}

/* ------------------------------------------------------------ video */

/* One frame as a .npy array: H x W x C uint8, or 1 x C x H x W float32
 * in [0, 1] with --layout nchw --normalize (nchw alone: uint8). */
static int write_npy(struct tc *t, const AVFrame *f)
{
	const struct tc_job *job = t->job;
	const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
	int c = d->nb_components, w = f->width, h = f->height;
	uint8_t hdr[ACCEL_NPY_HEADER_MAX];
	struct accel_tensor shape = { .dtype = ACCEL_DTYPE_UINT8 };
	if (job->nchw) {
		if (job->normalize)
			shape.dtype = ACCEL_DTYPE_FLOAT32;
		shape.ndim = 4;
		shape.dims[0] = 1, shape.dims[1] = c, shape.dims[2] = h, shape.dims[3] = w;
	} else {
		shape.ndim = 3;
		shape.dims[0] = h, shape.dims[1] = w, shape.dims[2] = c;
	}
	int n = accel_npy_header_write(&shape, hdr, sizeof hdr);
	if (n < 0 || accel_output_write(t->out, hdr, (size_t)n) < 0)
		goto werr;
	size_t esz = job->nchw && job->normalize ? 4 : 1;
	size_t row = (size_t)w * (job->nchw ? esz : (size_t)c);
	uint8_t *line = malloc(row);
	if (!line)
		return fail(t, ACCEL_EXIT_FAILURE, "out of memory");
	int rc = 0;
	if (!job->nchw) {
		for (int y = 0; y < h && rc == 0; y++)
			rc = accel_output_write(t->out, f->data[0] + (ptrdiff_t)y * f->linesize[0], row);
	} else {
		for (int ch = 0; ch < c && rc == 0; ch++)
			for (int y = 0; y < h && rc == 0; y++) {
				const uint8_t *src = f->data[0] + (ptrdiff_t)y * f->linesize[0] + ch;
				for (int x = 0; x < w; x++) {
					if (job->normalize) {
						float v = src[(size_t)x * (size_t)c] / 255.0f;
						memcpy(line + (size_t)x * 4, &v, 4);
					} else {
						line[x] = src[(size_t)x * (size_t)c];
					}
				}
				rc = accel_output_write(t->out, line, row);
			}
	}
	free(line);
	if (rc < 0)
		goto werr;
	return 0;
werr:
	t->werr = t->out->broken ? ACCEL_EPIPE : ACCEL_EIO;
	return -1;
}

/* Write video packet pkt (the encoder's time base). After a takeover its
 * decode timestamps continue those written (a new encoder starts its own). */
static int write_video(struct tc *t, AVPacket *pkt)
{
	if (t->enc_reopened && pkt->dts != AV_NOPTS_VALUE && t->last_dts != AV_NOPTS_VALUE && pkt->dts <= t->last_dts)
		pkt->dts = t->last_dts + 1;
	if (pkt->dts != AV_NOPTS_VALUE)
		t->last_dts = pkt->dts;
	pkt->stream_index = t->ovst->index;
	av_packet_rescale_ts(pkt, t->enc->time_base, t->ovst->time_base);
	return write_packet(t, pkt);
}

/* Stop keeping frames and packets: write the packets held, drop the frames. */
static int stop_holding(struct tc *t)
{
	int rc = 0;
	for (int i = 0; i < t->npend; i++) {
		if (rc == 0 && !t->status)
			rc = write_video(t, t->pend[i]);
		av_packet_free(&t->pend[i]);
	}
	for (int i = 0; i < t->nheld; i++)
		av_frame_free(&t->held[i]);
	t->npend = t->nheld = 0;
	t->holding = 0;
	return rc;
}

/* Write the longest run of held packets that are, all together, those of
 * the first frames kept (tc_written_prefix), and drop those frames. */
static int release_held(struct tc *t)
{
	int64_t pp[MAX_HELD], fp[MAX_HELD];
	for (int i = 0; i < t->npend; i++)
		pp[i] = t->pend[i]->pts;
	for (int i = 0; i < t->nheld; i++)
		fp[i] = t->held[i]->pts;
	int n = tc_written_prefix(pp, t->npend, fp, t->nheld), rc = 0;
	for (int i = 0; i < n; i++) {
		if (rc == 0)
			rc = write_video(t, t->pend[i]);
		av_packet_free(&t->pend[i]);
		av_frame_free(&t->held[i]);
	}
	memmove(t->pend, t->pend + n, (size_t)(t->npend - n) * sizeof t->pend[0]);
	memmove(t->held, t->held + n, (size_t)(t->nheld - n) * sizeof t->held[0]);
	t->npend -= n;
	t->nheld -= n;
	return rc;
}

/* A packet from the encoder: written, or held (t->holding). A packet
 * whose pts is no frame kept (an encoder that makes up timestamps) ends
 * the holding. */
static int video_out(struct tc *t, AVPacket *pkt)
{
	if (!t->holding)
		return write_video(t, pkt);
	int known = 0;
	for (int i = 0; i < t->nheld && !known && pkt->pts != AV_NOPTS_VALUE; i++)
		known = t->held[i]->pts == pkt->pts;
	if (!known || t->npend == MAX_HELD) {
		if (stop_holding(t) < 0)
			return -1;
		return write_video(t, pkt);
	}
	AVPacket *p = av_packet_alloc();
	if (!p)
		return fail(t, ACCEL_EXIT_FAILURE, "out of memory");
	av_packet_move_ref(p, pkt);
	t->pend[t->npend++] = p;
	return release_held(t);
}

/* Take the packets the encoder has: 0, -1 on a write error, or 1 when the
 * encoder failed (*err). */
static int receive_packets(struct tc *t, int *err)
{
	int rc;
	while ((rc = avcodec_receive_packet(t->enc, t->pkt)) >= 0)
		if (video_out(t, t->pkt) < 0)
			return -1;
	if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF)
		return 0;
	*err = rc;
	return 1;
}

/* Frame f as the encoder takes it: f itself (the graph made it so), or,
 * for an encoder that took over from one on a device or in another
 * format, a new frame in *tmp (freed by the caller), downloaded and
 * converted. */
static AVFrame *for_encoder(struct tc *t, AVFrame *f, AVFrame **tmp)
{
	*tmp = NULL;
	if (t->enc->hw_frames_ctx || (f->format == t->enc->pix_fmt && !f->hw_frames_ctx))
		return f;
	AVFrame *src = f, *down = NULL;
	if (f->hw_frames_ctx) {
		/* A software encoder after frames on a device: download. */
		if (!(down = av_frame_alloc()) || av_hwframe_transfer_data(down, f, 0) < 0) {
			av_frame_free(&down);
			fail(t, ACCEL_EXIT_FAILURE, "cannot download a frame for %s", t->enc->codec->name);
			return NULL;
		}
		av_frame_copy_props(down, f);
		src = down;
	}
	if (src->format == t->enc->pix_fmt)
		return *tmp = down;
	/* To the pixel format of an encoder that took over. */
	AVFrame *c = av_frame_alloc();
	t->sws = sws_getCachedContext(t->sws, src->width, src->height, src->format, src->width, src->height,
				      t->enc->pix_fmt, SWS_BICUBIC, NULL, NULL, NULL);
	if (c) {
		c->format = t->enc->pix_fmt;
		c->width = src->width;
		c->height = src->height;
	}
	if (!c || !t->sws || av_frame_get_buffer(c, 0) < 0 || sws_scale_frame(t->sws, c, src) < 0) {
		av_frame_free(&c);
		av_frame_free(&down);
		fail(t, ACCEL_EXIT_FAILURE, "cannot convert a frame to %s for %s", av_get_pix_fmt_name(t->enc->pix_fmt),
		     t->enc->codec->name);
		return NULL;
	}
	av_frame_copy_props(c, src);
	av_frame_free(&down);
	return *tmp = c;
}

/* Give frame f (NULL: the end) to the encoder and take its packets: 0,
 * -1 on an error of ours (t->status), or 1 when the encoder failed (*err). */
static int encoder_step(struct tc *t, AVFrame *f, int *err)
{
	AVFrame *tmp = NULL, *in = f ? for_encoder(t, f, &tmp) : NULL;
	if (f && !in)
		return -1;
	int rc = avcodec_send_frame(t->enc, in);
	av_frame_free(&tmp);
	if (rc < 0 && rc != AVERROR_EOF) {
		*err = rc;
		return 1;
	}
	return receive_packets(t, err);
}

/* Whether the container's header lets a new encoder's stream follow: for
 * H.264 and HEVC in a container with global headers (mkv, mp4, nut), its
 * header holds the first encoder's parameter sets, and the new ones go in
 * band; the muxer turns in-band start codes into its length prefixes only
 * when that header is in Annex B form (as x264, x265, NVENC, VA-API and
 * QSV give it). 0, or -1 with the reason in why. */
static int takeover_fits(const struct tc *t, char *why, size_t len)
{
	const AVCodecParameters *par = t->ovst->codecpar;
	const uint8_t *x = par->extradata;
	if (!(t->ofmt->oformat->flags & AVFMT_GLOBALHEADER) ||
	    (par->codec_id != AV_CODEC_ID_H264 && par->codec_id != AV_CODEC_ID_HEVC))
		return 0;
	if (par->extradata_size >= 4 && !x[0] && !x[1] && (x[2] == 1 || (!x[2] && x[3] == 1)))
		return 0;
	snprintf(why, len, "the %s header holds %s parameter sets in a form new ones cannot follow in band",
		 t->ofmt->oformat->name, avcodec_get_name(par->codec_id));
	return -1;
}

/* The encoder failed on frame `at` (rc, or an injected fault when rc is
 * 0): open a software encoder for the same --to, with parameter sets in
 * band (takeover_fits), and give it the frames whose packets were not
 * written (the held ones, the first as a keyframe), so that nothing is
 * lost and what was written stays as it was. Once per run. */
static int reopen_encoder(struct tc *t, uint64_t at, int rc)
{
	struct stage *s = &t->st[TC_ENCODE];
	char e[100], why[100];
	snprintf(why, sizeof why, "%s", rc ? averr(rc, e, sizeof e) : "injected fault, ACCEL_FAULT");
	if (t->job->common.fallback == ACCEL_FALLBACK_NONE)
		return fail(t, ACCEL_EXIT_FAILURE, "encode on %s failed at frame %llu: %s (--fallback none)", s->engine,
			    (unsigned long long)at, why);
	if (t->enc_reopened || !t->holding)
		return fail(t, ACCEL_EXIT_FAILURE, "encode on %s (%s) failed%s at frame %llu: %s", s->engine, s->what,
			    t->enc_reopened ? " again" : "", (unsigned long long)at, why);
	char nofit[200];
	if (takeover_fits(t, nofit, sizeof nofit) < 0)
		return fail(t, ACCEL_EXIT_FAILURE, "encode on %s (%s) failed at frame %llu: %s; cannot continue in "
			    "software: %s", s->engine, s->what, (unsigned long long)at, why, nofit);
	t->enc_reopened = 1;
	snprintf(t->enc_note, sizeof t->enc_note, "encode on %.47s (%.63s) failed at frame %llu (%.99s)", s->engine,
		 s->what, (unsigned long long)at, why);
	snprintf(s->before, sizeof s->before, "%.47s (%.63s), which wrote %llu frames", s->engine, s->what,
		 (unsigned long long)(at + 1 - (uint64_t)t->nheld));
	AVRational tb = t->enc->time_base;
	enum AVCodecID id = t->enc->codec_id;
	for (int i = 0; i < t->npend; i++)
		av_packet_free(&t->pend[i]);
	t->npend = 0;
	/* (an encoder that still works, as under ACCEL_FAULT, is told of the
	 * end so that it winds down quietly) */
	avcodec_send_frame(t->enc, NULL);
	avcodec_free_context(&t->enc);
	av_buffer_unref(&t->enc_hwdev);
	const char *const *sws = sw_encoders(t->job->to);
	rc = AVERROR_ENCODER_NOT_FOUND;
	const AVCodec *c = NULL;
	for (int k = 0; sws[k] && rc < 0 && !t->status; k++)
		if ((c = avcodec_find_encoder_by_name(sws[k])))
			rc = try_encoder(t, c, NULL, 1);
	if (t->status)
		return -1;
	if (rc < 0)
		return fail(t, ACCEL_EXIT_FAILURE, "%s; cannot open a software %s encoder: %s", t->enc_note, t->job->to,
			    averr(rc, e, sizeof e));
	if (av_cmp_q(tb, t->enc->time_base))
		return fail(t, ACCEL_EXIT_FAILURE, "%s; the software encoder's time base differs", t->enc_note);
	snprintf(s->engine, sizeof s->engine, "%s", t->sw_engine);
	snprintf(s->what, sizeof s->what, "%s%s", c->name,
		 (t->ofmt->oformat->flags & AVFMT_GLOBALHEADER) &&
		 (id == AV_CODEC_ID_H264 || id == AV_CODEC_ID_HEVC || id == AV_CODEC_ID_AV1) ? ", headers in band" : "");
	s->hw = 0;
	t->enc_hw = NULL;
	/* Once per run: what comes from now on is written as it comes. */
	t->holding = 0;
	t->enc_from = at + 1 - (uint64_t)t->nheld;
	t->reencoded = (uint64_t)t->nheld;
	int r = 0, err = 0;
	for (int i = 0; i < t->nheld; i++) {
		if (r == 0) {
			t->held[i]->pict_type = i == 0 ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE;
			r = encoder_step(t, t->held[i], &err);
		}
		av_frame_free(&t->held[i]);
	}
	t->nheld = 0;
	if (r > 0)
		return fail(t, ACCEL_EXIT_FAILURE, "%s; %s failed too: %s", t->enc_note, c->name, averr(err, e, sizeof e));
	return r;
}

/* Encode (or write) one filtered frame; NULL flushes the encoder. */
static int encode(struct tc *t, AVFrame *f, const struct tc_hw *hw, int nhw)
{
	struct stage *s = &t->st[TC_ENCODE];
	double t0 = accel_now();
	int rc = 0;
	if (f && !t->header && !t->raw && start_output(t) < 0)
		return -1;
	if (f) {
		AVRational tb = av_buffersink_get_time_base(t->vsink);
		if (f->pts != AV_NOPTS_VALUE)
			t->media_pos = f->pts * av_q2d(tb);
		s->frames++;
	}
	if (t->raw) {
		rc = f ? write_npy(t, f) : 0;
	} else if (t->header) {
		uint64_t at = t->enc_sent;
		int injected = 0, err = 0;
		if (f) {
			f->pts = av_rescale_q(f->pts, av_buffersink_get_time_base(t->vsink), t->enc->time_base);
			f->pict_type = AV_PICTURE_TYPE_NONE;
			t->enc_sent++;
			if (t->holding && t->nheld == MAX_HELD)
				rc = stop_holding(t);
			if (t->holding && !(t->held[t->nheld] = av_frame_clone(f)))
				return fail(t, ACCEL_EXIT_FAILURE, "out of memory");
			if (t->holding)
				t->nheld++;
			injected = !t->enc_reopened && accel_fault_hit_stage(s->engine, "encode", at);
		}
		if (rc == 0 && !injected)
			rc = encoder_step(t, f, &err);
		if (injected || rc > 0) {
			if (!f)
				at = t->enc_sent ? t->enc_sent - 1 : 0;
			rc = reopen_encoder(t, at, injected ? 0 : err);
			if (rc == 0 && !f && encoder_step(t, NULL, &err) > 0) {
				char e[128];
				rc = fail(t, ACCEL_EXIT_FAILURE, "%s; %s failed too: %s", t->enc_note, t->enc->codec->name,
					  averr(err, e, sizeof e));
			}
		}
		if (rc == 0 && !f && t->holding)
			rc = stop_holding(t);
	}
	s->seconds += accel_now() - t0;
	if (f)
		t->written_frames++;
	return rc;
}

/* Pull what the filter graph has and encode it. */
static int pull_filtered(struct tc *t, const struct tc_hw *hw, int nhw)
{
	for (;;) {
		double t0 = accel_now();
		int rc = av_buffersink_get_frame(t->vsink, t->filt);
		t->st[TC_FILTER].seconds += accel_now() - t0;
		if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF)
			return 0;
		if (rc < 0)
			return fail(t, ACCEL_EXIT_FAILURE, "video filter failed");
		t->st[TC_FILTER].frames++;
		rc = encode(t, t->filt, hw, nhw);
		av_frame_unref(t->filt);
		if (rc < 0)
			return -1;
	}
}

/* A decoded frame (NULL: end of stream) into the filters. */
static int video_frame(struct tc *t, AVFrame *f, const struct tc_hw *hw, int nhw)
{
	if (!t->vgraph) {
		if (!f)
			return 0;
		if (open_video(t, f, hw, nhw) < 0)
			return -1;
	}
	if (f && !f->hw_frames_ctx != !t->src_frames) {
		/* The graph takes frames where the first one was; a decoder
		 * reopened elsewhere gives them in memory (uploaded) or on a
		 * device (downloaded). */
		av_frame_unref(t->sw);
		int rc = t->src_frames ? av_hwframe_get_buffer(t->src_frames, t->sw, 0) : 0;
		if (rc >= 0)
			rc = av_hwframe_transfer_data(t->sw, f, 0);
		if (rc < 0)
			return fail(t, ACCEL_EXIT_FAILURE, "cannot %s a frame for the filters",
				    t->src_frames ? "upload" : "download");
		av_frame_copy_props(t->sw, f);
		av_frame_unref(f);
		av_frame_move_ref(f, t->sw);
	}
	if (f)
		f->pts = f->best_effort_timestamp;
	double t0 = accel_now();
	int rc = av_buffersrc_add_frame_flags(t->vsrc, f, 0);
	t->st[TC_FILTER].seconds += accel_now() - t0;
	if (rc < 0)
		return fail(t, ACCEL_EXIT_FAILURE, "video filter failed");
	return pull_filtered(t, hw, nhw);
}

/* Whether an error of the decoder is the device failing (reopen the stage
 * elsewhere) rather than bad input: any error of a hardware decoder but
 * invalid data. */
static int device_error(const struct tc *t, int rc)
{
	return t->st[TC_DECODE].hw && rc != AVERROR_INVALIDDATA && rc != AVERROR(EAGAIN) && rc != AVERROR_EOF;
}

/* Take the frames the decoder has (at end of stream, flush the filters).
 * Frames at or before the one passed on last (after a reopen) are dropped.
 * 0, -1 on error, or 1 when the decoder failed as a device does (*err). */
static int receive_frames(struct tc *t, const struct tc_hw *hw, int nhw, int *err)
{
	struct stage *s = &t->st[TC_DECODE];
	for (;;) {
		double t0 = accel_now();
		int rc = avcodec_receive_frame(t->dec, t->frame);
		s->seconds += accel_now() - t0;
		if (rc == AVERROR(EAGAIN))
			return 0;
		if (rc == AVERROR_EOF)
			return video_frame(t, NULL, hw, nhw);
		if (rc < 0 && device_error(t, rc)) {
			*err = rc;
			return 1;
		}
		if (rc < 0) {
			t->bad_packets++;
			if (t->job->strict)
				return fail(t, ACCEL_EXIT_DATA, "%s: undecodable video frame (--strict)", t->in.name);
			continue;
		}
		int64_t pts = t->frame->best_effort_timestamp;
		if (t->skip_upto != AV_NOPTS_VALUE && pts != AV_NOPTS_VALUE && pts <= t->skip_upto) {
			/* Decoded again after a reopen: passed on already. */
			t->redecoded++;
			av_frame_unref(t->frame);
			continue;
		}
		if (t->frame->decode_error_flags || (t->frame->flags & AV_FRAME_FLAG_CORRUPT)) {
			t->bad_packets++;
			if (t->job->strict)
				return fail(t, ACCEL_EXIT_DATA, "%s: corrupt video frame (--strict)", t->in.name);
		}
		s->frames++;
		if (pts != AV_NOPTS_VALUE)
			t->last_pts = pts;
		rc = video_frame(t, t->frame, hw, nhw);
		av_frame_unref(t->frame);
		if (rc < 0)
			return -1;
	}
}

static void gop_clear(struct tc *t)
{
	for (int i = 0; i < t->ngop; i++)
		av_packet_free(&t->gop[i]);
	t->ngop = 0;
}

/* Keep the packets since the last keyframe, to decode them again should
 * the decoder fail: at most MAX_GOP of them (a longer GOP is not kept, and
 * a failure in it resumes at the next keyframe). */
static int gop_keep(struct tc *t, const AVPacket *pkt)
{
	if (pkt->flags & AV_PKT_FLAG_KEY) {
		gop_clear(t);
		t->gop_whole = 1;
	}
	if (!t->gop_whole)
		return 0;
	if (t->ngop == MAX_GOP) {
		gop_clear(t);
		t->gop_whole = 0;
		return 0;
	}
	if (!(t->gop[t->ngop] = av_packet_clone(pkt)))
		return fail(t, ACCEL_EXIT_FAILURE, "out of memory");
	t->ngop++;
	return 0;
}

/* The decoder failed at video packet `at` (rc, or an injected fault when
 * rc is 0): reopen the stage on the next engine, software, and decode the
 * packets since the last keyframe again, dropping the frames passed on
 * already, so that nothing is lost; without them (a GOP too long to keep),
 * resume at the next keyframe. Once per run. */
static int reopen_decoder(struct tc *t, uint64_t at, int rc, const struct tc_hw *hw, int nhw)
{
	struct stage *s = &t->st[TC_DECODE];
	char e[128], why[160];
	snprintf(why, sizeof why, "%s", rc ? averr(rc, e, sizeof e) : "injected fault, ACCEL_FAULT");
	if (t->job->common.fallback == ACCEL_FALLBACK_NONE)
		return fail(t, ACCEL_EXIT_FAILURE, "decode on %s failed at video packet %llu: %s (--fallback none)",
			    s->engine, (unsigned long long)at, why);
	if (t->reopened)
		return fail(t, ACCEL_EXIT_FAILURE, "decode on %s failed again at video packet %llu: %s", s->engine,
			    (unsigned long long)at, why);
	t->reopened = 1;
	snprintf(t->reopen_note, sizeof t->reopen_note, "decode on %s failed at video packet %llu (%s)", s->engine,
		 (unsigned long long)at, why);
	snprintf(s->before, sizeof s->before, "%.47s (%.63s) to video packet %llu", s->engine, s->what,
		 (unsigned long long)at);
	avcodec_free_context(&t->dec);
	av_buffer_unref(&t->hwdev);
	t->hw_pix_fmt = AV_PIX_FMT_NONE;
	uint64_t frames = s->frames;
	double secs = s->seconds;
	if (open_decoder(t, hw, 0) < 0)
		return -1;
	s->frames = frames;
	s->seconds = secs;
	t->skip_upto = t->last_pts;
	t->replayed = t->gop_whole ? t->ngop : -1;
	if (!t->gop_whole) {
		t->wait_key = 1;
		return 0;
	}
	for (int i = 0; i < t->ngop; i++) {
		double t0 = accel_now();
		int r = avcodec_send_packet(t->dec, t->gop[i]);
		s->seconds += accel_now() - t0;
		if (r < 0 && r != AVERROR(EAGAIN))
			t->bad_packets++;
		int err = 0;
		r = receive_frames(t, hw, nhw, &err);
		if (r < 0)
			return -1;
		if (r > 0)
			return fail(t, ACCEL_EXIT_FAILURE, "decode on %s failed again: %s", s->engine,
				    averr(err, e, sizeof e));
	}
	return 0;
}

/* One video packet (NULL: end of stream) through the decoder. */
static int video_packet(struct tc *t, AVPacket *pkt, const struct tc_hw *hw, int nhw)
{
	struct stage *s = &t->st[TC_DECODE];
	if (pkt && t->wait_key) {
		if (!(pkt->flags & AV_PKT_FLAG_KEY)) {
			t->skipped++;
			av_packet_unref(pkt);
			return 0;
		}
		t->wait_key = 0;
	}
	uint64_t at = t->vpackets;
	int rc = 0, injected = 0;
	if (pkt) {
		t->vpackets++;
		if (gop_keep(t, pkt) < 0)
			return -1;
		injected = !t->reopened && accel_fault_hit_stage(s->engine, "decode", at);
	}
	if (!injected) {
		double t0 = accel_now();
		rc = avcodec_send_packet(t->dec, pkt);
		s->seconds += accel_now() - t0;
	}
	if (pkt)
		av_packet_unref(pkt);
	if (injected || (rc < 0 && device_error(t, rc)))
		return reopen_decoder(t, at, rc, hw, nhw);
	if (rc < 0 && rc != AVERROR_EOF) {
		t->bad_packets++;
		if (t->job->strict) {
			char e[128];
			return fail(t, ACCEL_EXIT_DATA, "%s: undecodable video packet: %s (--strict)", t->in.name,
				    averr(rc, e, sizeof e));
		}
		return 0;
	}
	int err = 0;
	rc = receive_frames(t, hw, nhw, &err);
	if (rc > 0)
		return reopen_decoder(t, at, err, hw, nhw);
	return rc;
}

/* ------------------------------------------------------------ progress */

static void progress(struct tc *t, int last)
{
	const struct tc_job *job = t->job;
	double now = accel_now(), dt = now - t->t0;
	if (!last && now - t->last_report < (job->progress_json ? 1.0 : 0.2))
		return;
	t->last_report = now;
	uint64_t frames = t->st[TC_ENCODE].frames;
	double fps = dt > 0 ? (double)frames / dt : 0, speed = dt > 0 ? t->media_pos / dt : 0;
	double size = (double)t->out->written;
	double kbps = t->media_pos > 0 ? size * 8 / t->media_pos / 1000 : 0;
	double eta = speed > 0 && t->duration > 0 ? (t->duration - t->media_pos) / speed : -1;
	if (eta < 0 && t->duration > 0 && speed > 0)
		eta = 0;
	if (job->progress_json) {
		fprintf(stderr, "{\"frames\":%llu,\"fps\":%.2f,\"time\":%.3f,\"speed\":%.3f,\"bitrate_kbps\":%.1f,"
			"\"size\":%.0f,\"duration\":", (unsigned long long)frames, fps, t->media_pos, speed, kbps, size);
		if (t->duration > 0)
			fprintf(stderr, "%.3f,\"eta\":%.1f", t->duration, eta);
		else
			fputs("null,\"eta\":null", stderr);
		fprintf(stderr, ",\"bad_packets\":%llu,\"done\":%s}\n", (unsigned long long)t->bad_packets,
			last ? "true" : "false");
	}
	if (t->meter) {
		char etas[32] = "";
		if (eta >= 0)
			snprintf(etas, sizeof etas, " ETA %02d:%02d", (int)eta / 60, (int)eta % 60);
		fprintf(stderr, "\r\033[Kframe %llu  %.1f fps  %.2fx  %.0f kbit/s  %.1f MiB%s%s",
			(unsigned long long)frames, fps, speed, kbps, size / 1048576.0, etas, last ? "\n" : "");
	}
}

/* ------------------------------------------------------------ run */

/* -v: the engines each stage may run on, in the order they are tried. */
static void print_route(const struct tc *t, const struct tc_hw *hw, int nhw)
{
	const struct tc_job *job = t->job;
	int frames_out = !strcmp(job->to, "npy") || !strcmp(job->to, "rawvideo") || !strcmp(job->to, "y4m");
	static const char *const sw_what[TC_NSTAGES] = {
		"software decoders (libavcodec)", "software filters (libavfilter, swscale)", "software encoders",
	};
	for (int s = 0; s < TC_NSTAGES; s++) {
		fprintf(stderr, "accel-transcode: route for %s (--hw %s):\n", stage_names[s], job->hw);
		int rank = 1;
		for (int i = 0; i < nhw; i++) {
			const char *name = hw[i].usable ? hw[i].engine : hw[i].type;
			if (!hw[i].usable)
				fprintf(stderr, "  -  %-18s left out: %s\n", name, hw[i].reason);
			else if (s == TC_FILTER)
				fprintf(stderr, "  %d. %-18s %s\n", rank++, name,
					!strcmp(hw[i].type, "cuda") ? "yadif_cuda, scale_cuda, fps on frames decoded there"
					: !strcmp(hw[i].type, "vaapi") ? "deinterlace_vaapi, scale_vaapi, fps on frames decoded there"
					: "vpp_qsv, fps on frames decoded there");
			else if (s == TC_ENCODE && frames_out)
				fprintf(stderr, "  -  %-18s left out: --to %s is not encoded\n", name, job->to);
			else
				fprintf(stderr, "  %d. %-18s %s\n", rank++, name,
					s == TC_DECODE ? "hardware decoder (hwaccel)" : "hardware encoder");
		}
		fprintf(stderr, "  %d. %-18s %s\n", rank, t->sw_engine, sw_what[s]);
	}
}

static void print_stages(const struct tc *t)
{
	for (int i = 0; i < TC_NSTAGES; i++) {
		const struct stage *s = &t->st[i];
		if (!s->engine[0])
			continue;
		fprintf(stderr, "%s: %-6s on %-18s %-28s %llu frames, %.3f s%s%s%s\n", "accel-transcode", stage_names[i],
			s->engine, s->what, (unsigned long long)s->frames, s->seconds, s->before[0] ? " (first on " : "",
			s->before, s->before[0] ? ")" : "");
	}
}

static void cleanup(struct tc *t)
{
	for (int i = 0; i < t->nqueue; i++)
		av_packet_free(&t->queue[i]);
	gop_clear(t);
	for (int i = 0; i < t->npend; i++)
		av_packet_free(&t->pend[i]);
	for (int i = 0; i < t->nheld; i++)
		av_frame_free(&t->held[i]);
	sws_freeContext(t->sws);
	av_free(t->queue);
	avfilter_graph_free(&t->vgraph);
	avfilter_graph_free(&t->agraph);
	avcodec_free_context(&t->dec);
	avcodec_free_context(&t->enc);
	avcodec_free_context(&t->adec);
	avcodec_free_context(&t->aenc);
	av_bsf_free(&t->adts);
	av_buffer_unref(&t->src_frames);
	av_buffer_unref(&t->hwdev);
	av_buffer_unref(&t->enc_hwdev);
	avformat_close_input(&t->ifmt);
	if (t->ipb) {
		av_freep(&t->ipb->buffer);
		avio_context_free(&t->ipb);
	}
	if (t->ofmt) {
		AVIOContext *pb = t->ofmt->pb;
		if (pb)
			av_freep(&pb->buffer);
		avio_context_free(&pb);
		avformat_free_context(t->ofmt);
	}
	av_frame_free(&t->frame);
	av_frame_free(&t->sw);
	av_frame_free(&t->filt);
	av_packet_free(&t->pkt);
	if (t->in_open)
		accel_input_close(&t->in);
}

int tc_run(const struct tc_job *job, struct accel_ctx *ctx, struct accel_output *out)
{
	struct tc t = { .job = job, .ctx = ctx, .out = out, .vidx = -1, .aidx = -1, .hw_pix_fmt = AV_PIX_FMT_NONE,
			.last_pts = AV_NOPTS_VALUE, .skip_upto = AV_NOPTS_VALUE, .last_dts = AV_NOPTS_VALUE,
			.anext = AV_NOPTS_VALUE };
	struct tc_hw hw[4];
	int nhw = 0;
	av_log_set_level(job->common.verbose > 1 ? AV_LOG_INFO : AV_LOG_QUIET);
	/* SVT-AV1 prints its banner unless told (its own variable; the
	 * user's value wins). */
	setenv("SVT_LOG", job->common.verbose > 1 ? "3" : "1", 0);
	t.frame = av_frame_alloc();
	t.sw = av_frame_alloc();
	t.filt = av_frame_alloc();
	t.pkt = av_packet_alloc();
	t.raw = !strcmp(job->to, "npy");
	t.t0 = accel_now();
	if (!t.frame || !t.sw || !t.filt || !t.pkt) {
		fail(&t, ACCEL_EXIT_FAILURE, "out of memory");
		goto done;
	}
	if (strcmp(job->hw, "none"))
		nhw = tc_hw_find(ctx, job, hw, 4);
	tc_sw_engine(ctx, t.sw_engine, sizeof t.sw_engine);
	char ferr[256];
	if (accel_fault_check(ctx, ferr, sizeof ferr) < 0) {
		fail(&t, ACCEL_EXIT_USAGE, "%s", ferr);
		goto done;
	}
	for (int i = 0; i < nhw; i++) {
		if (hw[i].usable)
			continue;
		/* A device asked for by name that is not there: the stage runs
		 * in software, with one line (or fails with --fallback none). */
		if (strcmp(job->hw, "auto")) {
			if (job->common.fallback == ACCEL_FALLBACK_NONE) {
				fail(&t, ACCEL_EXIT_FAILURE, "--hw %s: %s (--fallback none)", job->hw, hw[i].reason);
				goto done;
			}
			if (!job->common.quiet)
				accel_msg_warn("--hw %s: %s; decoding and encoding in software", job->hw, hw[i].reason);
		}
	}
	if (job->common.verbose)
		print_route(&t, hw, nhw);
	if (open_input(&t) < 0 || open_decoder(&t, hw, nhw) < 0)
		goto done;
	if (!t.raw && (open_muxer(&t) < 0 || open_audio(&t) < 0))
		goto done;
	if (job->common.progress > 0 || (job->common.progress < 0 && isatty(2) && !job->common.quiet))
		t.meter = 1;
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	int catch = !job->output;
	if (catch) {
		/* On stdout, an interrupted run still ends its container. A
		 * signal the parent ignored (nohup, &) stays ignored. */
		sigaction(SIGINT, NULL, &old_int);
		sigaction(SIGTERM, NULL, &old_term);
		if (old_int.sa_handler != SIG_IGN)
			sigaction(SIGINT, &sa, NULL);
		if (old_term.sa_handler != SIG_IGN)
			sigaction(SIGTERM, &sa, NULL);
	}
	int rc = 0;
	while (!t.status && !t.werr && !interrupted) {
		rc = av_read_frame(t.ifmt, t.pkt);
		if (rc < 0)
			break;
		t.packets++;
		if (t.pkt->stream_index == t.vidx) {
			video_packet(&t, t.pkt, hw, nhw);
		} else if (t.pkt->stream_index == t.aidx && (t.acopy || t.adec)) {
			audio_packet(&t, t.pkt);
		} else {
			av_packet_unref(t.pkt);
		}
		if (t.meter || job->progress_json)
			progress(&t, 0);
	}
	if (rc < 0 && rc != AVERROR_EOF && !t.status && !t.werr && !interrupted) {
		char e[128];
		if (job->strict)
			fail(&t, ACCEL_EXIT_DATA, "%s: %s (--strict)", t.in.name, averr(rc, e, sizeof e));
		else if (!job->common.quiet)
			accel_msg_warn("%s: input ends early: %s", t.in.name, averr(rc, e, sizeof e));
		t.bad_packets++;
	}
	/* Flush and finalize on every path but a write error. */
	if (!t.werr && (!t.status || t.header)) {
		int st = t.status;
		char saved[sizeof t.err];
		memcpy(saved, t.err, sizeof saved);
		t.status = 0;
		video_packet(&t, NULL, hw, nhw);
		if (!t.werr)
			encode(&t, NULL, hw, nhw);
		if ((t.adec || t.adts) && !t.werr)
			audio_packet(&t, NULL);
		if (!t.header && !t.raw && !t.status && !t.werr)
			fail(&t, ACCEL_EXIT_DATA, "%s: no video frame could be decoded", t.in.name);
		if (t.header && !t.werr) {
			int wr = av_write_trailer(t.ofmt);
			if (wr < 0 && !t.werr)
				fail(&t, ACCEL_EXIT_FAILURE, "cannot finish the %s container", t.ofmt->oformat->name);
		}
		if (st) {
			t.status = st;
			memcpy(t.err, saved, sizeof saved);
		}
	}
	if (!t.werr && t.ofmt && t.ofmt->pb)
		avio_flush(t.ofmt->pb);
	if (t.meter || job->progress_json)
		progress(&t, 1);
	if (catch) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
	}
	if (t.reopened && !job->common.quiet) {
		if (t.replayed >= 0)
			accel_msg_warn("%s; reopened on %s from the keyframe %d packets before: %llu frames decoded again, "
				       "none lost", t.reopen_note, t.st[TC_DECODE].engine, t.replayed - 1,
				       (unsigned long long)t.redecoded);
		else
			accel_msg_warn("%s; reopened on %s at the next keyframe: %llu packets skipped", t.reopen_note,
				       t.st[TC_DECODE].engine, (unsigned long long)t.skipped);
	}
	if (t.enc_reopened && !job->common.quiet && !t.status)
		accel_msg_warn("%s; reopened on %s (%s) from frame %llu: %llu frames encoded "
			       "again, none lost", t.enc_note, t.st[TC_ENCODE].engine, t.st[TC_ENCODE].what,
			       (unsigned long long)t.enc_from, (unsigned long long)t.reencoded);
	if (t.bad_packets && !job->common.quiet && !t.status)
		accel_msg_warn("%s: %llu undecodable or damaged packets skipped", t.in.name,
			       (unsigned long long)t.bad_packets);
	if (job->common.verbose) {
		print_stages(&t);
		fprintf(stderr, "accel-transcode: %llu packets read, %llu frames written, %llu bytes out, %.3f s\n",
			(unsigned long long)t.packets, (unsigned long long)t.written_frames,
			(unsigned long long)out->written, accel_now() - t.t0);
	}
done:
	cleanup(&t);
	if (t.werr == ACCEL_EPIPE)
		return 0;
	if (t.werr)
		return accel_msg_error("cannot write %s: %s", job->output ? job->output : "stdout",
				       strerror(out->error ? out->error : EIO)), ACCEL_EXIT_FAILURE;
	if (t.status) {
		accel_msg_error("%s", t.err);
		return t.status;
	}
	return interrupted ? 128 + interrupted : 0;
}

int tc_interrupted(void)
{
	return interrupted;
}
