/*
 * test_transcode_plan.c - accel-transcode's choices that need no device
 * (cmd/transcode/plan.c, built in): the pixel format given to software
 * encoders (what the ffmpeg program picks) and to hardware ones (their
 * own frames: VAAPI/QSV surfaces of nv12, CUDA frames), and the filter
 * graph for each place frames are decoded and encoded: on the device
 * throughout when both are there, downloaded or uploaded only where a
 * stage is in software or a filter has no device version; and which
 * packets of an encoder can be written so that a new encoder can take
 * over without a hole (B-frames out of order); which audio a
 * container carries when copied; and the muxer for -o's extension.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "../../cmd/transcode/plan.c"

static enum AVPixelFormat fmt(const char *name)
{
	return av_get_pix_fmt(name);
}

static const char *sw(const char *enc, const char *want, const char *src)
{
	static char why[400];
	const AVCodec *c = avcodec_find_encoder_by_name(enc);
	if (!c)
		return NULL;
	why[0] = 0;
	enum AVPixelFormat f = tc_sw_format(c, want, fmt(src), why, sizeof why);
	return f == AV_PIX_FMT_NONE ? why : av_get_pix_fmt_name(f);
}

static void software_formats(void **state)
{
	(void)state;
	if (!avcodec_find_encoder_by_name("libx264") || !avcodec_find_encoder_by_name("libx265"))
		skip();
	/* libx264 keeps what it takes (4:4:4, 4:2:2, 10 bits, nv12), and
	 * for RGB picks yuv444p, as `ffmpeg -c:v libx264` does */
	assert_string_equal(sw("libx264", NULL, "yuv444p"), "yuv444p");
	assert_string_equal(sw("libx264", NULL, "yuv422p"), "yuv422p");
	assert_string_equal(sw("libx264", NULL, "yuv420p10le"), "yuv420p10le");
	assert_string_equal(sw("libx264", NULL, "nv12"), "nv12");
	assert_string_equal(sw("libx264", NULL, "rgb24"), "yuv444p");
	assert_string_equal(sw("libx264", NULL, "bgra"), "yuv444p");
	/* libx265 does not take nv12 */
	assert_string_equal(sw("libx265", NULL, "nv12"), "yuv420p");
	/* --pix-fmt wins when the encoder takes it, else a line says what it takes */
	assert_string_equal(sw("libx264", "yuv444p", "yuv420p"), "yuv444p");
	assert_string_equal(sw("libx264", "rgb24", "yuv420p"),
			    "--pix-fmt rgb24: libx264 takes yuv420p, yuvj420p, yuv422p, yuvj422p, yuv444p, yuvj444p, "
			    "nv12, nv16, nv21, yuv420p10le, yuv422p10le, yuv444p10le, nv20le, gray, gray10le");
	assert_string_equal(sw("libx264", "yuv9000", "yuv420p"),
			    "--pix-fmt: 'yuv9000' is not a pixel format FFmpeg knows");
	/* the raw encoders take anything */
	assert_string_equal(sw("rawvideo", NULL, "gbrp"), "gbrp");
}

/* "HW/SW" for encoder enc on device type type, or the reason. */
static const char *hw(const char *enc, const char *type, const char *src, const char *want)
{
	static char buf[400];
	const AVCodec *c = avcodec_find_encoder_by_name(enc);
	enum AVPixelFormat h, s;
	if (!c)
		return "absent";
	if (tc_hw_formats(c, type, fmt(src), want, &h, &s, buf, sizeof buf) < 0)
		return buf;
	snprintf(buf, sizeof buf, "%s/%s", av_get_pix_fmt_name(h), av_get_pix_fmt_name(s));
	return buf;
}

static void hardware_formats(void **state)
{
	(void)state;
	if (!avcodec_find_encoder_by_name("h264_vaapi") || !avcodec_find_encoder_by_name("h264_nvenc") ||
	    !avcodec_find_encoder_by_name("h264_qsv"))
		skip();
	/* VA-API: surfaces of nv12 (p010 for 10 bits), never yuv420p */
	assert_string_equal(hw("h264_vaapi", "vaapi", "yuv420p", NULL), "vaapi/nv12");
	assert_string_equal(hw("hevc_vaapi", "vaapi", "yuv420p10le", NULL), "vaapi/p010le");
	assert_string_equal(hw("h264_vaapi", "vaapi", "nv12", NULL), "vaapi/nv12");
	assert_string_equal(hw("h264_vaapi", "vaapi", "yuv420p", "yuv444p"),
			    "--pix-fmt yuv444p: h264_vaapi on vaapi takes nv12, p010le");
	/* NVENC: CUDA frames of what it lists (yuv420p as decoded, nv12 from NVDEC) */
	assert_string_equal(hw("h264_nvenc", "cuda", "yuv420p", NULL), "cuda/yuv420p");
	assert_string_equal(hw("h264_nvenc", "cuda", "nv12", NULL), "cuda/nv12");
	assert_string_equal(hw("hevc_nvenc", "cuda", "yuv444p", NULL), "cuda/yuv444p");
	assert_string_equal(hw("h264_nvenc", "cuda", "yuv422p", NULL), "cuda/yuv444p");
	/* QSV: its surfaces, nv12 */
	assert_string_equal(hw("h264_qsv", "qsv", "yuv420p", NULL), "qsv/nv12");
	/* an encoder of another device type */
	assert_string_equal(hw("h264_nvenc", "vaapi", "yuv420p", NULL), "h264_nvenc takes no vaapi frames");
	assert_string_equal(hw("libx264", "cuda", "yuv420p", NULL), "libx264 takes no cuda frames");
}

static int has_all(const char *f)
{
	(void)f;
	return 1;
}

static int no_scale_cuda(const char *f)
{
	return strcmp(f, "scale_cuda") != 0;
}

/* Debian's FFmpeg 5.1 without yadif_cuda and scale_vaapi, say. */
static int has_some(const char *f)
{
	return strcmp(f, "yadif_cuda") && strcmp(f, "scale_vaapi");
}

static struct tc_plan plan;

static const char *graph(const struct tc_job *job, const char *dec, const char *enc, const char *src, const char *out,
			 int (*have)(const char *))
{
	struct tc_plan_in in = { job, dec, enc, fmt(src), fmt(out), have };
	tc_plan_graph(&in, &plan);
	return plan.chain;
}

static void graphs(void **state)
{
	(void)state;
	struct tc_job none = { 0 }, scale = { .scale_w = 1280, .scale_h = -1 }, all = {
		.deinterlace = 1, .crop = { 640, 360, 8, 4 }, .scale_w = -1, .scale_h = 240, .fps_num = 30000, .fps_den = 1001,
	}, deint_scale = { .deinterlace = 1, .scale_w = 320, .scale_h = 240 };

	/* software throughout: the chain the program always had */
	assert_string_equal(graph(&none, NULL, NULL, "yuv420p", "yuv420p", has_all), "format=pix_fmts=yuv420p");
	assert_string_equal(graph(&all, NULL, NULL, "yuv420p", "yuv420p", has_all),
			    "yadif=deint=interlaced,crop=640:360:8:4,scale=-2:240:flags=bicubic,fps=30000/1001,"
			    "format=pix_fmts=yuv420p");
	assert_string_equal(plan.note, "in software: libavfilter, swscale");
	assert_false(plan.on_device);
	/* rgb24 is not subsampled: -1 stays -1 */
	assert_string_equal(graph(&scale, NULL, NULL, "yuv420p", "rgb24", has_all),
			    "scale=1280:-1:flags=bicubic,format=pix_fmts=rgb24");

	/* NVDEC to NVENC: everything on the GPU, no copy */
	assert_string_equal(graph(&scale, "cuda", "cuda", "nv12", "nv12", has_all),
			    "scale_cuda=w=1280:h=-2:interp_algo=bicubic");
	assert_true(plan.on_device);
	assert_false(plan.download || plan.upload);
	assert_string_equal(plan.note, "on cuda: scale_cuda; frames stay on cuda up to the encoder");
	assert_string_equal(graph(&none, "cuda", "cuda", "nv12", "nv12", has_all), "null");
	assert_true(plan.on_device);
	/* a pixel format change on the device, in the scaler (4:4:4: any height) */
	assert_string_equal(graph(&scale, "cuda", "cuda", "nv12", "yuv444p", has_all),
			    "scale_cuda=w=1280:h=-1:interp_algo=bicubic:format=yuv444p");
	assert_string_equal(graph(&none, "cuda", "cuda", "nv12", "yuv444p", has_all), "scale_cuda=format=yuv444p");
	/* --crop has no CUDA version: downloaded before it, uploaded for NVENC */
	assert_string_equal(graph(&all, "cuda", "cuda", "nv12", "nv12", has_all),
			    "yadif_cuda=deint=interlaced,hwdownload,format=nv12,crop=640:360:8:4,scale=-2:240:flags=bicubic,"
			    "fps=30000/1001,format=pix_fmts=nv12,hwupload");
	assert_true(plan.download && plan.upload && plan.on_device);
	assert_string_equal(plan.note, "on cuda: yadif_cuda; downloaded before --crop, which has no cuda version; "
			    "uploaded to cuda for the encoder");
	/* no yadif_cuda in this FFmpeg: yadif in software */
	assert_string_equal(graph(&deint_scale, "cuda", NULL, "nv12", "yuv420p", has_some),
			    "hwdownload,format=nv12,yadif=deint=interlaced,scale=320:240:flags=bicubic,format=pix_fmts=yuv420p");
	assert_string_equal(plan.note, "frames come on cuda; downloaded before --deinterlace, which has no cuda version");
	/* NVDEC, then x264 (an H100 has no NVENC): scaled on the GPU, then downloaded */
	assert_string_equal(graph(&scale, "cuda", NULL, "nv12", "yuv420p", has_all),
			    "scale_cuda=w=1280:h=-2:interp_algo=bicubic,hwdownload,format=nv12,format=pix_fmts=yuv420p");
	assert_string_equal(plan.note, "on cuda: scale_cuda; downloaded for the software encoder");
	assert_false(plan.on_device);

	/* an FFmpeg with scale_npp but no scale_cuda */
	assert_string_equal(graph(&scale, "cuda", "cuda", "nv12", "yuv444p", no_scale_cuda),
			    "scale_npp=w=1280:h=-1:interp_algo=cubic:format=yuv444p");
	assert_string_equal(graph(&none, "cuda", "cuda", "nv12", "yuv444p", no_scale_cuda), "scale_npp=format=yuv444p");

	/* software decode, VA-API encode: nv12 uploaded at the end */
	assert_string_equal(graph(&scale, NULL, "vaapi", "yuv420p", "nv12", has_all),
			    "scale=1280:-2:flags=bicubic,format=pix_fmts=nv12,hwupload");
	assert_string_equal(plan.note, "in software; uploaded to vaapi for the encoder");
	/* VA-API throughout */
	assert_string_equal(graph(&deint_scale, "vaapi", "vaapi", "nv12", "nv12", has_all),
			    "deinterlace_vaapi=auto=1,scale_vaapi=w=320:h=240");
	assert_string_equal(graph(&scale, "vaapi", "vaapi", "yuv420p", "nv12", has_all),
			    "scale_vaapi=w=1280:h=-2:format=nv12");
	/* fps runs wherever frames are */
	struct tc_job fps = { .fps_num = 25, .fps_den = 1 };
	assert_string_equal(graph(&fps, "vaapi", "vaapi", "nv12", "nv12", has_all), "fps=25/1");
	/* QSV: vpp_qsv crops and scales on the device */
	assert_string_equal(graph(&all, "qsv", "qsv", "nv12", "nv12", has_all),
			    "vpp_qsv=deinterlace=2,vpp_qsv=cw=640:ch=360:cx=8:cy=4,vpp_qsv=w=oh*cw/ch:h=240,fps=30000/1001");
	/* software to QSV: its upload wants frames in the pool */
	assert_string_equal(graph(&none, NULL, "qsv", "yuv420p", "nv12", has_all),
			    "format=pix_fmts=nv12,hwupload=extra_hw_frames=64");
	/* decoded on one device, encoded on another: down, then up */
	assert_string_equal(graph(&none, "cuda", "vaapi", "nv12", "nv12", has_all),
			    "hwdownload,format=nv12,format=pix_fmts=nv12,hwupload");
	assert_string_equal(plan.note, "frames come on cuda; downloaded to upload them to vaapi; uploaded to vaapi for "
			    "the encoder");
}

#define N(a) ((int)(sizeof a / sizeof a[0]))

static void written_prefix(void **state)
{
	(void)state;
	static const int64_t frames[] = { 0, 1, 2, 3, 4, 5 }, gaps[] = { 0, 2, 4 };
	/* no reordering: every packet as it comes */
	static const int64_t in_order[] = { 0, 1, 2 };
	assert_int_equal(tc_written_prefix(in_order, 3, frames, 6), 3);
	assert_int_equal(tc_written_prefix(in_order, 0, frames, 6), 0);
	/* I0 P3 B1 B2: P3 waits for B1 and B2 */
	static const int64_t b[] = { 0, 3, 1, 2 };
	assert_int_equal(tc_written_prefix(b, 1, frames, 6), 1);
	assert_int_equal(tc_written_prefix(b, 2, frames, 6), 1);
	assert_int_equal(tc_written_prefix(b, 3, frames, 6), 1);
	assert_int_equal(tc_written_prefix(b, 4, frames, 6), 4);
	/* pyramid: I0 P4 B2 b1 b3 */
	static const int64_t pyr[] = { 0, 4, 2, 1, 3 };
	assert_int_equal(tc_written_prefix(pyr, 4, frames, 6), 1);
	assert_int_equal(tc_written_prefix(pyr, 5, frames, 6), 5);
	/* the first frames already written: the rest start later */
	static const int64_t later[] = { 3, 5, 4 };
	assert_int_equal(tc_written_prefix(later, 3, frames + 3, 3), 3);
	assert_int_equal(tc_written_prefix(later, 2, frames + 3, 3), 1);
	/* timestamps with gaps */
	static const int64_t g[] = { 0, 4, 2 };
	assert_int_equal(tc_written_prefix(g, 3, gaps, N(gaps)), 3);
	assert_int_equal(tc_written_prefix(g, 2, gaps, N(gaps)), 1);
}

/* fits(MUXER, CODEC): tc_audio_copy_fits on stereo 48 kHz audio. */
static int fits(const char *mux, enum AVCodecID id, char *why, size_t len)
{
	AVCodecParameters *par = avcodec_parameters_alloc();
	assert_non_null(par);
	par->codec_type = AVMEDIA_TYPE_AUDIO;
	par->codec_id = id;
	par->sample_rate = 48000;
	av_channel_layout_default(&par->ch_layout, 2);
	par->format = AV_SAMPLE_FMT_S16;
	why[0] = 0;
	int r = tc_audio_copy_fits(av_guess_format(mux, NULL, NULL), par, why, len);
	avcodec_parameters_free(&par);
	return r;
}

static void audio_copy(void **state)
{
	(void)state;
	char why[200];
	/* MPEG-TS: only codecs with an audio stream type */
	static const enum AVCodecID ts_yes[] = { AV_CODEC_ID_MP2, AV_CODEC_ID_MP3, AV_CODEC_ID_AAC,
						 AV_CODEC_ID_AC3, AV_CODEC_ID_EAC3, AV_CODEC_ID_OPUS };
	for (int i = 0; i < N(ts_yes); i++)
		assert_int_equal(fits("mpegts", ts_yes[i], why, sizeof why), 1);
	assert_int_equal(fits("mpegts", AV_CODEC_ID_PCM_S16LE, why, sizeof why), 0);
	assert_string_equal(why, "MPEG-TS has no audio stream type for pcm_s16le");
	assert_int_equal(fits("mpegts", AV_CODEC_ID_FLAC, why, sizeof why), 0);
	assert_int_equal(fits("mpegts", AV_CODEC_ID_VORBIS, why, sizeof why), 0);
	/* MP4: its table; FLAC refused at set-up on FFmpeg 5.1 (experimental) */
	assert_int_equal(fits("mp4", AV_CODEC_ID_AAC, why, sizeof why), 1);
	assert_int_equal(fits("mp4", AV_CODEC_ID_OPUS, why, sizeof why), 1);
	assert_int_equal(fits("mp4", AV_CODEC_ID_PCM_S16LE, why, sizeof why), 0);
	assert_string_equal(why, "the mp4 muxer has no place for pcm_s16le");
	if (LIBAVFORMAT_VERSION_MAJOR == 59) {
		assert_int_equal(fits("mp4", AV_CODEC_ID_FLAC, why, sizeof why), 0);
		assert_string_equal(why, "FFmpeg's mp4 muxer refuses flac: Experimental feature");
	}
	/* Matroska and NUT take all of these */
	static const enum AVCodecID any[] = { AV_CODEC_ID_PCM_S16LE, AV_CODEC_ID_FLAC, AV_CODEC_ID_VORBIS,
					      AV_CODEC_ID_AAC, AV_CODEC_ID_OPUS };
	for (int i = 0; i < N(any); i++) {
		assert_int_equal(fits("matroska", any[i], why, sizeof why), 1);
		assert_int_equal(fits("nut", any[i], why, sizeof why), 1);
	}
}

static const char *muxer(const char *to, const char *container, const char *output, const char **deflt)
{
	static char why[320];
	why[0] = 0;
	const char *m = tc_plan_muxer(to, container, output, deflt, why, sizeof why);
	return m ? m : why;
}

static void muxers(void **state)
{
	(void)state;
	const char *d = NULL;
	/* by extension, as FFmpeg guesses; the default --to with it */
	static const char *const ext[][3] = {
		{ "a.mkv", "matroska", "h264" }, { "a.mp4", "mp4", "h264" }, { "a.m4v", "mp4", "h264" },
		{ "a.mov", "mov", "h264" }, { "a.webm", "webm", "vp9" }, { "a.ts", "mpegts", "h264" },
		{ "a.m2ts", "mpegts", "h264" }, { "a.nut", "nut", "h264" }, { "a.avi", "avi", "h264" },
		{ "a.y4m", "yuv4mpegpipe", "y4m" }, { "a.yuv", "rawvideo", "rawvideo" }, { "noext", "matroska", "h264" },
		{ "dir.d/noext", "matroska", "h264" },
	};
	for (int i = 0; i < N(ext); i++) {
		assert_string_equal(muxer(NULL, NULL, ext[i][0], &d), ext[i][1]);
		assert_string_equal(d, ext[i][2]);
	}
	/* stdout; --container first; y4m always; rawvideo raw unless told */
	assert_string_equal(muxer(NULL, NULL, NULL, &d), "matroska");
	assert_string_equal(muxer("hevc", "webm", "a.mp4", NULL), "webm");
	assert_string_equal(muxer(NULL, "avi", NULL, &d), "avi");
	assert_string_equal(d, "h264");
	assert_string_equal(muxer("y4m", NULL, "a.mkv", NULL), "yuv4mpegpipe");
	assert_string_equal(muxer("rawvideo", NULL, NULL, NULL), "rawvideo");
	assert_string_equal(muxer("rawvideo", NULL, "a.raw", NULL), "rawvideo");
	assert_string_equal(muxer("rawvideo", NULL, "a.nut", NULL), "nut");
	/* extensions FFmpeg knows for muxers this program does not use */
	assert_string_equal(muxer(NULL, NULL, "a.flv", NULL),
			    "-o a.flv: FFmpeg writes .flv with its flv muxer, not one of this program's; "
			    "use .mkv, .mp4, .mov, .webm, .ts, .nut or .avi, or --container");
	assert_string_equal(muxer("av1", NULL, "a.yuv", NULL),
			    "-o a.yuv: the extension holds raw frames, not av1; use --to rawvideo");
}

int main(void)
{
	av_log_set_level(AV_LOG_QUIET);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(software_formats),
		cmocka_unit_test(hardware_formats),
		cmocka_unit_test(graphs),
		cmocka_unit_test(written_prefix),
		cmocka_unit_test(audio_copy),
		cmocka_unit_test(muxers),
	};
	return cmocka_run_group_tests_name("transcode_plan", tests, NULL, NULL);
}
