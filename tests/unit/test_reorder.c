/*
 * test_reorder.c - the reorder buffer: units put in any order come out by
 * sequence number; the window bounds what it holds.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "core.h"

#define N 8

static struct accel_unit units[64];

static struct accel_unit *unit(uint64_t seq)
{
	units[seq].seq = seq;
	return &units[seq];
}

static void in_order(void **state)
{
	struct core_reorder r;
	assert_int_equal(core_reorder_init(&r, N), 0);
	assert_null(core_reorder_take(&r));
	for (uint64_t i = 0; i < 40; i++) {
		assert_int_equal(core_reorder_put(&r, unit(i)), 0);
		assert_ptr_equal(core_reorder_take(&r), &units[i]);
		assert_null(core_reorder_take(&r));
	}
	assert_int_equal(r.next, 40);
	core_reorder_free(&r);
}

static void out_of_order(void **state)
{
	struct core_reorder r;
	assert_int_equal(core_reorder_init(&r, N), 0);
	static const uint64_t order[] = { 3, 1, 7, 2, 6, 0, 5, 4 };
	for (size_t i = 0; i < N; i++) {
		assert_int_equal(core_reorder_put(&r, unit(order[i])), 0);
		/* Nothing comes out until 0 is in. */
		if (order[i] != 0 && i < 5)
			assert_null(core_reorder_take(&r));
	}
	for (uint64_t i = 0; i < N; i++)
		assert_ptr_equal(core_reorder_take(&r), &units[i]);
	assert_null(core_reorder_take(&r));
	/* The window slides: 8..15 fit now, reversed. */
	for (uint64_t i = 15; i >= 8; i--)
		assert_int_equal(core_reorder_put(&r, unit(i)), 0);
	for (uint64_t i = 8; i < 16; i++)
		assert_int_equal(core_reorder_take(&r)->seq, i);
	core_reorder_free(&r);
}

static void partial_take(void **state)
{
	struct core_reorder r;
	assert_int_equal(core_reorder_init(&r, N), 0);
	assert_int_equal(core_reorder_put(&r, unit(0)), 0);
	assert_int_equal(core_reorder_put(&r, unit(1)), 0);
	assert_int_equal(core_reorder_put(&r, unit(3)), 0);
	assert_int_equal(core_reorder_take(&r)->seq, 0);
	assert_int_equal(core_reorder_take(&r)->seq, 1);
	assert_null(core_reorder_take(&r));   /* 2 is missing */
	assert_int_equal(r.next, 2);
	assert_int_equal(core_reorder_put(&r, unit(2)), 0);
	assert_int_equal(core_reorder_take(&r)->seq, 2);
	assert_int_equal(core_reorder_take(&r)->seq, 3);
	assert_null(core_reorder_take(&r));
	core_reorder_free(&r);
}

static void window_full(void **state)
{
	struct core_reorder r;
	assert_int_equal(core_reorder_init(&r, N), 0);
	/* next = 0: seq 8 would share slot 0 with seq 0. */
	assert_int_equal(core_reorder_put(&r, unit(N)), ACCEL_EINVAL);
	assert_int_equal(core_reorder_put(&r, unit(N + 5)), ACCEL_EINVAL);
	for (uint64_t i = 1; i < N; i++)
		assert_int_equal(core_reorder_put(&r, unit(i)), 0);
	assert_null(core_reorder_take(&r));
	assert_int_equal(core_reorder_put(&r, unit(0)), 0);
	assert_int_equal(core_reorder_take(&r)->seq, 0);
	/* next = 1: the window is [1, 9). */
	assert_int_equal(core_reorder_put(&r, unit(N)), 0);
	assert_int_equal(core_reorder_put(&r, unit(N + 1)), ACCEL_EINVAL);
	for (uint64_t i = 1; i <= N; i++)
		assert_int_equal(core_reorder_take(&r)->seq, i);
	assert_null(core_reorder_take(&r));
	core_reorder_free(&r);
}

static void duplicates_and_stale(void **state)
{
	struct core_reorder r;
	assert_int_equal(core_reorder_init(&r, N), 0);
	assert_int_equal(core_reorder_put(&r, unit(2)), 0);
	assert_int_equal(core_reorder_put(&r, unit(2)), ACCEL_EINVAL);
	assert_int_equal(core_reorder_put(&r, unit(0)), 0);
	assert_int_equal(core_reorder_take(&r)->seq, 0);
	/* Already written: outside the window. */
	assert_int_equal(core_reorder_put(&r, unit(0)), ACCEL_EINVAL);
	assert_int_equal(core_reorder_put(&r, unit(1)), 0);
	assert_int_equal(core_reorder_take(&r)->seq, 1);
	assert_ptr_equal(core_reorder_take(&r), &units[2]);
	assert_null(core_reorder_take(&r));
	core_reorder_free(&r);
}

static void window_of_one(void **state)
{
	struct core_reorder r;
	assert_int_equal(core_reorder_init(&r, 1), 0);
	assert_int_equal(core_reorder_put(&r, unit(1)), ACCEL_EINVAL);
	assert_int_equal(core_reorder_put(&r, unit(0)), 0);
	assert_int_equal(core_reorder_put(&r, unit(0)), ACCEL_EINVAL);
	assert_int_equal(core_reorder_take(&r)->seq, 0);
	assert_int_equal(core_reorder_put(&r, unit(1)), 0);
	assert_int_equal(core_reorder_take(&r)->seq, 1);
	core_reorder_free(&r);
	assert_null(r.slot);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(in_order),
		cmocka_unit_test(out_of_order),
		cmocka_unit_test(partial_take),
		cmocka_unit_test(window_full),
		cmocka_unit_test(duplicates_and_stale),
		cmocka_unit_test(window_of_one),
	};
	return cmocka_run_group_tests_name("reorder", tests, NULL, NULL);
}
