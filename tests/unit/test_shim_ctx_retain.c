/*
 * Unit tests of shim/ctx_retain.c: the program's retains of a primary
 * context say a release keeps it only while two or more are counted, and
 * the count never goes below what the driver holds (a release of one not
 * counted, or refused, takes nothing from it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* The Makefile links unit tests with common/ only: build the file here. */
#include "../../shim/ctx_retain.c"

static int
reset(void **state)
{
	(void)state;
	ctx_retain_fork_child();
	return 0;
}

static void
test_keeps_from_two(void **state)
{
	(void)state;
	assert_false(ctx_release_may_keep(0));
	ctx_retained(0);
	assert_false(ctx_release_may_keep(0));
	ctx_retained(0);
	assert_true(ctx_release_may_keep(0));
	assert_int_equal(ctx_release_begin(0), 2);
	assert_false(ctx_release_may_keep(0));
	assert_int_equal(ctx_release_begin(0), 1);
	/* Each device its own. */
	ctx_retained(1);
	ctx_retained(1);
	assert_false(ctx_release_may_keep(0));
	assert_true(ctx_release_may_keep(1));
}

static void
test_never_below_zero(void **state)
{
	unsigned before;

	(void)state;
	/* Released more often than the hooks saw it retained. */
	before = ctx_release_begin(0);
	assert_int_equal(before, 0);
	ctx_release_undo(0, before);
	ctx_retained(0);
	assert_false(ctx_release_may_keep(0));
}

static void
test_refused_release_undone(void **state)
{
	(void)state;
	ctx_retained(2);
	ctx_retained(2);
	ctx_release_undo(2, ctx_release_begin(2));
	assert_true(ctx_release_may_keep(2));
}

static void
test_devices_out_of_range(void **state)
{
	(void)state;
	ctx_retained(-1);
	ctx_retained(-1);
	ctx_retained(SHIM_MAX_DEVICES);
	ctx_retained(SHIM_MAX_DEVICES);
	assert_false(ctx_release_may_keep(-1));
	assert_false(ctx_release_may_keep(SHIM_MAX_DEVICES));
	assert_int_equal(ctx_release_begin(SHIM_MAX_DEVICES), 0);
}

static void
test_fork_child_forgets(void **state)
{
	(void)state;
	ctx_retained(3);
	ctx_retained(3);
	ctx_retain_fork_child();
	assert_false(ctx_release_may_keep(3));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_keeps_from_two, reset),
		cmocka_unit_test_setup(test_never_below_zero, reset),
		cmocka_unit_test_setup(test_refused_release_undone, reset),
		cmocka_unit_test_setup(test_devices_out_of_range, reset),
		cmocka_unit_test_setup(test_fork_child_forgets, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
