/*
 * ffmpeg.c - video engines through FFmpeg: which hardware device types
 * libavutil was built with, which of them can be created on this host, and
 * which hardware decoders and encoders libavcodec can open on each.
 *
 * libavutil is loaded at probe time and libavcodec only once a device was
 * created (the plugin links neither), so programs that never ask for video
 * engines pay nothing, and hosts without one little. Each device is tried
 * on a thread of its own, all at once, and waited for at most
 * $ACCEL_PROBE_TIMEOUT seconds together.
 *
 * A video engine on a PCI device (a VA-API render node, a CUDA device) is
 * added with that device's PCI address, so it merges into the GPU the other
 * probes found; the APIs it adds are named after the engine (vaapi, vdpau,
 * qsv, nvdec and nvenc for FFmpeg's cuda type). OpenCL and Vulkan device
 * types serve FFmpeg's filters, not video engines: they are named in the
 * probe's notes and not created (the opencl and vulkan probes list those
 * devices; creating them costs tens of milliseconds for nothing new).
 *
 * Engines: ffmpeg.TYPE:DEVICE on each video device created (ffmpeg.cuda:gpu0,
 * ffmpeg.vaapi:gpu1), whose device records "TYPE_device", the string that
 * opens it again; and ffmpeg:cpu0, FFmpeg's software codecs and filters.
 * They run no stream units (accel-transcode's pipeline opens the FFmpeg
 * codecs on them itself), so the backend lists no operations.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libavcodec/avcodec.h>
#include <libavutil/hwcontext.h>
#include <libavutil/log.h>
#include <libavutil/macros.h>
#include <accel/backend.h>

#define AVUTIL_SONAME "libavutil.so." AV_STRINGIFY(LIBAVUTIL_VERSION_MAJOR)
#define AVCODEC_SONAME "libavcodec.so." AV_STRINGIFY(LIBAVCODEC_VERSION_MAJOR)

#define MAX_TRIES 24
#define MAX_CODECS 32
#define MSG 160

/* The FFmpeg functions we call, looked up at probe time. */
static struct av_api {
	enum AVHWDeviceType (*iterate_types)(enum AVHWDeviceType prev);
	const char *(*type_name)(enum AVHWDeviceType type);
	int (*device_create)(AVBufferRef **ref, enum AVHWDeviceType type, const char *device,
			     AVDictionary *opts, int flags);
	AVBufferRef *(*frames_alloc)(AVBufferRef *device);
	int (*frames_init)(AVBufferRef *frames);
	AVBufferRef *(*buffer_ref)(AVBufferRef *buf);
	void (*buffer_unref)(AVBufferRef **buf);
	int (*strerror)(int err, char *buf, size_t len);
	void (*log_set_callback)(void (*cb)(void *, int, const char *, va_list));
	void (*log_default_callback)(void *, int, const char *, va_list);
	int (*log_get_level)(void);
	void (*log_set_level)(int level);
	const char *(*version_info)(void);
	const AVCodec *(*codec_iterate)(void **opaque);
	int (*is_encoder)(const AVCodec *c);
	const AVCodecHWConfig *(*hw_config)(const AVCodec *c, int i);
	AVCodecContext *(*context_alloc)(const AVCodec *c);
	int (*open)(AVCodecContext *ctx, const AVCodec *c, AVDictionary **opts);
	void (*context_free)(AVCodecContext **ctx);
} av;

/* FFmpeg's messages during one try, kept per thread: the most severe one
 * becomes the reason, and a few verbose lines name the device. */
struct capture {
	int level;            /* level of msg; INT_MAX when none */
	char msg[MSG];
	char detail[MSG];     /* "Intel iHD driver ...", "llvmpipe (LLVM 15)" */
};
static __thread struct capture *capture;

static void trim(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '.'))
		s[--n] = 0;
}

static const char *after(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);
	return strncmp(s, prefix, n) ? NULL : s + n;
}

static void log_callback(void *avcl, int level, const char *fmt, va_list ap)
{
	(void)avcl;
	struct capture *c = capture;
	if (!c || level > AV_LOG_VERBOSE)
		return;
	char line[MSG];
	vsnprintf(line, sizeof line, fmt, ap);
	trim(line);
	if (!line[0])
		return;
	const char *d = after(line, "VAAPI driver: ");
	if (!d)
		d = after(line, "Using device: ");
	/* OpenCL names the device it picked as "0.0: platform / device". */
	if (!d && line[0] >= '0' && line[0] <= '9' && strstr(line, ": ") && strstr(line, " / "))
		d = strstr(line, ": ") + 2;
	if (d && !c->detail[0])
		snprintf(c->detail, sizeof c->detail, "%s", d);
	if (level < c->level) {
		c->level = level;
		snprintf(c->msg, sizeof c->msg, "%s", line);
	}
}

static void capture_reset(struct capture *c)
{
	c->level = INT_MAX;
	c->msg[0] = 0;
}

/* The reason for a failed call: FFmpeg's own message when it gave one. */
static void reason(const struct capture *c, int err, char *buf, size_t len)
{
	if (c->msg[0] && c->level <= AV_LOG_WARNING) {
		snprintf(buf, len, "%s", c->msg);
		return;
	}
	char e[96] = "";
	av.strerror(err, e, sizeof e);
	if (c->msg[0])
		snprintf(buf, len, "%.100s (%.50s)", c->msg, e);
	else
		snprintf(buf, len, "%s", e);
}

/* ------------------------------------------------------------------ tries */

/* One device to try: a type and a device string ("/dev/dri/renderD128"). */
struct try {
	enum AVHWDeviceType type;
	char type_name[16];
	char device[64];      /* empty: FFmpeg's default */
	int video;            /* 1: a video engine type; 0: compute (opencl, vulkan) */
	/* results */
	int done, created;
	char error[MSG];
	struct capture cap;
	char hwaccel[MSG];    /* decoders that use the device through a hwaccel */
	char decoders[MSG];   /* wrapper decoders that opened (h264_cuvid) */
	char encoders[MSG];   /* wrapper encoders that opened (h264_nvenc) */
	char dec_error[MSG], enc_error[MSG]; /* the first that did not, and why */
	int enc_tried;        /* encoders opened or not */
	char pci[16];
};

struct scan {
	int n;
	struct try t[MAX_TRIES];
};

static void append(char *list, size_t len, const char *name)
{
	size_t n = strlen(list);
	if (n + strlen(name) + 2 < len)
		snprintf(list + n, len - n, "%s%s", n ? "," : "", name);
}

/* The codec's configuration for device type `type`, or NULL. */
static const AVCodecHWConfig *config_for(const AVCodec *c, enum AVHWDeviceType type)
{
	for (int i = 0;; i++) {
		const AVCodecHWConfig *h = av.hw_config(c, i);
		if (!h)
			return NULL;
		if (h->device_type == type &&
		    h->methods & (AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX | AV_CODEC_HW_CONFIG_METHOD_HW_FRAMES_CTX))
			return h;
	}
}

/* Open codec c on device `dev` as a 1280x720 30 fps stream; 0 or an AVERROR. */
static int try_open(const AVCodec *c, const AVCodecHWConfig *h, AVBufferRef *dev)
{
	AVCodecContext *ctx = av.context_alloc(c);
	if (!ctx)
		return AVERROR(ENOMEM);
	ctx->width = ctx->coded_width = 1280;
	ctx->height = ctx->coded_height = 720;
	ctx->time_base = (AVRational){ 1, 30 };
	ctx->framerate = (AVRational){ 30, 1 };
	int rc = 0;
	if (av.is_encoder(c) && !(h->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX)) {
		/* Encoders that take only hardware frames (VA-API) need a pool. */
		AVBufferRef *frames = av.frames_alloc(dev);
		if (!frames) {
			rc = AVERROR(ENOMEM);
		} else {
			AVHWFramesContext *fc = (AVHWFramesContext *)frames->data;
			fc->format = h->pix_fmt;
			fc->sw_format = AV_PIX_FMT_NV12;
			fc->width = 1280;
			fc->height = 720;
			fc->initial_pool_size = 4;
			rc = av.frames_init(frames);
			if (rc >= 0)
				ctx->hw_frames_ctx = frames;
			else
				av.buffer_unref(&frames);
		}
		ctx->pix_fmt = h->pix_fmt;
	} else {
		ctx->hw_device_ctx = av.buffer_ref(dev);
		ctx->pix_fmt = av.is_encoder(c) && c->pix_fmts ? c->pix_fmts[0] : h->pix_fmt;
	}
	if (rc >= 0)
		rc = av.open(ctx, c, NULL);
	av.context_free(&ctx);
	return rc;
}

/* Which decoders and encoders work on the device of try t. */
static void try_codecs(struct try *t, AVBufferRef *dev)
{
	void *it = NULL;
	const AVCodec *c;
	int opened = 0;
	while ((c = av.codec_iterate(&it)) && opened < MAX_CODECS) {
		const AVCodecHWConfig *h = config_for(c, t->type);
		if (!h)
			continue;
		int enc = av.is_encoder(c);
		if (!enc && !c->wrapper_name) {
			/* A native decoder with a hwaccel: set up per stream, by
			 * the driver's profiles, so it cannot be opened here. */
			append(t->hwaccel, sizeof t->hwaccel, c->name);
			continue;
		}
		capture_reset(&t->cap);
		opened++;
		int rc = try_open(c, h, dev);
		char *ok = enc ? t->encoders : t->decoders;
		char *bad = enc ? t->enc_error : t->dec_error;
		t->enc_tried += enc;
		if (rc >= 0) {
			append(ok, MSG, c->name);
		} else if (!bad[0]) {
			char why[MSG];
			reason(&t->cap, rc, why, sizeof why);
			snprintf(bad, MSG, "%.30s: %.120s", c->name, why);
		}
	}
}

/* The PCI address of CUDA device `ordinal`, through the libcuda FFmpeg
 * loaded (not loading it ourselves). */
static void cuda_pci(int ordinal, char *buf, size_t len)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!lib)
		return;
	int (*get)(int *dev, int ordinal) = (int (*)(int *, int))dlsym(lib, "cuDeviceGet");
	int (*bus_id)(char *buf, int len, int dev) = (int (*)(char *, int, int))dlsym(lib, "cuDeviceGetPCIBusId");
	int dev;
	char id[32];
	if (get && bus_id && !get(&dev, ordinal) && !bus_id(id, sizeof id, dev)) {
		/* "0000:17:00.0" or with an 8-digit domain: keep 4, lower case. */
		const char *p = strlen(id) > 12 ? id + strlen(id) - 12 : id;
		size_t i = 0;
		for (; p[i] && i + 1 < len; i++)
			buf[i] = (char)(p[i] >= 'A' && p[i] <= 'F' ? p[i] - 'A' + 'a' : p[i]);
		buf[i] = 0;
	}
	dlclose(lib);
}

/* The PCI address behind a DRM node ("/dev/dri/renderD128"), from sysfs. */
static void drm_pci(const char *node, char *buf, size_t len)
{
	const char *base = strrchr(node, '/');
	if (base)
		accel_sysfs_link("", buf, len, "/sys/class/drm/%s/device", base + 1);
}

/* libavcodec, loaded by the first try that created its device. */
static pthread_once_t codec_once = PTHREAD_ONCE_INIT;
static char codec_err[240];

static void load_codec_api(void)
{
	void *c = accel_dlopen(AVCODEC_SONAME, codec_err, sizeof codec_err);
	if (!c)
		return;
#define C(f, n) (*(void **)&av.f = dlsym(c, n))
	int ok = C(codec_iterate, "av_codec_iterate") && C(is_encoder, "av_codec_is_encoder") &&
		 C(hw_config, "avcodec_get_hw_config") &&
		 C(context_alloc, "avcodec_alloc_context3") && C(open, "avcodec_open2") &&
		 C(context_free, "avcodec_free_context");
#undef C
	if (!ok)
		snprintf(codec_err, sizeof codec_err, "%s lacks a function accel needs", AVCODEC_SONAME);
}

/* One try, on a thread of its own (accel_call_bounded_all). */
static int try_run(void *arg)
{
	struct try *t = arg;
	capture = &t->cap;
	capture_reset(&t->cap);
	AVBufferRef *dev = NULL;
	int rc = av.device_create(&dev, t->type, t->device[0] ? t->device : NULL, NULL, 0);
	if (rc < 0) {
		reason(&t->cap, rc, t->error, sizeof t->error);
	} else {
		t->created = 1;
		if (t->type == AV_HWDEVICE_TYPE_CUDA)
			cuda_pci(atoi(t->device), t->pci, sizeof t->pci);
		else if (t->device[0] == '/')
			drm_pci(t->device, t->pci, sizeof t->pci);
		pthread_once(&codec_once, load_codec_api);
		if (codec_err[0])
			snprintf(t->dec_error, sizeof t->dec_error, "%.150s", codec_err);
		else
			try_codecs(t, dev);
		av.buffer_unref(&dev);
	}
	capture = NULL;
	return 0;
}

/* ------------------------------------------------------------------ probe */

static int load_api(char *err, size_t len)
{
	void *u = accel_dlopen(AVUTIL_SONAME, err, len);
	if (!u)
		return -1;
#define U(f, n) (*(void **)&av.f = dlsym(u, n))
	int ok = U(iterate_types, "av_hwdevice_iterate_types") && U(type_name, "av_hwdevice_get_type_name") &&
		 U(device_create, "av_hwdevice_ctx_create") && U(frames_alloc, "av_hwframe_ctx_alloc") &&
		 U(frames_init, "av_hwframe_ctx_init") && U(buffer_ref, "av_buffer_ref") &&
		 U(buffer_unref, "av_buffer_unref") && U(strerror, "av_strerror") &&
		 U(log_set_callback, "av_log_set_callback") && U(log_default_callback, "av_log_default_callback") &&
		 U(log_get_level, "av_log_get_level") && U(log_set_level, "av_log_set_level") &&
		 U(version_info, "av_version_info");
#undef U
	if (!ok)
		snprintf(err, len, "%s lacks a function accel needs", AVUTIL_SONAME);
	return ok ? 0 : -1;
}


static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Add one try per device of this type that can be named: each DRM render
 * node for VA-API, each card for DRM, CUDA ordinals 0..7; else the default. */
static void add_tries(struct scan *s, enum AVHWDeviceType type)
{
	const char *name = av.type_name(type);
	int video = type != AV_HWDEVICE_TYPE_OPENCL && type != AV_HWDEVICE_TYPE_VULKAN;
	const char *prefix = type == AV_HWDEVICE_TYPE_VAAPI ? "renderD" : type == AV_HWDEVICE_TYPE_DRM ? "card" : NULL;
	char devs[8][64];
	int ndev = 0;
	if (prefix) {
		struct dirent **list;
		int n = scandir("/dev/dri", &list, NULL, by_name);
		for (int i = 0; i < n; i++) {
			if (!strncmp(list[i]->d_name, prefix, strlen(prefix)) && ndev < 8)
				snprintf(devs[ndev++], sizeof devs[0], "/dev/dri/%.40s", list[i]->d_name);
			free(list[i]);
		}
		if (n >= 0)
			free(list);
	} else if (type == AV_HWDEVICE_TYPE_CUDA) {
		/* Ordinals past the last device fail fast with "invalid device". */
		int count = 1;
		for (int i = 0; i < 16; i++) {
			char path[32];
			snprintf(path, sizeof path, "/dev/nvidia%d", i);
			if (!access(path, F_OK))
				count = i + 1;
		}
		for (int i = 0; i < count && i < 8; i++)
			snprintf(devs[ndev++], sizeof devs[0], "%d", i);
	}
	if (!ndev)
		devs[ndev++][0] = 0;
	for (int i = 0; i < ndev && s->n < MAX_TRIES; i++) {
		struct try *t = &s->t[s->n];
		t->type = type;
		s->n++;
		t->video = video;
		snprintf(t->type_name, sizeof t->type_name, "%s", name);
		memcpy(t->device, devs[i], sizeof t->device);
		if (!video)
			snprintf(t->error, sizeof t->error, "a compute device type for FFmpeg's filters, not a video "
				 "engine: not created (the %s probe lists its devices)", name);
		else if (prefix && !devs[i][0])
			snprintf(t->error, sizeof t->error, "no /dev/dri/%s* node", prefix);
	}
}

/* The API names a try adds: decode and encode ("nvdec", "nvenc" for cuda). */
static void api_names(const struct try *t, const char **dec, const char **enc)
{
	if (t->type == AV_HWDEVICE_TYPE_CUDA) {
		*dec = "nvdec";
		*enc = "nvenc";
	} else {
		*dec = *enc = t->type_name;
	}
}

/* Turn one created video device into a device record. */
static void add_engine(struct accel_probe *p, const struct try *t)
{
	struct accel_device d;
	char key[48], why[128];
	const char *dec, *enc;
	memset(&d, 0, sizeof d);
	d.cls = ACCEL_CLASS_VIDEO;
	d.numa_node = -1;
	api_names(t, &dec, &enc);
	snprintf(d.pci_address, sizeof d.pci_address, "%s", t->pci);
	if (t->cap.detail[0])
		snprintf(d.model, sizeof d.model, "%.127s", t->cap.detail);
	else if (t->type == AV_HWDEVICE_TYPE_CUDA)
		snprintf(d.model, sizeof d.model, "CUDA device %s", t->device);
	else
		snprintf(d.model, sizeof d.model, "%s device%s%s", t->type_name, t->device[0] ? " " : "", t->device);
	if (t->device[0] == '/')
		accel_device_set(&d, "video_device_file", t->device);
	/* What av_hwdevice_ctx_create takes to open this device again. */
	if (t->device[0]) {
		snprintf(key, sizeof key, "%s_device", t->type_name);
		accel_device_set(&d, key, t->device);
	}
	/* The kernel driver when on PCI (below), else FFmpeg's type. */
	if (!t->pci[0])
		snprintf(d.driver, sizeof d.driver, "%s", t->type_name);
	int decodes = t->hwaccel[0] || t->decoders[0];
	int encodes = t->encoders[0] != 0;
	/* Decoding: hwaccel decoders (checked per stream) and wrappers that opened. */
	const char *dec_why = t->dec_error[0] ? t->dec_error : "no hardware decoder for this device type";
	if (!strcmp(dec, enc)) {
		/* One API both ways (vaapi, qsv): usable when either works. */
		accel_device_add_api(&d, dec, decodes || encodes, decodes || encodes ? NULL : dec_why);
	} else {
		accel_device_add_api(&d, dec, decodes, decodes ? NULL : dec_why);
		if (!t->enc_tried)
			snprintf(why, sizeof why, "no hardware encoder in this FFmpeg");
		else if (decodes && t->type == AV_HWDEVICE_TYPE_CUDA)
			snprintf(why, sizeof why, "NVDEC present but no NVENC: %.90s", t->enc_error);
		else
			snprintf(why, sizeof why, "%.120s", t->enc_error);
		accel_device_add_api(&d, enc, encodes, encodes ? NULL : why);
	}
	if (t->hwaccel[0]) {
		snprintf(key, sizeof key, "%s_hwaccel_decoders", dec);
		accel_device_set(&d, key, t->hwaccel);
	}
	if (t->decoders[0]) {
		snprintf(key, sizeof key, "%s_decoders", dec);
		accel_device_set(&d, key, t->decoders);
	}
	if (t->encoders[0]) {
		snprintf(key, sizeof key, "%s_encoders", enc);
		accel_device_set(&d, key, t->encoders);
	} else if (t->enc_error[0] && !strcmp(dec, enc)) {
		snprintf(key, sizeof key, "%s_encoders", enc);
		accel_device_set(&d, key, "none");
	}
	accel_pci_locality(&d, "");
	int idx = accel_probe_add_device(p, &d);
	/* The engine that decodes, filters and encodes on it: ffmpeg.cuda:gpu0. */
	if (idx >= 0)
		accel_probe_add_engine_variant(p, idx, t->type_name, NULL);
}

static void note_try(struct accel_probe *p, const struct try *t)
{
	const char *dev = t->device[0] ? t->device : "default";
	if (!t->done) {
		accel_probe_note(p, "%s %s: did not answer in time (ACCEL_PROBE_TIMEOUT)", t->type_name, dev);
	} else if (!t->created) {
		accel_probe_note(p, "%s %s: %s", t->type_name, dev, t->error);
	} else {
		accel_probe_note(p, "%s %s: created%s%s; hwaccel decoders: %s; decoders: %s; encoders: %s", t->type_name,
				 dev, t->cap.detail[0] ? ", " : "", t->cap.detail, t->hwaccel[0] ? t->hwaccel : "none",
				 t->decoders[0] ? t->decoders : "none", t->encoders[0] ? t->encoders : "none");
		if (t->dec_error[0])
			accel_probe_note(p, "%s %s: decoder %s", t->type_name, dev, t->dec_error);
		if (t->enc_error[0])
			accel_probe_note(p, "%s %s: encoder %s", t->type_name, dev, t->enc_error);
	}
}


static int ffmpeg_probe(struct accel_probe *p)
{
	/* FFmpeg would open this host's devices, not the recorded tree. */
	if (accel_probe_sysroot(p)[0])
		return accel_probe_fail(p, "not run: ACCEL_SYSROOT is set");
	char err[300];
	if (load_api(err, sizeof err) < 0)
		return accel_probe_fail(p, "%s", err);
	/* FFmpeg's software decoders, filters and encoders: ffmpeg:cpu0. */
	int cpu = accel_probe_cpu_device(p);
	if (cpu >= 0)
		accel_probe_add_engine(p, cpu, NULL);
	/* Kept on the heap and never freed when a try is abandoned. */
	struct scan *s = calloc(1, sizeof *s);
	if (!s)
		return ACCEL_ENOMEM;

	char types[160] = "";
	for (enum AVHWDeviceType t = AV_HWDEVICE_TYPE_NONE; (t = av.iterate_types(t)) != AV_HWDEVICE_TYPE_NONE;) {
		append(types, sizeof types, av.type_name(t));
		add_tries(s, t);
	}
	accel_probe_note(p, "FFmpeg %s, hardware device types compiled in: %s", av.version_info(),
			 types[0] ? types : "none");
	if (!s->n) {
		free(s);
		return accel_probe_fail(p, "FFmpeg was built without hardware device types");
	}

	int level = av.log_get_level();
	av.log_set_callback(log_callback);
	av.log_set_level(AV_LOG_VERBOSE);
	void *args[MAX_TRIES];
	int rcs[MAX_TRIES], idx[MAX_TRIES], n = 0;
	for (int i = 0; i < s->n; i++) {
		if (s->t[i].error[0])
			s->t[i].done = 1;      /* nothing to try: the reason is known */
		else
			idx[n] = i, args[n++] = &s->t[i];
	}
	int abandoned = accel_call_bounded_all(try_run, args, n, 0, rcs);
	if (abandoned < 0) {
		av.log_set_callback(av.log_default_callback);
		av.log_set_level(level);
		free(s);
		return abandoned;
	}
	for (int k = 0; k < n; k++)
		s->t[idx[k]].done = rcs[k] != ACCEL_EDEVICE;
	/* A try still running may yet log: keep our callback for it then. */
	if (!abandoned)
		av.log_set_callback(av.log_default_callback);
	av.log_set_level(level);

	int engines = 0;
	char summary[256] = "";
	for (int i = 0; i < s->n; i++) {
		struct try *t = &s->t[i];
		note_try(p, t);
		if (t->done && t->created && t->video) {
			add_engine(p, t);
			engines++;
		} else if (t->video && !strstr(summary, t->type_name)) {
			size_t used = strlen(summary);
			snprintf(summary + used, sizeof summary - used, "%s%s: %s", used ? "; " : "", t->type_name,
				 t->done ? t->error : "timed out");
		}
	}
	if (!abandoned)
		free(s);
	if (!engines)
		return accel_probe_fail(p, "no hardware video engine (%s)", summary);
	return 0;
}

/* FFmpeg: discovery of video engines, for accel-transcode's stages. */
static const struct accel_api_info ffmpeg_apis[] = {
	{ "nvdec", ACCEL_API_VIDEO_DECODE },
	{ "nvenc", ACCEL_API_VIDEO_ENCODE },
	{ "vaapi", ACCEL_API_VIDEO },
	{ "vdpau", ACCEL_API_VIDEO_DECODE },
	{ "qsv", ACCEL_API_VIDEO },
	{ "drm", ACCEL_API_VIDEO_DECODE },
	{ "videotoolbox", ACCEL_API_VIDEO },
	{ "d3d11va", ACCEL_API_VIDEO_DECODE },
	{ "dxva2", ACCEL_API_VIDEO_DECODE },
	{ "mediacodec", ACCEL_API_VIDEO },
	{ NULL, 0 },
};

/* The notes about nvdec and nvenc devices name FFmpeg's cuda type. */
static const struct accel_api_note ffmpeg_api_notes[] = {
	{ "nvdec", "cuda" },
	{ "nvenc", "cuda" },
	{ NULL, NULL },
};

/* Append "NAME A.B.C" for the AV_VERSION_INT given by the function
 * `sym` of library h ("libavutil" and "avutil_version"). */
static size_t lib_line(void *h, const char *name, const char *sym, char *buf, size_t len)
{
	unsigned (*fn)(void) = (unsigned (*)(void))dlsym(h, sym);
	if (!fn)
		return (size_t)snprintf(buf, len, "%s (no %s)\n", name, sym);
	unsigned v = fn();
	return (size_t)snprintf(buf, len, "%s %u.%u.%u\n", name, AV_VERSION_MAJOR(v), AV_VERSION_MINOR(v),
				AV_VERSION_MICRO(v));
}

/* --version: FFmpeg's release and the two libraries the probe loads, as
 * `ffmpeg -version` names them. */
static void ffmpeg_versions(char *buf, size_t len)
{
	char err[240];
	void *u = accel_dlopen(AVUTIL_SONAME, err, sizeof err);
	if (!u) {
		snprintf(buf, len, "ffmpeg (%s)\n", err);
		return;
	}
	const char *(*info)(void) = (const char *(*)(void))dlsym(u, "av_version_info");
	size_t n = (size_t)snprintf(buf, len, "ffmpeg %s\n", info ? info() : "(no av_version_info)");
	if (n < len)
		n += lib_line(u, "libavutil", "avutil_version", buf + n, len - n);
	void *c = accel_dlopen(AVCODEC_SONAME, err, sizeof err);
	if (n < len)
		n += c ? lib_line(c, "libavcodec", "avcodec_version", buf + n, len - n)
		       : (size_t)snprintf(buf + n, len - n, "libavcodec (%s)\n", err);
}

ACCEL_PLUGIN_EXPORT const struct accel_backend accel_backend_ffmpeg = {
	.abi = ACCEL_BACKEND_ABI,
	.name = "ffmpeg",
	.description = "video engines through FFmpeg (" AVUTIL_SONAME ", " AVCODEC_SONAME ")",
	.ops = NULL,
	.probe = ffmpeg_probe,
	.classes = ACCEL_CLASS_BIT(ACCEL_CLASS_VIDEO),
	.priority = 80,
	.apis = ffmpeg_apis,
	.api_notes = ffmpeg_api_notes,
	.versions = ffmpeg_versions,
};
