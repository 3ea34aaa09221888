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

/* The outcome of expr on the fake devices: "" when met, else why. */
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
	assert_string_equal(eval(state, "gpu.nosuch"), "gpu.nosuch: no gpu device reports nosuch (software devices do not count)");
	assert_string_equal(eval(state, "gpu.nosuch==x"), "gpu.nosuch==x: no gpu device reports nosuch (software devices do not count)");
	assert_string_equal(eval(state, "vendor==Mesa"), "");
	assert_string_equal(eval(state, "driver==kernel"), "");
}

static void test_cpu(void **state)
{
	assert_string_equal(eval(state, "avx2"), "");
	assert_string_equal(eval(state, "avx2,aes"), "");
	assert_string_equal(eval(state, "avx512f"), "avx512f: the CPU lacks avx512f");
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
	assert_string_equal(eval(state, "nosuch"), "nosuch: no device offers nosuch");
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

static unsigned classes(const char *expr)
{
	struct accel_require *req;
	char err[256];
	assert_int_equal(accel_require_parse(expr, &req, err, sizeof err), 0);
	unsigned c = accel_require_classes(req);
	accel_require_free(req);
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
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_classes),
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
