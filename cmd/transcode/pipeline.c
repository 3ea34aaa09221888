/*
 * pipeline.c - accel-transcode's driver: the stages of the FFmpeg pipeline
 * set up in order (input.c, decode.c, output.c, audio.c; the filters and
 * the encoder at the first decoded frame), the input's packets read and
 * given to the video or audio stages, everything flushed and the container
 * finished at the end, even after an error or a signal (on stdout), and
 * the one line of the first error.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "transcode.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

const char *tc_averr(int rc, char *buf, size_t len)
{
	av_strerror(rc, buf, len);
	return buf;
}

int tc_fail(struct tc *t, int status, const char *fmt, ...)
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

static void cleanup(struct tc *t)
{
	tc_encode_free(t);
	tc_decode_free(t);
	tc_filter_free(t);
	tc_audio_free(t);
	tc_trim_free(t);
	tc_input_close(t);
	tc_output_free(t);
	av_frame_free(&t->frame);
	av_frame_free(&t->sw);
	av_frame_free(&t->filt);
	av_packet_free(&t->pkt);
}

/* The hardware devices job->hw allows, into hw[0..max), and the software
 * engine's name; a device asked for by name that is not there is one
 * line (or the run fails, --fallback none). Returns how many devices, or
 * -1 (tc_fail). */
static int find_engines(struct tc *t, struct tc_hw *hw, int max)
{
	const struct tc_job *job = t->job;
	int nhw = 0;
	if (strcmp(job->hw, "none"))
		nhw = tc_hw_find(t->ctx, job, hw, max);
	tc_sw_engine(t->ctx, t->sw_engine, sizeof t->sw_engine);
	char ferr[256];
	if (accel_fault_check(t->ctx, ferr, sizeof ferr) < 0)
		return tc_fail(t, ACCEL_EXIT_USAGE, "%s", ferr);
	for (int i = 0; i < nhw; i++) {
		if (hw[i].usable)
			continue;
		/* A device asked for by name that is not there: the stage runs
		 * in software, with one line (or fails with --fallback none). */
		if (strcmp(job->hw, "auto")) {
			if (job->common.fallback == ACCEL_FALLBACK_NONE)
				return tc_fail(t, ACCEL_EXIT_FAILURE, "--hw %s: %s (--fallback none)", job->hw, hw[i].reason);
			if (!job->common.quiet)
				accel_msg_warn("--hw %s: %s; decoding and encoding in software", job->hw, hw[i].reason);
		}
	}
	if (job->common.verbose)
		tc_report_route(t, hw, nhw);
	return nhw;
}

/* Read the input's packets to its end (or the first error, or a signal)
 * into the video and audio stages. */
static void read_packets(struct tc *t, const struct tc_hw *hw, int nhw)
{
	const struct tc_job *job = t->job;
	int rc = 0;
	while (!t->status && !t->out.werr && !interrupted) {
		rc = tc_trim_read(t, t->pkt);
		if (rc < 0)
			break;
		t->rep.packets++;
		if (t->pkt->stream_index == t->in.vidx && t->trim.vdone) {
			av_packet_unref(t->pkt);
		} else if (t->pkt->stream_index == t->in.vidx) {
			tc_decode_packet(t, t->pkt, hw, nhw);
		} else if (t->pkt->stream_index == t->in.aidx && (t->au.copy || t->au.dec)) {
			tc_audio_packet(t, t->pkt);
		} else {
			av_packet_unref(t->pkt);
		}
		if (t->rep.meter || job->progress_json)
			tc_report_progress(t, 0);
		if (tc_trim_done(t))
			break;
	}
	if (rc < 0 && rc != AVERROR_EOF && !t->status && !t->out.werr && !interrupted) {
		char e[128];
		if (job->strict)
			tc_fail(t, ACCEL_EXIT_DATA, "%s: %s (--strict)", t->in.io.name, tc_averr(rc, e, sizeof e));
		else if (!job->common.quiet)
			accel_msg_warn("%s: input ends early: %s", t->in.io.name, tc_averr(rc, e, sizeof e));
		t->rep.bad_packets++;
	}
}

/* Flush the stages and finish the container on every path but a write
 * error (after an error once a header is written); the first error stays
 * the one reported. */
static void finish(struct tc *t, const struct tc_hw *hw, int nhw)
{
	if (t->out.werr || (t->status && !t->out.header))
		return;
	int st = t->status;
	char saved[sizeof t->err];
	memcpy(saved, t->err, sizeof saved);
	t->status = 0;
	tc_decode_packet(t, NULL, hw, nhw);
	if (!t->out.werr)
		tc_encode_frame(t, NULL, hw, nhw);
	if ((t->au.dec || t->au.adts) && !t->out.werr)
		tc_audio_packet(t, NULL);
	if (!t->out.header && !t->out.raw && !t->status && !t->out.werr && t->trim.vfirst == AV_NOPTS_VALUE &&
	    t->job->start >= 0 && t->st[TC_DECODE].frames)
		tc_fail(t, ACCEL_EXIT_FAILURE, "%s: no video frame at or after --start %s", t->in.io.name, t->job->start_arg);
	else if (!t->out.header && !t->out.raw && !t->status && !t->out.werr)
		tc_fail(t, ACCEL_EXIT_DATA, "%s: no video frame could be decoded", t->in.io.name);
	tc_output_trailer(t);
	if (st) {
		t->status = st;
		memcpy(t->err, saved, sizeof saved);
	}
}

int tc_run(const struct tc_job *job, struct accel_ctx *ctx, struct accel_output *out)
{
	struct tc t = {
		.job = job, .ctx = ctx,
		.in = { .vidx = -1, .aidx = -1 },
		.dec = { .hw_pix_fmt = AV_PIX_FMT_NONE },
		.dec_rec = { .last_pts = AV_NOPTS_VALUE, .skip_upto = AV_NOPTS_VALUE },
		.enc_rec = { .last_dts = AV_NOPTS_VALUE },
		.au = { .next = AV_NOPTS_VALUE },
		.out = { .dst = out },
	};
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
	t.out.raw = !strcmp(job->to, "npy");
	t.rep.t0 = accel_now();
	if (!t.frame || !t.sw || !t.filt || !t.pkt) {
		tc_fail(&t, ACCEL_EXIT_FAILURE, "out of memory");
		goto done;
	}
	if (t.out.raw) {
		/* Frames of one size: one array of them, or a .npz, as -o names. */
		char err[256];
		int rc = accel_npy_pack_open(&t.out.pack, out, accel_npy_form_of(job->output),
					     job->nchw ? ACCEL_NPY_CONCAT : ACCEL_NPY_STACK, 1, NULL, err, sizeof err);
		if (rc < 0) {
			tc_fail(&t, ACCEL_EXIT_FAILURE, "%s: %s", job->output, rc == ACCEL_ENOMEM ? accel_strerror(rc) : err);
			goto done;
		}
	}
	nhw = find_engines(&t, hw, 4);
	if (nhw < 0 || tc_input_open(&t) < 0 || tc_trim_open(&t) < 0 || tc_decode_open(&t, hw, nhw) < 0)
		goto done;
	if (!t.out.raw && (tc_output_muxer(&t) < 0 || tc_audio_open(&t) < 0))
		goto done;
	if (job->common.progress > 0 || (job->common.progress < 0 && isatty(2) && !job->common.quiet))
		t.rep.meter = isatty(2) ? 1 : 2;
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
	read_packets(&t, hw, nhw);
	finish(&t, hw, nhw);
	tc_output_flush(&t);
	if (t.rep.meter || job->progress_json)
		tc_report_progress(&t, 1);
	if (catch) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
	}
	tc_report_end(&t);
done:
	if (job->report)
		tc_report_json(&t, hw, nhw);
	cleanup(&t);
	if (t.out.werr == ACCEL_EPIPE)
		return 0;
	if (t.out.werr)
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
