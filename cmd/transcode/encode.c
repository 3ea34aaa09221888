/*
 * encode.c - accel-transcode's video encoder (libavcodec): set up with the
 * filter graph at the first frame, on the first hardware device that can
 * open it, else in software, with the options of --quality, --preset and
 * -T; an encoder that fails mid-stream hands over once to a software one,
 * which encodes again the frames whose packets were not written (struct
 * tc_encode_recovery).
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libavfilter/buffersink.h>
#include <libavutil/hwcontext.h>
#include <libavutil/pixdesc.h>
#include "transcode.h"

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

/* The software format of what the graph gives: the sink's, or for frames
 * on a device, that of their frames context. */
static enum AVPixelFormat sink_sw_format(const struct tc *t)
{
	AVBufferRef *fr = av_buffersink_get_hw_frames_ctx(t->vf.sink);
	if (fr)
		return ((AVHWFramesContext *)fr->data)->sw_format;
	return av_buffersink_get_format(t->vf.sink);
}

/* Open encoder c for what the filter graph gives, on hardware h (NULL:
 * software; on h, the frames the graph leaves there). A takeover
 * (reopen_encoder) writes its parameter sets in band (no global header:
 * the container's header holds the first encoder's) and no B-frames, so
 * that its timestamps follow those written already. 0, or an AVERROR code
 * (t->enc.ctx freed). */
static int try_encoder(struct tc *t, const AVCodec *c, const struct tc_hw *h, int takeover)
{
	const struct tc_job *job = t->job;
	AVRational rate = av_buffersink_get_frame_rate(t->vf.sink);
	if (rate.num <= 0 || rate.den <= 0)
		rate = av_guess_frame_rate(t->in.fmt, t->in.fmt->streams[t->in.vidx], NULL);
	if (rate.num <= 0 || rate.den <= 0)
		rate = (AVRational){ 25, 1 };
	t->enc.ctx = avcodec_alloc_context3(c);
	if (!t->enc.ctx)
		return AVERROR(ENOMEM);
	t->enc.ctx->width = av_buffersink_get_w(t->vf.sink);
	t->enc.ctx->height = av_buffersink_get_h(t->vf.sink);
	t->enc.ctx->sample_aspect_ratio = av_buffersink_get_sample_aspect_ratio(t->vf.sink);
	t->enc.ctx->pix_fmt = av_buffersink_get_format(t->vf.sink);
	if (takeover) {
		char why[200];
		t->enc.ctx->pix_fmt = tc_sw_format(c, NULL, sink_sw_format(t), why, sizeof why);
	}
	t->enc.ctx->framerate = rate;
	t->enc.ctx->time_base = av_inv_q(rate);
	t->enc.ctx->thread_count = job->common.threads;
	if (job->keyint)
		t->enc.ctx->gop_size = job->keyint;
	if (job->bitrate)
		t->enc.ctx->bit_rate = job->bitrate;
	if (takeover)
		t->enc.ctx->max_b_frames = 0;
	else if (t->out.fmt->oformat->flags & AVFMT_GLOBALHEADER)
		t->enc.ctx->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
	int rc = 0;
	if (h) {
		/* The frames the graph leaves on the device. */
		AVBufferRef *fr = av_buffersink_get_hw_frames_ctx(t->vf.sink);
		rc = !fr ? AVERROR(EINVAL) : !(t->enc.ctx->hw_frames_ctx = av_buffer_ref(fr)) ? AVERROR(ENOMEM) : 0;
	}
	AVDictionary *o = NULL;
	encoder_options(job, c->name, &o);
	/* SVT-AV1 asks for real-time scheduling when it runs as root (it
	 * looks at the effective uid): open it as nobody, then take root
	 * back. */
	int drop = !strcmp(c->name, "libsvtav1") && geteuid() == 0 && seteuid(65534) == 0;
	if (rc >= 0)
		rc = avcodec_open2(t->enc.ctx, c, &o);
	if (drop && seteuid(0) < 0) {
		tc_fail(t, ACCEL_EXIT_FAILURE, "cannot take back the effective uid 0: %s", strerror(errno));
		rc = AVERROR_EXIT;
	}
	av_dict_free(&o);
	if (rc < 0) {
		avcodec_free_context(&t->enc.ctx);
		return rc;
	}
	if (!strcmp(c->name, "libsvtav1"))
		demote_rt_threads();
	return 0;
}

/* Whether software encoder `name` refuses frames of w by h pixels in
 * `fmt`, which it would say only as "Generic error in an external
 * library": x264, x265 and SVT-AV1 take only sizes that are whole in
 * chroma samples (even widths for 4:2:0 and 4:2:2, even heights for
 * 4:2:0), SVT-AV1 only 64 by 64 or more. 1 with the reason and a remedy
 * in why[len], else 0. */
static int size_refused(const char *name, int w, int h, enum AVPixelFormat fmt, char *why, size_t len)
{
	const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
	int picky = !strcmp(name, "libx264") || !strcmp(name, "libx265") || !strcmp(name, "libsvtav1");
	if (!picky || !d)
		return 0;
	int xs = 1 << d->log2_chroma_w, ys = 1 << d->log2_chroma_h;
	if (w % xs)
		snprintf(why, len, "width %d is odd: %s needs even widths; use --scale %dx-2", w, d->name, w / xs * xs);
	else if (h % ys)
		snprintf(why, len, "height %d is odd: %s needs even heights; use --scale -2x%d", h, d->name, h / ys * ys);
	else if (!strcmp(name, "libsvtav1") && (w < 64 || h < 64))
		snprintf(why, len, "%dx%d: libsvtav1 takes 64x64 or more", w, h);
	else
		return 0;
	return 1;
}

/* The pixel format frames leave the graph in for a software encoder (or
 * as frames): AV_PIX_FMT_NONE after tc_fail() for a --pix-fmt it does not
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
		tc_fail(t, ACCEL_EXIT_USAGE, "%s", why);
	return f;
}

/* At the first decoded frame f: plan and build the filter graph and open
 * the encoder that takes its frames, trying the hardware encoders first
 * (CODEC_TYPE: h264_nvenc, hevc_vaapi ...; their own frames, on the
 * device: tc_hw_formats), then software. A hardware encoder that cannot
 * open, or whose graph cannot be built, falls back with one line (or
 * fails, --fallback none). */
int tc_encode_open(struct tc *t, const AVFrame *f, const struct tc_hw *hw, int nhw)
{
	const struct tc_job *job = t->job;
	struct tc_stage_stat *fs = &t->st[TC_FILTER], *es = &t->st[TC_ENCODE];
	const char *dec = f->hw_frames_ctx && t->dec.hw ? t->dec.hw->type : NULL;
	enum AVPixelFormat src = f->hw_frames_ctx ? ((AVHWFramesContext *)f->hw_frames_ctx->data)->sw_format : f->format;
	int frames_out = t->out.raw || !strcmp(job->to, "rawvideo") || !strcmp(job->to, "y4m");
	char e[128], why[512] = "";
	int usage = 0;            /* why is the filters' failure (1), a size the encoder refuses (2) */
	struct tc_plan_in in = { job, dec, NULL, src, AV_PIX_FMT_NONE, tc_filter_have };
	for (int i = 0; i <= nhw; i++) {
		int sw = i == nhw, rc = 0;
		if (!sw && (!hw[i].usable || frames_out))
			continue;
		usage = 0;
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
				dev = t->dec.hwdev;
			} else {
				enum AVHWDeviceType type = av_hwdevice_find_type_by_name(hw[i].type);
				rc = av_hwdevice_ctx_create(&t->enc.hwdev, type, hw[i].device[0] ? hw[i].device : NULL, NULL, 0);
				if (rc < 0)
					snprintf(why, sizeof why, "cannot open the %s device: %s", hw[i].type,
						 tc_averr(rc, e, sizeof e));
				dev = t->enc.hwdev;
			}
		}
		if (rc >= 0) {
			tc_plan_graph(&in, &t->vf.plan);
			if ((rc = tc_filter_build(t, f, dev)) < 0) {
				snprintf(why, sizeof why, "cannot set up the filters '%s': %s", t->vf.plan.chain,
					 tc_averr(rc, e, sizeof e));
				usage = 1;
			}
		}
		if (rc >= 0 && sw && !t->out.raw) {
			/* The software encoders of --to, best first. */
			const char *const *sws = sw_encoders(job->to);
			rc = AVERROR_ENCODER_NOT_FOUND;
			for (int k = 0; sws[k] && rc < 0 && !t->status; k++) {
				if (!(c = avcodec_find_encoder_by_name(sws[k]))) {
					snprintf(why, sizeof why, "%s is not in this FFmpeg", sws[k]);
					continue;
				}
				if (size_refused(c->name, av_buffersink_get_w(t->vf.sink), av_buffersink_get_h(t->vf.sink),
						 av_buffersink_get_format(t->vf.sink), why, sizeof why)) {
					rc = AVERROR(EINVAL);
					usage = 2;
					continue;
				}
				usage = 0;
				if ((rc = try_encoder(t, c, NULL, 0)) < 0)
					snprintf(why, sizeof why, "%s: %s", c->name, tc_averr(rc, e, sizeof e));
			}
		} else if (rc >= 0 && !sw && (rc = try_encoder(t, c, &hw[i], 0)) < 0) {
			snprintf(why, sizeof why, "%s: %s", c->name, tc_averr(rc, e, sizeof e));
		}
		if (t->status)
			return -1;
		if (rc >= 0) {
			snprintf(fs->engine, sizeof fs->engine, "%s",
				 t->vf.plan.hw_filters && t->dec.hw ? t->dec.hw->engine : t->sw_engine);
			snprintf(fs->what, sizeof fs->what, "%.63s", t->vf.plan.chain);
			fs->hw = t->vf.plan.hw_filters > 0;
			if (f->hw_frames_ctx && !(t->vf.src_frames = av_buffer_ref(f->hw_frames_ctx)))
				return tc_fail(t, ACCEL_EXIT_FAILURE, "out of memory");
			if (job->common.verbose)
				fprintf(stderr, "accel-transcode: filter graph: %s (%s)\n", t->vf.plan.chain, t->vf.plan.note);
			if (c) {
				snprintf(es->engine, sizeof es->engine, "%s", sw ? t->sw_engine : hw[i].engine);
				snprintf(es->what, sizeof es->what, "%s", c->name);
				es->hw = !sw;
				t->enc.hw = sw ? NULL : &hw[i];
			}
			return 0;
		}
		avfilter_graph_free(&t->vf.graph);
		av_buffer_unref(&t->enc.hwdev);
		if (sw)
			break;
		if (job->common.fallback == ACCEL_FALLBACK_NONE)
			return tc_fail(t, ACCEL_EXIT_FAILURE, "encode on %s failed: %s (--fallback none)", hw[i].engine, why);
		snprintf(t->st[TC_ENCODE].fallback, sizeof t->st[TC_ENCODE].fallback, "encode on %.47s failed: %.140s",
			 hw[i].engine, why);
		if (!job->common.quiet)
			accel_msg_warn("encode on %s failed: %s; encoding in software", hw[i].engine, why);
	}
	if (usage == 1)
		return tc_fail(t, ACCEL_EXIT_USAGE, "%s", why);
	if (usage == 2)
		return tc_fail(t, ACCEL_EXIT_USAGE, "--to %s: %s", job->to, why);
	return tc_fail(t, ACCEL_EXIT_FAILURE, "cannot open a %s encoder: %s", job->to, why);
}

/* Write video packet pkt (the encoder's time base). After a takeover its
 * decode timestamps continue those written (a new encoder starts its own). */
static int write_video(struct tc *t, AVPacket *pkt)
{
	if (t->enc_rec.reopened && pkt->dts != AV_NOPTS_VALUE && t->enc_rec.last_dts != AV_NOPTS_VALUE &&
	    pkt->dts <= t->enc_rec.last_dts)
		pkt->dts = t->enc_rec.last_dts + 1;
	if (pkt->dts != AV_NOPTS_VALUE)
		t->enc_rec.last_dts = pkt->dts;
	pkt->stream_index = t->out.vst->index;
	av_packet_rescale_ts(pkt, t->enc.ctx->time_base, t->out.vst->time_base);
	return tc_output_packet(t, pkt);
}

/* Stop keeping frames and packets: write the packets held, drop the frames. */
static int stop_holding(struct tc *t)
{
	int rc = 0;
	for (int i = 0; i < t->enc_rec.npend; i++) {
		if (rc == 0 && !t->status)
			rc = write_video(t, t->enc_rec.pend[i]);
		av_packet_free(&t->enc_rec.pend[i]);
	}
	for (int i = 0; i < t->enc_rec.nheld; i++)
		av_frame_free(&t->enc_rec.held[i]);
	t->enc_rec.npend = t->enc_rec.nheld = 0;
	t->enc_rec.holding = 0;
	return rc;
}

/* Write the longest run of held packets that are, all together, those of
 * the first frames kept (tc_written_prefix), and drop those frames. */
static int release_held(struct tc *t)
{
	int64_t pp[TC_MAX_HELD], fp[TC_MAX_HELD];
	for (int i = 0; i < t->enc_rec.npend; i++)
		pp[i] = t->enc_rec.pend[i]->pts;
	for (int i = 0; i < t->enc_rec.nheld; i++)
		fp[i] = t->enc_rec.held[i]->pts;
	int n = tc_written_prefix(pp, t->enc_rec.npend, fp, t->enc_rec.nheld), rc = 0;
	for (int i = 0; i < n; i++) {
		if (rc == 0)
			rc = write_video(t, t->enc_rec.pend[i]);
		av_packet_free(&t->enc_rec.pend[i]);
		av_frame_free(&t->enc_rec.held[i]);
	}
	memmove(t->enc_rec.pend, t->enc_rec.pend + n, (size_t)(t->enc_rec.npend - n) * sizeof t->enc_rec.pend[0]);
	memmove(t->enc_rec.held, t->enc_rec.held + n, (size_t)(t->enc_rec.nheld - n) * sizeof t->enc_rec.held[0]);
	t->enc_rec.npend -= n;
	t->enc_rec.nheld -= n;
	return rc;
}

/* A packet from the encoder: written, or held (t->enc_rec.holding). A packet
 * whose pts is no frame kept (an encoder that makes up timestamps) ends
 * the holding. */
static int video_out(struct tc *t, AVPacket *pkt)
{
	if (!t->enc_rec.holding)
		return write_video(t, pkt);
	int known = 0;
	for (int i = 0; i < t->enc_rec.nheld && !known && pkt->pts != AV_NOPTS_VALUE; i++)
		known = t->enc_rec.held[i]->pts == pkt->pts;
	if (!known || t->enc_rec.npend == TC_MAX_HELD) {
		if (stop_holding(t) < 0)
			return -1;
		return write_video(t, pkt);
	}
	AVPacket *p = av_packet_alloc();
	if (!p)
		return tc_fail(t, ACCEL_EXIT_FAILURE, "out of memory");
	av_packet_move_ref(p, pkt);
	t->enc_rec.pend[t->enc_rec.npend++] = p;
	return release_held(t);
}

/* Take the packets the encoder has: 0, -1 on a write error, or 1 when the
 * encoder failed (*err). */
static int receive_packets(struct tc *t, int *err)
{
	int rc;
	while ((rc = avcodec_receive_packet(t->enc.ctx, t->pkt)) >= 0)
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
	if (t->enc.ctx->hw_frames_ctx || (f->format == t->enc.ctx->pix_fmt && !f->hw_frames_ctx))
		return f;
	AVFrame *src = f, *down = NULL;
	if (f->hw_frames_ctx) {
		/* A software encoder after frames on a device: download. */
		if (!(down = av_frame_alloc()) || av_hwframe_transfer_data(down, f, 0) < 0) {
			av_frame_free(&down);
			tc_fail(t, ACCEL_EXIT_FAILURE, "cannot download a frame for %s", t->enc.ctx->codec->name);
			return NULL;
		}
		av_frame_copy_props(down, f);
		src = down;
	}
	if (src->format == t->enc.ctx->pix_fmt)
		return *tmp = down;
	/* To the pixel format of an encoder that took over. */
	AVFrame *c = av_frame_alloc();
	t->enc_rec.sws = sws_getCachedContext(t->enc_rec.sws, src->width, src->height, src->format, src->width, src->height,
					      t->enc.ctx->pix_fmt, SWS_BICUBIC, NULL, NULL, NULL);
	if (c) {
		c->format = t->enc.ctx->pix_fmt;
		c->width = src->width;
		c->height = src->height;
	}
	if (!c || !t->enc_rec.sws || av_frame_get_buffer(c, 0) < 0 || sws_scale_frame(t->enc_rec.sws, c, src) < 0) {
		av_frame_free(&c);
		av_frame_free(&down);
		tc_fail(t, ACCEL_EXIT_FAILURE, "cannot convert a frame to %s for %s", av_get_pix_fmt_name(t->enc.ctx->pix_fmt),
			t->enc.ctx->codec->name);
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
	int rc = avcodec_send_frame(t->enc.ctx, in);
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
	const AVCodecParameters *par = t->out.vst->codecpar;
	const uint8_t *x = par->extradata;
	if (!(t->out.fmt->oformat->flags & AVFMT_GLOBALHEADER) ||
	    (par->codec_id != AV_CODEC_ID_H264 && par->codec_id != AV_CODEC_ID_HEVC))
		return 0;
	if (par->extradata_size >= 4 && !x[0] && !x[1] && (x[2] == 1 || (!x[2] && x[3] == 1)))
		return 0;
	snprintf(why, len, "the %s header holds %s parameter sets in a form new ones cannot follow in band",
		 t->out.fmt->oformat->name, avcodec_get_name(par->codec_id));
	return -1;
}

/* The encoder failed on frame `at` (rc, or an injected fault when rc is
 * 0): open a software encoder for the same --to, with parameter sets in
 * band (takeover_fits), and give it the frames whose packets were not
 * written (the held ones, the first as a keyframe), so that nothing is
 * lost and what was written stays as it was. Once per run. */
static int reopen_encoder(struct tc *t, uint64_t at, int rc)
{
	struct tc_stage_stat *s = &t->st[TC_ENCODE];
	char e[100], why[100];
	snprintf(why, sizeof why, "%s", rc ? tc_averr(rc, e, sizeof e) : "injected fault, ACCEL_FAULT");
	if (t->job->common.fallback == ACCEL_FALLBACK_NONE)
		return tc_fail(t, ACCEL_EXIT_FAILURE, "encode on %s failed at frame %llu: %s (--fallback none)", s->engine,
			       (unsigned long long)at, why);
	if (t->enc_rec.reopened || !t->enc_rec.holding)
		return tc_fail(t, ACCEL_EXIT_FAILURE, "encode on %s (%s) failed%s at frame %llu: %s", s->engine, s->what,
			       t->enc_rec.reopened ? " again" : "", (unsigned long long)at, why);
	char nofit[200];
	if (takeover_fits(t, nofit, sizeof nofit) < 0)
		return tc_fail(t, ACCEL_EXIT_FAILURE, "encode on %s (%s) failed at frame %llu: %s; cannot continue in "
			       "software: %s", s->engine, s->what, (unsigned long long)at, why, nofit);
	t->enc_rec.reopened = 1;
	snprintf(t->enc_rec.note, sizeof t->enc_rec.note, "encode on %.47s (%.63s) failed at frame %llu (%.99s)", s->engine,
		 s->what, (unsigned long long)at, why);
	snprintf(s->before, sizeof s->before, "%.47s (%.63s), which wrote %llu frames", s->engine, s->what,
		 (unsigned long long)(at + 1 - (uint64_t)t->enc_rec.nheld));
	AVRational tb = t->enc.ctx->time_base;
	enum AVCodecID id = t->enc.ctx->codec_id;
	for (int i = 0; i < t->enc_rec.npend; i++)
		av_packet_free(&t->enc_rec.pend[i]);
	t->enc_rec.npend = 0;
	/* (an encoder that still works, as under ACCEL_FAULT, is told of the
	 * end so that it winds down quietly) */
	avcodec_send_frame(t->enc.ctx, NULL);
	avcodec_free_context(&t->enc.ctx);
	av_buffer_unref(&t->enc.hwdev);
	const char *const *sws = sw_encoders(t->job->to);
	rc = AVERROR_ENCODER_NOT_FOUND;
	const AVCodec *c = NULL;
	for (int k = 0; sws[k] && rc < 0 && !t->status; k++)
		if ((c = avcodec_find_encoder_by_name(sws[k])))
			rc = try_encoder(t, c, NULL, 1);
	if (t->status)
		return -1;
	if (rc < 0)
		return tc_fail(t, ACCEL_EXIT_FAILURE, "%s; cannot open a software %s encoder: %s", t->enc_rec.note, t->job->to,
			       tc_averr(rc, e, sizeof e));
	if (av_cmp_q(tb, t->enc.ctx->time_base))
		return tc_fail(t, ACCEL_EXIT_FAILURE, "%s; the software encoder's time base differs", t->enc_rec.note);
	snprintf(s->engine, sizeof s->engine, "%s", t->sw_engine);
	snprintf(s->what, sizeof s->what, "%s%s", c->name,
		 (t->out.fmt->oformat->flags & AVFMT_GLOBALHEADER) &&
		 (id == AV_CODEC_ID_H264 || id == AV_CODEC_ID_HEVC || id == AV_CODEC_ID_AV1) ? ", headers in band" : "");
	s->hw = 0;
	t->enc.hw = NULL;
	/* Once per run: what comes from now on is written as it comes. */
	t->enc_rec.holding = 0;
	t->enc_rec.from = at + 1 - (uint64_t)t->enc_rec.nheld;
	t->enc_rec.reencoded = (uint64_t)t->enc_rec.nheld;
	int r = 0, err = 0;
	for (int i = 0; i < t->enc_rec.nheld; i++) {
		if (r == 0) {
			t->enc_rec.held[i]->pict_type = i == 0 ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE;
			r = encoder_step(t, t->enc_rec.held[i], &err);
		}
		av_frame_free(&t->enc_rec.held[i]);
	}
	t->enc_rec.nheld = 0;
	if (r > 0)
		return tc_fail(t, ACCEL_EXIT_FAILURE, "%s; %s failed too: %s", t->enc_rec.note, c->name,
			       tc_averr(err, e, sizeof e));
	return r;
}

/* Encode (or write) one filtered frame; NULL flushes the encoder. */
int tc_encode_frame(struct tc *t, AVFrame *f, const struct tc_hw *hw, int nhw)
{
	struct tc_stage_stat *s = &t->st[TC_ENCODE];
	double t0 = accel_now();
	int rc = 0;
	if (f && !t->out.header && !t->out.raw) {
		/* Frames are kept to encode again should the encoder fail: for
		 * a hardware one, or any when $ACCEL_FAULT may make it fail. */
		const char *faults = getenv("ACCEL_FAULT");
		t->enc_rec.holding = t->st[TC_ENCODE].hw || (faults && *faults);
		if (tc_output_start(t) < 0)
			return -1;
	}
	if (f) {
		AVRational tb = av_buffersink_get_time_base(t->vf.sink);
		if (f->pts != AV_NOPTS_VALUE)
			t->rep.media_pos = f->pts * av_q2d(tb);
		s->frames++;
	}
	if (t->out.raw) {
		rc = f ? tc_output_npy(t, f) : 0;
	} else if (t->out.header) {
		uint64_t at = t->enc.sent;
		int injected = 0, err = 0;
		if (f) {
			f->pts = av_rescale_q(f->pts, av_buffersink_get_time_base(t->vf.sink), t->enc.ctx->time_base);
			f->pict_type = AV_PICTURE_TYPE_NONE;
			t->enc.sent++;
			if (t->enc_rec.holding && t->enc_rec.nheld == TC_MAX_HELD)
				rc = stop_holding(t);
			if (t->enc_rec.holding && !(t->enc_rec.held[t->enc_rec.nheld] = av_frame_clone(f)))
				return tc_fail(t, ACCEL_EXIT_FAILURE, "out of memory");
			if (t->enc_rec.holding)
				t->enc_rec.nheld++;
			injected = !t->enc_rec.reopened && accel_fault_hit_stage(s->engine, "encode", at);
		}
		if (rc == 0 && !injected)
			rc = encoder_step(t, f, &err);
		if (injected || rc > 0) {
			if (!f)
				at = t->enc.sent ? t->enc.sent - 1 : 0;
			rc = reopen_encoder(t, at, injected ? 0 : err);
			if (rc == 0 && !f && encoder_step(t, NULL, &err) > 0) {
				char e[128];
				rc = tc_fail(t, ACCEL_EXIT_FAILURE, "%s; %s failed too: %s", t->enc_rec.note,
					     t->enc.ctx->codec->name, tc_averr(err, e, sizeof e));
			}
		}
		if (rc == 0 && !f && t->enc_rec.holding)
			rc = stop_holding(t);
	}
	s->seconds += accel_now() - t0;
	if (f)
		t->rep.written_frames++;
	return rc;
}

void tc_encode_free(struct tc *t)
{
	for (int i = 0; i < t->enc_rec.npend; i++)
		av_packet_free(&t->enc_rec.pend[i]);
	for (int i = 0; i < t->enc_rec.nheld; i++)
		av_frame_free(&t->enc_rec.held[i]);
	sws_freeContext(t->enc_rec.sws);
	avcodec_free_context(&t->enc.ctx);
	av_buffer_unref(&t->enc.hwdev);
}
