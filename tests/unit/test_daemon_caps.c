/*
 * daemon/caps.c: a container's or step's group request held to [jobs]:
 * refused with one line naming the cap, or capped where over_cap = cap;
 * a share and a size compared on each device (issue 27).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "../../daemon/caps.h"
#include "../../daemon/config.h"
#include "proto.h"

#define GiB	(1ull << 30)

static const uint64_t devs[2] = { 16 * GiB, 4 * GiB };

static struct gf_group_set
asked(void)
{
	struct gf_group_set s;

	memset(&s, 0, sizeof(s));
	proto_strlcpy(s.name, "oci-x", sizeof(s.name));
	s.resolver = s.on_preempt = s.wait_timeout_ms = GF_UNSET;
	s.flags = GF_GROUP_JOB;
	s.limit_kind = GF_LIMIT_BYTES;
	s.limit_value = GiB;
	return s;
}

/* caps_hold where no [group] bounds the job: [daemon]'s default does. */
static int
hold(const struct config *c, struct gf_group_set *s, char *err,
    size_t errlen)
{
	struct caps_bound b;

	config_default_policy(c, &b.pol);
	b.named = 0;
	return caps_hold(c, &b, devs, 2, s, err, errlen);
}

/* s must be refused, err saying want. */
static void
refused(const struct config *c, struct gf_group_set s, const char *want)
{
	char err[256];

	assert_int_equal(hold(c, &s, err, sizeof(err)), -1);
	assert_string_equal(err, want);
}

/* The defaults: nothing above a configured group's defaults. */
static void
test_defaults_refuse(void **state)
{
	struct gf_group_set s = asked();
	struct config c;
	char err[256];

	(void)state;
	config_init(&c);
	assert_int_equal(hold(&c, &s, err, sizeof(err)), 0);
	assert_int_equal(s.priority, 0);

	s = asked();
	s.priority_set = 1;
	s.priority = 2147483647;
	refused(&c, s, "priority 2147483647 is above [jobs] max_priority 0");
	s = asked();
	s.guarantee_kind = GF_LIMIT_PERCENT;
	s.guarantee_value = 10000;
	refused(&c, s, "guarantee 100% is above [jobs] max_guarantee 0B");
	s = asked();
	s.resolver = GF_RESOLVER_PREEMPT;
	refused(&c, s, "resolver 'preempt' is not in [jobs] resolvers "
	    "(fail wait)");
	/* within: a lower priority, no guarantee, an allowed resolver */
	s = asked();
	s.priority_set = 1;
	s.priority = -3;
	s.guarantee_kind = GF_LIMIT_BYTES;
	s.resolver = GF_RESOLVER_WAIT;
	assert_int_equal(hold(&c, &s, err, sizeof(err)), 0);
	config_free(&c);
}

/* A share against a size: over on the device where it is larger. */
static void
test_limit_on_each_device(void **state)
{
	struct gf_group_set s = asked();
	struct config c;
	char err[256];

	(void)state;
	config_init(&c);
	c.jobs.max_limit_kind = GF_LIMIT_BYTES;
	c.jobs.max_limit_value = 4 * GiB;
	s.limit_kind = GF_LIMIT_PERCENT;
	s.limit_value = 5000;		/* 8Gi on the first device */
	refused(&c, s, "limit 50% is above [jobs] max_limit 4.0GiB");
	s.limit_value = 2500;		/* 4Gi and 1Gi */
	assert_int_equal(hold(&c, &s, err, sizeof(err)), 0);
	/* an unset limit is [daemon]'s default, 100% */
	s = asked();
	s.limit_kind = GF_LIMIT_NONE;
	refused(&c, s, "limit 100% is above [jobs] max_limit 4.0GiB");
	/* no max_limit, [daemon]'s 100%: any limit, even above the devices */
	c.jobs.max_limit_kind = GF_LIMIT_NONE;
	s = asked();
	s.limit_value = 64 * GiB;
	assert_int_equal(hold(&c, &s, err, sizeof(err)), 0);
	config_free(&c);
}

/* over_cap = cap: lowered, and said. */
static void
test_cap(void **state)
{
	struct gf_group_set s = asked();
	struct config c;
	char err[512];

	(void)state;
	config_init(&c);
	c.jobs.cap = 1;
	c.jobs.max_priority = 5;
	c.jobs.max_guarantee_value = GiB;
	s.priority_set = 1;
	s.priority = 100;
	s.guarantee_kind = GF_LIMIT_BYTES;
	s.guarantee_value = 3 * GiB;
	s.resolver = GF_RESOLVER_PREEMPT;
	assert_int_equal(hold(&c, &s, err, sizeof(err)),
	    CAPS_CAPPED);
	assert_int_equal(s.priority, 5);
	assert_int_equal(s.guarantee_value, GiB);
	assert_int_equal(s.resolver, GF_UNSET);
	assert_string_equal(err, "priority 100 capped to 5 ([jobs] "
	    "max_priority); guarantee 3.0GiB capped to 1.0GiB ([jobs] "
	    "max_guarantee); resolver 'preempt' not in [jobs] resolvers: "
	    "[daemon]'s default_resolver instead");
	config_free(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_refuse),
		cmocka_unit_test(test_limit_on_each_device),
		cmocka_unit_test(test_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
