/*
 * hw.c - which hardware device types the stages of a transcode may use,
 * read from the core's registry: the video engines (BACKEND.TYPE:DEVICE,
 * "ffmpeg.cuda:gpu0") that discovery of the video class found, and for a
 * type without one, the reason its probe gave. Software-only devices
 * (lavapipe, PoCL) never count as hardware.
 */
#include <stdio.h>
#include <string.h>
#include "transcode.h"

/* The probe note about device type `type` ("cuda default: Cannot load
 * libcuda.so.1"), or NULL. */
static const char *note_for(const struct accel_ctx *ctx, const char *type)
{
	size_t n = strlen(type);
	for (int b = 0; b < accel_backend_count(ctx); b++) {
		const struct accel_backend_status *s = accel_backend_status(ctx, b);
		for (int k = 0; s && k < s->nnotes; k++)
			if (!strncmp(s->notes[k], type, n) && s->notes[k][n] == ' ')
				return s->notes[k];
	}
	return NULL;
}

/* Whether engine e on device d is the one --device names: a device id
 * ("gpu1") or the device string of its type ("/dev/dri/renderD129", "1"). */
static int device_matches(const struct accel_device *d, const char *type, const char *want)
{
	if (!want)
		return 1;
	char key[48];
	snprintf(key, sizeof key, "%s_device", type);
	const char *v = accel_device_get(d, key);
	return !strcmp(d->id, want) || (v && !strcmp(v, want));
}

static void find_type(struct accel_ctx *ctx, const struct tc_job *job, const char *type, struct tc_hw *h)
{
	memset(h, 0, sizeof *h);
	snprintf(h->type, sizeof h->type, "%s", type);
	for (int i = 0; i < accel_engine_count(ctx); i++) {
		const struct accel_engine *e = accel_engine_at(ctx, i);
		const struct accel_device *d = accel_device_at(ctx, e->device);
		if (strcmp(e->variant, type) || !d)
			continue;
		if (e->software || d->software) {
			snprintf(h->reason, sizeof h->reason, "%s is a software device, not hardware", e->name);
			continue;
		}
		if (!device_matches(d, type, job->device)) {
			snprintf(h->reason, sizeof h->reason, "no %s device matches --device %s", type, job->device);
			continue;
		}
		char key[48];
		snprintf(key, sizeof key, "%s_device", type);
		const char *v = accel_device_get(d, key);
		snprintf(h->engine, sizeof h->engine, "%s", e->name);
		snprintf(h->device, sizeof h->device, "%s", v ? v : "");
		h->usable = 1;
		return;
	}
	if (h->reason[0])
		return;
	const char *note = note_for(ctx, type);
	if (note)
		snprintf(h->reason, sizeof h->reason, "no %s device (%.160s)", type, note);
	else
		snprintf(h->reason, sizeof h->reason, "no %s device: FFmpeg here has no %s support", type, type);
}

int tc_hw_find(struct accel_ctx *ctx, const struct tc_job *job, struct tc_hw *hw, int max)
{
	static const char *const all[] = { "cuda", "vaapi", "qsv" };
	accel_discover_classes(ctx, ACCEL_CLASS_BIT(ACCEL_CLASS_VIDEO));
	int n = 0;
	for (size_t i = 0; i < sizeof all / sizeof all[0] && n < max; i++)
		if (!strcmp(job->hw, "auto") || !strcmp(job->hw, all[i]))
			find_type(ctx, job, all[i], &hw[n++]);
	return n;
}

void tc_sw_engine(const struct accel_ctx *ctx, char *buf, size_t len)
{
	/* The backend that reports the video APIs offers the software
	 * engine too, on the CPU device. */
	const char *b = accel_api_backend(ctx, "vaapi");
	snprintf(buf, len, "software");
	for (int i = 0; b && i < accel_engine_count(ctx); i++) {
		const struct accel_engine *e = accel_engine_at(ctx, i);
		const struct accel_device *d = accel_device_at(ctx, e->device);
		if (d && d->cls == ACCEL_CLASS_CPU && !strcmp(e->backend->name, b) && !e->variant[0]) {
			snprintf(buf, len, "%s", e->name);
			return;
		}
	}
}
