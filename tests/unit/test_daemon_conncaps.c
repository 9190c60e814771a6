/*
 * daemon/conncaps.c: the connection caps sized on the descriptors (issue
 * 38 G): one uid never takes the last of them, a reserve stays root's and
 * admin_group's, and a generous limit leaves max_connections_per_uid as
 * configured.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../daemon/conncaps.h"

/* Under 256 descriptors (issue 38 point 7): 96 connections, 12 kept. */
static void
test_small(void **state)
{
	struct conncaps c;

	(void)state;
	conncaps_size(256, 256, &c);
	assert_int_equal(c.conns, 96);
	assert_int_equal(c.reserve, 12);
	assert_int_equal(c.total, 84);
	assert_int_equal(c.per_uid, 42);
	/* Whatever the uids, what they may hold fits the descriptors. */
	assert_true(CONNCAPS_OWN_FDS + (uint64_t)(c.total + c.reserve) *
	    CONNCAPS_FDS_PER_CONN <= 256);
}

/* The honest case: a generous limit changes nothing configured. */
static void
test_generous(void **state)
{
	struct conncaps c;

	(void)state;
	conncaps_size(1048576, 256, &c);
	assert_int_equal(c.per_uid, 256);
	assert_true(c.total > 256 && c.reserve > CONNCAPS_RESERVE_MIN);
	conncaps_size(1048576, 0, &c);
	assert_int_equal(c.per_uid, c.total / 2);
}

/* Too few descriptors for anyone but the reserve. */
static void
test_starved(void **state)
{
	struct conncaps c;

	(void)state;
	conncaps_size(70, 256, &c);
	assert_int_equal(c.conns, 3);
	assert_int_equal(c.reserve, 3);
	assert_int_equal(c.total, 0);
	assert_int_equal(c.per_uid, 0);
	conncaps_size(10, 256, &c);
	assert_int_equal(c.conns, 0);
	assert_int_equal(c.total, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small),
		cmocka_unit_test(test_generous),
		cmocka_unit_test(test_starved),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
