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
#include <libavutil/parseutils.h>
#include "transcode/transcode.h"

/* "640x360", "224x-1", "320x-2": each side 1-16384, or -N (1-64) for one
 * of them, as the scale filter of FFmpeg reads them. */
static int parse_scale(const char *s, int *w, int *h)
{
	char a[16], b[16];
	const char *x = strchr(s, 'x');
	if (!x || (size_t)(x - s) >= sizeof a || strlen(x + 1) >= sizeof b)
		return -1;
	memcpy(a, s, (size_t)(x - s));
	a[x - s] = 0;
	strcpy(b, x + 1);
	if (accel_parse_int(a, -64, 16384, w) < 0 || accel_parse_int(b, -64, 16384, h) < 0)
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

/* A time as the ffmpeg program reads -ss and -t (av_parse_time): seconds
 * ("90", "1.5", "1500ms") or [HH:]MM:SS[.m...], into microseconds. */
static int parse_time(const char *opt, const char *arg, int64_t min, int64_t *us)
{
	int64_t v;
	if (av_parse_time(&v, arg, 1) < 0 || v < min)
		return usage(opt, arg, min ? "a time above 0: seconds, or [HH:]MM:SS[.ms]"
				   : "a time: seconds, or [HH:]MM:SS[.ms]");
	*us = v;
	return 0;
}

static int start_option(void *v, const char *arg)
{
	((struct tc_job *)v)->start_arg = arg;
	return parse_time("--start", arg, 0, &((struct tc_job *)v)->start);
}

static int duration_option(void *v, const char *arg)
{
	return parse_time("--duration", arg, 1, &((struct tc_job *)v)->duration);
}

static int end_option(void *v, const char *arg)
{
	return parse_time("--end", arg, 1, &((struct tc_job *)v)->end);
}

static int scale_option(void *v, const char *arg)
{
	struct tc_job *job = v;
	if (parse_scale(arg, &job->scale_w, &job->scale_h) < 0)
		return usage("--scale", arg, "WxH with sides from 1 to 16384 (one may be -1, or -2 for an even size)");
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

/* ------------------------------------------------------------ ffmpeg's words */

/* What a value of ffmpeg's is here. */
enum ff_value {
	FF_NONE,      /* the word takes none */
	FF_SAME,      /* the same value */
	FF_VCODEC,    /* an encoder or codec name: --to's word */
	FF_ACODEC,    /* --audio's word */
	FF_TIME,      /* -t: ours is --to FORMAT, unless the value is no FORMAT */
	FF_FORMAT,    /* -f: ours is --force, unless a muxer's name follows */
	FF_FILTERS,   /* -vf: ours is -v -f, unless filters follow */
	FF_LOGLEVEL,  /* -v: ours is --verbose, unless a log level follows */
};

/* ffmpeg's single-dash options that this program reads otherwise (-ss is
 * -s s, -crf is -c rf) or not at all, and what to use instead: `use` with
 * the value that follows. */
static const struct ff_word {
	const char *word;
	enum ff_value value;
	const char *use;
} ff_words[] = {
	{ "-ss", FF_SAME, "--start" }, { "-t", FF_TIME, "--duration" }, { "-to", FF_SAME, "--end" },
	{ "-crf", FF_SAME, "--quality" }, { "-q:v", FF_SAME, "--quality" }, { "-qscale:v", FF_SAME, "--quality" },
	{ "-preset", FF_SAME, "--preset" }, { "-r", FF_SAME, "--fps" }, { "-pix_fmt", FF_SAME, "--pix-fmt" },
	{ "-b:v", FF_SAME, "--bitrate" }, { "-b", FF_SAME, "--bitrate" }, { "-vb", FF_SAME, "--bitrate" }, { "-threads", FF_SAME, "-T" },
	{ "-hwaccel", FF_SAME, "--hw" }, { "-c:v", FF_VCODEC, "--to" }, { "-codec:v", FF_VCODEC, "--to" },
	{ "-vcodec", FF_VCODEC, "--to" }, { "-c", FF_VCODEC, "--to" }, { "-codec", FF_VCODEC, "--to" },
	{ "-c:a", FF_ACODEC, "--audio" }, { "-codec:a", FF_ACODEC, "--audio" }, { "-acodec", FF_ACODEC, "--audio" },
	{ "-an", FF_NONE, "--audio none" }, { "-y", FF_NONE, "-f" }, { "-f", FF_FORMAT, "--container" },
	{ "-vf", FF_FILTERS, NULL }, { "-filter:v", FF_FILTERS, NULL }, { "-v", FF_LOGLEVEL, NULL },
	{ "-loglevel", FF_LOGLEVEL, NULL }, { "-stats", FF_NONE, "--progress" }, { "-nostats", FF_NONE, "--no-progress" },
	{ "-progress", FF_NONE, "--progress-json" }, { "-i", FF_NONE, NULL }, { "-hide_banner", FF_NONE, NULL },
	{ "-map", FF_SAME, NULL }, { "-vn", FF_NONE, NULL }, { "-b:a", FF_SAME, NULL }, { "-ar", FF_SAME, NULL },
	{ "-ac", FF_SAME, NULL }, { "-s:v", FF_SAME, "--scale" },
};

/* --to's word for an encoder or codec name of ffmpeg's, or NULL. */
static const char *video_word(const char *codec)
{
	static const char *const names[][2] = {
		{ "libx264", "h264" }, { "h264", "h264" }, { "libx265", "hevc" }, { "hevc", "hevc" }, { "h265", "hevc" },
		{ "libsvtav1", "av1" }, { "libaom-av1", "av1" }, { "av1", "av1" }, { "libvpx-vp9", "vp9" },
		{ "vp9", "vp9" }, { "rawvideo", "rawvideo" }, { "wrapped_avframe", "y4m" },
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(codec, names[i][0]) || (strstr(codec, names[i][1]) == codec && strchr(codec, '_')))
			return names[i][1];
	return NULL;
}

static const char *audio_word(const char *codec)
{
	return !strcmp(codec, "aac") || !strcmp(codec, "libfdk_aac") ? "aac"
	       : !strcmp(codec, "libopus") || !strcmp(codec, "opus") ? "opus" : !strcmp(codec, "copy") ? "copy" : NULL;
}

/* Whether s is a word of a space-separated list. */
static int among(const char *s, const char *list)
{
	size_t n = strlen(s);
	for (const char *p = list; (p = strstr(p, s)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return 1;
	return 0;
}

/* The hint for ffmpeg's word w and the value v that follows (NULL: none),
 * in buf[len]; 0 when w is read here as this program's own option. */
static int ff_hint(const struct ff_word *w, const char *v, char *buf, size_t len)
{
	int file = v && access(v, F_OK) == 0;
	const char *x;
	char name[64];
	switch (w->value) {
	case FF_TIME:
		/* -t FORMAT is --to FORMAT. */
		if (!v || among(v, "h264 hevc av1 vp9 rawvideo y4m npy"))
			return 0;
		break;
	case FF_FORMAT:
		/* -f is --force unless a muxer's name, not a file, follows. */
		if (!v || file || !av_guess_format(v, NULL, NULL))
			return 0;
		x = !strcmp(v, "matroska") ? "mkv" : v;
		if (among(x, "mkv mp4 mov webm mpegts nut avi"))
			snprintf(buf, len, "use --container %s (-f is --force here)", x);
		else if (!strcmp(v, "yuv4mpegpipe") || !strcmp(v, "rawvideo"))
			snprintf(buf, len, "use --to %s (-f is --force here)", !strcmp(v, "rawvideo") ? v : "y4m");
		else
			snprintf(buf, len, "accel-transcode does not write %s; -f is --force here", v);
		return 1;
	case FF_FILTERS:
		/* -vf is -v -f unless a filter graph, not a file, follows. */
		if (!v || file)
			return 0;
		snprintf(name, sizeof name, "%.*s", (int)strcspn(v, "=,:"), v);
		if (!avfilter_get_by_name(name))
			return 0;
		int sw, sh;
		if (sscanf(v, "scale=%d:%d", &sw, &sh) == 2 && !strpbrk(v, ","))
			snprintf(buf, len, "use --scale %dx%d", sw, sh);
		else
			snprintf(buf, len, "use --scale, --crop, --fps, --deinterlace and --pix-fmt (-vf is -v -f here)");
		return 1;
	case FF_LOGLEVEL:
		if (!strcmp(w->word, "-v") && (!v || file ||
		    !among(v, "quiet panic fatal error warning info verbose debug trace")))
			return 0;
		snprintf(buf, len, "use -q (errors only) or -v (more)");
		return 1;
	case FF_VCODEC:
		/* -c NAME is --container NAME. */
		if (!strcmp(w->word, "-c") && v && among(v, "mkv mp4 mov webm mpegts nut avi"))
			return 0;
		if (v && !strcmp(v, "copy"))
			snprintf(buf, len, "the video is always encoded again; --audio copy copies the audio");
		else if (v && (x = video_word(v)))
			snprintf(buf, len, "use --to %s", x);
		else
			snprintf(buf, len, "use --to h264, hevc, av1 or vp9 (or rawvideo, y4m, npy)");
		return 1;
	case FF_ACODEC:
		if (v && (x = audio_word(v)))
			snprintf(buf, len, "use --audio %s", x);
		else
			snprintf(buf, len, "use --audio copy, aac, opus or none");
		return 1;
	default:
		break;
	}
	if (!strcmp(w->word, "-i"))
		snprintf(buf, len, "give the input as FILE: accel-transcode [options] %s", v ? v : "FILE");
	else if (!strcmp(w->word, "-hide_banner"))
		snprintf(buf, len, "accel-transcode prints no banner; leave it out");
	else if (!w->use)
		snprintf(buf, len, "accel-transcode has no equivalent (it writes the best video stream and its audio)");
	else if (w->value == FF_NONE || !v)
		snprintf(buf, len, "use %s%s", w->use, w->value == FF_NONE ? "" : " VALUE");
	else
		snprintf(buf, len, "use %s %s", w->use, v);
	return 1;
}

/* Before the options are read: the first of ffmpeg's words in argv (up
 * to "--") that would be read otherwise here is a usage error whose line
 * names this program's option. 0, or ACCEL_EXIT_USAGE. */
static int ffmpeg_words(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		for (size_t k = 0; k < sizeof ff_words / sizeof ff_words[0]; k++) {
			const struct ff_word *w = &ff_words[k];
			char hint[200];
			if (strcmp(argv[i], w->word) || !ff_hint(w, i + 1 < argc ? argv[i + 1] : NULL, hint, sizeof hint))
				continue;
			accel_msg_usage("%s is ffmpeg's; %s", w->word, hint);
			return ACCEL_EXIT_USAGE;
		}
	return 0;
}

#define JOB(field) ACCEL_AT(struct tc_job, field)

static const struct accel_option options[] = {
	{ 't', "to", "FORMAT", "what to write: h264, hevc, av1, vp9 (encoded), rawvideo, y4m or npy (frames); default h264 (vp9 for .webm, y4m for .y4m)", "h264 hevc av1 vp9 rawvideo y4m npy", ACCEL_WORD(JOB(to)) },
	/* The pipeline reads job->output and job->force. */
	{ 'o', "output", "FILE", "write to FILE (complete or not at all) instead of stdout", "file", ACCEL_STRING(JOB(output)) },
	{ 'f', "force", NULL, "overwrite FILE; read or write a terminal", ACCEL_SET(JOB(force), 1) },
	{ 'c', "container", "NAME", "container: mkv, mp4, mov, webm, mpegts, nut or avi (default: by FILE's extension, else mkv)", "mkv mp4 mov webm mpegts nut avi", ACCEL_WORD(JOB(container)) },
	{ 'a', "audio", "MODE", "audio: copy, aac, opus or none (default: copy when the container takes it, else aac, or opus for webm)", "copy aac opus none", ACCEL_WORD(JOB(audio)) },
	{ 0, "start", "T", "begin at T of the input (seconds, or [HH:]MM:SS[.ms]) as ffmpeg -ss T -i does: to the frame, encoded audio to the sample", ACCEL_CALL(start_option) },
	{ 0, "duration", "T", "write at most T of media (as ffmpeg -t T -i)", ACCEL_CALL(duration_option) },
	{ 0, "end", "T", "stop at T of the input (as ffmpeg -to T -i)", ACCEL_CALL(end_option) },
	{ 's', "scale", "WxH", "scale to W by H pixels; -1 for one side keeps the aspect ratio, -2 keeps it with an even size (as FFmpeg's scale)", ACCEL_CALL(scale_option) },
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
	{ 0, "json", NULL, "a report of the run as one JSON document on stderr at the end: the input, bytes in and out, frames decoded and encoded, seconds, each stage's engine and why it runs in software, probes, exit status", ACCEL_COMMON(ACCEL_OPT_JSON) },
	/* The common run options, with what they mean here. */
	{ 0, "fallback", "POLICY", "when a hardware stage cannot run: cpu or next (software, one line on stderr) or none (exit 1)", "cpu next none", ACCEL_COMMON(ACCEL_OPT_FALLBACK) },
	{ 'T', "threads", "N", "threads of the decoders, filters and encoders; caps x265 and SVT-AV1 pools (0 = all cores; default 0)", ACCEL_COMMON(ACCEL_OPT_THREADS) },
	{ 0, "progress", NULL, "show frames, fps, speed, bit rate, size and ETA on stderr (default on a terminal)", ACCEL_COMMON(ACCEL_OPT_PROGRESS) },
	{ 0, "no-progress", NULL, "never show the progress line", ACCEL_COMMON(ACCEL_OPT_NO_PROGRESS) },
	ACCEL_VERBOSE_OPTION_TEXT("say more on stderr: each stage's route and engine, the filter graph, audio decisions, packets, frames and bytes"),
	ACCEL_QUIET_HELP_OPTIONS,
	{ 0 },
};

static const int exit_statuses[] = {
	ACCEL_EXIT_OK, ACCEL_EXIT_FAILURE, ACCEL_EXIT_USAGE, ACCEL_EXIT_DATA, -1,
};

/* "NAME A.B.C" of an AV_VERSION_INT, appended at buf + *n. */
static void av_line(char *buf, size_t len, size_t *n, const char *name, unsigned v)
{
	if (*n < len)
		*n += (size_t)snprintf(buf + *n, len - *n, "%s %u.%u.%u\n", name, AV_VERSION_MAJOR(v),
				       AV_VERSION_MINOR(v), AV_VERSION_MICRO(v));
}

/* --version: the FFmpeg the program links, as `ffmpeg -version` lists it. */
static void versions(char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "ffmpeg %s\n", av_version_info());
	av_line(buf, len, &n, "libavformat", avformat_version());
	av_line(buf, len, &n, "libavfilter", avfilter_version());
	av_line(buf, len, &n, "libavcodec", avcodec_version());
	av_line(buf, len, &n, "libswscale", swscale_version());
	av_line(buf, len, &n, "libavutil", avutil_version());
}

static const struct accel_cli cli = {
	"accel-transcode", "[options] [FILE]",
	"Transcode a video (FILE or stdin) to stdout, on hardware when there is some, else in software.",
	options, exit_statuses, NULL, NULL,
};

/* The options into job: 0, -1 (exit 0) or the exit status. */
static int parse_args(int argc, char **argv, struct tc_job *job)
{
	memset(job, 0, sizeof *job);
	job->quality = -1;
	job->hw = "auto";
	job->start = job->duration = job->end = -1;
	accel_msg_prog(cli.prog);
	int rc = ffmpeg_words(argc, argv);
	if (rc)
		return rc;
	rc = accel_parse(&cli, argc, argv, job, &job->common);
	if (rc)
		return rc;
	if (job->end >= 0 && job->duration >= 0) {
		accel_msg_usage("--end and --duration: give one of them");
		return ACCEL_EXIT_USAGE;
	}
	if (job->end >= 0 && job->end <= job->start) {
		accel_msg_usage("--end must come after --start");
		return ACCEL_EXIT_USAGE;
	}
	if (job->end >= 0)
		job->duration = job->end - (job->start > 0 ? job->start : 0);
	char why[320];
	const char *deflt = NULL;
	if (!tc_plan_muxer(job->to, job->container, job->output, &deflt, why, sizeof why)) {
		accel_msg_usage("%s", why);
		return ACCEL_EXIT_USAGE;
	}
	if (!job->to)
		job->to = deflt;
	job->muxer = tc_plan_muxer(job->to, job->container, job->output, NULL, why, sizeof why);
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
	struct accel_ctx *ctx = accel_common_ctx(&job.common);
	if (!ctx) {
		accel_msg_error("out of memory");
		return ACCEL_EXIT_FAILURE;
	}
	if (job.common.json && !(job.report = accel_report_run_start(ctx, "accel-transcode", accel_now()))) {
		accel_msg_error("out of memory");
		accel_ctx_free(ctx);
		return ACCEL_EXIT_FAILURE;
	}
	struct accel_output out;
	rc = tc_output_create(&job, &out);
	int status = rc ? rc : tc_output_commit(&job, &out, tc_run(&job, ctx, &out));
	/* After any error line: the stages and their reasons say why. */
	status = accel_report_run_end(job.report, ctx, status);
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
	accel_cli_libraries("hwloc cjson", versions);
	accel_exit(transcode(argc, argv));
}
