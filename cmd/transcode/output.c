/*
 * output.c - accel-transcode's output: the destination (a FILE written to
 * a temporary that becomes FILE only when the run succeeds, or stdout),
 * the muxer (libavformat) writing to it through the core's accel_output,
 * with the audio that comes before the first video frame held until the
 * header is written, or .npy arrays for --to npy.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libavutil/pixdesc.h>
#include "transcode.h"

#define TC_MAX_QUEUED 8192       /* audio packets held before the header */

int tc_output_create(const struct tc_job *job, struct accel_output *out)
{
	int rc = accel_output_open(out, job->output, job->force, 1);
	if (rc == 0)
		return 0;
	if (rc == ACCEL_EEXIST)
		accel_msg_error("%s already exists; use -f to overwrite it", job->output);
	else if (rc == ACCEL_EINVAL)
		accel_msg_error("refusing to write video to a terminal; use -o FILE, a pipe or -f");
	else
		accel_msg_error("cannot write %s: %s", job->output ? job->output : "stdout", strerror(errno));
	return ACCEL_EXIT_FAILURE;
}

/* A run stopped by a signal (tc_interrupted) has finished its container:
 * what it wrote is kept. */
int tc_output_commit(const struct tc_job *job, struct accel_output *out, int status)
{
	if ((status && !tc_interrupted()) || out->broken) {
		accel_output_abort(out);
	} else if (accel_output_commit(out) < 0) {
		accel_msg_error("cannot write %s: %s", job->output ? job->output : "stdout",
				strerror(out->error ? out->error : errno));
		status = ACCEL_EXIT_FAILURE;
	}
	return status;
}

static int write_cb(void *opaque, uint8_t *buf, int n)
{
	struct tc *t = opaque;
	int rc = accel_output_write(t->out.dst, buf, (size_t)n);
	if (rc < 0) {
		t->out.werr = rc;
		return rc == ACCEL_EPIPE ? AVERROR(EPIPE) : AVERROR(EIO);
	}
	return n;
}

static int64_t oseek_cb(void *opaque, int64_t off, int whence)
{
	struct tc *t = opaque;
	if (whence & AVSEEK_SIZE)
		return AVERROR(ENOSYS);
	int64_t r = accel_output_seek(t->out.dst, off, whence & ~AVSEEK_FORCE);
	return r < 0 ? AVERROR(ESPIPE) : r;
}

int tc_output_packet(struct tc *t, AVPacket *pkt)
{
	if (!t->out.header) {
		if (t->out.nqueue >= TC_MAX_QUEUED)
			return tc_fail(t, ACCEL_EXIT_DATA, "%s: more than %d audio packets before the first video frame",
				       t->in.io.name, TC_MAX_QUEUED);
		AVPacket **q = av_realloc_array(t->out.queue, (size_t)t->out.nqueue + 1, sizeof *q);
		if (!q)
			return tc_fail(t, ACCEL_EXIT_FAILURE, "out of memory");
		t->out.queue = q;
		if (!(q[t->out.nqueue] = av_packet_clone(pkt)))
			return tc_fail(t, ACCEL_EXIT_FAILURE, "out of memory");
		t->out.nqueue++;
		av_packet_unref(pkt);
		return 0;
	}
	int rc = av_interleaved_write_frame(t->out.fmt, pkt);
	if (rc < 0) {
		char e[128];
		if (t->out.werr)
			return -1;
		return tc_fail(t, ACCEL_EXIT_FAILURE, "cannot write %s: %s", t->job->output ? t->job->output : "stdout",
			       tc_averr(rc, e, sizeof e));
	}
	return 0;
}

/* Allocate the muxer and its output I/O. */
int tc_output_muxer(struct tc *t)
{
	const struct tc_job *job = t->job;
	const char *mux = job->muxer;
	char e[128];
	int rc = avformat_alloc_output_context2(&t->out.fmt, NULL, mux, NULL);
	if (rc < 0)
		return tc_fail(t, ACCEL_EXIT_USAGE, "--container: FFmpeg has no %s muxer (%s)", mux, tc_averr(rc, e, sizeof e));
	uint8_t *buf = av_malloc(TC_IO_BUF);
	/* A FILE is written to a temporary, which seeks (mp4's index goes
	 * last); stdout and devices do not. */
	int seekable = t->out.dst->tmp != NULL;
	if (!buf || !(t->out.fmt->pb = avio_alloc_context(buf, TC_IO_BUF, 1, t, NULL, write_cb, seekable ? oseek_cb : NULL))) {
		av_free(buf);
		return tc_fail(t, ACCEL_EXIT_FAILURE, "out of memory");
	}
	t->out.fmt->pb->seekable = seekable ? AVIO_SEEKABLE_NORMAL : 0;
	t->out.fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
	return 0;
}

/* Add the output streams, write the header, then the audio held so far. */
int tc_output_start(struct tc *t)
{
	char e[128];
	t->out.vst = avformat_new_stream(t->out.fmt, NULL);
	if (!t->out.vst || avcodec_parameters_from_context(t->out.vst->codecpar, t->enc.ctx) < 0)
		return tc_fail(t, ACCEL_EXIT_FAILURE, "out of memory");
	t->out.vst->time_base = t->enc.ctx->time_base;
	t->out.vst->avg_frame_rate = t->enc.ctx->framerate;
	if (avformat_query_codec(t->out.fmt->oformat, t->enc.ctx->codec_id, FF_COMPLIANCE_NORMAL) == 0)
		return tc_fail(t, ACCEL_EXIT_USAGE, "%s cannot go in a %s container; choose another --container",
			       avcodec_get_name(t->enc.ctx->codec_id), t->out.fmt->oformat->name);
	if (tc_audio_stream(t) < 0)
		return -1;
	AVDictionary *o = NULL;
	if (!strcmp(t->out.fmt->oformat->name, "mp4") && !(t->out.fmt->pb->seekable & AVIO_SEEKABLE_NORMAL))
		av_dict_set(&o, "movflags", "frag_keyframe+empty_moov+default_base_moof", 0);
	int rc = avformat_write_header(t->out.fmt, &o);
	av_dict_free(&o);
	if (rc < 0) {
		if (t->out.werr)
			return -1;
		return tc_fail(t, ACCEL_EXIT_FAILURE, "cannot write the %s header: %s", t->out.fmt->oformat->name,
			       tc_averr(rc, e, sizeof e));
	}
	t->out.header = 1;
	for (int i = 0; i < t->out.nqueue; i++) {
		AVPacket *p = t->out.queue[i];
		p->stream_index = t->out.ast->index;
		AVRational tb = t->au.copy ? t->in.fmt->streams[t->in.aidx]->time_base : t->au.enc->time_base;
		av_packet_rescale_ts(p, tb, t->out.ast->time_base);
		if (t->status == 0)
			tc_output_packet(t, p);
		av_packet_free(&t->out.queue[i]);
	}
	t->out.nqueue = 0;
	return t->status ? -1 : 0;
}

/* One frame as a .npy array: H x W x C uint8, or 1 x C x H x W float32
 * in [0, 1] with --layout nchw --normalize (nchw alone: uint8). */
int tc_output_npy(struct tc *t, const AVFrame *f)
{
	const struct tc_job *job = t->job;
	const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
	int c = d->nb_components, w = f->width, h = f->height;
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
	char err[sizeof t->err];
	int rc = accel_npy_pack_begin(&t->out.pack, 0, &shape, err, sizeof err);
	if (rc == ACCEL_EDATA || (rc == ACCEL_EIO && !t->out.dst->error))
		return tc_fail(t, ACCEL_EXIT_FAILURE, "%s: %s", job->output, err);
	if (rc < 0)
		goto werr;
	size_t esz = job->nchw && job->normalize ? 4 : 1;
	size_t row = (size_t)w * (job->nchw ? esz : (size_t)c);
	uint8_t *line = malloc(row);
	if (!line)
		return tc_fail(t, ACCEL_EXIT_FAILURE, "out of memory");
	if (!job->nchw) {
		for (int y = 0; y < h && rc == 0; y++)
			rc = accel_npy_pack_write(&t->out.pack, f->data[0] + (ptrdiff_t)y * f->linesize[0], row);
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
				rc = accel_npy_pack_write(&t->out.pack, line, row);
			}
	}
	free(line);
	if (rc < 0)
		goto werr;
	return 0;
werr:
	t->out.werr = t->out.dst->broken ? ACCEL_EPIPE : ACCEL_EIO;
	return -1;
}

int tc_output_trailer(struct tc *t)
{
	if (t->out.raw && !t->out.werr && !t->status) {
		char err[sizeof t->err];
		int rc = accel_npy_pack_finish(&t->out.pack, err, sizeof err);
		if (rc == ACCEL_EPIPE || (rc == ACCEL_EIO && t->out.dst->error)) {
			t->out.werr = rc;
			return -1;
		}
		return rc < 0 ? tc_fail(t, ACCEL_EXIT_FAILURE, "%s: %s", t->job->output, err) : 0;
	}
	if (!t->out.header || t->out.werr)
		return 0;
	int wr = av_write_trailer(t->out.fmt);
	if (wr < 0 && !t->out.werr)
		return tc_fail(t, ACCEL_EXIT_FAILURE, "cannot finish the %s container", t->out.fmt->oformat->name);
	return 0;
}

void tc_output_flush(struct tc *t)
{
	if (!t->out.werr && t->out.fmt && t->out.fmt->pb)
		avio_flush(t->out.fmt->pb);
}

void tc_output_free(struct tc *t)
{
	accel_npy_pack_free(&t->out.pack);
	for (int i = 0; i < t->out.nqueue; i++)
		av_packet_free(&t->out.queue[i]);
	av_free(t->out.queue);
	if (t->out.fmt) {
		AVIOContext *pb = t->out.fmt->pb;
		if (pb)
			av_freep(&pb->buffer);
		avio_context_free(&pb);
		avformat_free_context(t->out.fmt);
	}
}
