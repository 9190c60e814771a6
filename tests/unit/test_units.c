/*
 * Unit tests of common/units.c: sizes, limits, durations as users write
 * them, and sizes as gpufracctl prints them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "gpufrac/proto.h"
#include "units.h"

#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

struct size_case {
	const char	*in;
	uint64_t	 want;
};

static void
size_ok(const char *in, uint64_t want)
{
	uint64_t got = 12345;

	if (size_parse(in, &got) != 0)
		fail_msg("size_parse(\"%s\") failed", in);
	if (got != want)
		fail_msg("size_parse(\"%s\") = %llu, want %llu", in,
		    (unsigned long long)got, (unsigned long long)want);
}

static void
size_bad(const char *in)
{
	uint64_t got = 12345;

	if (size_parse(in, &got) != -1)
		fail_msg("size_parse(\"%s\") accepted: %llu", in,
		    (unsigned long long)got);
}

static void
test_size_every_unit(void **state)
{
	static const struct size_case cases[] = {
		{ "0", 0 }, { "1", 1 }, { "4096", 4096 },
		{ "7B", 7 }, { "0B", 0 },
		{ "1Ki", 1ull << 10 }, { "3Mi", 3ull << 20 },
		{ "2Gi", 2ull << 30 }, { "5Ti", 5ull << 40 },
		{ "1KiB", 1ull << 10 }, { "3MiB", 3ull << 20 },
		{ "2GiB", 2ull << 30 }, { "5TiB", 5ull << 40 },
		{ "1k", 1000 }, { "1K", 1000 }, { "2M", 2000000 },
		{ "3G", 3000000000ull }, { "4T", 4000000000000ull },
		{ "512Mi", 512ull << 20 },
		{ "18446744073709551615", UINT64_MAX },
		{ "007Ki", 7ull << 10 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(cases); i++)
		size_ok(cases[i].in, cases[i].want);
}

static void
test_size_fractions(void **state)
{
	static const struct size_case cases[] = {
		{ "1.5G", 1500000000ull }, { "0.5Gi", 1ull << 29 },
		{ ".5Mi", 1ull << 19 }, { "1.5Gi", 3ull << 29 },
		{ "2.25Ki", 2304 }, { "0.001k", 1 },
		{ "1.5", 1 },			/* truncated to whole bytes */
		{ "1.999B", 1 },
		{ "0.000000001G", 1 },		/* nine decimals are exact */
		{ "1.", 1 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(cases); i++)
		size_ok(cases[i].in, cases[i].want);
}

static void
test_size_overflow(void **state)
{
	static const char *const bad[] = {
		"16Ei", "16EiB",		/* no exbi unit */
		"18446744073709551616",		/* UINT64_MAX + 1 */
		"99999999999999999999",		/* 20 digits */
		"123456789012345678901234567890",
		"17179869184Gi",		/* 2^34 Gi = 2^64 */
		"16777216Ti",			/* 2^24 Ti = 2^64 */
		"18446744073709552T",
		"18446744073709551615.5Ki",
	};
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(bad); i++)
		size_bad(bad[i]);
	/* just below the edge still fits */
	size_ok("17179869183Gi", UINT64_MAX - (1ull << 30) + 1);
	size_ok("16777215Ti", (16777215ull) << 40);
}

static void
test_size_garbage(void **state)
{
	static const char *const bad[] = {
		"", "G", "Gi", "B", "12Q", "-1", "+1", " 1", "1 ", "1 G",
		"1.2.3", "1e9", ".", ".G", "1gi", "1GI", "1kib", "1Kib",
		"1Bi", "1iB", "0x10", "1,5G", "1..5", "1.0000000001",
		"1GiBB", "1KK", "\t1",
	};
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(bad); i++)
		size_bad(bad[i]);
	assert_int_equal(size_parse(NULL, &(uint64_t){ 0 }), -1);
}

static void
test_size_failure_leaves_output(void **state)
{
	uint64_t v = 42;

	(void)state;
	assert_int_equal(size_parse("12Q", &v), -1);
	assert_int_equal(v, 42);
	assert_int_equal(size_parse("17179869184Gi", &v), -1);
	assert_int_equal(v, 42);
}

static void
limit_ok(const char *in, uint32_t kind, uint64_t value)
{
	uint32_t k = 99;
	uint64_t v = 12345;

	if (limit_parse(in, &k, &v) != 0)
		fail_msg("limit_parse(\"%s\") failed", in);
	if (k != kind || v != value)
		fail_msg("limit_parse(\"%s\") = kind %u value %llu, "
		    "want kind %u value %llu", in, k, (unsigned long long)v,
		    kind, (unsigned long long)value);
}

static void
test_limit_percent(void **state)
{
	(void)state;
	limit_ok("50%", GF_LIMIT_PERCENT, 5000);
	limit_ok("12.5%", GF_LIMIT_PERCENT, 1250);
	limit_ok("100%", GF_LIMIT_PERCENT, 10000);
	limit_ok("0.01%", GF_LIMIT_PERCENT, 1);
	limit_ok("1%", GF_LIMIT_PERCENT, 100);
	limit_ok("33.333%", GF_LIMIT_PERCENT, 3333);	/* rounds down */
	limit_ok("100.00%", GF_LIMIT_PERCENT, 10000);
}

static void
test_limit_percent_bad(void **state)
{
	static const char *const bad[] = {
		"101%", "100.01%", "1000%", "%", "%50", "50%%", "50 %",
		"-5%", "5Gi%", ".%", "18446744073709551616%",
	};
	uint32_t kind = 99;
	uint64_t value = 12345;
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(bad); i++)
		if (limit_parse(bad[i], &kind, &value) != -1)
			fail_msg("limit_parse(\"%s\") accepted", bad[i]);
	assert_int_equal(limit_parse(NULL, &kind, &value), -1);
}

/*
 * Zero, however written, is one thing: a limit refuses it (LIMIT_ZERO,
 * its outputs untouched), a guarantee takes it as none, in bytes.
 */
static void
test_limit_zero(void **state)
{
	static const char *const zeros[] = {
		"0", "0Gi", "0.0G", "0.4",		/* less than a byte */
		"0%", "0.0%", "0.001%",		/* rounds to nothing */
	};
	uint32_t kind;
	uint64_t value;
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(zeros); i++) {
		kind = 99;
		value = 12345;
		if (limit_parse(zeros[i], &kind, &value) != LIMIT_ZERO ||
		    kind != 99 || value != 12345)
			fail_msg("limit_parse(\"%s\") is not LIMIT_ZERO",
			    zeros[i]);
		if (guarantee_parse(zeros[i], &kind, &value) != 0 ||
		    kind != GF_LIMIT_BYTES || value != 0)
			fail_msg("guarantee_parse(\"%s\") is not 0 bytes",
			    zeros[i]);
	}
	assert_int_equal(guarantee_parse("25%", &kind, &value), 0);
	assert_int_equal(kind, GF_LIMIT_PERCENT);
	assert_int_equal(value, 2500);
	assert_int_equal(guarantee_parse("101%", &kind, &value), -1);
	assert_int_equal(guarantee_parse("lots", &kind, &value), -1);
}

static void
test_limit_size(void **state)
{
	uint32_t kind;
	uint64_t value;

	(void)state;
	limit_ok("512Mi", GF_LIMIT_BYTES, 512ull << 20);
	limit_ok("2GiB", GF_LIMIT_BYTES, 2ull << 30);
	limit_ok("1.5G", GF_LIMIT_BYTES, 1500000000ull);
	limit_ok("1048576", GF_LIMIT_BYTES, 1048576);
	assert_int_equal(limit_parse("12Q", &kind, &value), -1);
	assert_int_equal(limit_parse("", &kind, &value), -1);
	assert_int_equal(limit_parse("17179869184Gi", &kind, &value), -1);
}

static void
test_limit_resolve(void **state)
{
	const uint64_t cap = 16ull << 30;

	(void)state;
	assert_int_equal(limit_resolve(GF_LIMIT_BYTES, 4ull << 30, cap),
	    4ull << 30);
	/* a byte limit is not clamped to the capacity: the ledger does that */
	assert_int_equal(limit_resolve(GF_LIMIT_BYTES, 32ull << 30, cap),
	    32ull << 30);
	assert_int_equal(limit_resolve(GF_LIMIT_PERCENT, 5000, cap),
	    8ull << 30);
	assert_int_equal(limit_resolve(GF_LIMIT_PERCENT, 10000, cap), cap);
	assert_int_equal(limit_resolve(GF_LIMIT_PERCENT, 1250, cap),
	    2ull << 30);
	assert_int_equal(limit_resolve(GF_LIMIT_PERCENT, 3333, 10000), 3333);
	assert_int_equal(limit_resolve(GF_LIMIT_PERCENT, 1, 9999), 0);
	/* no overflow with the largest capacity */
	assert_int_equal(limit_resolve(GF_LIMIT_PERCENT, 10000, UINT64_MAX),
	    UINT64_MAX);
	assert_int_equal(limit_resolve(GF_LIMIT_PERCENT, 5000, UINT64_MAX),
	    UINT64_MAX / 2);
	assert_int_equal(limit_resolve(GF_LIMIT_NONE, 0, cap), cap);
	assert_int_equal(limit_resolve(77, 123, cap), cap);
}

static void
test_duration(void **state)
{
	static const struct size_case cases[] = {
		{ "30s", 30000 }, { "250ms", 250 }, { "1.5s", 1500 },
		{ "2m", 120000 }, { "1h", 3600000 }, { "5", 5000 },
		{ "0", 0 }, { "0.5", 500 }, { "1.5h", 5400000 },
		{ "0ms", 0 }, { "0.25m", 15000 },
	};
	static const char *const bad[] = {
		"", "s", "ms", "-1s", "5 s", " 5s", "5x", "5S", "1d", "1.2.3s",
		"5sec", "1e3ms", "99999999999999999999ms",
		"18446744073709551615h",
	};
	uint64_t ms;
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(cases); i++) {
		ms = 12345;
		if (duration_parse(cases[i].in, &ms) != 0 ||
		    ms != cases[i].want)
			fail_msg("duration_parse(\"%s\") = %llu, want %llu",
			    cases[i].in, (unsigned long long)ms,
			    (unsigned long long)cases[i].want);
	}
	for (i = 0; i < NITEMS(bad); i++)
		if (duration_parse(bad[i], &ms) != -1)
			fail_msg("duration_parse(\"%s\") accepted",
			    bad[i]);
}

static void
test_size_format(void **state)
{
	static const struct {
		uint64_t	 in;
		const char	*want;
	} cases[] = {
		{ 0, "0B" }, { 1, "1B" }, { 1023, "1023B" },
		{ 1024, "1.0KiB" }, { 1536, "1.5KiB" },
		{ 1048575, "1023.9KiB" },	/* rounded down, never up */
		{ 1ull << 20, "1.0MiB" }, { 3ull << 29, "1.5GiB" },
		{ (1ull << 30) - 1, "1023.9MiB" },
		{ 16ull << 30, "16.0GiB" }, { 1ull << 40, "1.0TiB" },
		{ 1ull << 50, "1.0PiB" }, { 1ull << 60, "1.0EiB" },
		{ UINT64_MAX, "15.9EiB" },
	};
	char buf[32];
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(cases); i++) {
		assert_ptr_equal(size_format(cases[i].in, buf, sizeof(buf)),
		    buf);
		assert_string_equal(buf, cases[i].want);
	}
}

static void
test_size_format_truncates(void **state)
{
	char buf[4];

	(void)state;
	size_format(3ull << 29, buf, sizeof(buf));
	assert_string_equal(buf, "1.5");
}

/* Checked decimal numbers: digits only, a bound; an int32 with a sign. */
static void
test_numbers(void **state)
{
	uint64_t v = 7;
	int32_t i = 7;

	(void)state;
	assert_int_equal(decimal_parse("0", 10, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(decimal_parse("4294967294", UINT32_MAX - 1, &v), 0);
	assert_int_equal(v, 4294967294u);
	assert_int_equal(decimal_parse("4294967295", UINT32_MAX - 1, &v), -1);
	assert_int_equal(decimal_parse("18446744073709551616", UINT64_MAX,
	    &v), -1);
	assert_int_equal(decimal_parse("", 10, &v), -1);
	assert_int_equal(decimal_parse("-1", 10, &v), -1);
	assert_int_equal(decimal_parse("+1", 10, &v), -1);
	assert_int_equal(decimal_parse(" 1", 10, &v), -1);
	assert_int_equal(decimal_parse("1x", 10, &v), -1);
	assert_int_equal(v, 4294967294u);	/* untouched on failure */
	assert_int_equal(int32_parse("-2147483648", &i), 0);
	assert_int_equal(i, INT32_MIN);
	assert_int_equal(int32_parse("2147483647", &i), 0);
	assert_int_equal(i, INT32_MAX);
	assert_int_equal(int32_parse("2147483648", &i), -1);
	assert_int_equal(int32_parse("", &i), -1);
	assert_int_equal(int32_parse(" 5", &i), -1);
	assert_int_equal(int32_parse("5 ", &i), -1);
	assert_int_equal(int32_parse("high", &i), -1);
	assert_int_equal(i, INT32_MAX);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size_every_unit),
		cmocka_unit_test(test_size_fractions),
		cmocka_unit_test(test_size_overflow),
		cmocka_unit_test(test_size_garbage),
		cmocka_unit_test(test_size_failure_leaves_output),
		cmocka_unit_test(test_limit_percent),
		cmocka_unit_test(test_limit_percent_bad),
		cmocka_unit_test(test_limit_zero),
		cmocka_unit_test(test_limit_size),
		cmocka_unit_test(test_limit_resolve),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_size_format),
		cmocka_unit_test(test_size_format_truncates),
		cmocka_unit_test(test_numbers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
