/*
 * Unit tests of shim/limit.c: GPUFRAC_MEMORY_LIMIT in every form it takes,
 * and every way it can be wrong (the parse leaves no request; what a bad
 * value then asks for is limit_request_refuse's).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "gpufrac/proto.h"

/* The Makefile links unit tests with common/ only: build the file here. */
#include "../../shim/limit.c"

#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

struct every_case {
	const char	*in;
	uint32_t	kind;
	uint64_t	value;
};

/* in must ask every device for (kind, value). */
static void
every_ok(const char *in, uint32_t kind, uint64_t value)
{
	struct limit_request req;
	char why[160] = "";
	int i;

	if (limit_request_parse(in, &req, why, sizeof(why)) != 0)
		fail_msg("'%s' rejected: %s", in, why);
	for (i = 0; i < SHIM_MAX_DEVICES; i++)
		if (req.dev[i].kind != kind || req.dev[i].value != value)
			fail_msg("'%s': device %d asks (%u, %llu), want "
			    "(%u, %llu)", in, i, req.dev[i].kind,
			    (unsigned long long)req.dev[i].value, kind,
			    (unsigned long long)value);
}

/* in must be refused, leave no request behind and say why containing want. */
static void
bad(const char *in, const char *want)
{
	struct limit_request req;
	char why[160] = "";
	int i;

	memset(&req, 0xa5, sizeof(req));
	if (limit_request_parse(in, &req, why, sizeof(why)) != -1)
		fail_msg("'%s' accepted", in);
	for (i = 0; i < SHIM_MAX_DEVICES; i++)
		if (req.dev[i].kind != GF_LIMIT_NONE || req.dev[i].value != 0)
			fail_msg("'%s' left a request on device %d", in, i);
	if (strstr(why, want) == NULL)
		fail_msg("'%s': reason '%s' does not say '%s'", in, why, want);
}

static void
test_unset(void **state)
{
	(void)state;
	every_ok(NULL, GF_LIMIT_NONE, 0);
	every_ok("", GF_LIMIT_NONE, 0);
}

static void
test_sizes(void **state)
{
	static const struct every_case cases[] = {
		{ "512Mi", GF_LIMIT_BYTES, 512ull << 20 },
		{ "2GiB", GF_LIMIT_BYTES, 2ull << 30 },
		{ "2Gi", GF_LIMIT_BYTES, 2ull << 30 },
		{ "1.5G", GF_LIMIT_BYTES, 1500000000ull },
		{ "1.5Gi", GF_LIMIT_BYTES, 3ull << 29 },
		{ "1073741824", GF_LIMIT_BYTES, 1073741824ull },
		{ "1", GF_LIMIT_BYTES, 1 },
		{ "4k", GF_LIMIT_BYTES, 4000 },
		{ "1Ti", GF_LIMIT_BYTES, 1ull << 40 },
		{ "18446744073709551615", GF_LIMIT_BYTES, UINT64_MAX },
	};
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(cases); i++)
		every_ok(cases[i].in, cases[i].kind, cases[i].value);
}

static void
test_percent(void **state)
{
	(void)state;
	every_ok("50%", GF_LIMIT_PERCENT, 5000);
	every_ok("100%", GF_LIMIT_PERCENT, 10000);
	every_ok("0.01%", GF_LIMIT_PERCENT, 1);
	every_ok("12.5%", GF_LIMIT_PERCENT, 1250);
}

static void
test_per_device(void **state)
{
	struct limit_request req;
	char why[160] = "";
	int i;

	(void)state;
	assert_int_equal(limit_request_parse("0=2Gi,1=4Gi,3=25%,63=1", &req,
	    why, sizeof(why)), 0);
	assert_int_equal(req.dev[0].kind, GF_LIMIT_BYTES);
	assert_true(req.dev[0].value == 2ull << 30);
	assert_int_equal(req.dev[1].kind, GF_LIMIT_BYTES);
	assert_true(req.dev[1].value == 4ull << 30);
	assert_int_equal(req.dev[2].kind, GF_LIMIT_NONE);
	assert_int_equal(req.dev[3].kind, GF_LIMIT_PERCENT);
	assert_int_equal(req.dev[3].value, 2500);
	assert_int_equal(req.dev[63].kind, GF_LIMIT_BYTES);
	assert_int_equal(req.dev[63].value, 1);
	for (i = 4; i < 63; i++)
		assert_int_equal(req.dev[i].kind, GF_LIMIT_NONE);

	/* one device, listed out of order, leading zeros */
	assert_int_equal(limit_request_parse("2=1Gi,007=3Gi", &req, why,
	    sizeof(why)), 0);
	assert_true(req.dev[2].value == 1ull << 30);
	assert_true(req.dev[7].value == 3ull << 30);
	assert_int_equal(req.dev[0].kind, GF_LIMIT_NONE);
}

static void
test_garbage(void **state)
{
	(void)state;
	bad("lots", "is not a size");
	bad("2 Gi", "is not a size");
	bad(" 2Gi", "is not a size");
	bad("2Gi ", "is not a size");
	bad("-1Gi", "is not a size");
	bad("2Xi", "is not a size");
	bad("2gi", "is not a size");
	bad("Gi", "is not a size");
	bad("1.2.3", "is not a size");
	bad("0x10", "is not a size");
	bad("0", "a limit of zero (a limit must be positive)");
	bad("0Gi", "a limit of zero");
	bad("0%", "a limit of zero");
	bad("0.001%", "a limit of zero");
	bad("101%", "is not a size");
	bad("-5%", "is not a size");
	bad("%", "is not a size");
	bad("50%%", "is not a size");
	bad("2Gi,4Gi", "is not a size");
}

static void
test_overflow(void **state)
{
	(void)state;
	bad("18446744073709551616", "is not a size");
	bad("16777216Ti", "is not a size");
	bad("99999999999999999999999999999999999999", "is not a size");
	/* longer than any number: reported cut short, still refused */
	bad("11111111111111111111111111111111111111111111111111111111111111111"
	    "111111111111111", "is not a size");
	bad("0=18446744073709551616", "is not a size");
}

static void
test_per_device_bad(void **state)
{
	(void)state;
	bad("0=2Gi,x=1Gi", "device 'x' is not an ordinal");
	bad("-1=2Gi", "device '-1' is not an ordinal");
	bad("=2Gi", "device '' is not an ordinal");
	bad("0x1=2Gi", "is not an ordinal");
	bad("1 =2Gi", "is not an ordinal");
	bad("64=2Gi", "is not below 64");
	bad("99999999999999999999=2Gi", "is not below 64");
	bad("0=2Gi,0=3Gi", "device 0 is given twice");
	bad("0=", "empty limit");
	bad("0=2Gi,", "empty entry");
	bad(",0=2Gi", "empty entry");
	bad("0=2Gi,,1=1Gi", "empty entry");
	bad("0=2Gi,1", "'1' is not ORDINAL=LIMIT");
	bad("0=2Gi,1=lots", "'lots' is not a size");
	bad("0=0", "a limit of zero");
	bad("0=2Gi=3Gi", "is not a size");
	bad("0=150%", "is not a size");
}

/* What a bad value asks for: 0 bytes on every device, nothing else. */
static void
test_refuse(void **state)
{
	struct limit_request req;
	int i;

	(void)state;
	memset(&req, 0xa5, sizeof(req));
	limit_request_refuse(&req);
	for (i = 0; i < SHIM_MAX_DEVICES; i++) {
		assert_int_equal(req.dev[i].kind, GF_LIMIT_BYTES);
		assert_int_equal(req.dev[i].value, 0);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unset),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_percent),
		cmocka_unit_test(test_per_device),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_per_device_bad),
		cmocka_unit_test(test_refuse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
