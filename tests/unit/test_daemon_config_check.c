/*
 * arbiter_check: a parsed configuration held against the machine's
 * devices (reserves, a device named twice, guarantees against each
 * device's shareable capacity).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "config_fixture.h"
#include "log.h"
#include "../../daemon/arbiter.h"
#include "../../daemon/groups.h"
#include "../../daemon/ledger.h"
#include "uuid.h"

/* A ledger with two 16Gi devices, ordinals 0 and 1. */
static void
two_devices(struct ledger *l, uint8_t uuids[2][GF_UUID_LEN])
{
	int i;

	ledger_init(l);
	for (i = 0; i < 2; i++) {
		memset(uuids[i], 0xa0 + i, GF_UUID_LEN);
		assert_int_equal(ledger_device_add(l, uuids[i], (uint32_t)i,
		    "Sim", 16ull << 30), i);
	}
}

/*
 * Load text as a configuration file (it must parse) and check it against
 * the devices of l with arbiter_check: its result, errors in *e.
 */
static int
check_text(struct ledger *l, const char *text, uint64_t *reserves,
    struct errs *e)
{
	struct config c, rt;
	struct groups gs;
	char path[64];
	int r;

	temp_conf(path, sizeof(path), text);
	assert_int_equal(load(&c, path, 0, e), 0);
	config_init(&rt);
	assert_int_equal(groups_build(&gs, &c, &rt, 0), 0);
	r = arbiter_check(l, &gs, reserves, capture, e);
	groups_free(&gs);
	config_free(&c);
	unlink(path);
	return r;
}

static void
test_check_against_devices(void **state)
{
	static const char *const text[] = {
		/* [device] by ordinal and by uuid; a missing one is a warning */
		"[device 1]\nreserve = 1Gi\n"
		"[device GPU-a0a0a0a0-a0a0-a0a0-a0a0-a0a0a0a0a0a0]\n"
		"reserve = 2Gi\n[device 7]\nreserve = 1Gi\n",
		/* the whole device may be reserved, not more */
		"[device 0]\nreserve = 16Gi\n",
		"[device 0]\nreserve = 17Gi\n",
		/* one device named twice */
		"[device 0]\nreserve = 1Gi\n"
		"[device GPU-a0a0a0a0-a0a0-a0a0-a0a0-a0a0a0a0a0a0]\n",
	};
	uint8_t uuids[2][GF_UUID_LEN];
	uint64_t reserves[2];
	struct ledger l;
	struct errs e;

	(void)state;
	two_devices(&l, uuids);

	assert_int_equal(check_text(&l, text[0], reserves, &e), 0);
	assert_int_equal(reserves[0], 2ull << 30);
	assert_int_equal(reserves[1], 1ull << 30);

	assert_int_equal(check_text(&l, text[1], reserves, &e), 0);
	assert_int_equal(reserves[0], 16ull << 30);

	assert_int_equal(check_text(&l, text[2], reserves, &e), 1);
	assert_non_null(strstr(e.first, ":2: 'reserve' of 17.0GiB is more "
	    "than the total 16.0GiB of device 0 (GPU-a0a0a0a0-"));

	assert_int_equal(check_text(&l, text[3], reserves, &e), 1);
	assert_non_null(strstr(e.first, ":3: device 0 (GPU-a0a0a0a0-"));
	assert_non_null(strstr(e.first, "is configured twice; first at "));

	ledger_free(&l);
}

/* Guarantees against each device, with the reserves of the same file. */
static void
test_check_guarantees(void **state)
{
	static const char *const text[] = {
		/* 12Gi of guarantees: too much once 6Gi are reserved */
		"[device 0]\nreserve = 6Gi\n"
		"[group trainer]\nmatch = uid:1\nguarantee = 8Gi\n"
		"[group infer]\nmatch = uid:2\nguarantee = 4Gi\n",
		/* ... and just enough with 4Gi reserved */
		"[device 0]\nreserve = 4Gi\n"
		"[group trainer]\nmatch = uid:1\nguarantee = 8Gi\n"
		"[group infer]\nmatch = uid:2\nguarantee = 4Gi\n",
		/* a size above a share: known only against a device */
		"[group g]\nmatch = uid:1\nlimit = 25%\nguarantee = 5Gi\n",
		/* shares and sizes together */
		"[group a]\nmatch = uid:1\nguarantee = 50%\n"
		"[group b]\nmatch = uid:2\nguarantee = 9Gi\n",
	};
	uint8_t uuids[2][GF_UUID_LEN];
	uint64_t reserves[2];
	struct ledger l;
	struct errs e;

	(void)state;
	two_devices(&l, uuids);

	assert_int_equal(check_text(&l, text[0], reserves, &e), 1);
	assert_string_equal(e.first, "guarantees on "
	    "GPU-a0a0a0a0-a0a0-a0a0-a0a0-a0a0a0a0a0a0 (device 0) add up to "
	    "12.0GiB, more than its 10.0GiB shareable capacity: trainer "
	    "8.0GiB, infer 4.0GiB");

	assert_int_equal(check_text(&l, text[1], reserves, &e), 0);

	assert_int_equal(check_text(&l, text[2], reserves, &e), 2);
	assert_non_null(strstr(e.first, ":4: guarantee 5.0GiB of group 'g' is "
	    "more than its limit 4.0GiB on GPU-a0a0a0a0-"));
	assert_non_null(strstr(e.first, "(device 0)"));

	assert_int_equal(check_text(&l, text[3], reserves, &e), 2);
	assert_non_null(strstr(e.first, "add up to 17.0GiB, more than its "
	    "16.0GiB shareable capacity: a 8.0GiB, b 9.0GiB"));

	ledger_free(&l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_against_devices),
		cmocka_unit_test(test_check_guarantees),
	};

	log_init("test", LOG_LVL_ERROR, 0);	/* warnings are expected */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
