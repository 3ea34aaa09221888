/*
 * input.c - accel-transcode's input: the demuxer (libavformat) reading
 * through the core's accel_input, seeking a regular file, and refusing a
 * pipe it cannot read (an MP4 with its index at the end).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "transcode.h"

/* Read what the input has (at least a byte), waiting in steps of a
 * quarter second so that SIGINT or SIGTERM stops a run whose input pauses. */
static int read_cb(void *opaque, uint8_t *buf, int n)
{
	struct tc *t = opaque;
	const uint8_t *p;
	for (;;) {
		if (tc_interrupted())
			return AVERROR_EXIT;
		ssize_t r = accel_input_peek_until(&t->in.io, 1, accel_now() + 0.25, &p);
		if (r < 0)
			return AVERROR(errno ? errno : EIO);
		if (r == 0 && t->in.io.eof)
			return AVERROR_EOF;
		if (r == 0)
			continue;
		/* A deadline already passed: what is buffered, up to n. */
		r = accel_input_peek_until(&t->in.io, (size_t)n, 0, &p);
		if (r < 0)
			return AVERROR(errno ? errno : EIO);
		memcpy(buf, p, (size_t)r);
		accel_input_consume(&t->in.io, (size_t)r);
		return (int)r;
	}
}

/* Seeking a regular file (a file argument, or stdin redirected from one):
 * the input's buffer is dropped and reading starts again at the offset. */
static int64_t iseek_cb(void *opaque, int64_t off, int whence)
{
	struct tc *t = opaque;
	struct accel_input *in = &t->in.io;
	if (whence & AVSEEK_SIZE)
		return in->size;
	whence &= ~AVSEEK_FORCE;
	int64_t to = whence == SEEK_SET ? off : whence == SEEK_CUR ? (int64_t)in->offset + off
		   : whence == SEEK_END ? in->size + off : -1;
	if (to < 0 || lseek(in->fd, t->in.base + to, SEEK_SET) < 0)
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
	ssize_t n = accel_input_peek(in, TC_IO_BUF, &p);
	return n > 0 && accel_mp4_index_at_end(p, (size_t)n);
}

int tc_input_open(struct tc *t)
{
	const struct tc_job *job = t->job;
	if (accel_input_open(&t->in.io, job->input) < 0)
		return tc_fail(t, ACCEL_EXIT_FAILURE, "cannot read %s: %s", job->input ? job->input : "stdin",
			       strerror(errno));
	t->in.open = 1;
	if (t->in.io.fd == 0 && isatty(0) && !job->force)
		return tc_fail(t, ACCEL_EXIT_FAILURE, "stdin is a terminal; give a FILE, a pipe or -f");
	int seekable = t->in.io.size >= 0 && t->in.io.fd >= 0;
	if (seekable)
		t->in.base = lseek(t->in.io.fd, 0, SEEK_CUR);
	if (!seekable && mp4_index_at_end(&t->in.io))
		return tc_fail(t, ACCEL_EXIT_FAILURE, "%s: an MP4 with its index (moov) at the end cannot be read "
			       "from a pipe; give the file as an argument", t->in.io.name);
	t->in.fmt = avformat_alloc_context();
	uint8_t *buf = av_malloc(TC_IO_BUF);
	if (!t->in.fmt || !buf) {
		av_free(buf);
		return tc_fail(t, ACCEL_EXIT_FAILURE, "out of memory");
	}
	/* Ours to free: avformat_open_input frees the context, not its I/O. */
	t->in.pb = avio_alloc_context(buf, TC_IO_BUF, 0, t, read_cb, NULL, seekable ? iseek_cb : NULL);
	if (!t->in.pb) {
		av_free(buf);
		return tc_fail(t, ACCEL_EXIT_FAILURE, "out of memory");
	}
	t->in.fmt->pb = t->in.pb;
	t->in.fmt->pb->seekable = seekable ? AVIO_SEEKABLE_NORMAL : 0;
	t->in.fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
	char e[128];
	int rc = avformat_open_input(&t->in.fmt, t->in.io.name, NULL, NULL);
	if (rc < 0)
		return tc_fail(t, ACCEL_EXIT_DATA, "%s: not a media file FFmpeg can read (%s)", t->in.io.name,
			       tc_averr(rc, e, sizeof e));
	rc = avformat_find_stream_info(t->in.fmt, NULL);
	if (rc < 0)
		return tc_fail(t, ACCEL_EXIT_DATA, "%s: cannot read the streams (%s)", t->in.io.name, tc_averr(rc, e, sizeof e));
	t->in.vidx = av_find_best_stream(t->in.fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
	if (t->in.vidx < 0)
		return tc_fail(t, ACCEL_EXIT_DATA, "%s: no video stream", t->in.io.name);
	t->in.aidx = av_find_best_stream(t->in.fmt, AVMEDIA_TYPE_AUDIO, -1, t->in.vidx, NULL, 0);
	if (t->in.fmt->duration > 0)
		t->in.duration = (double)t->in.fmt->duration / AV_TIME_BASE;
	return 0;
}

void tc_input_close(struct tc *t)
{
	avformat_close_input(&t->in.fmt);
	if (t->in.pb) {
		av_freep(&t->in.pb->buffer);
		avio_context_free(&t->in.pb);
	}
	if (t->in.open)
		accel_input_close(&t->in.io);
}
