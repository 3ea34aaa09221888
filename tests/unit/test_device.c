/*
 * test_device.c - the device model: one record per physical device (merged
 * by PCI address, video engines into their GPU), ids numbered per class,
 * and the notes a probe leaves for accel-detect -v.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "core.h"

static struct accel_device dev(enum accel_device_class cls, const char *pci, const char *model, const char *api)
{
	struct accel_device d;
	memset(&d, 0, sizeof d);
	d.cls = cls;
	d.numa_node = -1;
	snprintf(d.pci_address, sizeof d.pci_address, "%s", pci);
	snprintf(d.model, sizeof d.model, "%s", model);
	accel_device_add_api(&d, api, 1, NULL);
	return d;
}

/* A GPU seen by Vulkan and by FFmpeg's VA-API, a NIC, and a video engine
 * with no PCI address. */
static int gpu_probe(struct accel_probe *p)
{
	struct accel_device d = dev(ACCEL_CLASS_GPU, "0000:03:00.0", "Radeon", "vulkan");
	d.memory_bytes = 8ull << 30;
	assert_int_equal(accel_probe_add_device(p, &d), 0);
	return 0;
}

static int video_probe(struct accel_probe *p)
{
	struct accel_device d = dev(ACCEL_CLASS_VIDEO, "0000:03:00.0", "Mesa Gallium driver", "vaapi");
	accel_device_set(&d, "vaapi_encoders", "h264_vaapi,hevc_vaapi");
	assert_int_equal(accel_probe_add_device(p, &d), 0);
	d = dev(ACCEL_CLASS_VIDEO, "", "V4L2 mem2mem", "v4l2m2m");
	assert_int_equal(accel_probe_add_device(p, &d), 1);
	/* A NIC never merges into a GPU, even with a clashing address. */
	d = dev(ACCEL_CLASS_NIC, "0000:03:00.0", "eth0", "pcap");
	assert_int_equal(accel_probe_add_device(p, &d), 2);
	for (int i = 0; i < ACCEL_MAX_NOTES + 3; i++)
		accel_probe_note(p, "note %d", i);
	return 0;
}

static const struct accel_backend gpu_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "fakegpu", .description = "fake", .probe = gpu_probe,
};
static const struct accel_backend video_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "fakevideo", .description = "fake", .probe = video_probe,
};

static struct accel_ctx *new_ctx(void)
{
	unsetenv("ACCEL_BACKEND_PATH");
	struct accel_ctx *ctx = accel_ctx_new();
	assert_non_null(ctx);
	ctx->nbackends = 0;
	const struct accel_backend *b[] = { &gpu_backend, &video_backend };
	for (int i = 0; i < 2; i++) {
		struct accel_backend_status *s = core_backend_add(ctx, b[i]->name, "test_device.c");
		assert_non_null(s);
		s->backend = b[i];
	}
	return ctx;
}

static void video_engine_merges_into_its_gpu(void **state)
{
	(void)state;
	struct accel_ctx *ctx = new_ctx();
	assert_int_equal(accel_probe_backend(ctx, "fakegpu"), 0);
	assert_int_equal(accel_probe_backend(ctx, "fakevideo"), 0);
	assert_int_equal(accel_device_count(ctx), 3);
	const struct accel_device *g = accel_device_at(ctx, 0);
	assert_string_equal(g->id, "gpu0");
	assert_int_equal(g->cls, ACCEL_CLASS_GPU);
	assert_string_equal(g->model, "Radeon");   /* the first probe names it */
	assert_int_equal(g->napis, 2);
	assert_string_equal(g->apis[1].name, "vaapi");
	assert_string_equal(accel_device_get(g, "vaapi_encoders"), "h264_vaapi,hevc_vaapi");
	assert_string_equal(accel_device_at(ctx, 1)->id, "video0");
	assert_string_equal(accel_device_at(ctx, 2)->id, "nic0");
	accel_ctx_free(ctx);
}

static void notes_are_kept_up_to_the_limit(void **state)
{
	(void)state;
	struct accel_ctx *ctx = new_ctx();
	accel_probe_backend(ctx, "fakevideo");
	const struct accel_backend_status *s = accel_backend_status(ctx, 1);
	assert_int_equal(s->nnotes, ACCEL_MAX_NOTES);
	assert_string_equal(s->notes[0], "note 0");
	assert_string_equal(s->notes[ACCEL_MAX_NOTES - 1], "note 23");
	assert_int_equal(accel_backend_status(ctx, 0)->nnotes, 0);
	accel_ctx_free(ctx);
}

/* A cpuinfo flags line: whole words of flag characters, each kept once in
 * the order first seen, until features[] is full; known flags set bits. */
static void features_keep_each_flag_once(void **state)
{
	(void)state;
	struct accel_device d;
	memset(&d, 0, sizeof d);
	accel_device_set_features(&d, "flags\t\t: avx2 sse4_2 avx2 a-b avx sse4_2 avx5 avx\n");
	assert_string_equal(d.features, "avx2 sse4_2 avx avx5");
	assert_true(accel_device_has_flag(&d, "avx2"));
	assert_true(accel_device_has_flag(&d, "avx"));
	assert_false(accel_device_has_flag(&d, "avx512f"));
	assert_false(accel_device_has_flag(&d, "a-b"));
	assert_int_equal(d.flags, accel_cpu_flags_parse("avx2 sse4_2 avx"));

	/* Words of one letter, each twice: the set holds every word that
	 * fits, and nothing past the buffer's end. */
	static char line[20000];  /* 2 x 7890 bytes */
	size_t n = 0;
	for (int r = 0; r < 2; r++)
		for (int i = 0; i < 1500; i++) {
			n += (size_t)snprintf(line + n, sizeof line - n, "f%d ", i);
			assert_true(n < sizeof line);
		}
	accel_device_set_features(&d, line);
	size_t len = strlen(d.features);
	assert_true(len < sizeof d.features);
	assert_true(len > sizeof d.features - 8);
	assert_memory_equal(d.features, "f0 f1 f2 ", 9);
	assert_null(strstr(d.features, "f1 f1 "));
	/* f0 .. fK, each once, in order: K + 1 words, the last one fK. */
	size_t words = 1;
	for (const char *c = d.features; *c; c++)
		words += *c == ' ';
	char last[16];
	snprintf(last, sizeof last, "f%zu", words - 1);
	assert_string_equal(strrchr(d.features, ' ') + 1, last);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(video_engine_merges_into_its_gpu),
		cmocka_unit_test(notes_are_kept_up_to_the_limit),
		cmocka_unit_test(features_keep_each_flag_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
