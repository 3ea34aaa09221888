/*
 * accel-transcode - decode, filter and encode a video stream (with its
 * audio) on the FFmpeg libraries, each stage on hardware when there is
 * some and in software otherwise; or hand its frames to the next program
 * as raw video, y4m or NumPy arrays.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "transcode/transcode.h"

/* "640x360", "224x-1": each side 1-16384 or -1, not both -1. */
static int parse_scale(const char *s, int *w, int *h)
{
	char a[16], b[16];
	const char *x = strchr(s, 'x');
	if (!x || (size_t)(x - s) >= sizeof a || strlen(x + 1) >= sizeof b)
		return -1;
	memcpy(a, s, (size_t)(x - s));
	a[x - s] = 0;
	strcpy(b, x + 1);
	if (accel_parse_int(a, -1, 16384, w) < 0 || accel_parse_int(b, -1, 16384, h) < 0)
		return -1;
	return *w == 0 || *h == 0 || (*w < 0 && *h < 0) ? -1 : 0;
}

static int parse_fps(const char *s, int *num, int *den)
{
	char a[16];
	const char *slash = strchr(s, '/');
	*den = 1;
	if (slash) {
		if ((size_t)(slash - s) >= sizeof a || accel_parse_int(slash + 1, 1, 1000000, den) < 0)
			return -1;
		memcpy(a, s, (size_t)(slash - s));
		a[slash - s] = 0;
		s = a;
	}
	return accel_parse_int(s, 1, 1000000, num);
}

static int parse_crop(const char *s, int *c)
{
	char buf[64];
	if (strlen(s) >= sizeof buf)
		return -1;
	strcpy(buf, s);
	char *save = NULL, *tok = strtok_r(buf, ":", &save);
	for (int i = 0; i < 4; i++, tok = strtok_r(NULL, ":", &save))
		if (!tok || accel_parse_int(tok, i < 2 ? 1 : 0, 16384, &c[i]) < 0)
			return -1;
	return tok ? -1 : 0;
}

/* "2000000", "2500k", "2M" in bits per second (powers of 1000). */
static int parse_bitrate(const char *s, int64_t *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || v <= 0)
		return -1;
	if (*end == 'k' || *end == 'K')
		v *= 1e3, end++;
	else if (*end == 'M')
		v *= 1e6, end++;
	if (*end || v < 1000 || v > 1e10)
		return -1;
	*out = (int64_t)v;
	return 0;
}

static int usage(const char *opt, const char *arg, const char *what)
{
	accel_msg_usage("%s: '%s' is not %s", opt, arg, what);
	return ACCEL_EINVAL;
}

static int scale_option(void *v, const char *arg)
{
	struct tc_job *job = v;
	if (parse_scale(arg, &job->scale_w, &job->scale_h) < 0)
		return usage("--scale", arg, "WxH with sides from 1 to 16384 (one may be -1)");
	return 0;
}

static int fps_option(void *v, const char *arg)
{
	struct tc_job *job = v;
	if (parse_fps(arg, &job->fps_num, &job->fps_den) < 0)
		return usage("--fps", arg, "a frame rate N or N/D");
	return 0;
}

static int crop_option(void *v, const char *arg)
{
	if (parse_crop(arg, ((struct tc_job *)v)->crop) < 0)
		return usage("--crop", arg, "W:H:X:Y in pixels");
	return 0;
}

static int bitrate_option(void *v, const char *arg)
{
	if (parse_bitrate(arg, &((struct tc_job *)v)->bitrate) < 0)
		return usage("--bitrate", arg, "a bit rate such as 800k or 2M");
	return 0;
}

#define JOB(field) ACCEL_AT(struct tc_job, field)

static const struct accel_option options[] = {
	{ 't', "to", "FORMAT", "what to write: h264, hevc, av1, vp9 (encoded), rawvideo, y4m or npy (frames); default h264", "h264 hevc av1 vp9 rawvideo y4m npy", ACCEL_WORD(JOB(to)) },
	/* The pipeline reads job->output and job->force. */
	{ 'o', "output", "FILE", "write to FILE (complete or not at all) instead of stdout", "file", ACCEL_STRING(JOB(output)) },
	{ 'f', "force", NULL, "overwrite FILE; read or write a terminal", ACCEL_SET(JOB(force), 1) },
	{ 'c', "container", "NAME", "container: mkv, mpegts, nut or mp4 (default: by FILE's extension, else mkv)", "mkv mpegts nut mp4", ACCEL_WORD(JOB(container)) },
	{ 'a', "audio", "MODE", "audio: copy, aac, opus or none (default: copy when the container takes it, else aac)", "copy aac opus none", ACCEL_WORD(JOB(audio)) },
	{ 's', "scale", "WxH", "scale to W by H pixels; -1 for one side keeps the aspect ratio", ACCEL_CALL(scale_option) },
	{ 0, "fps", "N[/D]", "frame rate of the output (frames dropped or repeated)", ACCEL_CALL(fps_option) },
	{ 0, "pix-fmt", "FMT", "pixel format of the output (yuv420p, yuv444p, rgb24, gray ...); default: the input's when the encoder takes it, else its closest", ACCEL_STRING(JOB(pix_fmt)) },
	{ 0, "crop", "W:H:X:Y", "keep the W by H pixels whose top left corner is at X,Y", ACCEL_CALL(crop_option) },
	{ 0, "deinterlace", NULL, "deinterlace frames marked interlaced (yadif; on the device: yadif_cuda, deinterlace_vaapi, vpp_qsv)", ACCEL_SET(JOB(deinterlace), 1) },
	{ 'Q', "quality", "N", "constant quality 0-51, lower is better (CRF; the matching mode of hardware encoders)", ACCEL_INT(JOB(quality), 0, 51, NULL) },
	{ 0, "bitrate", "RATE", "target bit rate in bits per second (k and M suffixes: 2M)", ACCEL_CALL(bitrate_option) },
	{ 'p', "preset", "NAME", "speed: fast, medium or slow (mapped per encoder), or the encoder's own preset name", "fast medium slow", ACCEL_STRING(JOB(preset)) },
	{ 'g', "keyint", "N", "at most N frames between keyframes", ACCEL_INT(JOB(keyint), 1, 100000, "a number of frames from 1 to 100000") },
	{ 0, "layout", "LAYOUT", "--to npy: hwc (H x W x C per frame, default) or nchw (1 x C x H x W)", "hwc nchw", ACCEL_CHOICE(JOB(nchw)) },
	{ 0, "normalize", NULL, "--to npy with nchw: float32 values in [0, 1] instead of uint8", ACCEL_SET(JOB(normalize), 1) },
	{ 0, "hw", "TYPE", "hardware to use: auto, none, cuda, vaapi or qsv (default auto); frames stay on it from decoder to encoder when filters allow", "auto none cuda vaapi qsv", ACCEL_WORD(JOB(hw)) },
	{ 'd', "device", "DEV", "with --hw TYPE: the device, as an id (gpu1) or FFmpeg's device string", ACCEL_STRING(JOB(device)) },
	{ 0, "strict", NULL, "fail (exit 3) on the first undecodable packet", ACCEL_SET(JOB(strict), 1) },
	{ 0, "progress-json", NULL, "write one JSON object of progress per second to stderr", ACCEL_SET(JOB(progress_json), 1) },
	/* The common run options, with what they mean here. */
	{ 0, "fallback", "POLICY", "when a hardware stage cannot run: cpu or next (software, one line on stderr) or none (exit 1)", "cpu next none", ACCEL_COMMON(ACCEL_OPT_FALLBACK) },
	{ 'T', "threads", "N", "threads of the decoders, filters and encoders; caps x265 and SVT-AV1 pools (0 = all cores; default 0)", ACCEL_COMMON(ACCEL_OPT_THREADS) },
	{ 0, "progress", NULL, "show frames, fps, speed, bit rate, size and ETA on stderr (default on a terminal)", ACCEL_COMMON(ACCEL_OPT_PROGRESS) },
	{ 0, "no-progress", NULL, "never show the progress line", ACCEL_COMMON(ACCEL_OPT_NO_PROGRESS) },
	ACCEL_BASIC_OPTIONS,
	{ 0 },
};

static const int exit_statuses[] = {
	ACCEL_EXIT_OK, ACCEL_EXIT_FAILURE, ACCEL_EXIT_USAGE, ACCEL_EXIT_DATA, -1,
};

static const struct accel_cli cli = {
	"accel-transcode", "[options] [FILE]",
	"Transcode a video (FILE or stdin) to stdout, on hardware when there is some, else in software.",
	options, exit_statuses, NULL, NULL,
};

/* The options into job: 0, -1 (exit 0) or the exit status. */
static int parse_args(int argc, char **argv, struct tc_job *job)
{
	memset(job, 0, sizeof *job);
	job->to = "h264";
	job->quality = -1;
	job->hw = "auto";
	int rc = accel_parse(&cli, argc, argv, job, &job->common);
	if (rc)
		return rc;
	if (job->common.noperands > 1) {
		accel_msg_usage("one input at a time (%d given)", job->common.noperands);
		return ACCEL_EXIT_USAGE;
	}
	job->input = job->common.noperands ? job->common.operands[0] : NULL;
	int frames = !strcmp(job->to, "npy") || !strcmp(job->to, "rawvideo") || !strcmp(job->to, "y4m");
	if (frames && (job->quality >= 0 || job->bitrate || job->preset || job->keyint)) {
		accel_msg_usage("--quality, --bitrate, --preset and --keyint are for encoded output, not --to %s", job->to);
		return ACCEL_EXIT_USAGE;
	}
	if ((job->nchw || job->normalize) && strcmp(job->to, "npy")) {
		accel_msg_usage("--layout and --normalize are for --to npy");
		return ACCEL_EXIT_USAGE;
	}
	if (job->normalize && !job->nchw) {
		accel_msg_usage("--normalize needs --layout nchw");
		return ACCEL_EXIT_USAGE;
	}
	if (!strcmp(job->to, "npy") && job->pix_fmt && strcmp(job->pix_fmt, "rgb24") && strcmp(job->pix_fmt, "bgr24") &&
	    strcmp(job->pix_fmt, "rgba") && strcmp(job->pix_fmt, "bgra") && strcmp(job->pix_fmt, "gray")) {
		accel_msg_usage("--to npy takes --pix-fmt rgb24, bgr24, rgba, bgra or gray");
		return ACCEL_EXIT_USAGE;
	}
	if (job->container && (!strcmp(job->to, "npy") || !strcmp(job->to, "y4m"))) {
		accel_msg_usage("--container: --to %s has no container", job->to);
		return ACCEL_EXIT_USAGE;
	}
	if (job->device && (!strcmp(job->hw, "auto") || !strcmp(job->hw, "none"))) {
		accel_msg_usage("--device needs --hw cuda, vaapi or qsv");
		return ACCEL_EXIT_USAGE;
	}
	return 0;
}

static int transcode(int argc, char **argv)
{
	struct tc_job job;
	int rc = parse_args(argc, argv, &job);
	if (rc)
		return rc < 0 ? 0 : rc;
	struct accel_ctx *ctx = accel_ctx_new();
	if (!ctx) {
		accel_msg_error("out of memory");
		return ACCEL_EXIT_FAILURE;
	}
	struct accel_output out;
	rc = tc_output_create(&job, &out);
	if (rc) {
		accel_ctx_free(ctx);
		return rc;
	}
	int status = tc_output_commit(&job, &out, tc_run(&job, ctx, &out));
	int sig = tc_interrupted();
	accel_ctx_free(ctx);
	if (sig && status == 128 + sig) {
		/* Die of the signal, as the shell expects, once the output
		 * is complete. */
		signal(sig, SIG_DFL);
		raise(sig);
	}
	return status;
}

int main(int argc, char **argv)
{
	accel_exit(transcode(argc, argv));
}
