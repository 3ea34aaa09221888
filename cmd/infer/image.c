/*
 * image.c - images as model input: a PNG, JPEG or any still FFmpeg's
 * libraries decode (libavformat probes the format, libavcodec decodes the
 * first frame, libswscale converts it to 8-bit RGB), whole or a box of it
 * (--crops) scaled to the size asked for (libswscale), then each value becomes (v * scale - mean[c]) / std[c] as float32 in NCHW
 * or NHWC order, channels RGB or BGR.
 */
#include <errno.h>
#include <math.h>
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
	AVFormatContext *fmt = avformat_alloc_context();
	uint8_t *iobuf = av_malloc(65536);
	AVIOContext *io = iobuf ? avio_alloc_context(iobuf, 65536, 0, &m, mem_read, NULL, NULL) : NULL;
	AVCodecContext *dec = NULL;
	AVPacket *pkt = av_packet_alloc();
	int rc = ACCEL_EDATA, ret;
	if (!fmt || !io || !pkt) {
		av_free(iobuf);
		rc = ACCEL_ENOMEM;
		goto out;
	}
	fmt->pb = io;
	if ((ret = avformat_open_input(&fmt, NULL, NULL, NULL)) < 0) {
		fmt = NULL;
		snprintf(err, len, "neither a .npy array nor an image FFmpeg can read (%s) at byte offset 0", av_err2str(ret));
		goto out;
	}
	if ((ret = avformat_find_stream_info(fmt, NULL)) < 0) {
		snprintf(err, len, "neither a .npy array nor an image FFmpeg can read (%s) at byte offset 0", av_err2str(ret));
		goto out;
	}
	int si = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
	const AVCodec *codec = si >= 0 ? avcodec_find_decoder(fmt->streams[si]->codecpar->codec_id) : NULL;
	if (!codec || !(dec = avcodec_alloc_context3(codec)) ||
	    avcodec_parameters_to_context(dec, fmt->streams[si]->codecpar) < 0 || avcodec_open2(dec, codec, NULL) < 0) {
		snprintf(err, len, "neither a .npy array nor an image FFmpeg can decode at byte offset 0");
		goto out;
	}
	int got = 0;
	while (!got && av_read_frame(fmt, pkt) >= 0) {
		if (pkt->stream_index == si && avcodec_send_packet(dec, pkt) >= 0)
			got = avcodec_receive_frame(dec, frame) >= 0;
		av_packet_unref(pkt);
	}
	if (!got && avcodec_send_packet(dec, NULL) >= 0)
		got = avcodec_receive_frame(dec, frame) >= 0;
	if (!got)
		snprintf(err, len, "the image has no picture FFmpeg can decode");
	else
		rc = 0;
out:
	av_packet_free(&pkt);
	avcodec_free_context(&dec);
	avformat_close_input(&fmt);
	if (io) {
		av_freep(&io->buffer);
		avio_context_free(&io);
	}
	return rc;
}

int image_decode(const uint8_t *data, size_t n, struct image *im, char *err, size_t len)
{
	memset(im, 0, sizeof *im);
	AVFrame *f = av_frame_alloc();
	if (!f)
		return ACCEL_ENOMEM;
	int rc = decode(data, n, f, err, len);
	if (rc) {
		av_frame_free(&f);
		return rc;
	}
	if ((uint64_t)f->width * (uint64_t)f->height * 12 > INFER_MAX_ARRAY) {
		snprintf(err, len, "image of %dx%d is over the limit of %llu bytes", f->width, f->height,
			 (unsigned long long)INFER_MAX_ARRAY);
		av_frame_free(&f);
		return ACCEL_EDATA;
	}
	struct SwsContext *sws = sws_getContext(f->width, f->height, f->format, f->width, f->height, AV_PIX_FMT_RGB24,
						SWS_BILINEAR | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, NULL, NULL, NULL);
	im->rgb = malloc((size_t)f->width * f->height * 3);
	if (!sws || !im->rgb) {
		snprintf(err, len, "cannot convert the image's pixels (%s) to RGB", av_get_pix_fmt_name(f->format));
		sws_freeContext(sws);
		image_free(im);
		av_frame_free(&f);
		return sws ? ACCEL_ENOMEM : ACCEL_EDATA;
	}
	im->w = f->width;
	im->h = f->height;
	uint8_t *dst[4] = { im->rgb };
	int stride[4] = { im->w * 3 };
	sws_scale(sws, (const uint8_t *const *)f->data, f->linesize, 0, f->height, dst, stride);
	sws_freeContext(sws);
	av_frame_free(&f);
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
		struct SwsContext *sws = sws_getContext(sw, sh, AV_PIX_FMT_RGB24, w, h, AV_PIX_FMT_RGB24,
							SWS_BILINEAR | SWS_ACCURATE_RND, NULL, NULL, NULL);
		rgb = malloc((size_t)w * h * 3);
		if (!sws || !rgb) {
			snprintf(err, len, "cannot scale the image from %dx%d to %dx%d", sw, sh, w, h);
			sws_freeContext(sws);
			free(rgb);
			return sws ? ACCEL_ENOMEM : ACCEL_EDATA;
		}
		const uint8_t *in[4] = { src };
		int in_stride[4] = { im->w * 3 };
		uint8_t *dst[4] = { rgb };
		int stride[4] = { w * 3 };
		sws_scale(sws, in, in_stride, 0, sh, dst, stride);
		sws_freeContext(sws);
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
	size_t n = (size_t)snprintf(buf, len, "ffmpeg %s\n", av_version_info());
	av_line(buf, len, &n, "libavformat", avformat_version());
	av_line(buf, len, &n, "libavcodec", avcodec_version());
	av_line(buf, len, &n, "libswscale", swscale_version());
	av_line(buf, len, &n, "libavutil", avutil_version());
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
