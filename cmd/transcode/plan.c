/*
 * plan.c - the pixel format each encoder is given, the filter graph for
 * where the frames are decoded and encoded, and which encoded packets can
 * be written without a hole (plan.h). Pure choices on
 * FFmpeg's tables: no device is opened here, so that they can be tested
 * on a machine without one.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <libavutil/hwcontext.h>
#include <libavutil/pixdesc.h>
#include <libavutil/error.h>
#include "transcode.h"

static int takes(const enum AVPixelFormat *list, enum AVPixelFormat f)
{
	for (; list && *list != AV_PIX_FMT_NONE; list++)
		if (*list == f)
			return 1;
	return 0;
}

/* "yuv420p, nv12, ..." */
static void names(const enum AVPixelFormat *list, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	for (; list && *list != AV_PIX_FMT_NONE && n < len; list++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", av_get_pix_fmt_name(*list));
}

enum AVPixelFormat tc_sw_format(const AVCodec *c, const char *want, enum AVPixelFormat src, char *why, size_t len)
{
	enum AVPixelFormat w = want ? av_get_pix_fmt(want) : src;
	if (want && w == AV_PIX_FMT_NONE) {
		snprintf(why, len, "--pix-fmt: '%s' is not a pixel format FFmpeg knows", want);
		return AV_PIX_FMT_NONE;
	}
	if (!c || !c->pix_fmts || takes(c->pix_fmts, w))
		return w;
	if (want) {
		char list[400];
		names(c->pix_fmts, list, sizeof list);
		snprintf(why, len, "--pix-fmt %s: %s takes %s", want, c->name, list);
		return AV_PIX_FMT_NONE;
	}
	return avcodec_find_best_pix_fmt_of_list(c->pix_fmts, src, 0, NULL);
}

int tc_written_prefix(const int64_t *pkt_pts, int npkt, const int64_t *frame_pts, int nframes)
{
	int64_t top = INT64_MIN;
	int n = 0;
	for (int i = 0; i < npkt && i < nframes; i++) {
		if (pkt_pts[i] > top)
			top = pkt_pts[i];
		if (top == frame_pts[i])
			n = i + 1;
	}
	return n;
}

int tc_hw_formats(const AVCodec *c, const char *type, enum AVPixelFormat src, const char *want,
		  enum AVPixelFormat *hw, enum AVPixelFormat *sw, char *why, size_t len)
{
	enum AVHWDeviceType t = av_hwdevice_find_type_by_name(type);
	const AVCodecHWConfig *cfg;
	*hw = *sw = AV_PIX_FMT_NONE;
	for (int i = 0; t != AV_HWDEVICE_TYPE_NONE && (cfg = avcodec_get_hw_config(c, i)); i++)
		if (cfg->device_type == t &&
		    cfg->methods & (AV_CODEC_HW_CONFIG_METHOD_HW_FRAMES_CTX | AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX)) {
			*hw = cfg->pix_fmt;
			break;
		}
	if (*hw == AV_PIX_FMT_NONE) {
		snprintf(why, len, "%s takes no %s frames", c->name, type);
		return -1;
	}
	enum AVPixelFormat soft[64];
	int n = 0;
	for (const enum AVPixelFormat *p = c->pix_fmts; p && *p != AV_PIX_FMT_NONE && n < 63; p++)
		if (!(av_pix_fmt_desc_get(*p)->flags & AV_PIX_FMT_FLAG_HWACCEL))
			soft[n++] = *p;
	if (!n) {
		/* VA-API encoders list only their hardware format: the
		 * layouts of 8- and 10-bit 4:2:0 surfaces. */
		soft[n++] = AV_PIX_FMT_NV12;
		soft[n++] = AV_PIX_FMT_P010LE;
	}
	soft[n] = AV_PIX_FMT_NONE;
	enum AVPixelFormat w = want ? av_get_pix_fmt(want) : src;
	if (want && w == AV_PIX_FMT_NONE) {
		snprintf(why, len, "--pix-fmt: '%s' is not a pixel format FFmpeg knows", want);
		return -1;
	}
	if (takes(soft, w)) {
		*sw = w;
		return 0;
	}
	if (want) {
		char list[400];
		names(soft, list, sizeof list);
		snprintf(why, len, "--pix-fmt %s: %s on %s takes %s", want, c->name, type, list);
		return -1;
	}
	*sw = avcodec_find_best_pix_fmt_of_list(soft, src, 0, NULL);
	return 0;
}

/* ------------------------------------------------------------ graph */

struct chain {
	char *buf;
	size_t len, n;
	size_t last_scale;        /* offset just past a device scaler that ends the chain, 0 */
};

static void add(struct chain *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct chain *c, const char *fmt, ...)
{
	if (c->n && c->n < c->len)
		c->buf[c->n++] = ',';
	if (c->n >= c->len)
		return;
	va_list ap;
	va_start(ap, fmt);
	c->n += (size_t)vsnprintf(c->buf + c->n, c->len - c->n, fmt, ap);
	va_end(ap);
	if (c->n >= c->len)
		c->n = c->len;
	c->last_scale = 0;
}

enum op { OP_DEINT, OP_CROP, OP_SCALE, OP_FPS, NOPS };
static const char *const op_names[NOPS] = { "--deinterlace", "--crop", "--scale", "--fps" };

/* Whether op is asked. */
static int asked(const struct tc_job *job, enum op op)
{
	switch (op) {
	case OP_DEINT: return job->deinterlace;
	case OP_CROP: return job->crop[0] != 0;
	case OP_SCALE: return job->scale_w || job->scale_h;
	default: return job->fps_num != 0;
	}
}

/* A scaled side: -1 keeps the aspect ratio, with an even result (-2)
 * for subsampled chroma; -N keeps it with a multiple of N. */
static int side(int v, enum AVPixelFormat fmt)
{
	const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
	return v == -1 && d && (d->log2_chroma_w || d->log2_chroma_h) ? -2 : v;
}

/* Add op's version for device type dev; 0, or -1 when it has none here
 * (nothing added). The filter's name goes to `used`. */
static int add_device(struct chain *c, const struct tc_plan_in *in, const char *dev, enum op op, char *used,
		      size_t ulen)
{
	const struct tc_job *job = in->job;
	int cuda = !strcmp(dev, "cuda"), vaapi = !strcmp(dev, "vaapi"), qsv = !strcmp(dev, "qsv");
	const char *f = NULL;
	if (op == OP_FPS)
		f = "fps";            /* passes frames on, wherever they are */
	else if (qsv)
		f = "vpp_qsv";
	else if (op == OP_DEINT)
		f = cuda ? "yadif_cuda" : vaapi ? "deinterlace_vaapi" : NULL;
	else if (op == OP_SCALE)
		f = cuda ? "scale_cuda" : vaapi ? "scale_vaapi" : NULL;
	/* an FFmpeg built with NPP but not scale_cuda */
	if (f && op == OP_SCALE && cuda && !in->have(f))
		f = "scale_npp";
	if (!f || !in->have(f))
		return -1;
	int w = side(job->scale_w, in->out), h = side(job->scale_h, in->out);
	switch (op) {
	case OP_DEINT:
		add(c, "%s", cuda ? "yadif_cuda=deint=interlaced" : vaapi ? "deinterlace_vaapi=auto=1" : "vpp_qsv=deinterlace=2");
		break;
	case OP_CROP:
		add(c, "vpp_qsv=cw=%d:ch=%d:cx=%d:cy=%d", job->crop[0], job->crop[1], job->crop[2], job->crop[3]);
		break;
	case OP_SCALE:
		if (cuda)
			add(c, "%s=w=%d:h=%d:interp_algo=%s", f, w, h, strcmp(f, "scale_npp") ? "bicubic" : "cubic");
		else if (vaapi)
			add(c, "scale_vaapi=w=%d:h=%d", w, h);
		else if (w < 0)
			add(c, "vpp_qsv=w=oh*cw/ch:h=%d", h);
		else if (h < 0)
			add(c, "vpp_qsv=w=%d:h=ow*ch/cw", w);
		else
			add(c, "vpp_qsv=w=%d:h=%d", w, h);
		c->last_scale = c->n;
		break;
	default:
		add(c, "fps=%d/%d", job->fps_num, job->fps_den);
		break;
	}
	size_t n = strlen(used);
	if (!strstr(used, f))
		snprintf(used + n, ulen - n, "%s%s", n ? ", " : "", f);
	return 0;
}

static void add_software(struct chain *c, const struct tc_job *job, enum op op, enum AVPixelFormat out)
{
	switch (op) {
	case OP_DEINT:
		add(c, "yadif=deint=interlaced");
		break;
	case OP_CROP:
		add(c, "crop=%d:%d:%d:%d", job->crop[0], job->crop[1], job->crop[2], job->crop[3]);
		break;
	case OP_SCALE:
		add(c, "scale=%d:%d:flags=bicubic", side(job->scale_w, out), side(job->scale_h, out));
		break;
	default:
		add(c, "fps=%d/%d", job->fps_num, job->fps_den);
		break;
	}
}

void tc_plan_graph(const struct tc_plan_in *in, struct tc_plan *p)
{
	memset(p, 0, sizeof *p);
	struct chain c = { p->chain, sizeof p->chain, 0, 0 };
	const char *dev = in->dec;
	const char *src = av_get_pix_fmt_name(in->src), *out = av_get_pix_fmt_name(in->out);
	char used[160] = "", why_down[120] = "";
	for (int op = 0; op < NOPS; op++) {
		if (!asked(in->job, op))
			continue;
		if (dev && add_device(&c, in, dev, op, used, sizeof used) == 0) {
			p->hw_filters++;
			continue;
		}
		if (dev) {
			add(&c, "hwdownload,format=%s", src);
			snprintf(why_down, sizeof why_down, "before %s, which has no %s version", op_names[op], dev);
			p->download = 1;
			dev = NULL;
		}
		add_software(&c, in->job, op, in->out);
	}
	if (dev && (!in->enc || strcmp(dev, in->enc))) {
		add(&c, "hwdownload,format=%s", src);
		snprintf(why_down, sizeof why_down, in->enc ? "to upload them to %s" : "for the software encoder",
			 in->enc);
		p->download = 1;
		dev = NULL;
	}
	if (dev) {
		/* Frames stay on the device up to the encoder: convert the
		 * pixels there, in the scaler that ends the chain if one does. */
		if (in->src != in->out) {
			int cuda = !strcmp(dev, "cuda"), vaapi = !strcmp(dev, "vaapi");
			const char *conv = cuda ? (in->have("scale_cuda") ? "scale_cuda" : "scale_npp")
					   : vaapi ? "scale_vaapi" : "vpp_qsv";
			if (c.last_scale && c.last_scale == c.n && c.n < c.len)
				c.n += (size_t)snprintf(c.buf + c.n, c.len - c.n, ":format=%s", out);
			else
				add(&c, "%s=format=%s", conv, out);
		}
		if (c.n == 0)
			add(&c, "null");
		p->on_device = 1;
	} else {
		add(&c, "format=pix_fmts=%s", out);
		if (in->enc) {
			add(&c, "hwupload%s", !strcmp(in->enc, "qsv") ? "=extra_hw_frames=64" : "");
			p->upload = p->on_device = 1;
		}
	}
	if (c.n >= c.len)
		c.buf[c.len - 1] = 0;

	size_t n = 0;
	char *b = p->note;
	size_t len = sizeof p->note;
#define NOTE(...) (n += n < len ? (size_t)snprintf(b + n, len - n, __VA_ARGS__) : 0)
	if (!in->dec && !in->enc)
		NOTE("in software: libavfilter, swscale");
	else if (p->hw_filters)
		NOTE("on %s: %s", in->dec, used);
	else if (in->dec)
		NOTE("frames come on %s", in->dec);
	else
		NOTE("in software");
	if (p->download)
		NOTE("; downloaded %s", why_down);
	if (p->upload)
		NOTE("; uploaded to %s for the encoder", in->enc);
	else if (p->on_device)
		NOTE("; frames stay on %s up to the encoder", in->enc);
#undef NOTE
}

/* ------------------------------------------------------------ container */

const char *tc_plan_muxer(const char *to, const char *container, const char *output, const char **deflt, char *why,
			  size_t len)
{
	/* --container's words, and the muxers an extension may name. */
	static const char *const words[][2] = {
		{ "mkv", "matroska" }, { "mp4", "mp4" }, { "ipod", "mp4" }, { "mov", "mov" }, { "webm", "webm" },
		{ "mpegts", "mpegts" }, { "nut", "nut" }, { "avi", "avi" }, { "matroska", "matroska" },
		{ "yuv4mpegpipe", "yuv4mpegpipe" }, { "rawvideo", "rawvideo" },
	};
	const char *m = NULL;
	if (to && !strcmp(to, "y4m")) {
		m = "yuv4mpegpipe";
	} else if (container) {
		for (size_t i = 0; i < sizeof words / sizeof words[0] && !m; i++)
			if (!strcmp(container, words[i][0]))
				m = words[i][1];
	} else if (output && strrchr(output, '.')) {
		const AVOutputFormat *of = av_guess_format(NULL, output, NULL);
		for (size_t i = 0; of && i < sizeof words / sizeof words[0] && !m; i++)
			if (!strcmp(of->name, words[i][0]))
				m = words[i][1];
		if (of && !m) {
			snprintf(why, len, "-o %s: FFmpeg writes %s with its %s muxer, not one of this program's; "
				 "use .mkv, .mp4, .mov, .webm, .ts, .nut or .avi, or --container", output,
				 strrchr(output, '.'), of->name);
			return NULL;
		}
		int y4m = m && !strcmp(m, "yuv4mpegpipe"), raw = m && !strcmp(m, "rawvideo");
		if (to && (y4m || raw) && strcmp(to, y4m ? "y4m" : "rawvideo")) {
			snprintf(why, len, "-o %s: %s holds raw frames, not %s; use --to %s", output,
				 y4m ? "YUV4MPEG2" : "the extension", to, y4m ? "y4m" : "rawvideo");
			return NULL;
		}
	}
	if (!m)
		m = to && !strcmp(to, "rawvideo") ? "rawvideo" : "matroska";
	if (deflt)
		*deflt = !strcmp(m, "webm") ? "vp9" : !strcmp(m, "yuv4mpegpipe") ? "y4m"
			 : !strcmp(m, "rawvideo") ? "rawvideo" : "h264";
	return m;
}

/* ------------------------------------------------------------ audio copy */

/* The scratch output: written bytes go nowhere; it seeks, as the
 * temporary a FILE is written to does. */
static int null_write(void *opaque, uint8_t *buf, int n)
{
	(void)opaque;
	(void)buf;
	return n;
}

static int64_t null_seek(void *opaque, int64_t off, int whence)
{
	(void)opaque;
	return whence == AVSEEK_SIZE ? -1 : off;
}

int tc_audio_copy_fits(const AVOutputFormat *of, const AVCodecParameters *par, char *why, size_t len)
{
	static const enum AVCodecID ts_audio[] = {
		AV_CODEC_ID_MP1, AV_CODEC_ID_MP2, AV_CODEC_ID_MP3, AV_CODEC_ID_AAC, AV_CODEC_ID_AAC_LATM,
		AV_CODEC_ID_AC3, AV_CODEC_ID_EAC3, AV_CODEC_ID_DTS, AV_CODEC_ID_TRUEHD, AV_CODEC_ID_OPUS,
		AV_CODEC_ID_S302M, AV_CODEC_ID_NONE
	};
	const char *codec = avcodec_get_name(par->codec_id);
	int q = avformat_query_codec(of, par->codec_id, FF_COMPLIANCE_NORMAL);
	if (q == 0) {
		snprintf(why, len, "the %s muxer has no place for %s", of->name, codec);
		return 0;
	}
	if (q < 0 && !strcmp(of->name, "mpegts")) {
		int i = 0;
		while (ts_audio[i] != AV_CODEC_ID_NONE && ts_audio[i] != par->codec_id)
			i++;
		if (ts_audio[i] == AV_CODEC_ID_NONE) {
			snprintf(why, len, "MPEG-TS has no audio stream type for %s", codec);
			return 0;
		}
	}
	AVFormatContext *o = NULL;
	uint8_t *buf = NULL;
	int rc = avformat_alloc_output_context2(&o, of, NULL, NULL);
	AVStream *st = rc >= 0 ? avformat_new_stream(o, NULL) : NULL;
	if (st && (buf = av_malloc(4096)) &&
	    (o->pb = avio_alloc_context(buf, 4096, 1, NULL, NULL, null_write, null_seek))) {
		buf = NULL;
		o->pb->seekable = AVIO_SEEKABLE_NORMAL;
		o->flags |= AVFMT_FLAG_CUSTOM_IO;
		rc = avcodec_parameters_copy(st->codecpar, par);
		st->codecpar->codec_tag = 0;
		st->time_base = (AVRational){ 1, par->sample_rate > 0 ? par->sample_rate : 48000 };
		if (rc >= 0)
			rc = avformat_init_output(o, NULL);
	} else if (rc >= 0) {
		rc = AVERROR(ENOMEM);
	}
	if (rc < 0) {
		char e[AV_ERROR_MAX_STRING_SIZE];
		av_strerror(rc, e, sizeof e);
		snprintf(why, len, "FFmpeg's %s muxer refuses %s: %s", of->name, codec, e);
	}
	av_free(buf);
	AVIOContext *pb = o ? o->pb : NULL;
	avformat_free_context(o);
	if (pb)
		av_freep(&pb->buffer);
	avio_context_free(&pb);
	return rc >= 0;
}
