/*
 * daemon/taken.c: a group's memory in the order it was taken. Layers
 * grow at the look that saw them and shrink newest first; past the
 * limit are the newest pieces, their owners newest first, and an owner
 * whose memory fits under the limit in that order is never one of them,
 * however large.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../daemon/taken.h"

#define GiB	(1ull << 30)

static struct taken_when
at(uint64_t ms, uint64_t seq)
{
	return (struct taken_when){ ms, seq };
}

static void
test_layers_grow_and_shrink(void **state)
{
	struct taken_layers t = { 0 };

	(void)state;
	assert_int_equal(taken_layers_fit(&t, 1 * GiB, at(10, 1)), 0);
	assert_int_equal(taken_layers_fit(&t, 1 * GiB, at(20, 2)), 0);
	assert_int_equal(t.n, 1);		/* no change: no layer */
	assert_int_equal(taken_layers_fit(&t, 3 * GiB, at(30, 3)), 0);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.v[1].bytes, 2 * GiB);
	assert_int_equal(t.v[1].when.ms, 30);
	/* A fall takes the newest first: what is left is the oldest. */
	assert_int_equal(taken_layers_fit(&t, GiB / 2, at(40, 4)), 0);
	assert_int_equal(t.n, 1);
	assert_int_equal(t.v[0].bytes, GiB / 2);
	assert_int_equal(t.v[0].when.ms, 10);
	/* Growth after a fall is new. */
	assert_int_equal(taken_layers_fit(&t, 2 * GiB, at(50, 5)), 0);
	assert_int_equal(t.v[1].when.ms, 50);
	assert_int_equal(taken_layers_fit(&t, 0, at(60, 6)), 0);
	assert_int_equal(t.n, 0);
	taken_layers_free(&t);
}

/* Issue 38, point 3: the newcomer goes, not the larger one first there. */
static void
test_newcomer_goes(void **state)
{
	int first, newcomer;
	struct taken_piece p[] = {
		{ at(200, 2), GiB + GiB / 2, &newcomer },
		{ at(100, 1), 3 * GiB, &first },
	};
	const void *owners[2];

	(void)state;
	assert_int_equal(taken_past(p, 2, 4 * GiB, owners), 1);
	assert_ptr_equal(owners[0], &newcomer);
}

/* Within the limit in that order: no one. At the limit exactly: no one. */
static void
test_within(void **state)
{
	int a, b;
	struct taken_piece p[] = {
		{ at(100, 0), 3 * GiB, &a },
		{ at(200, 0), GiB, &b },
	};
	const void *owners[2];

	(void)state;
	assert_int_equal(taken_past(p, 2, 4 * GiB, owners), 0);
}

/* Several past it: newest first; a straddling piece's owner too, last. */
static void
test_newest_first(void **state)
{
	int a, b, c, d;
	struct taken_piece p[] = {
		{ at(300, 0), GiB, &c },
		{ at(100, 0), 2 * GiB, &a },
		{ at(400, 0), GiB, &d },
		{ at(200, 0), 2 * GiB, &b },
		{ at(500, 0), GiB, &c },	/* c grew last */
	};
	const void *owners[5];

	(void)state;
	/* a 0-2, b 2-4, c 4-5, d 5-6, c 6-7: past 3 from b on. */
	assert_int_equal(taken_past(p, 5, 3 * GiB, owners), 3);
	assert_ptr_equal(owners[0], &c);
	assert_ptr_equal(owners[1], &d);
	assert_ptr_equal(owners[2], &b);
}

/* Within one look, the order they were seen in (seq). */
static void
test_seq_orders_a_look(void **state)
{
	int a, b;
	struct taken_piece p[] = {
		{ at(100, 8), GiB, &b },
		{ at(100, 7), GiB, &a },
	};
	const void *owners[2];

	(void)state;
	assert_int_equal(taken_past(p, 2, GiB, owners), 1);
	assert_ptr_equal(owners[0], &b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layers_grow_and_shrink),
		cmocka_unit_test(test_newcomer_goes),
		cmocka_unit_test(test_within),
		cmocka_unit_test(test_newest_first),
		cmocka_unit_test(test_seq_orders_a_look),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
