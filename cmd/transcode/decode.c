/*
 * decode.c - accel-transcode's video decoder (libavcodec): on the first
 * hardware device that can open it, else in software; a device that fails
 * mid-stream reopens the stage in software once, which decodes the packets
 * since the last keyframe again (struct tc_decode_recovery).
 */
#include <stdio.h>
#include <libavutil/hwcontext.h>
#include "transcode.h"

static enum AVPixelFormat get_hw_format(AVCodecContext *c, const enum AVPixelFormat *fmts)
{
	struct tc *t = c->opaque;
	for (const enum AVPixelFormat *f = fmts; *f != AV_PIX_FMT_NONE; f++)
		if (*f == t->dec.hw_pix_fmt)
			return *f;
	/* The device cannot decode this stream: the software format. */
	return fmts[0] == t->dec.hw_pix_fmt ? fmts[1] : fmts[0];
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
	int rc = av_hwdevice_ctx_create(&t->dec.hwdev, type, hw->device[0] ? hw->device : NULL, NULL, 0);
	if (rc < 0) {
		snprintf(why, len, "cannot open the %.15s device: %.120s", hw->type, tc_averr(rc, e, sizeof e));
		return -1;
	}
	t->dec.hw_pix_fmt = cfg->pix_fmt;
	t->dec.ctx->hw_device_ctx = av_buffer_ref(t->dec.hwdev);
	t->dec.ctx->opaque = t;
	t->dec.ctx->get_format = get_hw_format;
	return 0;
}

int tc_decode_open(struct tc *t, const struct tc_hw *hw, int nhw)
{
	AVStream *st = t->in.fmt->streams[t->in.vidx];
	const AVCodec *codec = avcodec_find_decoder(st->codecpar->codec_id);
	if (!codec)
		return tc_fail(t, ACCEL_EXIT_DATA, "%s: no decoder for %s video", t->in.io.name,
			       avcodec_get_name(st->codecpar->codec_id));
	struct tc_stage_stat *s = &t->st[TC_DECODE];
	char e[128];
	for (int i = 0; i <= nhw; i++) {
		int sw = i == nhw;
		if (!sw && !hw[i].usable)
			continue;
		t->dec.ctx = avcodec_alloc_context3(codec);
		if (!t->dec.ctx || avcodec_parameters_to_context(t->dec.ctx, st->codecpar) < 0)
			return tc_fail(t, ACCEL_EXIT_FAILURE, "out of memory");
		t->dec.ctx->pkt_timebase = st->time_base;
		t->dec.ctx->thread_count = t->job->common.threads;
		/* Frames kept on the device by the filters and the encoder
		 * (and for its reopening) come from the decoder's pool. */
		if (!sw)
			t->dec.ctx->extra_hw_frames = 16;
		char why[200] = "";
		int rc = sw ? 0 : open_hw_decoder(t, codec, &hw[i], why, sizeof why);
		if (rc == 0 && (rc = avcodec_open2(t->dec.ctx, codec, NULL)) < 0)
			snprintf(why, sizeof why, "%s", tc_averr(rc, e, sizeof e));
		if (rc >= 0) {
			snprintf(s->engine, sizeof s->engine, "%s", sw ? t->sw_engine : hw[i].engine);
			snprintf(s->what, sizeof s->what, "%s%s%s", codec->name, sw ? "" : " via ", sw ? "" : hw[i].type);
			s->hw = !sw;
			t->dec.hw = sw ? NULL : &hw[i];
			return 0;
		}
		avcodec_free_context(&t->dec.ctx);
		av_buffer_unref(&t->dec.hwdev);
		if (sw)
			return tc_fail(t, ACCEL_EXIT_DATA, "%s: cannot open the %s decoder: %s", t->in.io.name, codec->name, why);
		if (t->job->common.fallback == ACCEL_FALLBACK_NONE)
			return tc_fail(t, ACCEL_EXIT_FAILURE, "decode on %s failed: %s (--fallback none)", hw[i].engine, why);
		snprintf(s->fallback, sizeof s->fallback, "decode on %.47s failed: %.140s", hw[i].engine, why);
		if (!t->job->common.quiet)
			accel_msg_warn("decode on %s failed: %s; decoding in software", hw[i].engine, why);
	}
	return -1;
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
	struct tc_stage_stat *s = &t->st[TC_DECODE];
	for (;;) {
		double t0 = accel_now();
		int rc = avcodec_receive_frame(t->dec.ctx, t->frame);
		s->seconds += accel_now() - t0;
		if (rc == AVERROR(EAGAIN))
			return 0;
		if (rc == AVERROR_EOF)
			return tc_filter_frame(t, NULL, hw, nhw);
		if (rc < 0 && device_error(t, rc)) {
			*err = rc;
			return 1;
		}
		if (rc < 0) {
			t->rep.bad_packets++;
			if (t->job->strict)
				return tc_fail(t, ACCEL_EXIT_DATA, "%s: undecodable video frame (--strict)", t->in.io.name);
			continue;
		}
		int64_t pts = t->frame->best_effort_timestamp;
		if (t->dec_rec.skip_upto != AV_NOPTS_VALUE && pts != AV_NOPTS_VALUE && pts <= t->dec_rec.skip_upto) {
			/* Decoded again after a reopen: passed on already. */
			t->dec_rec.redecoded++;
			av_frame_unref(t->frame);
			continue;
		}
		if (t->frame->decode_error_flags || (t->frame->flags & AV_FRAME_FLAG_CORRUPT)) {
			t->rep.bad_packets++;
			if (t->job->strict)
				return tc_fail(t, ACCEL_EXIT_DATA, "%s: corrupt video frame (--strict)", t->in.io.name);
		}
		s->frames++;
		if (pts != AV_NOPTS_VALUE)
			t->dec_rec.last_pts = pts;
		rc = tc_filter_frame(t, t->frame, hw, nhw);
		av_frame_unref(t->frame);
		if (rc < 0)
			return -1;
	}
}

static void gop_clear(struct tc *t)
{
	for (int i = 0; i < t->dec_rec.ngop; i++)
		av_packet_free(&t->dec_rec.gop[i]);
	t->dec_rec.ngop = 0;
}

/* Keep the packets since the last keyframe, to decode them again should
 * the decoder fail: at most TC_MAX_GOP of them (a longer GOP is not kept, and
 * a failure in it resumes at the next keyframe). */
static int gop_keep(struct tc *t, const AVPacket *pkt)
{
	if (pkt->flags & AV_PKT_FLAG_KEY) {
		gop_clear(t);
		t->dec_rec.gop_whole = 1;
	}
	if (!t->dec_rec.gop_whole)
		return 0;
	if (t->dec_rec.ngop == TC_MAX_GOP) {
		gop_clear(t);
		t->dec_rec.gop_whole = 0;
		return 0;
	}
	if (!(t->dec_rec.gop[t->dec_rec.ngop] = av_packet_clone(pkt)))
		return tc_fail(t, ACCEL_EXIT_FAILURE, "out of memory");
	t->dec_rec.ngop++;
	return 0;
}

/* The decoder failed at video packet `at` (rc, or an injected fault when
 * rc is 0): reopen the stage on the next engine, software, and decode the
 * packets since the last keyframe again, dropping the frames passed on
 * already, so that nothing is lost; without them (a GOP too long to keep),
 * resume at the next keyframe. Once per run. */
static int reopen_decoder(struct tc *t, uint64_t at, int rc, const struct tc_hw *hw, int nhw)
{
	struct tc_stage_stat *s = &t->st[TC_DECODE];
	char e[128], why[160];
	snprintf(why, sizeof why, "%s", rc ? tc_averr(rc, e, sizeof e) : "injected fault, ACCEL_FAULT");
	if (t->job->common.fallback == ACCEL_FALLBACK_NONE)
		return tc_fail(t, ACCEL_EXIT_FAILURE, "decode on %s failed at video packet %llu: %s (--fallback none)",
			       s->engine, (unsigned long long)at, why);
	if (t->dec_rec.reopened)
		return tc_fail(t, ACCEL_EXIT_FAILURE, "decode on %s failed again at video packet %llu: %s", s->engine,
			       (unsigned long long)at, why);
	t->dec_rec.reopened = 1;
	snprintf(t->dec_rec.note, sizeof t->dec_rec.note, "decode on %s failed at video packet %llu (%s)", s->engine,
		 (unsigned long long)at, why);
	snprintf(s->before, sizeof s->before, "%.47s (%.63s) to video packet %llu", s->engine, s->what,
		 (unsigned long long)at);
	avcodec_free_context(&t->dec.ctx);
	av_buffer_unref(&t->dec.hwdev);
	t->dec.hw_pix_fmt = AV_PIX_FMT_NONE;
	uint64_t frames = s->frames;
	double secs = s->seconds;
	if (tc_decode_open(t, hw, 0) < 0)
		return -1;
	s->frames = frames;
	s->seconds = secs;
	t->dec_rec.skip_upto = t->dec_rec.last_pts;
	t->dec_rec.replayed = t->dec_rec.gop_whole ? t->dec_rec.ngop : -1;
	if (!t->dec_rec.gop_whole) {
		t->dec_rec.wait_key = 1;
		return 0;
	}
	for (int i = 0; i < t->dec_rec.ngop; i++) {
		double t0 = accel_now();
		int r = avcodec_send_packet(t->dec.ctx, t->dec_rec.gop[i]);
		s->seconds += accel_now() - t0;
		if (r < 0 && r != AVERROR(EAGAIN))
			t->rep.bad_packets++;
		int err = 0;
		r = receive_frames(t, hw, nhw, &err);
		if (r < 0)
			return -1;
		if (r > 0)
			return tc_fail(t, ACCEL_EXIT_FAILURE, "decode on %s failed again: %s", s->engine,
				       tc_averr(err, e, sizeof e));
	}
	return 0;
}

/* One video packet (NULL: end of stream) through the decoder. */
int tc_decode_packet(struct tc *t, AVPacket *pkt, const struct tc_hw *hw, int nhw)
{
	struct tc_stage_stat *s = &t->st[TC_DECODE];
	if (pkt && t->dec_rec.wait_key) {
		if (!(pkt->flags & AV_PKT_FLAG_KEY)) {
			t->dec_rec.skipped++;
			av_packet_unref(pkt);
			return 0;
		}
		t->dec_rec.wait_key = 0;
	}
	uint64_t at = t->dec.packets;
	int rc = 0, injected = 0;
	if (pkt) {
		t->dec.packets++;
		if (gop_keep(t, pkt) < 0)
			return -1;
		injected = !t->dec_rec.reopened && accel_fault_hit_stage(s->engine, "decode", at);
	}
	if (!injected) {
		double t0 = accel_now();
		rc = avcodec_send_packet(t->dec.ctx, pkt);
		s->seconds += accel_now() - t0;
	}
	if (pkt)
		av_packet_unref(pkt);
	if (injected || (rc < 0 && device_error(t, rc)))
		return reopen_decoder(t, at, rc, hw, nhw);
	if (rc < 0 && rc != AVERROR_EOF) {
		t->rep.bad_packets++;
		if (t->job->strict) {
			char e[128];
			return tc_fail(t, ACCEL_EXIT_DATA, "%s: undecodable video packet: %s (--strict)", t->in.io.name,
				       tc_averr(rc, e, sizeof e));
		}
		return 0;
	}
	int err = 0;
	rc = receive_frames(t, hw, nhw, &err);
	if (rc > 0)
		return reopen_decoder(t, at, err, hw, nhw);
	return rc;
}

void tc_decode_free(struct tc *t)
{
	gop_clear(t);
	avcodec_free_context(&t->dec.ctx);
	av_buffer_unref(&t->dec.hwdev);
}
