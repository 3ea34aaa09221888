/*
 * report.c - what accel-transcode tells on stderr besides its errors: the
 * progress line (--progress) and JSON objects (--progress-json), with -v
 * the route of each stage and what each ran on and did, and at the end
 * the warnings about stages reopened and packets skipped.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "transcode.h"

static const char *const stage_names[TC_NSTAGES] = { "decode", "filter", "encode" };

void tc_report_progress(struct tc *t, int last)
{
	const struct tc_job *job = t->job;
	double now = accel_now(), dt = now - t->rep.t0;
	if (!last && now - t->rep.last < (job->progress_json || t->rep.meter == 2 ? 1.0 : 0.2))
		return;
	t->rep.last = now;
	uint64_t frames = t->st[TC_ENCODE].frames;
	double fps = dt > 0 ? (double)frames / dt : 0, speed = dt > 0 ? t->rep.media_pos / dt : 0;
	double size = (double)t->out.dst->written;
	double kbps = t->rep.media_pos > 0 ? size * 8 / t->rep.media_pos / 1000 : 0;
	double eta = speed > 0 && t->in.duration > 0 ? (t->in.duration - t->rep.media_pos) / speed : -1;
	if (eta < 0 && t->in.duration > 0 && speed > 0)
		eta = 0;
	if (job->progress_json) {
		fprintf(stderr, "{\"frames\":%llu,\"fps\":%.2f,\"time\":%.3f,\"speed\":%.3f,\"bitrate_kbps\":%.1f,"
			"\"size\":%.0f,\"duration\":", (unsigned long long)frames, fps, t->rep.media_pos, speed, kbps, size);
		if (t->in.duration > 0)
			fprintf(stderr, "%.3f,\"eta\":%.1f", t->in.duration, eta);
		else
			fputs("null,\"eta\":null", stderr);
		fprintf(stderr, ",\"bad_packets\":%llu,\"done\":%s}\n", (unsigned long long)t->rep.bad_packets,
			last ? "true" : "false");
	}
	if (t->rep.meter) {
		char etas[32] = "";
		if (eta >= 0)
			snprintf(etas, sizeof etas, " ETA %02d:%02d", (int)eta / 60, (int)eta % 60);
		fprintf(stderr, "%sframe %llu  %.1f fps  %.2fx  %.0f kbit/s  %.1f MiB%s%s", t->rep.meter == 1 ? "\r\033[K" : "",
			(unsigned long long)frames, fps, speed, kbps, size / 1048576.0, etas,
			last || t->rep.meter == 2 ? "\n" : "");
	}
}

/* -v: the engines each stage may run on, in the order they are tried. */
void tc_report_route(const struct tc *t, const struct tc_hw *hw, int nhw)
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
		const struct tc_stage_stat *s = &t->st[i];
		if (!s->engine[0])
			continue;
		fprintf(stderr, "%s: %-6s on %-18s %-28s %llu frames, %.3f s%s%s%s\n", "accel-transcode", stage_names[i],
			s->engine, s->what, (unsigned long long)s->frames, s->seconds, s->before[0] ? " (first on " : "",
			s->before, s->before[0] ? ")" : "");
	}
}

void tc_report_end(const struct tc *t)
{
	if (t->dec_rec.reopened && !t->job->common.quiet) {
		if (t->dec_rec.replayed >= 0)
			accel_msg_warn("%s; reopened on %s from the keyframe %d packets before: %llu frames decoded again, "
				       "none lost", t->dec_rec.note, t->st[TC_DECODE].engine, t->dec_rec.replayed - 1,
				       (unsigned long long)t->dec_rec.redecoded);
		else
			accel_msg_warn("%s; reopened on %s at the next keyframe: %llu packets skipped", t->dec_rec.note,
				       t->st[TC_DECODE].engine, (unsigned long long)t->dec_rec.skipped);
	}
	if (t->enc_rec.reopened && !t->job->common.quiet && !t->status)
		accel_msg_warn("%s; reopened on %s (%s) from frame %llu: %llu frames encoded "
			       "again, none lost", t->enc_rec.note, t->st[TC_ENCODE].engine, t->st[TC_ENCODE].what,
			       (unsigned long long)t->enc_rec.from, (unsigned long long)t->enc_rec.reencoded);
	if (t->rep.bad_packets && !t->job->common.quiet && !t->status)
		accel_msg_warn("%s: %llu undecodable or damaged packets skipped", t->in.io.name,
			       (unsigned long long)t->rep.bad_packets);
	if (t->job->common.verbose) {
		print_stages(t);
		fprintf(stderr, "accel-transcode: %llu packets read, %llu frames written, %llu bytes out, %.3f s\n",
			(unsigned long long)t->rep.packets, (unsigned long long)t->rep.written_frames,
			(unsigned long long)t->out.dst->written, accel_now() - t->rep.t0);
	}
}

void tc_report_json(const struct tc *t, const struct tc_hw *hw, int nhw)
{
	static const char *const stage[TC_NSTAGES] = { "decoder", "filter", "encoder" };
	const char *const notes[TC_NSTAGES] = { t->dec_rec.note, NULL, t->enc_rec.note };
	/* Hardware that was asked for or found but cannot be used: why a
	 * stage in software is not on it. */
	char unusable[400] = "";
	size_t n = 0;
	for (int i = 0; i < nhw && n < sizeof unusable; i++)
		if (!hw[i].usable)
			n += (size_t)snprintf(unusable + n, sizeof unusable - n, "%s%s: %s", n ? "; " : "", hw[i].type,
					      hw[i].reason);
	struct accel_report_stage g[TC_NSTAGES];
	int ng = 0;
	for (int i = 0; i < TC_NSTAGES; i++) {
		const struct tc_stage_stat *s = &t->st[i];
		if (!s->engine[0])
			continue;
		const char *why = s->fallback[0] ? s->fallback : s->before[0] && notes[i] && notes[i][0] ? notes[i]
				  : !s->hw && unusable[0] ? unusable : NULL;
		g[ng++] = (struct accel_report_stage){ stage[i], s->what, s->engine, why, (int64_t)s->frames, s->seconds };
	}
	char err[600] = "";
	if (t->out.werr && t->out.werr != ACCEL_EPIPE)
		snprintf(err, sizeof err, "cannot write %s: %s", t->job->output ? t->job->output : "stdout",
			 strerror(t->out.dst->error ? t->out.dst->error : EIO));
	else if (t->status)
		snprintf(err, sizeof err, "%s", t->err);
	/* The output's size: a muxer that went back to rewrite its header or
	 * index wrote some bytes twice. */
	struct stat st;
	const struct accel_output *o = t->out.dst;
	int64_t out_bytes = o->null ? (int64_t)o->size
			    : fstat(o->fd, &st) == 0 && S_ISREG(st.st_mode) && o->tmp ? (int64_t)st.st_size
			    : (int64_t)o->written;
	struct accel_report_job j = {
		.input = t->in.open ? t->in.io.name : t->job->input && strcmp(t->job->input, "-") ? t->job->input : "stdin",
		.bytes_in = (int64_t)t->in.io.offset,
		.bytes_out = out_bytes,
		.frames_decoded = (int64_t)t->st[TC_DECODE].frames,
		.frames_encoded = (int64_t)t->rep.written_frames,
		.seconds = accel_now() - t->rep.t0,
		.error = err[0] ? err : NULL,
		.nstages = ng,
		.stages = g,
	};
	if (accel_report_job(t->job->report, &j) < 0)
		accel_msg_error("out of memory");
}
