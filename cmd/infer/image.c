/*
 * image.c - images as model input: a PNG, JPEG or any still FFmpeg's
 * libraries decode (libavformat probes the format, libavcodec decodes the
 * first frame, libswscale converts it to 8-bit RGB), whole or a box of it
 * (--crops) scaled to the size asked for (libswscale), then each value becomes (v * scale - mean[c]) / std[c] as float32 in NCHW
 * or NHWC order, channels RGB or BGR. The FFmpeg libraries (and the
 * hundred codec, network and X libraries they link) are loaded with dlopen
 * when the first image is read, so a run on .npy arrays or raw tensors,
 * --help and usage errors start without them.
 */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "infer.h"

void image_free(struct image *im)
{
	free(im->rgb);
	memset(im, 0, sizeof *im);
}

#ifdef INFER_IMAGES
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

/* The FFmpeg functions image.c calls, resolved once (load). */
static struct {
	__typeof__(av_malloc) *malloc;
	__typeof__(av_free) *free;
	__typeof__(av_freep) *freep;
	__typeof__(av_strerror) *strerror;
	__typeof__(av_frame_alloc) *frame_alloc;
	__typeof__(av_frame_free) *frame_free;
	__typeof__(av_get_pix_fmt_name) *pix_fmt_name;
	__typeof__(av_version_info) *version_info;
	__typeof__(avutil_version) *avutil_version;
	__typeof__(av_packet_alloc) *packet_alloc;
	__typeof__(av_packet_free) *packet_free;
	__typeof__(av_packet_unref) *packet_unref;
	__typeof__(avcodec_find_decoder) *find_decoder;
	__typeof__(avcodec_alloc_context3) *alloc_context3;
	__typeof__(avcodec_free_context) *free_context;
	__typeof__(avcodec_parameters_to_context) *parameters_to_context;
	__typeof__(avcodec_open2) *open2;
	__typeof__(avcodec_send_packet) *send_packet;
	__typeof__(avcodec_receive_frame) *receive_frame;
	__typeof__(avcodec_version) *avcodec_version;
	__typeof__(avformat_alloc_context) *format_alloc_context;
	__typeof__(avio_alloc_context) *avio_alloc_context;
	__typeof__(avio_context_free) *avio_context_free;
	__typeof__(avformat_open_input) *open_input;
	__typeof__(avformat_find_stream_info) *find_stream_info;
	__typeof__(av_find_best_stream) *find_best_stream;
	__typeof__(av_read_frame) *read_frame;
	__typeof__(avformat_close_input) *close_input;
	__typeof__(avformat_version) *avformat_version;
	__typeof__(sws_getContext) *sws_get_context;
	__typeof__(sws_scale) *sws_scale;
	__typeof__(sws_freeContext) *sws_free_context;
	__typeof__(swscale_version) *swscale_version;
} av;

/* The sonames of the major versions built against, as FFmpeg's headers
 * state them. */
#define AV_SONAME(lib, major) "lib" #lib ".so." AV_STRINGIFY(major)
static const char *const av_libs[4] = {
	AV_SONAME(avutil, LIBAVUTIL_VERSION_MAJOR),
	AV_SONAME(swscale, LIBSWSCALE_VERSION_MAJOR),
	AV_SONAME(avcodec, LIBAVCODEC_VERSION_MAJOR),
	AV_SONAME(avformat, LIBAVFORMAT_VERSION_MAJOR),
};

static pthread_once_t av_once = PTHREAD_ONCE_INIT;
static int av_rc = ACCEL_ENOTSUP;
/* Why the libraries could not be loaded: one line. */
static char av_why[384];

static void av_load(void)
{
	void *h[4];
	for (int i = 0; i < 4; i++) {
		char why[320];
		if (!(h[i] = accel_dlopen(av_libs[i], why, sizeof why))) {
			/* "libavcodec.so.59" is in Debian package libavcodec59. */
			const char *so = strstr(av_libs[i], ".so.");
			snprintf(av_why, sizeof av_why, "%s (Debian package %.*s%s)", why, (int)(so - av_libs[i]),
				 av_libs[i], so + 4);
			while (i--)
				dlclose(h[i]);
			return;
		}
	}
	const char *missing = NULL;
#define SYM(lib, field, name) \
	(missing ? 0 : (*(void **)&av.field = dlsym(h[lib], name)) ? 1 : ((missing = name), 0))
	SYM(0, malloc, "av_malloc");
	SYM(0, free, "av_free");
	SYM(0, freep, "av_freep");
	SYM(0, strerror, "av_strerror");
	SYM(0, frame_alloc, "av_frame_alloc");
	SYM(0, frame_free, "av_frame_free");
	SYM(0, pix_fmt_name, "av_get_pix_fmt_name");
	SYM(0, version_info, "av_version_info");
	SYM(0, avutil_version, "avutil_version");
	SYM(1, sws_get_context, "sws_getContext");
	SYM(1, sws_scale, "sws_scale");
	SYM(1, sws_free_context, "sws_freeContext");
	SYM(1, swscale_version, "swscale_version");
	SYM(2, packet_alloc, "av_packet_alloc");
	SYM(2, packet_free, "av_packet_free");
	SYM(2, packet_unref, "av_packet_unref");
	SYM(2, find_decoder, "avcodec_find_decoder");
	SYM(2, alloc_context3, "avcodec_alloc_context3");
	SYM(2, free_context, "avcodec_free_context");
	SYM(2, parameters_to_context, "avcodec_parameters_to_context");
	SYM(2, open2, "avcodec_open2");
	SYM(2, send_packet, "avcodec_send_packet");
	SYM(2, receive_frame, "avcodec_receive_frame");
	SYM(2, avcodec_version, "avcodec_version");
	SYM(3, format_alloc_context, "avformat_alloc_context");
	SYM(3, avio_alloc_context, "avio_alloc_context");
	SYM(3, avio_context_free, "avio_context_free");
	SYM(3, open_input, "avformat_open_input");
	SYM(3, find_stream_info, "avformat_find_stream_info");
	SYM(3, find_best_stream, "av_find_best_stream");
	SYM(3, read_frame, "av_read_frame");
	SYM(3, close_input, "avformat_close_input");
	SYM(3, avformat_version, "avformat_version");
#undef SYM
	if (missing) {
		snprintf(av_why, sizeof av_why, "FFmpeg's libraries lack %s, which accel-infer calls", missing);
		for (int i = 0; i < 4; i++)
			dlclose(h[i]);
		return;
	}
	av_rc = 0;
}

/* Load FFmpeg's libraries, once. 0, or ACCEL_ENOTSUP with av_why set. */
static int av_ready(void)
{
	pthread_once(&av_once, av_load);
	return av_rc;
}

/* FFmpeg's message for error code e, in buf. */
static const char *av_msg(int e, char *buf, size_t len)
{
	if (av.strerror(e, buf, len) < 0)
		snprintf(buf, len, "error %d", e);
	return buf;
}

struct mem_reader {
	const uint8_t *p;
	size_t n, pos;
};

static int mem_read(void *opaque, uint8_t *buf, int size)
{
	struct mem_reader *m = opaque;
	size_t left = m->n - m->pos;
	if (!left)
		return AVERROR_EOF;
	size_t k = (size_t)size < left ? (size_t)size : left;
	memcpy(buf, m->p + m->pos, k);
	m->pos += k;
	return (int)k;
}

/* Decode the first picture of data[0..n) into *frame. 0, or ACCEL_EDATA
 * with a line in err. */
static int decode(const uint8_t *data, size_t n, AVFrame *frame, char *err, size_t len)
{
	struct mem_reader m = { data, n, 0 };
	AVFormatContext *fmt = av.format_alloc_context();
	uint8_t *iobuf = av.malloc(65536);
	AVIOContext *io = iobuf ? av.avio_alloc_context(iobuf, 65536, 0, &m, mem_read, NULL, NULL) : NULL;
	AVCodecContext *dec = NULL;
	AVPacket *pkt = av.packet_alloc();
	int rc = ACCEL_EDATA, ret;
	char msg[AV_ERROR_MAX_STRING_SIZE];
	if (!fmt || !io || !pkt) {
		av.free(iobuf);
		rc = ACCEL_ENOMEM;
		goto out;
	}
	fmt->pb = io;
	if ((ret = av.open_input(&fmt, NULL, NULL, NULL)) < 0) {
		fmt = NULL;
		snprintf(err, len, "neither a .npy array nor an image FFmpeg can read (%s)", av_msg(ret, msg, sizeof msg));
		goto out;
	}
	if ((ret = av.find_stream_info(fmt, NULL)) < 0) {
		snprintf(err, len, "neither a .npy array nor an image FFmpeg can read (%s)", av_msg(ret, msg, sizeof msg));
		goto out;
	}
	int si = av.find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
	const AVCodec *codec = si >= 0 ? av.find_decoder(fmt->streams[si]->codecpar->codec_id) : NULL;
	if (!codec || !(dec = av.alloc_context3(codec)) ||
	    av.parameters_to_context(dec, fmt->streams[si]->codecpar) < 0 || av.open2(dec, codec, NULL) < 0) {
		snprintf(err, len, "neither a .npy array nor an image FFmpeg can decode");
		goto out;
	}
	int got = 0;
	while (!got && av.read_frame(fmt, pkt) >= 0) {
		if (pkt->stream_index == si && av.send_packet(dec, pkt) >= 0)
			got = av.receive_frame(dec, frame) >= 0;
		av.packet_unref(pkt);
	}
	if (!got && av.send_packet(dec, NULL) >= 0)
		got = av.receive_frame(dec, frame) >= 0;
	if (!got)
		snprintf(err, len, "the image has no picture FFmpeg can decode");
	else
		rc = 0;
out:
	av.packet_free(&pkt);
	av.free_context(&dec);
	av.close_input(&fmt);
	if (io) {
		av.freep(&io->buffer);
		av.avio_context_free(&io);
	}
	return rc;
}

int image_decode(const uint8_t *data, size_t n, struct image *im, char *err, size_t len)
{
	memset(im, 0, sizeof *im);
	if (av_ready()) {
		snprintf(err, len, "not a .npy array, and images cannot be read: %s", av_why);
		return ACCEL_EDATA;
	}
	AVFrame *f = av.frame_alloc();
	if (!f)
		return ACCEL_ENOMEM;
	int rc = decode(data, n, f, err, len);
	if (rc) {
		av.frame_free(&f);
		return rc;
	}
	if ((uint64_t)f->width * (uint64_t)f->height * 12 > INFER_MAX_ARRAY) {
		snprintf(err, len, "image of %dx%d is over the limit of %llu bytes", f->width, f->height,
			 (unsigned long long)INFER_MAX_ARRAY);
		av.frame_free(&f);
		return ACCEL_EDATA;
	}
	struct SwsContext *sws = av.sws_get_context(f->width, f->height, f->format, f->width, f->height, AV_PIX_FMT_RGB24,
						SWS_BILINEAR | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, NULL, NULL, NULL);
	im->rgb = malloc((size_t)f->width * f->height * 3);
	if (!sws || !im->rgb) {
		snprintf(err, len, "cannot convert the image's pixels (%s) to RGB", av.pix_fmt_name(f->format));
		av.sws_free_context(sws);
		image_free(im);
		av.frame_free(&f);
		return sws ? ACCEL_ENOMEM : ACCEL_EDATA;
	}
	im->w = f->width;
	im->h = f->height;
	uint8_t *dst[4] = { im->rgb };
	int stride[4] = { im->w * 3 };
	av.sws_scale(sws, (const uint8_t *const *)f->data, f->linesize, 0, f->height, dst, stride);
	av.sws_free_context(sws);
	av.frame_free(&f);
	return 0;
}

int image_tensor(const struct image *im, const int *box, const struct image_opts *o, struct accel_tensor *t,
		 struct accel_buf *out, char *err, size_t len)
{
	int x0 = box ? box[0] : 0, y0 = box ? box[1] : 0;
	int sw = box ? box[2] - box[0] : im->w, sh = box ? box[3] - box[1] : im->h;
	/* The size asked for; 0 on one side keeps the aspect ratio. */
	int w = o->width, h = o->height;
	if (!w && !h) {
		w = sw;
		h = sh;
	} else if (!w) {
		w = (int)lround((double)sw * h / sh);
	} else if (!h) {
		h = (int)lround((double)sh * w / sw);
	}
	/* --align: each side to the nearest multiple (PaddleOCR's DB
	 * detectors take sides of multiples of 32). */
	if (o->align > 1) {
		w = (int)lround((double)w / o->align) * o->align;
		h = (int)lround((double)h / o->align) * o->align;
		w = w < o->align ? o->align : w;
		h = h < o->align ? o->align : h;
	}
	w = w < 1 ? 1 : w;
	h = h < 1 ? 1 : h;
	if ((uint64_t)w * (uint64_t)h * 12 > INFER_MAX_ARRAY) {
		snprintf(err, len, "image of %dx%d is over the limit of %llu bytes", w, h, (unsigned long long)INFER_MAX_ARRAY);
		return ACCEL_EDATA;
	}
	const uint8_t *src = im->rgb + ((size_t)y0 * im->w + x0) * 3;
	uint8_t *rgb = NULL;
	if (w != sw || h != sh) {
		if (av_ready()) {
			snprintf(err, len, "cannot scale the image: %s", av_why);
			return ACCEL_EDATA;
		}
		struct SwsContext *sws = av.sws_get_context(sw, sh, AV_PIX_FMT_RGB24, w, h, AV_PIX_FMT_RGB24,
							SWS_BILINEAR | SWS_ACCURATE_RND, NULL, NULL, NULL);
		rgb = malloc((size_t)w * h * 3);
		if (!sws || !rgb) {
			snprintf(err, len, "cannot scale the image from %dx%d to %dx%d", sw, sh, w, h);
			av.sws_free_context(sws);
			free(rgb);
			return sws ? ACCEL_ENOMEM : ACCEL_EDATA;
		}
		const uint8_t *in[4] = { src };
		int in_stride[4] = { im->w * 3 };
		uint8_t *dst[4] = { rgb };
		int stride[4] = { w * 3 };
		av.sws_scale(sws, in, in_stride, 0, sh, dst, stride);
		av.sws_free_context(sws);
	}
	/* The pixels: the scaled copy, or the image's own rows. */
	const uint8_t *px = rgb ? rgb : src;
	size_t row = rgb ? (size_t)w * 3 : (size_t)im->w * 3;
	size_t count = (size_t)w * h * 3;
	if (accel_buf_reserve(out, out->len + count * 4) < 0) {
		free(rgb);
		return ACCEL_ENOMEM;
	}
	float *v = (float *)(out->data + out->len);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			for (int c = 0; c < 3; c++) {
				int from = o->bgr ? 2 - c : c;
				float val = ((float)px[(size_t)y * row + (size_t)x * 3 + from] * o->scale - o->mean[c]) / o->std[c];
				size_t at = o->nhwc ? ((size_t)y * w + x) * 3 + c : (size_t)c * w * h + (size_t)y * w + x;
				v[at] = val;
			}
	free(rgb);
	out->len += count * 4;
	t->dtype = ACCEL_DTYPE_FLOAT32;
	t->ndim = 4;
	t->dims[0] = 1;
	t->dims[1] = o->nhwc ? h : 3;
	t->dims[2] = o->nhwc ? w : h;
	t->dims[3] = o->nhwc ? 3 : w;
	return 0;
}

/* "NAME A.B.C" of an AV_VERSION_INT, appended at buf + *n. */
static void av_line(char *buf, size_t len, size_t *n, const char *name, unsigned v)
{
	if (*n < len)
		*n += (size_t)snprintf(buf + *n, len - *n, "%s %u.%u.%u\n", name, AV_VERSION_MAJOR(v),
				       AV_VERSION_MINOR(v), AV_VERSION_MICRO(v));
}

void image_versions(char *buf, size_t len)
{
	if (av_ready()) {
		snprintf(buf, len, "ffmpeg (%s)\n", av_why);
		return;
	}
	size_t n = (size_t)snprintf(buf, len, "ffmpeg %s\n", av.version_info());
	av_line(buf, len, &n, "libavformat", av.avformat_version());
	av_line(buf, len, &n, "libavcodec", av.avcodec_version());
	av_line(buf, len, &n, "libswscale", av.swscale_version());
	av_line(buf, len, &n, "libavutil", av.avutil_version());
}
#else
void image_versions(char *buf, size_t len)
{
	if (len)
		buf[0] = 0;
}

int image_decode(const uint8_t *data, size_t n, struct image *im, char *err, size_t len)
{
	memset(im, 0, sizeof *im);
	snprintf(err, len, "not a .npy array, and this accel-infer was built without FFmpeg's libraries to read images");
	return ACCEL_EDATA;
}

int image_tensor(const struct image *im, const int *box, const struct image_opts *o, struct accel_tensor *t,
		 struct accel_buf *out, char *err, size_t len)
{
	snprintf(err, len, "this accel-infer was built without FFmpeg's libraries to read images");
	return ACCEL_EDATA;
}
#endif
