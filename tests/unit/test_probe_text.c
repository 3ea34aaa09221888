/*
 * test_probe_text.c - what probes read from outside: text sanitised
 * (controls, invalid UTF-8, direction overrides), integers read strictly
 * from sysfs, $ACCEL_PROBE_TIMEOUT's range, and the count of abandoned
 * bounded calls that accel_exit() reads.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "accel.h"

static void check_clean(const char *in, const char *want)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", in);
	accel_text_sanitize(buf);
	assert_string_equal(buf, want);
}

static void sanitize_controls_and_utf8(void **state)
{
	(void)state;
	check_clean("NVIDIA H100", "NVIDIA H100");
	check_clean("", "");
	/* Valid UTF-8 of every length stays. */
	check_clean("Gr\xc3\xa4" "fik \xe2\x82\xac \xf0\x9f\x98\x80", "Gr\xc3\xa4" "fik \xe2\x82\xac \xf0\x9f\x98\x80");
	/* C0 (tab: a space), DEL, C1. */
	check_clean("a\tb\033[31mc\r\nd\x7f", "a b?[31mc??d?");
	check_clean("\xc2\x9b" "2J\xc2\x85", "?2J?");
	check_clean("\xc2\xa0", "\xc2\xa0");
	/* Bytes that start no valid sequence, one '?' each. */
	check_clean("\xff\xfe", "??");
	check_clean("\xc0\xaf", "??");                 /* overlong '/' */
	check_clean("\xe0\x80\xaf", "???");            /* overlong, 3 bytes */
	check_clean("\xed\xa0\x80", "???");            /* a surrogate */
	check_clean("\xf4\x90\x80\x80", "????");       /* above U+10FFFF */
	check_clean("ab\xe2\x82", "ab??");             /* cut at the end */
	check_clean("\xe2\x82x", "??x");               /* cut in the middle */
	/* Direction overrides and line separators. */
	check_clean("\xe2\x80\xaeRLO \xe2\x81\xa6 \xe2\x80\xa8", "?RLO ? ?");
}

static char dir[64];

static void put(const char *name, const char *text)
{
	char path[128];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void sysfs_integers_are_strict(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/accel-test-%d", (int)getpid());
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", dir, dir);
	assert_int_equal(system(cmd), 0);
	long v = 7;
	put("a", "1\n");
	assert_int_equal(accel_sysfs_read_long(dir, &v, "/%s", "a"), 0);
	assert_int_equal(v, 1);
	put("b", "-1\n");
	assert_int_equal(accel_sysfs_read_long(dir, &v, "/%s", "b"), 0);
	assert_int_equal(v, -1);
	put("c", " 12 \n");
	assert_int_equal(accel_sysfs_read_long(dir, &v, "/%s", "c"), 0);
	assert_int_equal(v, 12);
	v = 7;
	static const char *const bad[] = { "abc\n", "", "\n", "12x\n", "-\n", "99999999999999999999999\n", "1 2\n" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		put("d", bad[i]);
		assert_int_equal(accel_sysfs_read_long(dir, &v, "/%s", "d"), -1);
		assert_int_equal(v, 7);
	}
	assert_int_equal(accel_sysfs_read_long(dir, &v, "/%s", "missing"), -1);
	/* The text reader sanitises what it returns. */
	char buf[64];
	put("e", "up\033[5m\xff\nsecond line\n");
	assert_int_equal(accel_sysfs_read(dir, buf, sizeof buf, "/%s", "e"), 7);
	assert_string_equal(buf, "up?[5m?");
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void probe_timeout_range(void **state)
{
	(void)state;
	double s = 0;
	unsetenv("ACCEL_PROBE_TIMEOUT");
	assert_int_equal(accel_probe_timeout(&s), 0);
	assert_true(s == ACCEL_PROBE_TIMEOUT_DEFAULT);
	static const char *const good[] = { "0.001", "2.5", "3600", "1e1" };
	static const double want[] = { 0.001, 2.5, 3600, 10 };
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		setenv("ACCEL_PROBE_TIMEOUT", good[i], 1);
		assert_int_equal(accel_probe_timeout(&s), 0);
		assert_true(s == want[i]);
	}
	static const char *const bad[] = { "inf", "-inf", "1e300", "nan", "-1", "0", "0.0009", "3600.5", "", "abc",
					   "5s", " " };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		setenv("ACCEL_PROBE_TIMEOUT", bad[i], 1);
		assert_int_equal(accel_probe_timeout(&s), ACCEL_EINVAL);
		assert_true(s == ACCEL_PROBE_TIMEOUT_DEFAULT);
	}
	unsetenv("ACCEL_PROBE_TIMEOUT");
}

/* Sleeps *arg milliseconds. */
static int nap(void *arg)
{
	usleep((useconds_t)*(int *)arg * 1000);
	return 0;
}

static void abandoned_calls_are_counted(void **state)
{
	(void)state;
	static int quick = 1, slow = 3000;
	assert_int_equal(accel_abandoned_calls(), 0);
	assert_int_equal(accel_call_bounded(nap, &quick, 2), 0);
	assert_int_equal(accel_abandoned_calls(), 0);
	void *args[3] = { &slow, &quick, &slow };
	int rcs[3];
	assert_int_equal(accel_call_bounded_all(nap, args, 3, 0.05, rcs), 2);
	assert_int_equal(accel_abandoned_calls(), 2);
	/* A deadline too far for a timespec is the default, not a spin. */
	assert_int_equal(accel_call_bounded(nap, &quick, INFINITY), 0);
	assert_int_equal(accel_abandoned_calls(), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sanitize_controls_and_utf8),
		cmocka_unit_test(sysfs_integers_are_strict),
		cmocka_unit_test(probe_timeout_range),
		cmocka_unit_test(abandoned_calls_are_counted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
