/*
 * test_bounded.c - bounded calls: results of the calls that return in
 * time, ACCEL_EDEVICE for the ones that do not, and all of them at once
 * (the wait is one deadline, not one per call).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>
#include "accel.h"

/* Sleeps *arg milliseconds, then returns -*arg. */
static int nap(void *arg)
{
	int ms = *(int *)arg;
	usleep((useconds_t)ms * 1000);
	return -ms;
}

static void late_calls_are_abandoned(void **state)
{
	(void)state;
	/* Static: the abandoned call still reads its argument. */
	static int ms[3] = { 1, 2000, 30 };
	void *args[3] = { &ms[0], &ms[1], &ms[2] };
	int rcs[3];
	assert_int_equal(accel_call_bounded_all(nap, args, 3, 0.3, rcs), 1);
	assert_int_equal(rcs[0], -1);
	assert_int_equal(rcs[1], ACCEL_EDEVICE);
	assert_int_equal(rcs[2], -30);
}

/* Arrives, then waits (up to 3 s) for all 4 calls to have arrived:
 * returns 0 when they did, which only calls running at once can do. */
static int arrived;
static int meet(void *arg)
{
	(void)arg;
	__atomic_add_fetch(&arrived, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; i < 3000 && __atomic_load_n(&arrived, __ATOMIC_SEQ_CST) < 4; i++)
		usleep(1000);
	return __atomic_load_n(&arrived, __ATOMIC_SEQ_CST) == 4 ? 0 : -1;
}

static void calls_run_at_once(void **state)
{
	(void)state;
	void *args[4] = { NULL, NULL, NULL, NULL };
	int rcs[4];
	assert_int_equal(accel_call_bounded_all(meet, args, 4, 10, rcs), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(rcs[i], 0);
	static int ms = 5;
	assert_int_equal(accel_call_bounded(nap, &ms, 5), -5);
	assert_int_equal(accel_call_bounded_all(nap, NULL, 0, 5, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(late_calls_are_abandoned),
		cmocka_unit_test(calls_run_at_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
