/*
 * test_isolated.c - calls in a child process: the result and the argument
 * come back; an abort, a crash, an exit and a hang are reasons, with what
 * the child printed last; accel_api_survives keeps what an API's start-up
 * did for the rest of the process.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "accel.h"

/* Doubles each of the 4 ints at arg, prints a line, returns 7. */
static int doubles(void *arg)
{
	int *v = arg;
	for (int i = 0; i < 4; i++)
		v[i] *= 2;
	printf("first line\nlast line\n");
	fflush(stdout);
	return 7;
}

static int aborts(void *arg)
{
	(void)arg;
	fprintf(stderr, "Not enough memory to run on this device.\n");
	abort();
}

static int crashes(void *arg)
{
	(void)arg;
	raise(SIGSEGV);
	return 0;
}

static int exits(void *arg)
{
	(void)arg;
	exit(3);
}

static int hangs(void *arg)
{
	(void)arg;
	pause();
	return 0;
}

static int calls;
static int counts(void *arg)
{
	(void)arg;
	calls++;   /* in the child: the parent's count never moves */
	return 0;
}

static void result_and_argument_come_back(void **state)
{
	(void)state;
	int v[4] = { 1, 2, 3, 4 }, rc = 0;
	char why[96] = "", said[64];
	assert_int_equal(accel_call_isolated(NULL, doubles, v, sizeof v, &rc, why, sizeof why, said, sizeof said), 0);
	assert_int_equal(rc, 7);
	assert_int_equal(v[0], 2);
	assert_int_equal(v[3], 8);
	assert_string_equal(said, "last line");
	/* The child's stdout went into the pipe, not into ours. */
	assert_int_equal(fflush(stdout), 0);
}

static void deaths_are_reasons(void **state)
{
	(void)state;
	int rc = 5;
	char why[96], said[64];
	assert_int_equal(accel_call_isolated(NULL, aborts, NULL, 0, &rc, why, sizeof why, said, sizeof said),
			 ACCEL_EDEVICE);
	assert_string_equal(why, "aborted (SIGABRT)");
	assert_string_equal(said, "Not enough memory to run on this device.");
	assert_int_equal(rc, 5);
	assert_int_equal(accel_call_isolated(NULL, crashes, NULL, 0, &rc, why, sizeof why, NULL, 0), ACCEL_EDEVICE);
	assert_string_equal(why, "was killed by SIGSEGV");
	assert_int_equal(accel_call_isolated(NULL, exits, NULL, 0, &rc, why, sizeof why, NULL, 0), ACCEL_EDEVICE);
	assert_string_equal(why, "exited with status 3 without a result");
	setenv("ACCEL_PROBE_TIMEOUT", "0.2", 1);
	double t0 = accel_now();
	assert_int_equal(accel_call_isolated(NULL, hangs, NULL, 0, &rc, why, sizeof why, NULL, 0), ACCEL_EDEVICE);
	assert_true(accel_now() - t0 < 2);
	assert_string_equal(why, "did not answer in time (ACCEL_PROBE_TIMEOUT)");
	unsetenv("ACCEL_PROBE_TIMEOUT");
}

static void outcomes_are_kept_per_api(void **state)
{
	(void)state;
	char why[96] = "";
	int rc;
	/* An API whose start-up aborted in a child stays refused. */
	assert_int_equal(accel_call_isolated("testcl", aborts, NULL, 0, &rc, why, sizeof why, NULL, 0), ACCEL_EDEVICE);
	why[0] = 0;
	assert_int_equal(accel_api_survives("testcl", counts, NULL, why, sizeof why), ACCEL_EDEVICE);
	assert_string_equal(why, "aborted (SIGABRT)");
	/* One that survived is tried once: later calls fork no child. */
	assert_int_equal(accel_api_survives("testvk", counts, NULL, why, sizeof why), 0);
	assert_int_equal(accel_api_survives("testvk", aborts, NULL, why, sizeof why), 0);
	assert_int_equal(calls, 0);
	/* A later failure of the same API replaces the success. */
	assert_int_equal(accel_call_isolated("testvk", crashes, NULL, 0, &rc, why, sizeof why, NULL, 0), ACCEL_EDEVICE);
	assert_int_equal(accel_api_survives("testvk", counts, NULL, why, sizeof why), ACCEL_EDEVICE);
	assert_string_equal(why, "was killed by SIGSEGV");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(result_and_argument_come_back),
		cmocka_unit_test(deaths_are_reasons),
		cmocka_unit_test(outcomes_are_kept_per_api),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
