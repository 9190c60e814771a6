/*
 * daemon/rtgroups.c: run-time groups made and changed on copies from
 * GROUP_SET and GROUP_RM, every value checked, and the state file written
 * and read back (a bad one moved aside).
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

#include "../../daemon/config.h"
#include "../../daemon/match.h"
#include "../../daemon/rtgroups.h"
#include "log.h"
#include "proto.h"

#define GiB	(1ull << 30)

static struct gf_group_set
set_of(const char *name)
{
	struct gf_group_set s;

	memset(&s, 0, sizeof(s));
	proto_strlcpy(s.name, name, sizeof(s.name));
	s.resolver = s.on_preempt = s.wait_timeout_ms = GF_UNSET;
	return s;
}

static struct gf_group_rule
rule_of(const char *text)
{
	struct gf_group_rule r;

	memset(&r, 0, sizeof(r));
	proto_strlcpy(r.rule, text, sizeof(r.rule));
	return r;
}

/* rtgroups_set must fail on s (and rules) with err containing want. */
static void
set_fails(const struct config *rt, const struct gf_group_set *s,
    const struct gf_group_rule *rules, size_t n, const char *want)
{
	struct config out;
	char err[256] = "";

	config_init(&out);
	assert_int_equal(rtgroups_set(rt, s, rules, n, &out, err,
	    sizeof(err)), -1);
	if (strstr(err, want) == NULL)
		fail_msg("error '%s' does not say '%s'", err, want);
	assert_int_equal(out.ngroups, 0);
}

static void
test_set_new_and_change(void **state)
{
	struct gf_group_rule rules[2] = { rule_of("uid:1000"),
	    rule_of("cgroup:/jobs/a*") };
	struct gf_group_set s = set_of("jobs");
	struct config rt, a, b;
	char err[256], text[128];
	const struct config_group *g;

	(void)state;
	config_init(&rt);
	config_init(&a);
	config_init(&b);
	s.nrules = 2;
	s.limit_kind = GF_LIMIT_BYTES;
	s.limit_value = 2 * GiB;
	s.priority_set = 1;
	s.priority = -4;
	assert_int_equal(rtgroups_set(&rt, &s, rules, 2, &a, err,
	    sizeof(err)), 0);
	assert_int_equal(rt.ngroups, 0);	/* a copy was changed */
	assert_int_equal(a.ngroups, 1);
	g = &a.groups[0];
	assert_string_equal(g->pol.name, "jobs");
	assert_int_equal(g->nrules, 2);
	assert_string_equal(match_rule_format(&g->rules[1], text,
	    sizeof(text)), "cgroup:/jobs/a*");
	assert_int_equal(g->limit_set, 1);
	assert_int_equal(g->pol.limit_value, 2 * GiB);
	assert_int_equal(g->pol.priority, -4);
	assert_int_equal(g->resolver_set, 0);	/* [daemon]'s, later */
	assert_int_equal(g->pol.on_preempt, GF_PREEMPT_KILL);

	/* A change keeps what it does not name, rules included. */
	s = set_of("jobs");
	s.resolver = GF_RESOLVER_WAIT;
	s.guarantee_kind = GF_LIMIT_PERCENT;
	s.guarantee_value = 2500;
	assert_int_equal(rtgroups_set(&a, &s, NULL, 0, &b, err,
	    sizeof(err)), 0);
	g = &b.groups[0];
	assert_int_equal(g->nrules, 2);
	assert_int_equal(g->pol.limit_value, 2 * GiB);
	assert_int_equal(g->pol.priority, -4);
	assert_int_equal(g->resolver_set, 1);
	assert_int_equal(g->pol.resolver, GF_RESOLVER_WAIT);
	assert_int_equal(g->pol.guarantee_kind, GF_LIMIT_PERCENT);
	assert_non_null(g->guarantee_where);
	config_free(&a);
	config_free(&b);
}

/*
 * A job's group (GF_GROUP_JOB) made again is replaced whole, and only
 * by the same rules: another container's group is not taken (issue 27).
 */
static void
test_set_job_replaces_whole(void **state)
{
	struct gf_group_rule mine[2] = { rule_of("cgroup:/c/a"),
	    rule_of("cgroup:/c/a/*") };
	struct gf_group_rule other[2] = { rule_of("cgroup:/c/b"),
	    rule_of("cgroup:/c/b/*") };
	struct gf_group_set s = set_of("oci-a");
	struct config rt, a, b;
	char err[256];
	const struct config_group *g;

	(void)state;
	config_init(&rt);
	config_init(&a);
	config_init(&b);
	s.nrules = 2;
	s.flags = GF_GROUP_JOB | GF_GROUP_TRANSIENT;
	s.limit_kind = GF_LIMIT_BYTES;
	s.limit_value = 2 * GiB;
	s.priority_set = 1;
	s.priority = 5;
	s.resolver = GF_RESOLVER_WAIT;
	assert_int_equal(rtgroups_set(&rt, &s, mine, 2, &a, err,
	    sizeof(err)), 0);

	/* the same container again, naming only its memory */
	s = set_of("oci-a");
	s.nrules = 2;
	s.flags = GF_GROUP_JOB | GF_GROUP_TRANSIENT;
	s.limit_kind = GF_LIMIT_BYTES;
	s.limit_value = GiB;
	assert_int_equal(rtgroups_set(&a, &s, mine, 2, &b, err,
	    sizeof(err)), 0);
	assert_int_equal(b.ngroups, 1);
	g = &b.groups[0];
	assert_int_equal(g->pol.limit_value, GiB);
	assert_int_equal(g->pol.priority, 0);		/* not the old 5 */
	assert_int_equal(g->resolver_set, 0);		/* nor wait */
	assert_int_equal(g->transient, 1);
	config_free(&b);

	/* another cgroup under the same name is refused */
	config_init(&b);
	set_fails(&a, &s, other, 2, "group 'oci-a' exists for other "
	    "processes (cgroup:/c/a, ...): refusing to replace it");
	/* and so is a job's set without rules */
	s.nrules = 0;
	set_fails(&a, &s, NULL, 0, "refusing to replace it");
	/* an administrator's change still names what it changes */
	s = set_of("oci-a");
	s.nrules = 2;
	s.limit_kind = GF_LIMIT_BYTES;
	s.limit_value = GiB;
	assert_int_equal(rtgroups_set(&a, &s, other, 2, &b, err,
	    sizeof(err)), 0);
	assert_int_equal(b.groups[0].pol.priority, 5);
	config_free(&a);
	config_free(&b);
}

static void
test_set_refuses(void **state)
{
	struct gf_group_rule good = rule_of("uid:1"), bad;
	struct gf_group_set s;
	struct config rt;

	(void)state;
	config_init(&rt);
	set_fails(&rt, &(struct gf_group_set){ .name = "new",
	    .resolver = GF_UNSET, .on_preempt = GF_UNSET,
	    .wait_timeout_ms = GF_UNSET }, NULL, 0, "it needs a match rule");
	s = set_of("has space");
	set_fails(&rt, &s, &good, 1, "bad group name 'has space'");
	s = set_of("Default");
	set_fails(&rt, &s, &good, 1, "reserved");
	s = set_of("x");
	bad = rule_of("cgroup:relative");
	set_fails(&rt, &s, &bad, 1, "bad rule 'cgroup:relative'");
	bad = rule_of("uid:1 uid:2");
	set_fails(&rt, &s, &bad, 1, "white space in a rule");
	s.limit_kind = GF_LIMIT_PERCENT;
	s.limit_value = 10001;
	set_fails(&rt, &s, &good, 1, "bad limit for group 'x'");
	s = set_of("x");
	s.limit_kind = GF_LIMIT_BYTES;	/* zero, refused as in the files */
	s.limit_value = 0;
	set_fails(&rt, &s, &good, 1, "bad limit for group 'x'");
	s = set_of("x");
	s.limit_kind = 9;
	set_fails(&rt, &s, &good, 1, "bad limit");
	s = set_of("x");
	s.resolver = GF_RESOLVER_SWAP + 1;
	set_fails(&rt, &s, &good, 1, "bad resolver");
	s = set_of("x");
	s.on_preempt = GF_PREEMPT_NONE + 1;
	set_fails(&rt, &s, &good, 1, "bad on_preempt");
	s = set_of("x");
	s.flags = 0x10;
	set_fails(&rt, &s, &good, 1, "bad flags");
}

static void
test_rm(void **state)
{
	struct gf_group_rule r = rule_of("gid:5");
	struct gf_group_set s = set_of("a");
	struct config rt, one, two, left;
	char err[256];

	(void)state;
	config_init(&rt);
	config_init(&one);
	config_init(&two);
	config_init(&left);
	s.nrules = 1;
	assert_int_equal(rtgroups_set(&rt, &s, &r, 1, &one, err,
	    sizeof(err)), 0);
	proto_strlcpy(s.name, "b", sizeof(s.name));
	assert_int_equal(rtgroups_set(&one, &s, &r, 1, &two, err,
	    sizeof(err)), 0);
	assert_int_equal(rtgroups_rm(&two, "a", &left, err, sizeof(err)), 0);
	assert_int_equal(left.ngroups, 1);
	assert_string_equal(left.groups[0].pol.name, "b");
	config_free(&left);
	config_init(&left);
	assert_int_equal(rtgroups_rm(&two, "c", &left, err, sizeof(err)),
	    RTGROUPS_NONE);
	assert_string_equal(err, "no run-time group 'c'");
	config_free(&one);
	config_free(&two);
}

/* rt: a copy of empty with group "full", every value set, in it. */
static void
full_group(const struct config *empty, struct config *rt)
{
	struct gf_group_rule rules[3] = { rule_of("cgroup:/a\\[1\\]/*"),
	    rule_of("container:3F2A"), rule_of("pod:6f1e8c3a-2b4d-4e5f-9a1b-"
	    "0c2d3e4f5a6b") };
	struct gf_group_set s = set_of("full");
	char err[256];

	s.nrules = 3;
	s.limit_kind = GF_LIMIT_PERCENT;
	s.limit_value = 3750;
	s.guarantee_kind = GF_LIMIT_BYTES;
	s.guarantee_value = GiB;
	s.priority_set = 1;
	s.priority = 7;
	s.resolver = GF_RESOLVER_PREEMPT;
	s.on_preempt = GF_PREEMPT_SWAP;
	s.wait_timeout_ms = 2500;
	s.flags = GF_GROUP_TRANSIENT;
	assert_int_equal(rtgroups_set(empty, &s, rules, 3, rt, err,
	    sizeof(err)), 0);
}

static void
test_save_and_load(void **state)
{
	struct config rt, back;
	char dir[] = "/tmp/gf-rtgroups-XXXXXX", path[128];
	char err[256], t1[128], t2[128];
	const struct config_group *g, *h;
	size_t i;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, RTGROUPS_FILE);
	config_init(&rt);
	config_init(&back);
	full_group(&back, &rt);
	assert_int_equal(rtgroups_save(&rt, NULL, path, err, sizeof(err)), 0);
	rtgroups_load(&back, path);
	assert_int_equal(back.ngroups, 1);
	g = &rt.groups[0];
	h = &back.groups[0];
	assert_string_equal(h->pol.name, "full");
	assert_int_equal(h->nrules, 3);
	for (i = 0; i < 3; i++)
		assert_string_equal(match_rule_format(&h->rules[i], t1,
		    sizeof(t1)), match_rule_format(&g->rules[i], t2,
		    sizeof(t2)));
	assert_int_equal(h->limit_set, 1);
	assert_int_equal(h->pol.limit_kind, GF_LIMIT_PERCENT);
	assert_int_equal(h->pol.limit_value, 3750);
	assert_int_equal(h->pol.guarantee_value, GiB);
	assert_int_equal(h->pol.priority, 7);
	assert_int_equal(h->pol.resolver, GF_RESOLVER_PREEMPT);
	assert_int_equal(h->pol.on_preempt, GF_PREEMPT_SWAP);
	assert_int_equal(h->pol.wait_timeout_ms, 2500);
	assert_int_equal(h->transient, 1);

	/* Where it cannot be written, nothing is. */
	assert_int_equal(rtgroups_save(&rt, NULL, "/nonexistent/dir/x.conf", err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot write '/nonexistent/dir/x.conf'"));
	unlink(path);
	rmdir(dir);
	config_free(&rt);
	config_free(&back);
}

/* A file that is not one of ours is moved aside, not used. */
static void
test_load_foreign(void **state)
{
	char dir[] = "/tmp/gf-rtgroups-XXXXXX", path[128], bad[140];
	struct config back;
	FILE *fp;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, RTGROUPS_FILE);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("[daemon]\nsocket = /x\n", fp);
	fclose(fp);
	config_init(&back);
	rtgroups_load(&back, path);
	assert_int_equal(back.ngroups, 0);
	snprintf(bad, sizeof(bad), "%s.bad", path);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(access(bad, F_OK), 0);
	unlink(bad);
	rmdir(dir);
	config_free(&back);
}

static void
test_path(void **state)
{
	struct config c;
	char buf[256];

	(void)state;
	config_init(&c);
	assert_int_equal(rtgroups_path(&c, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/run/gpufrac/" RTGROUPS_FILE);
	proto_strlcpy(c.state_dir, "/var/lib/gpufrac", sizeof(c.state_dir));
	assert_int_equal(rtgroups_path(&c, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/var/lib/gpufrac/" RTGROUPS_FILE);
	assert_int_equal(rtgroups_path(&c, buf, 10), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_new_and_change),
		cmocka_unit_test(test_set_job_replaces_whole),
		cmocka_unit_test(test_set_refuses),
		cmocka_unit_test(test_rm),
		cmocka_unit_test(test_save_and_load),
		cmocka_unit_test(test_load_foreign),
		cmocka_unit_test(test_path),
	};

	log_init("test", LOG_LVL_ERROR + 0, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
