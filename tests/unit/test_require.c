/*
 * test_require.c - the --require language (libcore/require.c): parse
 * errors and their messages, numbers with suffixes, versions, words,
 * class.field terms, JSON paths, APIs and CPU flags, the first unmet term
 * and why, and the classes an expression needs probed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <cmocka.h>
#include <accel/report.h>
#include "fake_devices.h"

#define SYNTAX " (NAME[.FIELD][OP VALUE], as gpu>=2, gpu.memory>=40G)"
#define VALUE_IS "VALUE is a number (K, M, G, T suffixes), a version (1.3), true, false, or with == and != a word"

static int setup(void **state)
{
	*state = fake_devices_ctx();
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	accel_ctx_free(*state);
	return 0;
}

/* The error message of a malformed expression. */
static void parse_fails(const char *expr, const char *message)
{
	struct accel_require *req = (struct accel_require *)1;
	char err[1024] = "";
	assert_int_equal(accel_require_parse(expr, &req, err, sizeof err), ACCEL_EINVAL);
	assert_null(req);
	assert_string_equal(err, message);
}

static void test_parse_errors(void **state)
{
	parse_fails("", "empty expression");
	parse_fails("gpu,,cpu", "empty term in 'gpu,,cpu'");
	parse_fails("gpu,", "empty term in 'gpu,'");
	parse_fails(">=2", "'>=2': no NAME" SYNTAX);
	parse_fails(".memory>1", "'.memory>1': no NAME" SYNTAX);
	parse_fails("gpu.", "'gpu.': no FIELD after '.'" SYNTAX);
	parse_fails("gpu.>=2", "'gpu.>=2': no FIELD after '.'" SYNTAX);
	parse_fails("gp$u", "'gp$u': NAME holds letters, digits, '_' and '-' only" SYNTAX);
	parse_fails("gpu!2", "'gpu!2': OP is one of >= <= > < == = !=" SYNTAX);
	parse_fails("gpu>>2", "'gpu>>2': " VALUE_IS SYNTAX);
	parse_fails("gpu>=", "'gpu>=': " VALUE_IS SYNTAX);
	parse_fails("gpu.memory>=40X", "'gpu.memory>=40X': " VALUE_IS SYNTAX);
	parse_fails("gpu.memory>=40GX", "'gpu.memory>=40GX': " VALUE_IS SYNTAX);
	parse_fails("gpu.vendor>NVIDIA", "'gpu.vendor>NVIDIA': " VALUE_IS SYNTAX);
	parse_fails("gpu>=inf", "'gpu>=inf': " VALUE_IS SYNTAX);
	parse_fails("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		    "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa': NAME and FIELD are at most 47 characters each" SYNTAX);

	char many[200] = "gpu";
	for (int i = 1; i < ACCEL_REQUIRE_MAX_TERMS + 1; i++)
		strcat(many, ",gpu");
	parse_fails(many, "33 terms; at most 32 are supported");
	many[strlen(many) - 4] = 0;  /* 32 terms parse */
	struct accel_require *req = NULL;
	char err[64];
	assert_int_equal(accel_require_parse(many, &req, err, sizeof err), 0);
	assert_non_null(req);
	accel_require_free(req);
	accel_require_free(NULL);
}

/* The outcome of expr on the fake devices: "" when met, else why, after
 * "usage: " for a usage error. */
static const char *eval(void **state, const char *expr)
{
	static char why[1024];
	struct accel_require *req = NULL;
	char err[512];
	int rc = accel_require_parse(expr, &req, err, sizeof err);
	if (rc < 0)
		fail_msg("'%s' does not parse: %s", expr, err);
	strcpy(why, "(untouched)");
	rc = accel_require_eval(req, *state, why, sizeof why);
	accel_require_free(req);
	if (rc == 0)
		return "";
	if (rc == ACCEL_EINVAL) {
		static char usage[1100];
		snprintf(usage, sizeof usage, "usage: %s", why);
		return usage;
	}
	assert_int_equal(rc, ACCEL_EUNMET);
	return why;
}

static void test_counts(void **state)
{
	assert_string_equal(eval(state, "gpu"), "");
	assert_string_equal(eval(state, "gpu>=2"), "");
	assert_string_equal(eval(state, "gpu.count==2"), "");
	assert_string_equal(eval(state, "gpu>=3"), "gpu>=3: found 2 gpu devices (software devices do not count)");
	assert_string_equal(eval(state, "gpu<2"), "gpu<2: found 2 gpu devices (software devices do not count)");
	assert_string_equal(eval(state, "cpu=1"), "");
	assert_string_equal(eval(state, "npu"), "npu: found 0 npu devices");
	assert_string_equal(eval(state, "crypto>=1"), "crypto>=1: found 0 crypto devices");
}

static void test_numbers(void **state)
{
	/* Suffixes are powers of 1024; K, KB and KiB alike. */
	assert_string_equal(eval(state, "gpu.memory>=80G"), "");
	assert_string_equal(eval(state, "gpu.memory>=81920MiB"), "");
	assert_string_equal(eval(state, "gpu.memory_bytes>85899345919"), "");
	assert_string_equal(eval(state, "gpu.memory>80G"), "gpu.memory>80G: the best gpu device has 80.0 GiB");
	assert_string_equal(eval(state, "gpu.memory>=0.1P"), "gpu.memory>=0.1P: the best gpu device has 80.0 GiB");
	assert_string_equal(eval(state, "gpu.memory<48G"), "gpu.memory<48G: the best gpu device has 80.0 GiB");
	assert_string_equal(eval(state, "gpu.memory<=48G"), "");
	/* Blanks around a term and after its OP are not part of it. */
	assert_string_equal(eval(state, " gpu>=2 , gpu.memory>= 80G\t"), "");
	assert_string_equal(eval(state, "gpu.compute_units>100"), "");
	assert_string_equal(eval(state, "gpu.compute_units>132"),
			    "gpu.compute_units>132: the best gpu device has compute_units 132");
	assert_string_equal(eval(state, "gpu.compute_units!=132"), "");
	assert_string_equal(eval(state, "gpu.numa_node==1"), "");
	assert_string_equal(eval(state, "gpu.numa_node>1"), "gpu.numa_node>1: the best gpu device has numa_node 1");
	/* true and false are 1 and 0; a property "false" is no. */
	assert_string_equal(eval(state, "gpu.fp64"), "");
	assert_string_equal(eval(state, "gpu.fp64==false"), "");
	assert_string_equal(eval(state, "gpu.software==true"),
			    "gpu.software==true: the best gpu device has software 0");
}

static void test_versions(void **state)
{
	/* Part by part, not as decimals: 1.10 is above 1.3. */
	assert_string_equal(eval(state, "gpu.api_version>=1.3"), "");
	assert_string_equal(eval(state, "gpu.api_version>=1.3.250"), "");
	assert_string_equal(eval(state, "gpu.api_version>=1.3.251"),
			    "gpu.api_version>=1.3.251: no gpu device has api_version>=1.3.251 (gpu0 has 1.3.250)");
	assert_string_equal(eval(state, "gpu.api_version>=1.10"),
			    "gpu.api_version>=1.10: no gpu device has api_version>=1.10 (gpu0 has 1.3.250)");
	assert_string_equal(eval(state, "gpu.api_version<1.3"), "");
	assert_string_equal(eval(state, "gpu.api_version==1.2.170"), "");
	assert_string_equal(eval(state, "gpu.api_version==1.2.170.0"), "");
	assert_string_equal(eval(state, "api_version>=1.3"), "");
	assert_string_equal(eval(state, "api_version>=2"), "api_version>=2: no device meets it (gpu0 has 1.3.250)");
}

static void test_words(void **state)
{
	assert_string_equal(eval(state, "gpu.vendor==nvidia"), "");
	assert_string_equal(eval(state, "gpu.vendor=AMD"), "");
	assert_string_equal(eval(state, "gpu.vendor!=NVIDIA"), "");
	assert_string_equal(eval(state, "gpu.vendor==Intel"), "gpu.vendor==Intel: no gpu device has vendor==Intel (gpu0 has NVIDIA)");
	assert_string_equal(eval(state, "gpu.driver==amdgpu"), "");
	assert_string_equal(eval(state, "gpu.class==gpu"), "");
	assert_string_equal(eval(state, "gpu.id==gpu1"), "");
	assert_string_equal(eval(state, "gpu.pci_address==0000:17:00.0"), "");
	/* A key no device can have is a usage error; a known one that no
	 * device here reports does not hold. */
	assert_string_equal(eval(state, "gpu.nosuch"), "usage: 'gpu.nosuch': unknown field 'nosuch' (fields: id, class, "
			    "vendor, model, driver, pci_address, software, numa_node, memory, count, the keys of cpu and "
			    "properties in --json, API names, CPU flags)");
	assert_string_equal(eval(state, "gpu.vendr==x"), "usage: 'gpu.vendr==x': unknown field 'vendr'; did you mean 'vendor'?");
	assert_string_equal(eval(state, "gpu.mig_mode==x"), "gpu.mig_mode==x: no gpu device reports mig_mode (software devices do not count)");
	assert_string_equal(eval(state, "vendor==Mesa"), "");
	assert_string_equal(eval(state, "driver==kernel"), "");
}

static void test_cpu(void **state)
{
	assert_string_equal(eval(state, "avx2"), "");
	assert_string_equal(eval(state, "avx2,aes"), "");
	assert_string_equal(eval(state, "avx512f"), "avx512f: the CPU lacks avx512f");
	/* Any flag the kernel names: fma is not one of the bits. */
	assert_string_equal(eval(state, "fma"), "fma: the CPU lacks fma");
	assert_string_equal(eval(state, "avx2==0"), "avx2==0: the CPU has avx2");
	assert_string_equal(eval(state, "avx512f==0"), "");
	assert_string_equal(eval(state, "cpu.avx2"), "");
	assert_string_equal(eval(state, "cpu.avx512f"), "cpu.avx512f: no cpu device has avx512f (cpu0 has 0)");
	assert_string_equal(eval(state, "cpu.threads>=8"), "");
	assert_string_equal(eval(state, "cpu.cores>4"), "cpu.cores>4: the best cpu device has cores 4");
	assert_string_equal(eval(state, "cpu.l3_bytes>=32M"), "");
}

static void test_json_paths(void **state)
{
	assert_string_equal(eval(state, "gpu.properties.fp64==true"), "");
	assert_string_equal(eval(state, "gpu.properties.device_file==/dev/nvidia0"), "");
	assert_string_equal(eval(state, "cpu.cpu.threads==8"), "");
	assert_string_equal(eval(state, "cpu.cpu.cache.l3_bytes>=32M"), "");
	assert_string_equal(eval(state, "cpu.cache.l3_bytes>=64M"), "cpu.cache.l3_bytes>=64M: the best cpu device has 32.0 MiB");
	assert_string_equal(eval(state, "gpu.apis.cuda"), "");
	assert_string_equal(eval(state, "gpu.apis.opencl"), "gpu.apis.opencl: no gpu device has apis.opencl (gpu1 has 0)");
	/* After a class, an API is a field without apis. too. */
	assert_string_equal(eval(state, "gpu.cuda"), "");
	assert_string_equal(eval(state, "gpu.opencl"), "gpu.opencl: no gpu device has opencl (gpu1 has 0)");
}

static void test_apis(void **state)
{
	/* Software devices count for an API: they are usable. */
	assert_string_equal(eval(state, "vulkan"), "");
	assert_string_equal(eval(state, "vulkan>=3"), "");
	assert_string_equal(eval(state, "vulkan>=4"), "vulkan>=4: 3 usable vulkan devices");
	assert_string_equal(eval(state, "cuda"), "");
	assert_string_equal(eval(state, "opencl"), "opencl: 0 usable opencl devices: no ICD for this device");
	/* A bundled backend's API that no backend here reports is not met;
	 * a name that is nothing is a usage error. */
	assert_string_equal(eval(state, "qsv"), "qsv: no device offers qsv");
	assert_string_equal(eval(state, "nosuch"), "usage: 'nosuch': unknown name 'nosuch' (a class, a CPU flag as "
			    "/proc/cpuinfo lists it, an API, or a field of a device in --json)");
	assert_string_equal(eval(state, "vulkn"), "usage: 'vulkn': unknown name 'vulkn'; did you mean 'vulkan'?");
	/* A usable video engine on a GPU makes a video device. */
	assert_string_equal(eval(state, "video"), "");
	assert_string_equal(eval(state, "video>=2"), "video>=2: found 1 video device");
	assert_string_equal(eval(state, "nvenc"), "");
}

static void test_first_unmet(void **state)
{
	assert_string_equal(eval(state, "gpu,avx512f,gpu>=9"), "avx512f: the CPU lacks avx512f");
	assert_string_equal(eval(state, "gpu>=9,avx512f"), "gpu>=9: found 2 gpu devices (software devices do not count)");
	assert_string_equal(eval(state, "gpu>=2,avx2,vulkan,gpu.memory>=40G,gpu.vendor==AMD"), "");
	/* why is cut to its length, still terminated. */
	struct accel_require *req;
	char err[64], why[8];
	assert_int_equal(accel_require_parse("avx512f", &req, err, sizeof err), 0);
	assert_int_equal(accel_require_eval(req, *state, why, sizeof why), ACCEL_EUNMET);
	assert_string_equal(why, "avx512f");
	accel_require_free(req);
}

/* Backends that report APIs as the real ones do (cuda and vulkan find
 * GPUs, qat crypto engines, FFmpeg's vaapi video engines), and one with an
 * API no program names, which finds NPUs. */
static const struct accel_api_info gpu_apis[] = { { "vulkan", ACCEL_API_COMPUTE }, { "cuda", ACCEL_API_COMPUTE }, { NULL, 0 } };
static const struct accel_api_info crypto_apis[] = { { "qat", ACCEL_API_CRYPTO }, { NULL, 0 } };
static const struct accel_api_info video_apis[] = { { "vaapi", ACCEL_API_VIDEO }, { NULL, 0 } };
static const struct accel_api_info npu_apis[] = { { "npuapi", ACCEL_API_COMPUTE }, { NULL, 0 } };
static const struct accel_backend class_backends[] = {
	{ .abi = ACCEL_BACKEND_ABI, .name = "g", .probe = fake_devices_probe, .classes = ACCEL_CLASS_BIT(ACCEL_CLASS_GPU), .apis = gpu_apis },
	{ .abi = ACCEL_BACKEND_ABI, .name = "c", .probe = fake_devices_probe, .classes = ACCEL_CLASS_BIT(ACCEL_CLASS_CRYPTO), .apis = crypto_apis },
	{ .abi = ACCEL_BACKEND_ABI, .name = "v", .probe = fake_devices_probe, .classes = ACCEL_CLASS_BIT(ACCEL_CLASS_VIDEO), .apis = video_apis },
	{ .abi = ACCEL_BACKEND_ABI, .name = "n", .probe = fake_devices_probe, .classes = ACCEL_CLASS_BIT(ACCEL_CLASS_NPU), .apis = npu_apis },
};

/* A context with the built-in cpu backend and the first n of class_backends. */
static struct accel_ctx *class_ctx(int n)
{
	unsetenv("ACCEL_BACKEND_PATH");
	struct accel_ctx *ctx = accel_ctx_new();
	assert_non_null(ctx);
	ctx->nbackends = 1;   /* cpu; no plugin of the test binary's folder */
	for (int i = 0; i < n; i++) {
		struct accel_backend_status *s = core_backend_add(ctx, class_backends[i].name, "test_require.c");
		assert_non_null(s);
		s->backend = &class_backends[i];
	}
	return ctx;
}

static unsigned classes_in(struct accel_ctx *ctx, const char *expr)
{
	struct accel_require *req;
	char err[256];
	assert_int_equal(accel_require_parse(expr, &req, err, sizeof err), 0);
	unsigned c = accel_require_classes(req, ctx);
	accel_require_free(req);
	return c;
}

static unsigned classes(const char *expr)
{
	struct accel_ctx *ctx = class_ctx(4);
	unsigned c = classes_in(ctx, expr);
	accel_ctx_free(ctx);
	return c;
}

static void test_classes(void **state)
{
	assert_int_equal(classes("gpu"), 1u << ACCEL_CLASS_GPU);
	assert_int_equal(classes("gpu.memory>=1G,avx2"), (1u << ACCEL_CLASS_GPU) | (1u << ACCEL_CLASS_CPU));
	assert_int_equal(classes("vulkan,cuda"), 1u << ACCEL_CLASS_GPU);
	assert_int_equal(classes("qat"), 1u << ACCEL_CLASS_CRYPTO);
	assert_int_equal(classes("vaapi"), 1u << ACCEL_CLASS_VIDEO);
	/* A field of any device needs every probe. */
	assert_int_equal(classes("vendor==AMD"), (1u << ACCEL_CLASS_COUNT) - 1);
	/* An API's classes are what the backends that report it say, names
	 * no program knows included; with no backend reporting it, every
	 * probe runs. */
	assert_int_equal(classes("npuapi"), 1u << ACCEL_CLASS_NPU);
	assert_int_equal(classes("npuapi,vaapi"), (1u << ACCEL_CLASS_NPU) | (1u << ACCEL_CLASS_VIDEO));
	struct accel_ctx *ctx = class_ctx(1);
	assert_int_equal(classes_in(ctx, "vulkan"), 1u << ACCEL_CLASS_GPU);
	assert_int_equal(classes_in(ctx, "npuapi"), (1u << ACCEL_CLASS_COUNT) - 1);
	assert_int_equal(classes_in(ctx, "qat"), (1u << ACCEL_CLASS_COUNT) - 1);
	accel_ctx_free(ctx);
}

/* A video backend whose probe found nothing: notes about its device type
 * "foo" (the word of its API fooenc) and a reason. */
static int novideo_probe(struct accel_probe *p)
{
	accel_probe_note(p, "Foo 1.0, device types: foo, bar");
	accel_probe_note(p, "bar 0: no such node");
	accel_probe_note(p, "foo 0: cannot load libfoo.so.1");
	return accel_probe_fail(p, "no hardware video engine (foo, bar)");
}

static const struct accel_api_info novideo_apis[] = {
	{ "fooenc", ACCEL_API_VIDEO_ENCODE }, { "bar", ACCEL_API_VIDEO }, { "quux", ACCEL_API_VIDEO_DECODE }, { NULL, 0 },
};
static const struct accel_api_note novideo_notes[] = { { "fooenc", "foo" }, { NULL, NULL } };
static const struct accel_backend novideo_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "novideo", .probe = novideo_probe,
	.classes = ACCEL_CLASS_BIT(ACCEL_CLASS_VIDEO), .priority = 80, .apis = novideo_apis,
	.api_notes = novideo_notes,
};

/* Why an API no device offers is unmet comes from the backend that reports
 * it, whatever its name: its note on the device type, else its reason. */
static void test_unseen_api_reasons(void **state)
{
	struct accel_ctx *ctx = class_ctx(0);
	struct accel_backend_status *s = core_backend_add(ctx, novideo_backend.name, "test_require.c");
	assert_non_null(s);
	s->backend = &novideo_backend;
	accel_discover_classes(ctx, ACCEL_CLASS_ALL);
	void *st = ctx;
	assert_string_equal(eval(&st, "fooenc"), "fooenc: foo 0: cannot load libfoo.so.1");
	assert_string_equal(eval(&st, "bar"), "bar: bar 0: no such node");
	assert_string_equal(eval(&st, "quux"), "quux: no hardware video engine (foo, bar)");
	assert_string_equal(eval(&st, "novideo"), "novideo: no hardware video engine (foo, bar)");
	assert_string_equal(eval(&st, "nosuch"), "usage: 'nosuch': unknown name 'nosuch' (a class, a CPU flag as "
			    "/proc/cpuinfo lists it, an API, or a field of a device in --json)");
	assert_string_equal(eval(&st, "video"), "video: found 0 video devices: no hardware video engine (foo, bar)");
	accel_ctx_free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_unseen_api_reasons),
		cmocka_unit_test_setup_teardown(test_counts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_numbers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_versions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_words, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_paths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apis, setup, teardown),
		cmocka_unit_test_setup_teardown(test_first_unmet, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
