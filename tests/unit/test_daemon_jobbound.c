/*
 * daemon/jobbound.c and caps.c's bound: a job's group is bounded by the
 * [group] its processes would match without it, found from its cgroup
 * and its owner (issue 39, point 10): at most that group's limit,
 * guarantee and priority, at least its unshimmed = kill; with no [group],
 * [daemon]'s default limit and unshimmed. An honest job within them
 * passes untouched.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../daemon/caps.h"
#include "../../daemon/config.h"
#include "../../daemon/groups.h"
#include "../../daemon/jobbound.h"
#include "../../daemon/rtgroups.h"
#include "proto.h"

#define GiB	(1ull << 30)
#define MiB	(1ull << 20)

static const uint64_t devs[1] = { 16 * GiB };

static const char conf_text[] =
    "[daemon]\n"
    "unshimmed = count\n"
    "[group pods]\n"
    "match = cgroup:/kubepods/*\n"
    "limit = 2Gi\n"
    "[group users]\n"
    "match = uid:65534\n"
    "limit = 1Gi\n"
    "guarantee = 256Mi\n"
    "priority = 5\n"
    "unshimmed = kill\n"
    "[jobs]\n"
    "max_priority = 10\n"
    "max_guarantee = 4Gi\n";

static void
report(const char *line, void *arg)
{
	(void)arg;
	fail_msg("config: %s", line);
}

static void
conf_load(struct config *c)
{
	char path[] = "/tmp/gpufrac-test-jobbound.XXXXXX";
	FILE *fp;
	int fd;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_non_null(fp = fdopen(fd, "w"));
	fputs(conf_text, fp);
	fclose(fp);
	config_init(c);
	assert_int_equal(config_load(c, path, 0, report, NULL), 0);
	unlink(path);
}

/* A container's request: 512Mi in cgroup cg, of user uid. */
static struct gf_group_set
job(uint32_t uid, const char *cg, struct gf_group_rule *rule)
{
	struct gf_group_set s;

	memset(&s, 0, sizeof(s));
	proto_strlcpy(s.name, "oci-x", sizeof(s.name));
	s.resolver = s.on_preempt = s.wait_timeout_ms = GF_UNSET;
	s.flags = GF_GROUP_JOB | GF_GROUP_OWNER | GF_GROUP_TRANSIENT;
	s.owner_uid = uid;
	s.owner_gid = uid;
	s.limit_kind = GF_LIMIT_BYTES;
	s.limit_value = 512 * MiB;
	snprintf(rule->rule, sizeof(rule->rule), "cgroup:%s", cg);
	return s;
}

/* Find s's bound and hold s to it: caps_hold's answer, err its line. */
static int
bound_hold(const struct config *c, struct gf_group_set *s,
    const struct gf_group_rule *rule, char *err, size_t errlen)
{
	struct caps_bound b;

	assert_int_equal(jobbound_find(c, s, rule, 1, &b, err, errlen), 0);
	return caps_hold(c, &b, devs, 1, s, err, errlen);
}

/* The [group] by uid: its limit, guarantee and priority cap the job. */
static void
test_uid_group_bounds(void **state)
{
	struct gf_group_rule r;
	struct gf_group_set s;
	struct caps_bound b;
	struct config c;
	char err[256];

	(void)state;
	conf_load(&c);
	s = job(65534, "/ctr/a", &r);
	assert_int_equal(jobbound_find(&c, &s, &r, 1, &b, err, sizeof(err)),
	    0);
	assert_int_equal(b.named, 1);
	assert_string_equal(b.pol.name, "users");

	/* honest: within all, only unshimmed raised to the group's kill */
	assert_int_equal(bound_hold(&c, &s, &r, err, sizeof(err)), 0);
	assert_int_equal(s.limit_value, 512 * MiB);
	assert_true(s.flags & GF_GROUP_UNSHIMMED_KILL);

	s = job(65534, "/ctr/a", &r);
	s.limit_kind = GF_LIMIT_PERCENT;
	s.limit_value = 10000;
	assert_int_equal(bound_hold(&c, &s, &r, err, sizeof(err)), -1);
	assert_string_equal(err, "limit 100% is above [group users] limit "
	    "1.0GiB");
	s = job(65534, "/ctr/a", &r);
	s.guarantee_kind = GF_LIMIT_BYTES;
	s.guarantee_value = GiB;
	assert_int_equal(bound_hold(&c, &s, &r, err, sizeof(err)), -1);
	assert_string_equal(err, "guarantee 1.0GiB is above [group users] "
	    "guarantee 256.0MiB");
	s = job(65534, "/ctr/a", &r);
	s.priority_set = 1;
	s.priority = 7;		/* within [jobs]' 10, above the group's 5 */
	assert_int_equal(bound_hold(&c, &s, &r, err, sizeof(err)), -1);
	assert_string_equal(err, "priority 7 is above [group users] priority "
	    "5");
	/* no limit asked: the group's, not [daemon]'s 100% */
	s = job(65534, "/ctr/a", &r);
	s.limit_kind = GF_LIMIT_NONE;
	assert_int_equal(bound_hold(&c, &s, &r, err, sizeof(err)), 0);
	assert_int_equal(s.limit_kind, GF_LIMIT_BYTES);
	assert_int_equal(s.limit_value, GiB);
	config_free(&c);
}

/* over_cap = cap lowers the job to its group's instead of refusing it. */
static void
test_capped_to_group(void **state)
{
	struct gf_group_rule r;
	struct gf_group_set s;
	struct config c;
	char err[256];

	(void)state;
	conf_load(&c);
	c.jobs.cap = 1;
	s = job(65534, "/ctr/a", &r);
	s.limit_value = 3 * GiB;
	assert_int_equal(bound_hold(&c, &s, &r, err, sizeof(err)),
	    CAPS_CAPPED);
	assert_int_equal(s.limit_value, GiB);
	assert_string_equal(err, "limit 3.0GiB capped to 1.0GiB ([group "
	    "users] limit)");
	config_free(&c);
}

/* The cgroup finds a group too (the first in the files' order). */
static void
test_cgroup_group_bounds(void **state)
{
	struct gf_group_rule r;
	struct gf_group_set s;
	struct config c;
	char err[256];

	(void)state;
	conf_load(&c);
	s = job(65534, "/kubepods/pod1/ctr", &r);
	s.limit_value = 1536 * MiB;	/* within pods' 2Gi, past users' */
	assert_int_equal(bound_hold(&c, &s, &r, err, sizeof(err)), 0);
	assert_false(s.flags & GF_GROUP_UNSHIMMED_KILL);
	s = job(1000, "/kubepods/pod1/ctr", &r);
	s.limit_value = 3 * GiB;
	assert_int_equal(bound_hold(&c, &s, &r, err, sizeof(err)), -1);
	assert_string_equal(err, "limit 3.0GiB is above [group pods] limit "
	    "2.0GiB");
	config_free(&c);
}

/* No [group]: [jobs] and [daemon]'s default alone, as before. */
static void
test_no_group(void **state)
{
	struct gf_group_rule r;
	struct gf_group_set s;
	struct caps_bound b;
	struct config c;
	char err[256];

	(void)state;
	conf_load(&c);
	s = job(1000, "/ctr/b", &r);
	assert_int_equal(jobbound_find(&c, &s, &r, 1, &b, err, sizeof(err)),
	    0);
	assert_int_equal(b.named, 0);
	s.limit_kind = GF_LIMIT_PERCENT;
	s.limit_value = 10000;
	s.priority_set = 1;
	s.priority = 9;
	s.guarantee_kind = GF_LIMIT_BYTES;
	s.guarantee_value = GiB;
	assert_int_equal(bound_hold(&c, &s, &r, err, sizeof(err)), 0);
	assert_false(s.flags & GF_GROUP_UNSHIMMED_KILL);
	/* [daemon] default_limit bounds it */
	c.default_limit_kind = GF_LIMIT_BYTES;
	c.default_limit_value = 4 * GiB;
	s = job(1000, "/ctr/b", &r);
	s.limit_value = 8 * GiB;
	assert_int_equal(bound_hold(&c, &s, &r, err, sizeof(err)), -1);
	assert_string_equal(err, "limit 8.0GiB is above [daemon] "
	    "default_limit 4.0GiB");
	config_free(&c);
}

/* A job that names no owner cannot be bounded: refused. */
static void
test_no_owner(void **state)
{
	struct gf_group_rule r;
	struct gf_group_set s;
	struct caps_bound b;
	struct config c;
	char err[256];

	(void)state;
	conf_load(&c);
	s = job(65534, "/ctr/a", &r);
	s.flags &= ~GF_GROUP_OWNER;
	assert_int_equal(jobbound_find(&c, &s, &r, 1, &b, err, sizeof(err)),
	    -1);
	assert_string_equal(err, "job group 'oci-x' gives no owner (uid, "
	    "gid) to bound it by: its launcher is older than the daemon");
	config_free(&c);
}

/*
 * The job's group, once made, is bounded in the ledger by the [group]
 * its door found (groups_bound), and keeps its owner through the state
 * file: a restart or reload bounds it again.
 */
static void
test_made_group_bounded(void **state)
{
	char path[] = "/tmp/gpufrac-test-jobbound-rt.XXXXXX", err[256];
	struct gf_group_rule r, r2;
	struct gf_group_set s;
	struct config c, rt, rt2, back;
	struct groups gs;
	int fd;

	(void)state;
	conf_load(&c);
	config_init(&rt);
	config_init(&rt2);
	s = job(65534, "/ctr/a", &r);
	assert_int_equal(rtgroups_set(&rt, &s, &r, 1, &rt2, err,
	    sizeof(err)), 0);
	s = job(1000, "/kubepods/pod1/ctr", &r2);
	proto_strlcpy(s.name, "oci-y", sizeof(s.name));
	s.flags &= ~GF_GROUP_OWNER;	/* an older door: nothing bounds it */
	config_free(&rt);
	config_init(&rt);
	assert_int_equal(rtgroups_set(&rt2, &s, &r2, 1, &rt, err,
	    sizeof(err)), 0);
	/* 1 oci-x, 2 oci-y, then the files' 3 pods and 4 users */
	assert_int_equal(groups_build(&gs, &c, &rt, 0), 0);
	assert_int_equal(groups_bound(&gs, 1), 4);
	assert_int_equal(groups_bound(&gs, 2), 0);
	assert_int_equal(groups_bound(&gs, 3), 0);
	groups_free(&gs);
	/* through the state file and back */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(rtgroups_save(&rt, NULL, path, err, sizeof(err)), 0);
	config_init(&back);
	rtgroups_load(&back, path);
	unlink(path);
	assert_int_equal(back.ngroups, 2);
	assert_true(back.groups[0].owner_set);
	assert_int_equal(back.groups[0].owner_uid, 65534);
	assert_false(back.groups[1].owner_set);
	assert_int_equal(groups_build(&gs, &c, &back, 0), 0);
	assert_int_equal(groups_bound(&gs, 1), 4);
	groups_free(&gs);
	config_free(&back);
	config_free(&rt);
	config_free(&rt2);
	config_free(&c);
}

static void
report_count(const char *line, void *arg)
{
	char *first = arg;

	if (first[0] == '\0')
		snprintf(first, 256, "%s", line);
}

/* A state file's owner that is not UID:GID: one line naming it. */
static void
test_bad_owner(void **state)
{
	static const char *const bad[] = { "5", "5:", ":5", "x:1", "1:2:3",
	    "4294967296:0", "-1:0" };
	char path[] = "/tmp/gpufrac-test-jobbound-bad.XXXXXX", first[256];
	struct config c;
	size_t i;
	FILE *fp;
	int fd;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fd = mkstemp(path);
		assert_true(fd >= 0);
		assert_non_null(fp = fdopen(fd, "w"));
		fprintf(fp, "[group j]\nmatch = uid:1\nowner = %s\n", bad[i]);
		fclose(fp);
		config_init(&c);
		first[0] = '\0';
		assert_int_equal(config_load_groups(&c, path, report_count,
		    first), 1);
		assert_non_null(strstr(first, ":3: bad owner '"));
		assert_non_null(strstr(first, bad[i]));
		config_free(&c);
		unlink(path);
		memcpy(path + strlen(path) - 6, "XXXXXX", 6);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uid_group_bounds),
		cmocka_unit_test(test_capped_to_group),
		cmocka_unit_test(test_cgroup_group_bounds),
		cmocka_unit_test(test_no_group),
		cmocka_unit_test(test_no_owner),
		cmocka_unit_test(test_made_group_bounded),
		cmocka_unit_test(test_bad_owner),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
