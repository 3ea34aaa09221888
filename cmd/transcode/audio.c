/*
 * audio.c - accel-transcode's audio, beside the video: its packets copied
 * (ADTS headers off AAC for containers that want the config in their
 * header), or decoded, resampled (libavfilter) and encoded to AAC or Opus.
 */
#include <stdio.h>
#include <string.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include "transcode.h"

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

int tc_audio_stream(struct tc *t)
{
	if (t->in.aidx < 0 || (!t->au.copy && !t->au.enc))
		return 0;
	t->out.ast = avformat_new_stream(t->out.fmt, NULL);
	if (!t->out.ast)
		return tc_fail(t, ACCEL_EXIT_FAILURE, "out of memory");
	AVStream *ist = t->in.fmt->streams[t->in.aidx];
	if (t->au.copy) {
		if (avcodec_parameters_copy(t->out.ast->codecpar, ist->codecpar) < 0)
			return tc_fail(t, ACCEL_EXIT_FAILURE, "out of memory");
		t->out.ast->codecpar->codec_tag = 0;
		if (t->au.adts)
			aac_config(t->out.ast->codecpar);
		t->out.ast->time_base = ist->time_base;
	} else {
		if (avcodec_parameters_from_context(t->out.ast->codecpar, t->au.enc) < 0)
			return tc_fail(t, ACCEL_EXIT_FAILURE, "out of memory");
		t->out.ast->time_base = t->au.enc->time_base;
	}
	return 0;
}

int tc_audio_open(struct tc *t)
{
	const struct tc_job *job = t->job;
	if (t->in.aidx < 0 || !strcmp(job->to, "npy") || (job->audio && !strcmp(job->audio, "none"))) {
		t->in.aidx = -1;
		return 0;
	}
	if (!strcmp(t->out.fmt->oformat->name, "rawvideo") || !strcmp(t->out.fmt->oformat->name, "yuv4mpegpipe")) {
		if (job->audio)
			return tc_fail(t, ACCEL_EXIT_USAGE, "--audio %s: --to %s has no audio", job->audio, job->to);
		t->in.aidx = -1;
		return 0;
	}
	AVStream *ist = t->in.fmt->streams[t->in.aidx];
	char why[200] = "";
	if (!job->audio || !strcmp(job->audio, "copy")) {
		if (tc_audio_copy_fits(t->out.fmt->oformat, ist->codecpar, why, sizeof why)) {
			t->au.copy = 1;
			if (ist->codecpar->codec_id != AV_CODEC_ID_AAC || ist->codecpar->extradata_size)
				return 0;
			/* ADTS (MPEG-TS): the header of each packet comes off,
			 * its config goes in the container's header. */
			const AVBitStreamFilter *f = av_bsf_get_by_name("aac_adtstoasc");
			if (!f || av_bsf_alloc(f, &t->au.adts) < 0 ||
			    avcodec_parameters_copy(t->au.adts->par_in, ist->codecpar) < 0)
				return tc_fail(t, ACCEL_EXIT_FAILURE, "out of memory");
			t->au.adts->time_base_in = ist->time_base;
			if (av_bsf_init(t->au.adts) < 0)
				return tc_fail(t, ACCEL_EXIT_FAILURE, "cannot set up aac_adtstoasc");
			return 0;
		}
		if (job->audio)
			return tc_fail(t, ACCEL_EXIT_USAGE, "--audio copy: %s; use --audio aac, opus or none", why);
	}
	/* Unless asked: AAC, or Opus for a container without AAC (WebM), as
	 * the ffmpeg program's defaults. */
	int opus = job->audio ? !strcmp(job->audio, "opus")
		   : avformat_query_codec(t->out.fmt->oformat, AV_CODEC_ID_AAC, FF_COMPLIANCE_NORMAL) == 0;
	if (!job->audio && job->common.verbose)
		fprintf(stderr, "accel-transcode: audio: not copied (%s): encoded to %s\n", why, opus ? "opus" : "aac");
	const AVCodec *ec = opus ? avcodec_find_encoder_by_name("libopus") : avcodec_find_encoder(AV_CODEC_ID_AAC);
	if (!ec && opus)
		ec = avcodec_find_encoder(AV_CODEC_ID_OPUS);
	const AVCodec *dc = avcodec_find_decoder(ist->codecpar->codec_id);
	char e[128];
	if (!ec || !dc)
		return tc_fail(t, ACCEL_EXIT_FAILURE, "no %s for the audio", !ec ? "encoder" : "decoder");
	if (avformat_query_codec(t->out.fmt->oformat, ec->id, FF_COMPLIANCE_NORMAL) == 0)
		return tc_fail(t, ACCEL_EXIT_USAGE, "--audio %s: %s cannot go in a %s container", opus ? "opus" : "aac",
			       ec->name, t->out.fmt->oformat->name);
	t->au.dec = avcodec_alloc_context3(dc);
	t->au.enc = avcodec_alloc_context3(ec);
	if (!t->au.dec || !t->au.enc || avcodec_parameters_to_context(t->au.dec, ist->codecpar) < 0)
		return tc_fail(t, ACCEL_EXIT_FAILURE, "out of memory");
	t->au.dec->pkt_timebase = ist->time_base;
	int rc = avcodec_open2(t->au.dec, dc, NULL);
	if (rc < 0)
		return tc_fail(t, ACCEL_EXIT_DATA, "%s: cannot open the audio decoder: %s", t->in.io.name,
			       tc_averr(rc, e, sizeof e));
	int rate = opus ? 48000 : t->au.dec->sample_rate;
	if (ec->supported_samplerates) {
		int best = ec->supported_samplerates[0];
		for (const int *r = ec->supported_samplerates; *r; r++)
			if (*r == t->au.dec->sample_rate)
				best = *r;
		rate = best;
	}
	enum AVSampleFormat sf = ec->sample_fmts ? ec->sample_fmts[0] : AV_SAMPLE_FMT_FLTP;
	t->au.enc->sample_fmt = sf;
	t->au.enc->sample_rate = rate;
	t->au.enc->time_base = (AVRational){ 1, rate };
	if (av_channel_layout_copy(&t->au.enc->ch_layout, &t->au.dec->ch_layout) < 0)
		return tc_fail(t, ACCEL_EXIT_FAILURE, "out of memory");
	if (t->au.enc->ch_layout.order == AV_CHANNEL_ORDER_UNSPEC)
		av_channel_layout_default(&t->au.enc->ch_layout, t->au.enc->ch_layout.nb_channels);
	if (t->au.enc->ch_layout.nb_channels > 2 && opus) {
		av_channel_layout_uninit(&t->au.enc->ch_layout);
		t->au.enc->ch_layout = (AVChannelLayout)AV_CHANNEL_LAYOUT_STEREO;
	}
	if (t->out.fmt->oformat->flags & AVFMT_GLOBALHEADER)
		t->au.enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
	if ((rc = avcodec_open2(t->au.enc, ec, NULL)) < 0)
		return tc_fail(t, ACCEL_EXIT_FAILURE, "cannot open the %s encoder: %s", ec->name, tc_averr(rc, e, sizeof e));

	char args[256], layout[64], trim[96], chain[352];
	AVChannelLayout inl;
	av_channel_layout_copy(&inl, &t->au.dec->ch_layout);
	if (inl.order == AV_CHANNEL_ORDER_UNSPEC)
		av_channel_layout_default(&inl, inl.nb_channels);
	av_channel_layout_describe(&inl, layout, sizeof layout);
	av_channel_layout_uninit(&inl);
	snprintf(args, sizeof args, "time_base=1/%d:sample_rate=%d:sample_fmt=%s:channel_layout=%s",
		 t->au.dec->sample_rate, t->au.dec->sample_rate, av_get_sample_fmt_name(t->au.dec->sample_fmt), layout);
	t->au.graph = avfilter_graph_alloc();
	if (!t->au.graph)
		return tc_fail(t, ACCEL_EXIT_FAILURE, "out of memory");
	rc = avfilter_graph_create_filter(&t->au.src, avfilter_get_by_name("abuffer"), "ain", args, NULL, t->au.graph);
	if (rc >= 0)
		rc = avfilter_graph_create_filter(&t->au.sink, avfilter_get_by_name("abuffersink"), "aout", NULL, NULL,
						  t->au.graph);
	av_channel_layout_describe(&t->au.enc->ch_layout, layout, sizeof layout);
	tc_trim_audio_filter(t, trim, sizeof trim);
	snprintf(chain, sizeof chain, "%saresample=%d,aformat=sample_fmts=%s:sample_rates=%d:channel_layouts=%s", trim,
		 rate, av_get_sample_fmt_name(sf), rate, layout);
	AVFilterInOut *outs = avfilter_inout_alloc(), *ins = avfilter_inout_alloc();
	if (rc >= 0 && outs && ins) {
		outs->name = av_strdup("in");
		outs->filter_ctx = t->au.src;
		ins->name = av_strdup("out");
		ins->filter_ctx = t->au.sink;
		rc = avfilter_graph_parse_ptr(t->au.graph, chain, &ins, &outs, NULL);
		if (rc >= 0)
			rc = avfilter_graph_config(t->au.graph, NULL);
	} else if (rc >= 0) {
		rc = AVERROR(ENOMEM);
	}
	avfilter_inout_free(&outs);
	avfilter_inout_free(&ins);
	if (rc < 0)
		return tc_fail(t, ACCEL_EXIT_FAILURE, "cannot set up the audio filters: %s", tc_averr(rc, e, sizeof e));
	if (!(ec->capabilities & AV_CODEC_CAP_VARIABLE_FRAME_SIZE) && t->au.enc->frame_size > 0)
		av_buffersink_set_frame_size(t->au.sink, (unsigned)t->au.enc->frame_size);
	return 0;
}

static int drain_audio_encoder(struct tc *t)
{
	int rc;
	while ((rc = avcodec_receive_packet(t->au.enc, t->pkt)) >= 0) {
		t->pkt->stream_index = t->out.ast ? t->out.ast->index : 0;
		if (t->out.header)
			av_packet_rescale_ts(t->pkt, t->au.enc->time_base, t->out.ast->time_base);
		if (tc_output_packet(t, t->pkt) < 0)
			return -1;
	}
	return rc == AVERROR(EAGAIN) || rc == AVERROR_EOF ? 0 : tc_fail(t, ACCEL_EXIT_FAILURE, "audio encoder failed");
}

/* Push decoded audio (NULL: end) through the filters into the encoder. */
static int audio_frames(struct tc *t, AVFrame *f)
{
	if (av_buffersrc_add_frame(t->au.src, f) < 0)
		return tc_fail(t, ACCEL_EXIT_FAILURE, "audio filter failed");
	for (;;) {
		int rc = av_buffersink_get_frame(t->au.sink, t->filt);
		if (rc == AVERROR(EAGAIN))
			return 0;
		if (rc == AVERROR_EOF) {
			/* The end of the input, or of --duration (atrim). */
			t->trim.adone = 1;
			avcodec_send_frame(t->au.enc, NULL);
			return drain_audio_encoder(t);
		}
		if (rc < 0)
			return tc_fail(t, ACCEL_EXIT_FAILURE, "audio filter failed");
		t->filt->pts = av_rescale_q(t->filt->pts, av_buffersink_get_time_base(t->au.sink), t->au.enc->time_base);
		rc = avcodec_send_frame(t->au.enc, t->filt);
		av_frame_unref(t->filt);
		if (rc < 0)
			return tc_fail(t, ACCEL_EXIT_FAILURE, "audio encoder failed");
		if (drain_audio_encoder(t) < 0)
			return -1;
	}
}

/* A copied audio packet to the muxer (or the queue before the header). */
static int copy_packet(struct tc *t, AVPacket *pkt)
{
	if (!tc_trim_audio_packet(t, pkt)) {
		av_packet_unref(pkt);
		return 0;
	}
	if (t->out.header) {
		av_packet_rescale_ts(pkt, t->in.fmt->streams[t->in.aidx]->time_base, t->out.ast->time_base);
		pkt->stream_index = t->out.ast->index;
	}
	pkt->pos = -1;
	return tc_output_packet(t, pkt);
}

/* A decoded frame's pts in samples (1/sample_rate, the abuffer's time
 * base; the decoder gives the stream's). Frames follow on sample for
 * sample unless the stream's timestamps jump ahead by more than half a
 * frame (a gap, kept); earlier ones or jitter (an MP3's 26 ms frames in
 * mkv's milliseconds) would run the encoder and muxer backwards. */
static void audio_pts(struct tc *t, AVFrame *f)
{
	AVRational tb = { 1, t->au.dec->sample_rate };
	int64_t ts = f->best_effort_timestamp;
	if (ts != AV_NOPTS_VALUE)
		ts -= t->trim.ashift;
	int64_t pts = ts == AV_NOPTS_VALUE ? AV_NOPTS_VALUE : av_rescale_q(ts, t->in.fmt->streams[t->in.aidx]->time_base, tb);
	if (pts == AV_NOPTS_VALUE)
		pts = t->au.next == AV_NOPTS_VALUE ? 0 : t->au.next;
	else if (t->au.next != AV_NOPTS_VALUE && pts < t->au.next + f->nb_samples / 2)
		pts = t->au.next;
	f->pts = pts;
	t->au.next = pts + f->nb_samples;
}

int tc_audio_packet(struct tc *t, AVPacket *pkt)
{
	if (t->trim.adone) {
		if (pkt)
			av_packet_unref(pkt);
		return 0;
	}
	if (t->au.copy && !t->au.adts) {
		if (!pkt)
			return 0;
		return copy_packet(t, pkt);
	}
	if (t->au.copy) {
		if (av_bsf_send_packet(t->au.adts, pkt) < 0) {
			if (pkt)
				av_packet_unref(pkt);
			t->rep.bad_packets++;
			return t->job->strict ? tc_fail(t, ACCEL_EXIT_DATA, "%s: bad ADTS audio packet (--strict)",
							t->in.io.name) : 0;
		}
		AVPacket *o = t->pkt == pkt ? av_packet_alloc() : t->pkt;
		if (!o)
			return tc_fail(t, ACCEL_EXIT_FAILURE, "out of memory");
		int rc = 0;
		while (rc == 0 && av_bsf_receive_packet(t->au.adts, o) >= 0) {
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
	int rc = avcodec_send_packet(t->au.dec, pkt);
	if (pkt)
		av_packet_unref(pkt);
	if (rc < 0 && rc != AVERROR_EOF) {
		t->rep.bad_packets++;
		return t->job->strict ? tc_fail(t, ACCEL_EXIT_DATA, "%s: undecodable audio packet (--strict)", t->in.io.name) : 0;
	}
	while ((rc = avcodec_receive_frame(t->au.dec, t->frame)) >= 0) {
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

void tc_audio_free(struct tc *t)
{
	avfilter_graph_free(&t->au.graph);
	avcodec_free_context(&t->au.dec);
	avcodec_free_context(&t->au.enc);
	av_bsf_free(&t->au.adts);
}
