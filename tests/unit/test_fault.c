/*
 * test_fault.c - the ACCEL_FAULT parser names the bad part of a malformed
 * specification, and accel_fault_check() refuses a rule whose engine names
 * nothing in the context.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <accel/stream.h>
#include "core.h"

static void messages(void **state)
{
	static const struct { const char *spec, *msg; } bad[] = {
		{ "cpu:1,,2", "empty unit number in 'cpu:1,,2'" },
		{ "cpu:,1", "empty unit number in 'cpu:,1'" },
		{ "cpu:1,", "empty unit number in 'cpu:1,'" },
		{ ";", "empty rule in ';'" },
		{ "cpu:1;", "empty rule in 'cpu:1;'" },
		{ "cpu:1;;cpu:2", "empty rule in 'cpu:1;;cpu:2'" },
		{ "cpu", "'cpu' is not ENGINE:UNITS" },
		{ ":3", "empty engine name in ':3'" },
		{ "cpu:", "no unit numbers after ':' in 'cpu:'" },
		{ "cpu:x", "'x' is not a unit number or range (3, 5-7) in 'cpu:x'" },
		{ "cpu:1-", "'1-' is not a unit number or range (3, 5-7) in 'cpu:1-'" },
		{ "cpu:*,1", "'*' is not a unit number or range (3, 5-7) in 'cpu:*,1'" },
		{ "cpu:18446744073709551616", "'18446744073709551616' is not a unit number or range (3, 5-7) in 'cpu:18446744073709551616'" },
		{ "cpu:5-3", "range '5-3' ends before it starts in 'cpu:5-3'" },
		{ "cpu:1;gpu", "'gpu' is not ENGINE:UNITS" },
		{ "a-very-long-backend-name-for-a-test:gpu0:1", "engine name too long in 'a-very-long-backend-name-for-a-test:gpu0:1'" },
		{ "cpu@:1", "empty stage name in 'cpu@:1'" },
		{ "@encode:1", "empty engine name in '@encode:1'" },
		{ "cpu@a-stage-name-too-long:1", "stage name too long in 'cpu@a-stage-name-too-long:1'" },
		{ "cpu:1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17",
		  "more than 16 unit numbers and ranges in 'cpu:1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17'" },
		{ "a:1;a:1;a:1;a:1;a:1;a:1;a:1;a:1;a:1;a:1;a:1;a:1;a:1;a:1;a:1;a:1;a:1", "more than 16 rules" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (core_fault_parse(bad[i].spec) != ACCEL_EINVAL)
			fail_msg("core_fault_parse(\"%s\"): expected ACCEL_EINVAL", bad[i].spec);
		if (strcmp(core_fault_error(), bad[i].msg))
			fail_msg("core_fault_parse(\"%s\"): message \"%s\", expected \"%s\"", bad[i].spec,
				 core_fault_error(), bad[i].msg);
		assert_false(core_fault_hit("cpu", 1));
	}
	assert_int_equal(core_fault_parse("cpu:0,2-3,18446744073709551615"), 0);
	assert_string_equal(core_fault_error(), "");
	assert_true(core_fault_hit("cpu", 3));
	assert_false(core_fault_hit("cpu", 1));
	assert_true(core_fault_hit("cpu", 18446744073709551615ull));
	/* A rule without a stage matches every stage; one with a stage only
	 * that stage, never the stream engine's units (no stage). */
	assert_true(core_fault_hit_stage("cpu", "encode", 3));
	assert_int_equal(core_fault_parse("ffmpeg@encode:4;cpu@decode:1"), 0);
	assert_true(core_fault_hit_stage("ffmpeg:cpu0", "encode", 4));
	assert_true(core_fault_hit_stage("ffmpeg.cuda:gpu0", "encode", 4));
	assert_false(core_fault_hit_stage("ffmpeg:cpu0", "decode", 4));
	assert_false(core_fault_hit_stage("ffmpeg:cpu0", "encode", 3));
	assert_false(core_fault_hit("ffmpeg:cpu0", 4));
	assert_true(core_fault_hit_stage("cpu", "decode", 1));
	assert_false(core_fault_hit_stage("cpu", NULL, 1));
}

static int fb_probe(struct accel_probe *p)
{
	struct accel_device d;
	memset(&d, 0, sizeof d);
	d.cls = ACCEL_CLASS_GPU;
	d.numa_node = -1;
	int dev = accel_probe_add_device(p, &d);
	return dev < 0 || accel_probe_add_engine(p, dev, NULL) < 0 ? ACCEL_ENOMEM : 0;
}
static const char *const fb_ops[] = { "upper", NULL };
static const struct accel_backend fb = { .abi = ACCEL_BACKEND_ABI, .name = "fb", .ops = fb_ops, .probe = fb_probe };
static const struct accel_backend fc = { .abi = ACCEL_BACKEND_ABI, .name = "fc", .ops = fb_ops, .probe = fb_probe };

static void add_backend(struct accel_ctx *ctx, const struct accel_backend *b)
{
	struct accel_backend_status *s = core_backend_add(ctx, b->name, "test_fault.c");
	assert_non_null(s);
	s->backend = b;
}

/* check SPEC: what accel_fault_check says with rules SPEC. */
static const char *check(struct accel_ctx *ctx, const char *spec)
{
	static char err[256];
	assert_int_equal(core_fault_parse(spec), 0);
	err[0] = 0;
	int rc = accel_fault_check(ctx, err, sizeof err);
	assert_true(rc == 0 ? !err[0] : rc == ACCEL_EINVAL && err[0]);
	return err;
}

static void unknown_engines(void **state)
{
	unsetenv("ACCEL_FAULT");
	unsetenv("ACCEL_BACKEND_PATH");
	assert_int_equal(core_fault_status(), 0);
	struct accel_ctx *ctx = accel_ctx_new();
	assert_non_null(ctx);
	add_backend(ctx, &fb);
	add_backend(ctx, &fc);
	assert_int_equal(accel_probe_backend(ctx, "fb"), 0);   /* engine fb:gpu0 */
	assert_string_equal(check(ctx, "cpu:1"), "");
	assert_string_equal(check(ctx, "fb:1;fc:2"), "");
	assert_string_equal(check(ctx, "fb:gpu0:1"), "");
	assert_string_equal(check(ctx, "fb:gpu0@encode:1"), "");
	assert_string_equal(check(ctx, "fb:gpu1@encode:1"),
			    "ACCEL_FAULT: no engine or backend named 'fb:gpu1' (see accel(7), TESTING)");
	/* fc is not probed yet: any device of it may appear */
	assert_string_equal(check(ctx, "fc:gpu7:1"), "");
	assert_string_equal(check(ctx, "fb:gpu1:1"),
			    "ACCEL_FAULT: no engine or backend named 'fb:gpu1' (see accel(7), TESTING)");
	assert_string_equal(check(ctx, "cpu:1;vulkna:2"),
			    "ACCEL_FAULT: no engine or backend named 'vulkna' (see accel(7), TESTING)");
	assert_string_equal(check(ctx, "f:2"), "ACCEL_FAULT: no engine or backend named 'f' (see accel(7), TESTING)");
	assert_string_equal(check(ctx, ""), "");
	accel_ctx_free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(messages),
		cmocka_unit_test(unknown_engines),
	};
	return cmocka_run_group_tests_name("fault", tests, NULL, NULL);
}
