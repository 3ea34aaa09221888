/*
 * test_report.c - the report interface (libcore/report.c): one device list
 * rendered as JSON parses back with the keys accel.h documents, as the
 * table, as gres.conf lines and NFD labels; the class filter; text from
 * drivers sanitised.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <accel/cli.h>
#include <accel/report.h>
#include "fake_devices.h"

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

/* The fake devices (and their probes, with `probes`) through one format;
 * the text, to free. */
static char *render(struct accel_ctx *ctx, const struct accel_report_opts *o, int probes,
		    const struct accel_route *route)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	struct accel_report *r = accel_report_new(f, o);
	assert_non_null(r);
	assert_int_equal(accel_report_begin(r, ctx), 0);
	for (int i = 0; i < accel_device_count(ctx); i++)
		assert_int_equal(accel_report_device(r, accel_device_at(ctx, i)), 0);
	if (route)
		assert_int_equal(accel_report_route(r, route), 0);
	if (probes)
		assert_int_equal(accel_report_probes(r, ctx), 0);
	assert_int_equal(accel_report_end(r), 0);
	fclose(f);
	return text;
}

static const char *keys(const cJSON *o)
{
	static char buf[512];
	buf[0] = 0;
	for (const cJSON *c = o->child; c; c = c->next)
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", buf[0] ? "," : "", c->string);
	return buf;
}

static const cJSON *get(const cJSON *o, const char *key)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!j)
		fail_msg("no key %s", key);
	return j;
}

static void test_json(void **state)
{
	struct accel_ctx *ctx = *state;
	/* A route as the router leaves it: one engine ranked, one left out. */
	struct accel_route route = { .op = "zstd.compress", .n = 2, .nranked = 1 };
	route.entries[0] = (struct accel_route_entry){ .name = "fakedev:gpu0", .usable = 1, .mbps = 1234.4,
						       .reason = "prior 1234 MB/s" };
	route.entries[1] = (struct accel_route_entry){ .name = "cpu", .reason = "left out: \033[31mred" };
	struct accel_report_opts o = { .format = ACCEL_REPORT_JSON, .routes = 1, .started = accel_now() };
	char *text = render(ctx, &o, 1, &route);
	cJSON *root = cJSON_Parse(text);
	assert_non_null(root);
	assert_string_equal(keys(root), "schema_version,host,devices,routes,probes,seconds");
	assert_int_equal(get(root, "schema_version")->valuedouble, ACCEL_REPORT_SCHEMA_VERSION);
	assert_string_equal(keys(get(root, "host")), "hostname,kernel,sysroot,accel_version");
	assert_true(cJSON_IsNull(get(get(root, "host"), "sysroot")));
	assert_true(cJSON_IsNumber(get(root, "seconds")) && get(root, "seconds")->valuedouble >= 0);

	const cJSON *devs = get(root, "devices");
	assert_int_equal(cJSON_GetArraySize(devs), 4);
	const cJSON *cpu = cJSON_GetArrayItem(devs, 0), *gpu = cJSON_GetArrayItem(devs, 1);
	assert_string_equal(keys(cpu), "id,class,vendor,model,driver,software,pci_address,numa_node,memory_bytes,apis,cpu,properties");
	assert_string_equal(keys(gpu), "id,class,vendor,model,driver,software,pci_address,numa_node,memory_bytes,apis,properties");
	assert_string_equal(keys(get(cpu, "cpu")), "packages,cores,threads,numa_nodes,cache,flags");
	assert_int_equal(get(get(get(cpu, "cpu"), "cache"), "l3_bytes")->valuedouble, 32 << 20);
	char *flags = cJSON_PrintUnformatted(get(get(cpu, "cpu"), "flags"));
	assert_string_equal(flags, "[\"aes\",\"avx2\"]");
	free(flags);
	assert_true(cJSON_IsNull(get(cpu, "pci_address")));
	assert_true(cJSON_IsNull(get(cpu, "numa_node")));
	assert_true(cJSON_IsNull(get(cpu, "memory_bytes")));

	assert_string_equal(get(gpu, "id")->valuestring, "gpu0");
	assert_string_equal(get(gpu, "class")->valuestring, "gpu");
	assert_string_equal(get(gpu, "vendor")->valuestring, "NVIDIA");
	assert_true(cJSON_IsFalse(get(gpu, "software")));
	assert_true(get(gpu, "memory_bytes")->valuedouble == 80 * GiB);
	assert_int_equal(get(gpu, "numa_node")->valueint, 0);
	const cJSON *api = cJSON_GetArrayItem(get(gpu, "apis"), 0);
	assert_string_equal(keys(api), "name,ok,reason");
	assert_string_equal(get(api, "name")->valuestring, "vulkan");
	assert_true(cJSON_IsTrue(get(api, "ok")) && cJSON_IsNull(get(api, "reason")));
	const cJSON *props = get(gpu, "properties");
	assert_true(cJSON_IsTrue(get(props, "fp64")));
	assert_int_equal(get(props, "compute_units")->valueint, 132);
	assert_string_equal(get(props, "api_version")->valuestring, "1.3.250");
	const cJSON *amd = cJSON_GetArrayItem(devs, 2);
	const cJSON *ocl = cJSON_GetArrayItem(get(amd, "apis"), 1);
	assert_true(cJSON_IsFalse(get(ocl, "ok")));
	assert_string_equal(get(ocl, "reason")->valuestring, "no ICD for this device");
	assert_true(cJSON_IsTrue(get(cJSON_GetArrayItem(devs, 3), "software")));

	const cJSON *r = cJSON_GetArrayItem(get(root, "routes"), 0);
	assert_string_equal(keys(r), "operation,forced,engines");
	assert_string_equal(get(r, "operation")->valuestring, "zstd.compress");
	const cJSON *e = cJSON_GetArrayItem(get(r, "engines"), 0);
	assert_string_equal(keys(e), "rank,name,usable,expected_mbps,reason");
	assert_int_equal(get(e, "rank")->valueint, 1);
	assert_string_equal(get(e, "name")->valuestring, "fakedev:gpu0");
	assert_true(cJSON_IsTrue(get(e, "usable")));
	assert_int_equal(get(e, "expected_mbps")->valueint, 1234);
	e = cJSON_GetArrayItem(get(r, "engines"), 1);
	assert_true(cJSON_IsNull(get(e, "rank")) && cJSON_IsNull(get(e, "expected_mbps")));
	assert_string_equal(get(e, "reason")->valuestring, "left out: ?[31mred");

	const cJSON *probes = get(root, "probes");
	const cJSON *fake = cJSON_GetArrayItem(probes, cJSON_GetArraySize(probes) - 1);
	assert_string_equal(keys(fake), "name,origin,probed,ok,reason,seconds,notes");
	assert_string_equal(get(fake, "name")->valuestring, "fakedev");
	assert_true(cJSON_IsTrue(get(fake, "probed")) && cJSON_IsTrue(get(fake, "ok")));
	cJSON_Delete(root);
	free(text);

	/* Without routes, no "routes" key; an empty one with them. */
	o.routes = 0;
	text = render(ctx, &o, 1, NULL);
	root = cJSON_Parse(text);
	assert_string_equal(keys(root), "schema_version,host,devices,probes,seconds");
	cJSON_Delete(root);
	free(text);
	o.routes = 1;
	text = render(ctx, &o, 1, NULL);
	root = cJSON_Parse(text);
	assert_int_equal(cJSON_GetArraySize(get(root, "routes")), 0);
	cJSON_Delete(root);
	free(text);
}

static void test_classes(void **state)
{
	struct accel_ctx *ctx = *state;
	/* video: the GPU holding a video engine, and only it. */
	struct accel_report_opts o = { .format = ACCEL_REPORT_JSON, .classes = 1u << ACCEL_CLASS_VIDEO };
	char *text = render(ctx, &o, 0, NULL);
	cJSON *root = cJSON_Parse(text);
	const cJSON *devs = get(root, "devices");
	assert_int_equal(cJSON_GetArraySize(devs), 1);
	assert_string_equal(get(cJSON_GetArrayItem(devs, 0), "model")->valuestring, "NVIDIA H100 80GB HBM3");
	cJSON_Delete(root);
	free(text);
	/* ... under "Video engines" in the table. */
	o.format = ACCEL_REPORT_TABLE;
	text = render(ctx, &o, 0, NULL);
	assert_string_equal(text, "Video engines\n"
				  "  gpu0     NVIDIA H100 80GB HBM3\n"
				  "           vendor NVIDIA, driver nvidia, memory 80.0 GiB, pci 0000:03:00.0, numa 0\n"
				  "           apis: vulkan cuda nvenc\n"
				  "           device_file: /dev/nvidia0\n");
	free(text);
}

static void test_table(void **state)
{
	struct accel_ctx *ctx = *state;
	struct accel_report_opts o = { .format = ACCEL_REPORT_TABLE, .classes = (1u << ACCEL_CLASS_GPU) };
	char *text = render(ctx, &o, 1, NULL);
	assert_string_equal(text, "GPU\n"
				  "  gpu0     NVIDIA H100 80GB HBM3\n"
				  "           vendor NVIDIA, driver nvidia, memory 80.0 GiB, pci 0000:03:00.0, numa 0\n"
				  "           apis: vulkan cuda nvenc\n"
				  "           device_file: /dev/nvidia0\n"
				  "  gpu1     Radeon Pro W7900\n"
				  "           vendor AMD, driver amdgpu, memory 48.0 GiB, pci 0000:17:00.0, numa 1\n"
				  "           apis: vulkan opencl (no ICD for this device)\n"
				  "  gpu2     llvmpipe (LLVM 15.0.6, 256 bits)  [software]\n"
				  "           vendor Mesa\n"
				  "           apis: vulkan\n");
	free(text);
	/* Colours, -v: every property and the probes. */
	o.color = 1;
	o.verbose = 1;
	o.classes = 1u << ACCEL_CLASS_CPU;
	text = render(ctx, &o, 1, NULL);
	assert_non_null(strstr(text, "\033[1mCPU\033[0m\n  \033[1mcpu0    \033[0m Fake CPU 9000\n"));
	assert_non_null(strstr(text, "           1 package, 4 cores, 8 threads, 1 NUMA node, L3 32.0 MiB\n"
				     "           features: aes avx2\n"));
	assert_non_null(strstr(text, "\033[1mProbes\033[0m\n"));
	assert_non_null(strstr(text, "  fakedev  \033[32mok        \033[0m"));
	assert_non_null(strstr(text, " ms  fake devices for the tests\n"));
	free(text);
}

static void test_gres_nfd(void **state)
{
	struct accel_ctx *ctx = *state;
	struct accel_report_opts o = { .format = ACCEL_REPORT_GRES, .prog = "test-report" };
	char *text = render(ctx, &o, 1, NULL);
	assert_string_equal(text, "# gres.conf for this node, written by test-report " ACCEL_VERSION " (2 GPUs)\n"
				  "Name=gpu Type=h100 File=/dev/nvidia0\n"
				  "Name=gpu Type=w7900\n");
	free(text);
	o.format = ACCEL_REPORT_NFD;
	o.classes = (1u << ACCEL_CLASS_CPU) | (1u << ACCEL_CLASS_GPU);
	text = render(ctx, &o, 1, NULL);
	assert_string_equal(text, "# Node Feature Discovery features, written by test-report " ACCEL_VERSION "\n"
				  "accel.example/cpu-aes=true\n"
				  "accel.example/cpu-avx2=true\n"
				  "accel.example/gpu.model=NVIDIA-H100-80GB-HBM3\n"
				  "accel.example/gpu.memory-bytes=85899345920\n"
				  "accel.example/gpu.api-vulkan=true\n"
				  "accel.example/gpu.api-cuda=true\n"
				  "accel.example/gpu.api-nvenc=true\n"
				  "accel.example/gpu.count=2\n");
	free(text);
}

/* A model with control characters and a direction override is printed
 * with '?' in their place, in the table and the JSON. */
static void test_sanitized(void **state)
{
	struct accel_ctx *ctx = *state;
	core_strlcpy(ctx->devices[1].model, "evil\033[2J\xe2\x80\xaemodel", sizeof ctx->devices[1].model);
	struct accel_report_opts o = { .format = ACCEL_REPORT_JSON, .classes = 1u << ACCEL_CLASS_GPU };
	char *text = render(ctx, &o, 0, NULL);
	cJSON *root = cJSON_Parse(text);
	assert_string_equal(get(cJSON_GetArrayItem(get(root, "devices"), 0), "model")->valuestring, "evil?[2J?model");
	cJSON_Delete(root);
	free(text);
}

/* accel_report_run: a run's statistics as a "runs" entry with the keys
 * accel.h documents, and as -v's text lines after "PROG: INPUT: ". */
static void test_runs(void **state)
{
	struct accel_stream_stats s = {
		.units = 5, .bytes_in = 5000, .bytes_out = 1200, .seconds = 0.25, .nengines = 2,
		.units_in_flight = 4, .unit_bytes = 2048, .retried = 1,
	};
	snprintf(s.engines[0].name, sizeof s.engines[0].name, "cpu");
	s.engines[0].units = 5;
	s.engines[0].workers = 2;
	s.engines[0].retried = 1;
	snprintf(s.engines[1].name, sizeof s.engines[1].name, "test:other0");
	s.engines[1].failures = 1;
	s.engines[1].dropped = 1;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct accel_report_opts o = { .format = ACCEL_REPORT_JSON, .prog = "prog" };
	struct accel_report *r = accel_report_new(f, &o);
	assert_int_equal(accel_report_begin(r, *state), 0);
	assert_int_equal(accel_report_run(r, "in\x01put", &s), 0);
	s.units = 7;
	assert_int_equal(accel_report_run(r, "second", &s), 0);
	assert_int_equal(accel_report_end(r), 0);
	fclose(f);
	cJSON *j = cJSON_Parse(text);
	assert_non_null(j);
	const cJSON *runs = get(j, "runs");
	assert_int_equal(cJSON_GetArraySize(runs), 2);
	const cJSON *r0 = cJSON_GetArrayItem(runs, 0);
	assert_string_equal(keys(r0), "input,units,serial_regions,bytes_in,bytes_out,seconds,retried,"
				      "units_in_flight,unit_bytes,memory_limit,engines");
	assert_string_equal(get(r0, "input")->valuestring, "in?put");  /* sanitised */
	assert_int_equal(get(r0, "units")->valueint, 5);
	assert_int_equal(get(cJSON_GetArrayItem(runs, 1), "units")->valueint, 7);
	assert_true(cJSON_IsNull(get(r0, "memory_limit")));
	const cJSON *e1 = cJSON_GetArrayItem(get(r0, "engines"), 1);
	assert_string_equal(keys(e1), "name,workers,units,bytes_in,bytes_out,busy_seconds,failures,retried,dropped");
	assert_string_equal(get(e1, "name")->valuestring, "test:other0");
	assert_true(cJSON_IsTrue(get(e1, "dropped")));
	cJSON_Delete(j);
	free(text);

	text = NULL;
	f = open_memstream(&text, &len);
	o.format = ACCEL_REPORT_TABLE;
	r = accel_report_new(f, &o);
	assert_int_equal(accel_report_begin(r, *state), 0);
	assert_int_equal(accel_report_run(r, "in", &s), 0);
	assert_int_equal(accel_report_end(r), 0);
	fclose(f);
	assert_memory_equal(text, "prog: in: 7 units, 5000 bytes in, 1200 bytes out in 0.250 s", 59);
	assert_non_null(strstr(text, "\n  test:other0      workers 0, units 0,"));
	assert_non_null(strstr(text, ", dropped\n"));
	free(text);
}

static void test_misuse(void **state)
{
	struct accel_report_opts o = { .format = 99 };
	assert_null(accel_report_new(stdout, &o));
	assert_int_equal(accel_report_end(NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_classes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gres_nfd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sanitized, setup, teardown),
		cmocka_unit_test_setup_teardown(test_runs, setup, teardown),
		cmocka_unit_test(test_misuse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
