/*
 * Unit tests of common/uuid.c: NVIDIA-style "GPU-" UUIDs, formatted and
 * parsed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "uuid.h"

#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

static const uint8_t sample[GF_UUID_LEN] = {
	0x5f, 0x2c, 0x1b, 0x3a, 0x9e, 0x0d, 0x4c, 0x6f,
	0x8a, 0x7b, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66,
};
#define SAMPLE_STR	"GPU-5f2c1b3a-9e0d-4c6f-8a7b-112233445566"

static void
test_format(void **state)
{
	static const uint8_t zero[GF_UUID_LEN], ones[GF_UUID_LEN] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	char buf[UUID_STR_LEN];

	(void)state;
	assert_int_equal(UUID_STR_LEN, sizeof(SAMPLE_STR));
	assert_ptr_equal(uuid_format(sample, buf, sizeof(buf)), buf);
	assert_string_equal(buf, SAMPLE_STR);
	uuid_format(zero, buf, sizeof(buf));
	assert_string_equal(buf, "GPU-00000000-0000-0000-0000-000000000000");
	uuid_format(ones, buf, sizeof(buf));
	assert_string_equal(buf, "GPU-ffffffff-ffff-ffff-ffff-ffffffffffff");
}

static void
test_format_short_buffer(void **state)
{
	char buf[UUID_STR_LEN + 8];

	(void)state;
	memset(buf, 'z', sizeof(buf));
	uuid_format(sample, buf, 9);
	assert_string_equal(buf, "GPU-5f2c");
	assert_int_equal(buf[9], 'z');			/* nothing past size */
	memset(buf, 'z', sizeof(buf));
	uuid_format(sample, buf, 0);
	assert_int_equal(buf[0], 'z');
}

static void
test_parse(void **state)
{
	uint8_t u[GF_UUID_LEN];
	char buf[UUID_STR_LEN];

	(void)state;
	assert_int_equal(uuid_parse(SAMPLE_STR, u), 0);
	assert_memory_equal(u, sample, GF_UUID_LEN);
	/* upper-case hex is the same UUID */
	assert_int_equal(uuid_parse("GPU-5F2C1B3A-9E0D-4C6F-8A7B-112233445566",
	    u), 0);
	assert_memory_equal(u, sample, GF_UUID_LEN);
	/* format and parse are inverses */
	uuid_format(u, buf, sizeof(buf));
	assert_string_equal(buf, SAMPLE_STR);
}

static void
test_parse_garbage(void **state)
{
	static const char *const bad[] = {
		"", "GPU-", "GPU", "5f2c1b3a-9e0d-4c6f-8a7b-112233445566",
		"gpu-5f2c1b3a-9e0d-4c6f-8a7b-112233445566",
		"MIG-5f2c1b3a-9e0d-4c6f-8a7b-112233445566",
		"GPU-5f2c1b3a-9e0d-4c6f-8a7b-11223344556",	/* short */
		"GPU-5f2c1b3a-9e0d-4c6f-8a7b-1122334455667",	/* long */
		"GPU-5f2c1b3a-9e0d-4c6f-8a7b-112233445566 ",
		"GPU-5f2c1b3a9e0d4c6f8a7b112233445566",		/* no dashes */
		"GPU-5f2c1b3-a9e0d-4c6f-8a7b-112233445566",	/* misplaced */
		"GPU-5f2c1b3a-9e0d-4c6f-8a7b-11223344556g",
		"GPU-5f2c1b3a-9e0d-4c6f-8a7b_112233445566",
		" GPU-5f2c1b3a-9e0d-4c6f-8a7b-112233445566",
		"GPU-5f2c",
	};
	uint8_t u[GF_UUID_LEN];
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(bad); i++) {
		memcpy(u, sample, sizeof(u));
		if (uuid_parse(bad[i], u) != -1)
			fail_msg("uuid_parse(\"%s\") accepted", bad[i]);
		/* a failed parse leaves the output alone */
		assert_memory_equal(u, sample, GF_UUID_LEN);
	}
	assert_int_equal(uuid_parse(NULL, u), -1);
}

static void
test_is_zero(void **state)
{
	uint8_t u[GF_UUID_LEN];
	size_t i;

	(void)state;
	memset(u, 0, sizeof(u));
	assert_true(uuid_is_zero(u));
	for (i = 0; i < GF_UUID_LEN; i++) {
		u[i] = 1;
		assert_false(uuid_is_zero(u));
		u[i] = 0;
	}
	assert_false(uuid_is_zero(sample));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_format_short_buffer),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_garbage),
		cmocka_unit_test(test_is_zero),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
