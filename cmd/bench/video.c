/*
 * video.c - the video stages (h264.decode, h264.encode ...): accel-transcode,
 * the program beside accel-bench, run as a process per run on a clip made
 * once per resolution (two seconds of a moving test pattern as y4m, the
 * encoders' input, encoded by accel-transcode itself for the decoders), on
 * each engine its --hw can name; and its peer, the ffmpeg program doing
 * the same job with the same encoder and threads.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"

extern char **environ;

#define CLIP_FRAMES 50           /* two seconds at 25 frames/s */

int sibling(const char *rel, char *buf, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return -1;
	self[n] = 0;
	char *slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = 0;
	if ((size_t)snprintf(buf, len, "%s/%s", self, rel) >= len)
		return -1;
	return access(buf, F_OK);
}

/* The hardware type and device of engine name ("ffmpeg.cuda:gpu0": "cuda",
 * "gpu0"); type "none" for the software engine. */
static void engine_hw(const char *name, char *type, size_t tlen, char *dev, size_t dlen)
{
	const char *dot = strchr(name, '.'), *colon = strchr(name, ':');
	snprintf(type, tlen, "none");
	dev[0] = 0;
	if (dot && colon && dot < colon) {
		snprintf(type, tlen, "%.*s", (int)(colon - dot - 1), dot + 1);
		snprintf(dev, dlen, "%s", colon + 1);
	}
}

/* Whether -b item `want` names engine `name`: the whole name, or its part
 * before the ':' ("ffmpeg", "ffmpeg.cuda"). */
static int names(const char *want, size_t n, const char *name)
{
	size_t k = strcspn(name, ":");
	return (strlen(name) == n && !strncmp(want, name, n)) || (k == n && !strncmp(want, name, n));
}

int video_engines(struct bench *b, const char *list, char (*items)[80], int max)
{
	char prog[PATH_MAX];
	if (sibling("accel-transcode", prog, sizeof prog) < 0 || access(prog, X_OK) < 0)
		return 0;
	/* What accel-transcode's --hw can name (hw.c): the video engines of
	 * hardware devices, then FFmpeg's software codecs on the CPU device. */
	char all[16][80];
	int n = 0;
	accel_discover_classes(b->ctx, ACCEL_CLASS_BIT(ACCEL_CLASS_VIDEO));
	const char *sw = NULL;
	for (int i = 0; i < accel_engine_count(b->ctx) && n < 15; i++) {
		const struct accel_engine *e = accel_engine_at(b->ctx, i);
		const struct accel_device *d = accel_device_at(b->ctx, e->device);
		if (!d || strcmp(e->backend->name, "ffmpeg"))
			continue;
		if (!e->variant[0] && d->cls == ACCEL_CLASS_CPU)
			sw = e->name;
		else if ((!strcmp(e->variant, "cuda") || !strcmp(e->variant, "vaapi") || !strcmp(e->variant, "qsv")) &&
			 !e->software && !d->software)
			snprintf(all[n++], 80, "%.79s", e->name);
	}
	snprintf(all[n++], 80, "%.79s", sw ? sw : "software");
	int k = 0;
	if (!list || !strcmp(list, "auto")) {
		for (int i = 0; i < n && k < max; i++)
			memcpy(items[k++], all[i], 80);
		return k;
	}
	for (const char *s = list; *s && k < max;) {
		size_t l = strcspn(s, ",");
		for (int i = 0; i < n && k < max; i++)
			if (names(s, l, all[i]))
				memcpy(items[k++], all[i], 80);
		s += l + (s[l] == ',');
	}
	return k;
}

/* A clip of `frames` frames of w by h pixels (even), 4:2:0, as y4m: a
 * diagonal gradient and a square that move, with a little noise. 0, or -1
 * after the message. */
static int make_clip(const char *path, int w, int h, int frames)
{
	FILE *f = fopen(path, "we");
	if (!f) {
		accel_msg_error("cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	size_t ys = (size_t)w * (size_t)h, cs = ys / 4;
	uint8_t *pic = malloc(ys + 2 * cs);
	if (!pic) {
		fclose(f);
		accel_msg_error("out of memory");
		return -1;
	}
	fprintf(f, "YUV4MPEG2 W%d H%d F25:1 Ip A1:1 C420jpeg\n", w, h);
	uint32_t x = 0x2545f491u;
	for (int t = 0; t < frames; t++) {
		int bx = (t * 7) % (w > 64 ? w - 32 : 1), by = (t * 3) % (h > 64 ? h - 32 : 1);
		for (int j = 0; j < h; j++)
			for (int i = 0; i < w; i++) {
				x ^= x << 13, x ^= x >> 17, x ^= x << 5;
				int v = (i + j + 4 * t) & 255;
				if (i >= bx && i < bx + 32 && j >= by && j < by + 32)
					v = 235;
				pic[(size_t)j * (size_t)w + (size_t)i] = (uint8_t)(v + (int)(x & 7) > 255 ? 255 : v + (int)(x & 7));
			}
		for (size_t i = 0; i < cs; i++) {
			pic[ys + i] = (uint8_t)(128 + ((i / (size_t)(w / 2) + (size_t)t) & 63) - 32);
			pic[ys + cs + i] = (uint8_t)(128 + ((i % (size_t)(w / 2) + 2 * (size_t)t) & 63) - 32);
		}
		fputs("FRAME\n", f);
		fwrite(pic, 1, ys + 2 * cs, f);
	}
	free(pic);
	if (ferror(f) | (fclose(f) != 0)) {
		accel_msg_error("cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Run argv with stdout to /dev/null and stderr to `errfile`; its rusage
 * into *ru. Returns the exit status, or -1 when it could not run or died
 * of a signal. */
static int run_logged(char *const argv[], const char *errfile, struct rusage *ru)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	pid_t pid;
	int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc)
		return -1;
	int st;
	while (wait4(pid, &st, 0, ru) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* accel-transcode's job for case c on `input`, to `output` (NULL: stdout),
 * its stage on c's engine, into argv (words in w[]). */
static void transcode_argv(struct bench *b, const struct kase *c, const char *prog, const char *input,
			   const char *output, char *argv[24], char w[4][64])
{
	int n = 0;
	engine_hw(c->engine, w[0], 64, w[1], 64);
	snprintf(w[2], 64, "%d", b->threads);
	argv[n++] = (char *)prog;
	argv[n++] = "-v";
	argv[n++] = "--no-progress";
	argv[n++] = "--hw";
	argv[n++] = w[0];
	if (w[1][0]) {
		argv[n++] = "--device";
		argv[n++] = w[1];
		/* A stage the device cannot run goes to software: the -v
		 * lines then say so, and the case is left out. */
		argv[n++] = "--fallback";
		argv[n++] = "cpu";
	}
	argv[n++] = "-T";
	argv[n++] = w[2];
	argv[n++] = "--to";
	argv[n++] = (char *)(c->op->fam == FAM_DECODE ? "rawvideo" : c->op->format);
	if (output) {
		argv[n++] = "-f";
		argv[n++] = "-o";
		argv[n++] = (char *)output;
	}
	argv[n++] = (char *)input;
	argv[n] = NULL;
}

/* Case c's clip: the y4m of its resolution (and of one frame, for the
 * set-up run), encoded for a decoder. 0, or -1 after the message. */
int video_prepare(struct bench *b, struct kase *c)
{
	int w = VIDEO_W(c->size), h = VIDEO_H(c->size);
	char *raw = temp_path(b, "clip-%dx%d.y4m", w, h), *one = temp_path(b, "clip-%dx%d-one.y4m", w, h);
	if (!raw || !one)
		goto oom;
	if ((file_size(raw) < 0 && make_clip(raw, w, h, CLIP_FRAMES) < 0) ||
	    (file_size(one) < 0 && make_clip(one, w, h, 1) < 0))
		return -1;
	c->input = raw;
	c->tiny = one;
	if (c->op->fam == FAM_DECODE) {
		char *enc = temp_path(b, "clip-%dx%d.%s.mkv", w, h, c->op->format);
		char *enc1 = temp_path(b, "clip-%dx%d-one.%s.mkv", w, h, c->op->format);
		char *log = temp_path(b, "transcode.err"), prog[PATH_MAX], *argv[24], words[4][64];
		if (!enc || !enc1 || !log)
			goto oom;
		struct kase sw = *c;
		snprintf(sw.engine, sizeof sw.engine, "software");
		sw.op = &(struct opdef){ "encode", FAM_ENCODE, c->op->format, 0, { { NULL } } };
		if (sibling("accel-transcode", prog, sizeof prog) < 0) {
			accel_msg_error("%s: no accel-transcode beside accel-bench", c->op->name);
			return -1;
		}
		for (int i = 0; i < 2; i++) {
			const char *src = i ? one : raw, *dst = i ? enc1 : enc;
			if (file_size(dst) >= 0)
				continue;
			transcode_argv(b, &sw, prog, src, dst, argv, words);
			struct rusage ru;
			if (run_logged(argv, log, &ru) != 0) {
				accel_msg_error("%s: cannot make its %s clip with accel-transcode", c->op->name, c->op->format);
				return -1;
			}
		}
		c->input = enc;
		c->tiny = enc1;
	}
	c->in_bytes = (uint64_t)file_size(c->input);
	c->units = CLIP_FRAMES;
	c->bytes = (uint64_t)CLIP_FRAMES * ((uint64_t)w * (uint64_t)h * 3 / 2);
	return 0;
oom:
	accel_msg_error("out of memory");
	return -1;
}

/* One run of accel-transcode on `path`: its stage's engine and frames into
 * *st (from its -v lines), the bytes it wrote into *written, its peak
 * resident set into b->child_rss_kib. 0; ACCEL_ENOTSUP when the stage ran
 * on another engine than c's; else ACCEL_EIO with its last line in err. */
int video_run(struct bench *b, const struct kase *c, const char *path, struct accel_stream_stats *st,
	      uint64_t *written, char *err, size_t len)
{
	char prog[PATH_MAX], *argv[24], words[4][64], *log = temp_path(b, "transcode.err");
	memset(st, 0, sizeof *st);
	*written = 0;
	err[0] = 0;
	if (!log)
		return ACCEL_ENOMEM;
	if (sibling("accel-transcode", prog, sizeof prog) < 0) {
		snprintf(err, len, "no accel-transcode beside accel-bench");
		return ACCEL_EIO;
	}
	transcode_argv(b, c, prog, path, NULL, argv, words);
	struct rusage ru;
	int rc = run_logged(argv, log, &ru);
	if (ru.ru_maxrss > b->child_rss_kib)
		b->child_rss_kib = ru.ru_maxrss;
	FILE *f = fopen(log, "re");
	char line[512], stage[32], engine[48] = "", last[512] = "";
	unsigned long long frames = 0, bytes;
	snprintf(stage, sizeof stage, "accel-transcode: %s on ", c->op->fam == FAM_DECODE ? "decode" : "encode");
	while (f && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		snprintf(last, sizeof last, "%s", line);
		if (!strncmp(line, stage, strlen(stage)))
			sscanf(line + strlen(stage), "%47s %*s %llu frames", engine, &frames);
		char *p = strstr(line, " frames written, ");
		if (p && sscanf(p, " frames written, %llu bytes out", &bytes) == 1)
			*written = bytes;
	}
	if (f)
		fclose(f);
	if (rc != 0) {
		snprintf(err, len, "%s", last[0] ? last : "accel-transcode failed");
		return ACCEL_EIO;
	}
	/* With --hw none, accel-transcode names its software engine
	 * "software" (it looks for no device). */
	if (words[1][0] && strcmp(engine, c->engine)) {
		snprintf(err, len, "%s cannot run it (it ran on %s)", c->engine, engine[0] ? engine : "no engine");
		return ACCEL_ENOTSUP;
	}
	st->nengines = 1;
	snprintf(st->engines[0].name, sizeof st->engines[0].name, "%.39s", c->engine);
	st->engines[0].units = st->units = frames;
	return 0;
}

/* The peer of case c: ffmpeg decoding to raw frames, or encoding with the
 * encoder and settings accel-transcode gives it (cmd/transcode/encode.c),
 * both with the same threads. SVT-AV1 run by root makes its threads
 * SCHED_FIFO 99 (as ps shows: every thread of ffmpeg's), which
 * accel-transcode refuses (its encoder opened as nobody: real-time threads
 * may starve the machine) and no other user gets; run as root, the peer
 * runs without CAP_SYS_NICE (setpriv --bounding-set=-sys_nice), so SVT-AV1
 * cannot either: the same scheduling for both. With it the peer took 10%
 * less time on 2 cores. 0, or -1 when there is none here. */
int video_peer_command(struct bench *b, struct kase *c, const char *input)
{
	static const struct {
		const char *codec, *encoder, *opt, *fmt;
	} enc[] = {
		{ "h264", "libx264", NULL, NULL },
		{ "hevc", "libx265", "-x265-params", "pools=%d:frame-threads=%d:log-level=error" },
		{ "av1", "libsvtav1", "-svtav1-params", "lp=%d" },
		{ "vp9", "libvpx-vp9", "-row-mt", "1" },
	};
	if (!on_path("ffmpeg") || (strcmp(c->engine, "software") && strncmp(c->engine, "ffmpeg:", 7)))
		return -1;
	char threads[16], val[96];
	snprintf(threads, sizeof threads, "%d", b->threads);
	int no_rt = c->op->fam != FAM_DECODE && !strcmp(c->op->format, "av1") && geteuid() == 0 && on_path("setpriv");
	const char *argv[26] = { "setpriv", "--bounding-set=-sys_nice" };
	int n = no_rt ? 2 : 0;
	const char *head[] = { "ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-threads", threads, "-i" };
	for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
		argv[n++] = head[i];
	c->peer_in = n;
	argv[n++] = input;
	argv[n++] = "-an";
	if (c->op->fam == FAM_DECODE) {
		argv[n++] = "-f";
		argv[n++] = "rawvideo";
		snprintf(c->peer_cmd, sizeof c->peer_cmd, "ffmpeg -threads %d -f rawvideo", b->threads);
	} else {
		size_t k = 0;
		while (k < sizeof enc / sizeof enc[0] && strcmp(enc[k].codec, c->op->format))
			k++;
		if (k == sizeof enc / sizeof enc[0])
			return -1;
		argv[n++] = "-c:v";
		argv[n++] = enc[k].encoder;
		if (enc[k].opt) {
			snprintf(val, sizeof val, enc[k].fmt, b->threads, b->threads < 4 ? b->threads : 4);
			argv[n++] = enc[k].opt;
			argv[n++] = val;
		}
		argv[n++] = "-threads";
		argv[n++] = threads;
		argv[n++] = "-f";
		argv[n++] = "matroska";
		snprintf(c->peer_cmd, sizeof c->peer_cmd, "ffmpeg -c:v %s -threads %d%s", enc[k].encoder, b->threads,
			 no_rt ? " (no RT)" : "");
	}
	argv[n++] = "-";
	for (int i = 0; i < n; i++)
		if (!(c->peer_argv[i] = strdup(argv[i])))
			return -1;
	c->peer_argv[n] = NULL;
	return 0;
}

int video_program_command(struct bench *b, struct kase *c)
{
	char prog[PATH_MAX], *argv[24], words[4][64];
	if (sibling("accel-transcode", prog, sizeof prog) < 0)
		return -1;
	transcode_argv(b, c, prog, c->input, NULL, argv, words);
	size_t used = 0;
	for (int i = 0; argv[i]; i++) {
		if (!(c->prog_argv[i] = strdup(argv[i])))
			return -1;
		/* Shown without its path, -v, --no-progress and the input. */
		if ((i >= 3 && argv[i + 1]) || !i)
			used += (size_t)snprintf(c->prog_cmd + used, sizeof c->prog_cmd - used, "%s%s", used ? " " : "",
						 i ? argv[i] : "accel-transcode");
		if (used >= sizeof c->prog_cmd)
			used = sizeof c->prog_cmd - 1;
	}
	return 0;
}
