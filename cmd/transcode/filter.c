/*
 * filter.c - accel-transcode's video filter graph (libavfilter: the chain
 * tc_plan_graph plans, deinterlace, crop, scale, fps, pixel format, on the
 * device where the frames are when it can), between the decoder and the
 * encoder.
 */
#include <stdio.h>
#include <string.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/hwcontext.h>
#include "transcode.h"

int tc_filter_have(const char *name)
{
	return avfilter_get_by_name(name) != NULL;
}

/* Build the graph of plan t->vf.plan for the first frame f; `dev` is the
 * device hwupload uploads to (NULL: none). An AVERROR code, the graph
 * freed, on failure. */
int tc_filter_build(struct tc *t, const AVFrame *f, AVBufferRef *dev)
{
	AVStream *st = t->in.fmt->streams[t->in.vidx];
	char args[512];
	t->vf.graph = avfilter_graph_alloc();
	if (!t->vf.graph)
		return AVERROR(ENOMEM);
	/* As the ffmpeg program does: bicubic for the scalers it inserts. */
	t->vf.graph->scale_sws_opts = av_strdup("flags=bicubic");
	t->vf.graph->nb_threads = t->job->common.threads;
	AVRational sar = f->sample_aspect_ratio.num ? f->sample_aspect_ratio : (AVRational){ 0, 1 };
	AVRational fr = av_guess_frame_rate(t->in.fmt, st, NULL);
	snprintf(args, sizeof args, "video_size=%dx%d:pix_fmt=%d:time_base=%d/%d:pixel_aspect=%d/%d", f->width,
		 f->height, f->format, st->time_base.num, st->time_base.den, sar.num, sar.den > 0 ? sar.den : 1);
	if (fr.num > 0 && fr.den > 0) {
		size_t n = strlen(args);
		snprintf(args + n, sizeof args - n, ":frame_rate=%d/%d", fr.num, fr.den);
	}
	int rc = avfilter_graph_create_filter(&t->vf.src, avfilter_get_by_name("buffer"), "in", args, NULL, t->vf.graph);
	if (rc >= 0 && f->hw_frames_ctx) {
		/* Frames on the device: the source says on which frames. */
		AVBufferSrcParameters *par = av_buffersrc_parameters_alloc();
		if (!par) {
			rc = AVERROR(ENOMEM);
		} else {
			par->format = f->format;
			par->hw_frames_ctx = f->hw_frames_ctx;
			rc = av_buffersrc_parameters_set(t->vf.src, par);
			av_free(par);
		}
	}
	if (rc >= 0)
		rc = avfilter_graph_create_filter(&t->vf.sink, avfilter_get_by_name("buffersink"), "out", NULL, NULL,
						  t->vf.graph);
	AVFilterInOut *outs = avfilter_inout_alloc(), *ins = avfilter_inout_alloc();
	if (rc >= 0 && (!outs || !ins))
		rc = AVERROR(ENOMEM);
	if (rc >= 0) {
		outs->name = av_strdup("in");
		outs->filter_ctx = t->vf.src;
		ins->name = av_strdup("out");
		ins->filter_ctx = t->vf.sink;
		rc = avfilter_graph_parse_ptr(t->vf.graph, t->vf.plan.chain, &ins, &outs, NULL);
	}
	avfilter_inout_free(&outs);
	avfilter_inout_free(&ins);
	/* hwupload uploads to the encoder's device. */
	for (unsigned i = 0; rc >= 0 && i < t->vf.graph->nb_filters; i++) {
		AVFilterContext *fc = t->vf.graph->filters[i];
		if (!strcmp(fc->filter->name, "hwupload") && !(rc = dev ? 0 : AVERROR(EINVAL)) &&
		    !(fc->hw_device_ctx = av_buffer_ref(dev)))
			rc = AVERROR(ENOMEM);
	}
	if (rc >= 0)
		rc = avfilter_graph_config(t->vf.graph, NULL);
	if (rc < 0)
		avfilter_graph_free(&t->vf.graph);
	return rc;
}

/* Pull what the filter graph has and encode it. */
static int pull_filtered(struct tc *t, const struct tc_hw *hw, int nhw)
{
	for (;;) {
		double t0 = accel_now();
		int rc = av_buffersink_get_frame(t->vf.sink, t->filt);
		t->st[TC_FILTER].seconds += accel_now() - t0;
		if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF)
			return 0;
		if (rc < 0)
			return tc_fail(t, ACCEL_EXIT_FAILURE, "video filter failed");
		t->st[TC_FILTER].frames++;
		rc = tc_encode_frame(t, t->filt, hw, nhw);
		av_frame_unref(t->filt);
		if (rc < 0)
			return -1;
	}
}

/* A decoded frame (NULL: end of stream) into the filters. */
int tc_filter_frame(struct tc *t, AVFrame *f, const struct tc_hw *hw, int nhw)
{
	if (f) {
		f->pts = f->best_effort_timestamp;
		if (!tc_trim_video(t, f))
			return 0;
	}
	if (!t->vf.graph) {
		if (!f)
			return 0;
		if (tc_encode_open(t, f, hw, nhw) < 0)
			return -1;
	}
	if (f && !f->hw_frames_ctx != !t->vf.src_frames) {
		/* The graph takes frames where the first one was; a decoder
		 * reopened elsewhere gives them in memory (uploaded) or on a
		 * device (downloaded). */
		av_frame_unref(t->sw);
		int rc = t->vf.src_frames ? av_hwframe_get_buffer(t->vf.src_frames, t->sw, 0) : 0;
		if (rc >= 0)
			rc = av_hwframe_transfer_data(t->sw, f, 0);
		if (rc < 0)
			return tc_fail(t, ACCEL_EXIT_FAILURE, "cannot %s a frame for the filters",
				       t->vf.src_frames ? "upload" : "download");
		av_frame_copy_props(t->sw, f);
		av_frame_unref(f);
		av_frame_move_ref(f, t->sw);
	}
	double t0 = accel_now();
	int rc = av_buffersrc_add_frame_flags(t->vf.src, f, 0);
	t->st[TC_FILTER].seconds += accel_now() - t0;
	if (rc < 0)
		return tc_fail(t, ACCEL_EXIT_FAILURE, "video filter failed");
	return pull_filtered(t, hw, nhw);
}

void tc_filter_free(struct tc *t)
{
	avfilter_graph_free(&t->vf.graph);
	av_buffer_unref(&t->vf.src_frames);
}
