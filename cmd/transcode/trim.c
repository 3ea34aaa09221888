/*
 * trim.c - accel-transcode's --start and --duration, as the ffmpeg program
 * reads -ss and -t given before -i: a seek to the keyframe before the
 * start (earlier where that lands after it: MPEG-TS), every timestamp
 * shifted by the start (and the input's own start time), then the video frames before the start and from the duration on
 * dropped as its trim filter drops them, the decoded audio cut to the
 * sample by atrim, and copied audio packets dropped as its stream copy
 * drops them.
 */
#include <inttypes.h>
#include <stdio.h>
#include "transcode.h"

static void drop_held(struct tc_trim *tr)
{
	for (int i = tr->next; i < tr->nheld; i++)
		av_packet_free(&tr->held[i]);
	tr->nheld = tr->next = 0;
}

/* After a seek: whether the first video keyframe read is shown at or
 * before `target` (the video stream's time base), so that every frame
 * from target on decodes (not when there is none, or TC_MAX_GOP packets
 * come before it). The packets read are held for tc_trim_read, or
 * dropped when not. */
static int lands_before(struct tc *t, int64_t target)
{
	struct tc_trim *tr = &t->trim;
	while (tr->nheld < TC_MAX_GOP) {
		AVPacket *pkt = av_packet_alloc();
		if (!pkt || av_read_frame(t->in.fmt, pkt) < 0) {
			av_packet_free(&pkt);
			break;
		}
		tr->held[tr->nheld++] = pkt;
		int64_t ts = pkt->pts != AV_NOPTS_VALUE ? pkt->pts : pkt->dts;
		if (pkt->stream_index == t->in.vidx && (pkt->flags & AV_PKT_FLAG_KEY)) {
			if (ts != AV_NOPTS_VALUE && ts <= target)
				return 1;
			break;
		}
	}
	drop_held(tr);
	return 0;
}

/* Seek to `ts` (AV_TIME_BASE), as ffmpeg does; where that lands after
 * the start (MPEG-TS has no index: its seek finds a packet, not a
 * keyframe), seek 1, 2, 4 ... s earlier, then to the first byte. */
static void seek(struct tc *t, int64_t ts)
{
	AVFormatContext *fmt = t->in.fmt;
	int64_t target = av_rescale_q(ts, AV_TIME_BASE_Q, fmt->streams[t->in.vidx]->time_base);
	/* As ffmpeg: by decode timestamps, a stream with B-frames could
	 * land on a keyframe shown after the start. */
	if (!(fmt->iformat->flags & AVFMT_SEEK_TO_PTS))
		for (unsigned i = 0; i < fmt->nb_streams; i++)
			if (fmt->streams[i]->codecpar->video_delay) {
				ts -= 3 * AV_TIME_BASE / 23;
				break;
			}
	int64_t first = fmt->start_time != AV_NOPTS_VALUE ? fmt->start_time : 0;
	for (int64_t back = 0; ts - back > first; back = back ? 2 * back : AV_TIME_BASE) {
		int64_t at = ts - back;
		if (avformat_seek_file(fmt, -1, INT64_MIN, at, at, 0) < 0)
			break;
		if (lands_before(t, target))
			return;
	}
	if (av_seek_frame(fmt, -1, 0, AVSEEK_FLAG_BYTE) < 0)
		avformat_seek_file(fmt, -1, INT64_MIN, first, first, 0);
}

int tc_trim_open(struct tc *t)
{
	const struct tc_job *job = t->job;
	AVFormatContext *fmt = t->in.fmt;
	struct tc_trim *tr = &t->trim;
	tr->vfirst = AV_NOPTS_VALUE;
	if (job->start < 0 && job->duration < 0)
		return 0;
	tr->on = 1;
	int64_t ts = job->start < 0 ? 0 : job->start;
	if (fmt->start_time != AV_NOPTS_VALUE)
		ts += fmt->start_time;
	AVStream *vst = fmt->streams[t->in.vidx];
	tr->vshift = av_rescale_q(ts, AV_TIME_BASE_Q, vst->time_base);
	if (job->duration >= 0)
		tr->vlen = av_rescale_q(job->duration, AV_TIME_BASE_Q, vst->time_base);
	if (t->in.aidx >= 0) {
		AVStream *ast = fmt->streams[t->in.aidx];
		tr->ashift = av_rescale_q(ts, AV_TIME_BASE_Q, ast->time_base);
		if (job->duration >= 0)
			tr->alen = av_rescale_q(job->duration, AV_TIME_BASE_Q, ast->time_base);
	}
	/* The seconds of media to write, for the ETA (0: unknown). */
	double d = t->in.duration - (job->start > 0 ? (double)job->start / AV_TIME_BASE : 0);
	if (job->duration >= 0 && (d <= 0 || d > (double)job->duration / AV_TIME_BASE))
		d = (double)job->duration / AV_TIME_BASE;
	t->in.duration = d > 0 ? d : 0;
	/* A pipe is read from its start, and what comes before is dropped. */
	if (job->start > 0 && (fmt->pb->seekable & AVIO_SEEKABLE_NORMAL))
		seek(t, ts);
	return 0;
}

int tc_trim_read(struct tc *t, AVPacket *pkt)
{
	struct tc_trim *tr = &t->trim;
	if (tr->next == tr->nheld)
		return av_read_frame(t->in.fmt, pkt);
	av_packet_move_ref(pkt, tr->held[tr->next]);
	av_packet_free(&tr->held[tr->next++]);
	if (tr->next == tr->nheld)
		tr->nheld = tr->next = 0;
	return 0;
}

void tc_trim_free(struct tc *t)
{
	drop_held(&t->trim);
}

int tc_trim_video(struct tc *t, AVFrame *f)
{
	struct tc_trim *tr = &t->trim;
	if (!tr->on)
		return 1;
	if (tr->vdone)
		return 0;
	if (f->pts != AV_NOPTS_VALUE)
		f->pts -= tr->vshift;
	if (t->job->start >= 0 && (f->pts == AV_NOPTS_VALUE || f->pts < 0))
		return 0;
	if (tr->vfirst == AV_NOPTS_VALUE)
		tr->vfirst = f->pts;
	if (tr->vlen && (f->pts == AV_NOPTS_VALUE || f->pts - tr->vfirst >= tr->vlen)) {
		tr->vdone = 1;
		return 0;
	}
	return 1;
}

int tc_trim_audio_packet(struct tc *t, AVPacket *pkt)
{
	struct tc_trim *tr = &t->trim;
	if (!tr->on)
		return 1;
	if (tr->adone)
		return 0;
	if (pkt->pts != AV_NOPTS_VALUE)
		pkt->pts -= tr->ashift;
	if (pkt->dts != AV_NOPTS_VALUE)
		pkt->dts -= tr->ashift;
	int64_t ts = pkt->pts != AV_NOPTS_VALUE ? pkt->pts : pkt->dts;
	if (!tr->acopied && t->job->start >= 0 && ts != AV_NOPTS_VALUE && ts < 0)
		return 0;
	if (tr->alen && ts != AV_NOPTS_VALUE && ts >= tr->alen) {
		tr->adone = 1;
		return 0;
	}
	tr->acopied = 1;
	return 1;
}

/* Microseconds as seconds, exactly as av_parse_time reads them back. */
static int seconds(char *buf, size_t len, int64_t us)
{
	return snprintf(buf, len, "%" PRId64 ".%06" PRId64, us / 1000000, us % 1000000);
}

void tc_trim_audio_filter(const struct tc *t, char *buf, size_t len)
{
	const struct tc_job *job = t->job;
	buf[0] = 0;
	if (!t->trim.on)
		return;
	size_t n = (size_t)snprintf(buf, len, "atrim=");
	if (job->start >= 0)
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "start=0%s", job->duration >= 0 ? ":" : "");
	if (job->duration >= 0 && n < len) {
		n += (size_t)snprintf(buf + n, len - n, "duration=");
		if (n < len)
			n += (size_t)seconds(buf + n, len - n, job->duration);
	}
	if (n < len)
		snprintf(buf + n, len - n, ",");
}

int tc_trim_done(const struct tc *t)
{
	const struct tc_trim *tr = &t->trim;
	int audio = t->in.aidx >= 0 && (t->au.copy || t->au.dec);
	return tr->on && tr->vdone && (!audio || tr->adone);
}
