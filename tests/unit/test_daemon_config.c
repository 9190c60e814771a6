/*
 * daemon/config.c and config_group.c: every key accepted and rejected,
 * sections, [group] sections and the checks across files, duplicates,
 * drop-in order and errors, with the fixtures in tests/unit/fixtures (run
 * from the top of the tree); groups.c, which puts a process in a group;
 * and arbiter_check, which holds a parsed configuration against the
 * machine's devices.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "names.h"

#include "../../daemon/arbiter.h"
#include "../../daemon/config.h"
#include "../../daemon/groups.h"
#include "../../daemon/ledger.h"
#include "log.h"
#include "uuid.h"

#define FIX	"tests/unit/fixtures/"

/* What config_load reported. */
struct errs {
	int	n;
	char	first[1024];
};

static void
capture(const char *line, void *arg)
{
	struct errs *e = arg;

	if (e->n++ == 0)
		snprintf(e->first, sizeof(e->first), "%s", line);
}

static int
load(struct config *c, const char *path, int optional, struct errs *e)
{
	memset(e, 0, sizeof(*e));
	config_init(c);
	return config_load(c, path, optional, capture, e);
}

/* Write text to a fresh temporary file; its name goes in path. */
static void
temp_conf(char *path, size_t size, const char *text)
{
	FILE *fp;
	int fd;

	snprintf(path, size, "/tmp/gpufrac-test-conf.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	fp = fdopen(fd, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void
test_defaults(void **state)
{
	struct config c;

	(void)state;
	config_init(&c);
	assert_string_equal(c.socket, "/run/gpufrac/gpufrac.sock");
	assert_int_equal(c.socket_mode, 0666);
	assert_string_equal(c.admin_group, "");
	assert_int_equal(c.admin_gid_valid, 0);
	assert_int_equal(c.log_level, LOG_LVL_INFO);
	assert_int_equal(c.default_limit_kind, GF_LIMIT_PERCENT);
	assert_int_equal(c.default_limit_value, 10000);
	assert_int_equal(c.default_resolver, GF_RESOLVER_FAIL);
	assert_int_equal(c.wait_timeout_ms, 30000);
	assert_int_equal(c.client_may_raise, 0);
	assert_int_equal(c.lend_guarantees, 1);
	assert_int_equal(c.swap_min_idle_ms, 1000);
	assert_string_equal(c.state_dir, "");
	assert_int_equal(c.ndevices, 0);
	assert_int_equal(c.ngroups, 0);
	/* [jobs]: a container or step asks for nothing above the files' */
	assert_int_equal(c.jobs.max_priority, 0);
	assert_int_equal(c.jobs.max_guarantee_kind, GF_LIMIT_BYTES);
	assert_int_equal(c.jobs.max_guarantee_value, 0);
	assert_int_equal(c.jobs.max_limit_kind, GF_LIMIT_NONE);
	assert_int_equal(c.jobs.resolvers, 1u << GF_RESOLVER_FAIL |
	    1u << GF_RESOLVER_WAIT);
	assert_int_equal(c.jobs.cap, 0);
	config_free(&c);
}

static void
test_good(void **state)
{
	uint8_t uuid[GF_UUID_LEN];
	struct config c;
	struct errs e;

	(void)state;
	assert_int_equal(load(&c, FIX "good.conf", 0, &e), 0);
	assert_int_equal(e.n, 0);
	assert_string_equal(c.socket, "/tmp/gpufrac-test/gpufrac.sock");
	assert_int_equal(c.socket_mode, 0660);
	assert_string_equal(c.admin_group, "root");
	assert_int_equal(c.admin_gid_valid, 1);
	assert_int_equal(c.admin_gid, 0);
	assert_int_equal(c.log_level, LOG_LVL_DEBUG);
	assert_int_equal(c.default_limit_kind, GF_LIMIT_PERCENT);
	assert_int_equal(c.default_limit_value, 5000);
	assert_int_equal(c.default_resolver, GF_RESOLVER_FAIL);
	assert_int_equal(c.wait_timeout_ms, 1500);
	assert_int_equal(c.ndevices, 2);
	assert_int_equal(uuid_parse("GPU-5f2c1a3b-0000-1111-2222-33334444abcd",
	    uuid), 0);
	assert_true(c.devices[0].by_uuid);
	assert_memory_equal(c.devices[0].uuid, uuid, GF_UUID_LEN);
	assert_true(c.devices[0].reserve_set);
	assert_int_equal(c.devices[0].reserve, 1ull << 30);
	assert_string_equal(c.devices[0].where, FIX "good.conf:13");
	assert_string_equal(c.devices[0].reserve_where, FIX "good.conf:14");
	assert_false(c.devices[1].by_uuid);
	assert_int_equal(c.devices[1].ordinal, 1);
	assert_int_equal(c.devices[1].reserve, 512ull << 20);
	assert_int_equal(c.client_may_raise, 1);
	assert_int_equal(c.jobs.max_priority, 5);
	assert_int_equal(c.jobs.max_guarantee_kind, GF_LIMIT_PERCENT);
	assert_int_equal(c.jobs.max_guarantee_value, 1000);
	assert_int_equal(c.jobs.max_limit_kind, GF_LIMIT_BYTES);
	assert_int_equal(c.jobs.max_limit_value, 8ull << 30);
	assert_int_equal(c.jobs.resolvers, 1u << GF_RESOLVER_WAIT |
	    1u << GF_RESOLVER_SWAP | 1u << GF_RESOLVER_PREEMPT);
	assert_int_equal(c.jobs.cap, 1);
	config_free(&c);
}

static void
test_good_groups(void **state)
{
	const struct group_policy *t, *i;
	struct config c;
	struct errs e;

	(void)state;
	assert_int_equal(load(&c, FIX "good.conf", 0, &e), 0);
	assert_int_equal(c.ngroups, 2);
	t = &c.groups[0].pol;
	assert_string_equal(t->name, "trainer");
	assert_string_equal(c.groups[0].where, FIX "good.conf:20");
	assert_int_equal(c.groups[0].nrules, 2);
	assert_int_equal(c.groups[0].rules[0].kind, MATCH_CONTAINER);
	assert_string_equal(c.groups[0].rules[0].arg, "3f2a9c");
	assert_int_equal(c.groups[0].rules[1].kind, MATCH_CGROUP);
	assert_int_equal(t->per_process, 0);
	assert_int_equal(t->limit_kind, GF_LIMIT_PERCENT);
	assert_int_equal(t->limit_value, 5000);
	assert_int_equal(t->guarantee_kind, GF_LIMIT_BYTES);
	assert_int_equal(t->guarantee_value, 4ull << 30);
	assert_string_equal(c.groups[0].guarantee_where, FIX "good.conf:23");
	assert_int_equal(t->priority, 10);
	assert_int_equal(t->resolver, GF_RESOLVER_FAIL);
	assert_int_equal(t->wait_timeout_ms, 60000);
	assert_int_equal(t->on_preempt, GF_PREEMPT_NONE);
	assert_int_equal(t->kill_grace_ms, 30000);
	assert_int_equal(t->client_may_raise, 1);
	/* Unset keys: [daemon]'s values, or the built-in defaults. */
	i = &c.groups[1].pol;
	assert_string_equal(i->name, "infer");
	assert_int_equal(c.groups[1].nrules, 3);
	assert_int_equal(c.groups[1].rules[2].kind, MATCH_POD);
	assert_int_equal(i->limit_kind, GF_LIMIT_PERCENT);
	assert_int_equal(i->limit_value, 5000);	/* default_limit */
	assert_int_equal(i->guarantee_value, 0);
	assert_int_equal(i->priority, -5);
	assert_int_equal(i->wait_timeout_ms, 1500);	/* wait_timeout */
	assert_int_equal(i->on_preempt, GF_PREEMPT_KILL);
	assert_int_equal(i->kill_grace_ms, 10000);
	assert_int_equal(i->client_may_raise, 0);
	config_free(&c);
}

/* groups.c: the table and the first section that matches. */
static void
test_groups_match(void **state)
{
	struct group_policy pols[3];
	struct config c, rt;
	struct groups gs;
	struct errs e;

	(void)state;
	assert_int_equal(load(&c, FIX "good.conf", 0, &e), 0);
	config_init(&rt);
	assert_int_equal(groups_build(&gs, &c, &rt, 0), 0);
	assert_int_equal(groups_count(&gs), 3);
	groups_policies(&gs, pols);
	assert_string_equal(pols[0].name, "default");
	assert_int_equal(pols[0].per_process, 1);
	assert_int_equal(pols[0].limit_value, 5000);
	assert_int_equal(pols[0].wait_timeout_ms, 1500);
	assert_int_equal(pols[0].client_may_raise, 1);
	assert_string_equal(pols[1].name, "trainer");
	assert_string_equal(pols[2].name, "infer");
	/* Any rule of a section; the first section wins. */
	assert_int_equal(groups_match(&gs, "/docker/3f2a9c0000000000000000000000"
	    "000000000000000000000000000000000000", 1000, 1000), 1);
	assert_int_equal(groups_match(&gs, "/gpu-jobs/train/x/y", 5, 5), 1);
	assert_int_equal(groups_match(&gs, "/gpu-jobs/infer", 1000, 5), 2);
	assert_int_equal(groups_match(&gs, "/", 5, 1000), 2);
	assert_int_equal(groups_match(&gs, "/kubepods/pod6f1e8c3a-2b4d-4e5f-"
	    "9a1b-0c2d3e4f5a6b/x", 5, 5), 2);
	assert_int_equal(groups_match(&gs, "/user.slice", 5, 5), 0);
	assert_int_equal(groups_match(&gs, NULL, 5, 5), 0);
	groups_free(&gs);
	config_free(&c);
}

/* Each bad_*.conf fixture: the line and message its first error has. */
static const struct {
	const char	*file;
	unsigned	 line;
	const char	*message;
} bad_fixtures[] = {
	{ "bad_size.conf", 7, "bad size for 'reserve': '12Q'" },
	{ "bad_socket_relative.conf", 2,
	    "bad path for 'socket': 'run/gpufrac.sock' (must be absolute)" },
	{ "bad_socket_long.conf", 2, "(longer than 107 bytes)" },
	{ "bad_socket_mode.conf", 2, "bad mode for 'socket_mode': '0999'" },
	{ "bad_admin_group.conf", 2,
	    "bad group for 'admin_group': 'gpu admins'" },
	{ "bad_log_level.conf", 2, "bad level for 'log_level': 'loud'" },
	{ "bad_default_limit.conf", 2,
	    "bad limit for 'default_limit': '150%'" },
	{ "bad_resolver.conf", 2,
	    "unknown resolver 'quick' for 'default_resolver'" },
	{ "bad_wait_timeout.conf", 2,
	    "bad duration for 'wait_timeout': 'soon'" },
	{ "bad_empty_value.conf", 2, "bad limit for 'default_limit': ''" },
	{ "bad_unknown_section.conf", 4, "unknown section '[scheduler]'" },
	{ "bad_group_section.conf", 1,
	    "group 'trainer' has no 'match' rule" },
	{ "bad_group_key.conf", 3,
	    "unknown key 'limits' in section '[group trainer]'" },
	{ "bad_group_priority.conf", 3,
	    "bad priority for 'priority': 'high' (expected an integer" },
	{ "bad_group_on_preempt.conf", 3,
	    "unknown action 'stop' for 'on_preempt' (expected kill, none or "
	    "swap)" },
	{ "bad_group_default.conf", 2, "group name 'default' is reserved" },
	{ "bad_group_guarantee.conf", 4, "guarantee 8.0GiB of group "
	    "'trainer' is more than its limit 4.0GiB" },
	{ "bad_group_resolver.conf", 3,
	    "unknown resolver 'later' for 'resolver'" },
	{ "bad_group_match.conf", 2, "bad rule 'container:3f2a9z' for "
	    "'match': a container id prefix is 1 to 64 hex digits" },
	{ "bad_group_name.conf", 1, "bad group name 'train er'" },
	{ "bad_group_shares.conf", 7, "guarantees add up to 110% of every "
	    "device's shareable capacity, more than all of it: trainer 60%, "
	    "infer 50%" },
	{ "bad_group_duplicate.conf", 6, "duplicate key 'match' in section "
	    "'[group trainer]' (first set on line 2)" },
	{ "bad_unknown_key.conf", 3,
	    "unknown key 'colour' in section '[daemon]'" },
	{ "bad_device_key.conf", 2,
	    "unknown key 'limit' in section '[device 0]'" },
	{ "bad_duplicate_key.conf", 4, "duplicate key 'log_level' in section "
	    "'[daemon]' (first set on line 2)" },
	{ "bad_duplicate_device.conf", 5, "duplicate key 'reserve' in "
	    "section '[device 0]' (first set on line 2)" },
	{ "bad_device_name.conf", 1, "bad device 'gpu0' in section "
	    "'[device gpu0]' (expected GPU-<uuid> or an ordinal)" },
	{ "bad_device_missing.conf", 1, "missing device in section "
	    "'[device]'" },
	{ "bad_syntax.conf", 3, "expected 'key = value', '[section]' or a "
	    "comment, not 'just some words'" },
	{ "bad_bracket.conf", 1, "missing ']' in section header '[daemon'" },
	{ "bad_outside.conf", 1, "key 'log_level' outside of any section" },
	{ "bad_long_line.conf", 2, "line too long" },
	{ "bad_jobs_resolvers.conf", 2, "unknown resolver 'later' for "
	    "'resolvers' (expected fail, wait, preempt or swap)" },
	{ "bad_jobs_over_cap.conf", 3, "bad value for 'over_cap': 'trim' "
	    "(expected refuse or cap)" },
	{ "bad_jobs_guarantee.conf", 2, "bad size for 'max_guarantee': "
	    "'lots'" },
	{ "bad_default_limit_zero.conf", 3, "bad limit for 'default_limit': "
	    "'0' (a limit must be positive" },
	{ "bad_group_limit_zero.conf", 4, "bad limit for 'limit': '0Gi' (a "
	    "limit must be positive" },
	{ "bad_jobs_limit_zero.conf", 2, "bad limit for 'max_limit': '0%' (a "
	    "limit must be positive" },
};

static void
test_bad_fixtures(void **state)
{
	char path[PATH_MAX], prefix[PATH_MAX + 16];
	struct config c;
	struct errs e;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad_fixtures) / sizeof(bad_fixtures[0]); i++) {
		snprintf(path, sizeof(path), FIX "%s", bad_fixtures[i].file);
		snprintf(prefix, sizeof(prefix), "%s:%u: ", path,
		    bad_fixtures[i].line);
		print_message("%s\n", path);
		assert_true(load(&c, path, 0, &e) > 0);
		assert_int_equal(e.n, 1);
		assert_true(strncmp(e.first, prefix, strlen(prefix)) == 0 ||
		    (print_error("got '%s', want prefix '%s'\n", e.first,
		    prefix), 0));
		assert_non_null(strstr(e.first, bad_fixtures[i].message));
		config_free(&c);
	}
}

/* Values written inline: accepted ones and the struct they give. */
static const struct good_value {
	const char	*text;
	size_t		 off;	/* field checked, in struct config */
	int		 size;	/* 4 or 8 */
	uint64_t	 want;
} good_values[] = {
#define F(f)	offsetof(struct config, f), (int)sizeof(((struct config *)0)->f)
	{ "socket_mode = 666", F(socket_mode), 0666 },
	{ "socket_mode = 0600", F(socket_mode), 0600 },
	{ "socket_mode = 0", F(socket_mode), 0 },
	{ "log_level = error", F(log_level), LOG_LVL_ERROR },
	{ "log_level = warn", F(log_level), LOG_LVL_WARN },
	{ "log_level = info", F(log_level), LOG_LVL_INFO },
	{ "default_limit = 8Gi", F(default_limit_value), 8ull << 30 },
	{ "default_limit = 8Gi", F(default_limit_kind), GF_LIMIT_BYTES },
	{ "default_limit = 1.5G", F(default_limit_value), 1500000000ull },
	{ "default_limit = 12.5%", F(default_limit_value), 1250 },
	{ "default_limit = 100%", F(default_limit_kind), GF_LIMIT_PERCENT },
	{ "wait_timeout = 250ms", F(wait_timeout_ms), 250 },
	{ "wait_timeout = 2m", F(wait_timeout_ms), 120000 },
	{ "wait_timeout = 0", F(wait_timeout_ms), 0 },
	{ "wait_timeout = 45", F(wait_timeout_ms), 45000 },
	{ "admin_group = 4242", F(admin_gid), 4242 },
	{ "admin_group = 4242", F(admin_gid_valid), 1 },
	{ "admin_group = no-such-group-here", F(admin_gid_valid), 0 },
	{ "default_resolver = fail", F(default_resolver), GF_RESOLVER_FAIL },
	{ "default_resolver = wait", F(default_resolver), GF_RESOLVER_WAIT },
	{ "default_resolver = preempt", F(default_resolver),
	    GF_RESOLVER_PREEMPT },
	{ "client_may_raise = yes", F(client_may_raise), 1 },
	{ "client_may_raise = no", F(client_may_raise), 0 },
	{ "lend_guarantees = no", F(lend_guarantees), 0 },
	{ "lend_guarantees = yes", F(lend_guarantees), 1 },
	{ "swap_min_idle = 250ms", F(swap_min_idle_ms), 250 },
	{ "swap_min_idle = 0", F(swap_min_idle_ms), 0 },
	{ "max_connections_per_uid = 16", F(max_conns_per_uid), 16 },
	{ "max_connections_per_uid = 0", F(max_conns_per_uid), 0 },
	{ "output_queue_limit = 64Mi", F(outq_limit), 64ull << 20 },
	{ "unshimmed = kill", F(unshimmed), POLICY_UNSHIMMED_KILL },
#undef F
};

static void
test_good_values(void **state)
{
	const struct good_value *v;
	char path[64], text[256];
	struct config c;
	struct errs e;
	uint64_t got;
	uint32_t got32;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good_values) / sizeof(good_values[0]); i++) {
		v = &good_values[i];
		snprintf(text, sizeof(text), "[daemon]\n%s\n", v->text);
		temp_conf(path, sizeof(path), text);
		print_message("%s\n", v->text);
		assert_int_equal(load(&c, path, 0, &e), 0);
		if (v->size == 8)
			memcpy(&got, (char *)&c + v->off, 8);
		else {
			memcpy(&got32, (char *)&c + v->off, 4);
			got = got32;
		}
		assert_int_equal(got, v->want);
		config_free(&c);
		unlink(path);
	}
}

/* Values written inline: every key rejects garbage, at its line. */
static const struct bad_value {
	const char	*section;
	const char	*key;
	const char	*value;
	const char	*message;
} bad_values[] = {
	{ "daemon", "socket", "", "bad path for 'socket': ''" },
	{ "daemon", "socket", "gpufrac.sock", "must be absolute" },
	{ "daemon", "socket_mode", "rw-rw-rw-", "bad mode" },
	{ "daemon", "socket_mode", "01777", "bad mode" },
	{ "daemon", "socket_mode", "-1", "bad mode" },
	{ "daemon", "socket_mode", "0x1ff", "bad mode" },
	{ "daemon", "admin_group", "a:b", "bad group" },
	{ "daemon", "log_level", "INFO", "bad level" },
	{ "daemon", "log_level", "3", "bad level" },
	{ "daemon", "default_limit", "0%", "a limit must be positive" },
	{ "daemon", "default_limit", "0", "a limit must be positive" },
	{ "daemon", "default_limit", "0Gi", "a limit must be positive" },
	{ "daemon", "default_limit", "0.4", "a limit must be positive" },
	{ "daemon", "default_limit", "0.001%", "a limit must be positive" },
	{ "daemon", "default_limit", "-1Gi", "bad limit" },
	{ "daemon", "default_limit", "12Q", "bad limit" },
	{ "daemon", "default_limit", "99999999999999999999", "bad limit" },
	{ "daemon", "default_resolver", "FAIL", "unknown resolver" },
	{ "daemon", "wait_timeout", "30 s", "bad duration" },
	{ "daemon", "wait_timeout", "-5s", "bad duration" },
	{ "daemon", "wait_timeout", "50d", "bad duration" },
	{ "daemon", "wait_timeout", "100000000s", "at most" },
	{ "device 0", "reserve", "", "bad size for 'reserve': ''" },
	{ "device 0", "reserve", "1 Gi", "bad size" },
	{ "device 0", "reserve", "10%", "bad size" },
	{ "device 0", "reserve", "1Pi", "bad size" },
	{ "device GPU-00000000-0000-0000-0000-000000000001", "reserve",
	    "lots", "bad size for 'reserve': 'lots'" },
	{ "daemon", "client_may_raise", "true", "expected yes or no" },
	{ "daemon", "lend_guarantees", "on", "expected yes or no" },
	{ "daemon", "state_dir", "var/lib", "must be absolute" },
	{ "group g", "match", "", "bad rules for 'match': '' (expected" },
	{ "group g", "match", "uid:x", "bad rule 'uid:x'" },
	{ "group g", "match", "pod:1234", "bad rule 'pod:1234'" },
	{ "group g", "limit", "0%", "a limit must be positive" },
	{ "group g", "limit", "0", "a limit must be positive" },
	{ "group g", "limit", "0Mi", "a limit must be positive" },
	{ "jobs", "max_limit", "0", "a limit must be positive" },
	{ "jobs", "max_limit", "0Ki", "a limit must be positive" },
	{ "group g", "limit", "lots", "bad limit" },
	{ "group g", "guarantee", "101%", "bad guarantee" },
	{ "group g", "guarantee", "-1Gi", "bad guarantee" },
	{ "group g", "priority", "", "bad priority" },
	{ "group g", "priority", "1.5", "bad priority" },
	{ "group g", "priority", "2147483648", "bad priority" },
	{ "group g", "priority", "-2147483649", "bad priority" },
	{ "group g", "priority", "0x10", "bad priority" },
	{ "group g", "resolver", "never", "unknown resolver" },
	{ "group g", "wait_timeout", "soon", "bad duration" },
	{ "group g", "on_preempt", "KILL", "unknown action" },
	{ "group g", "kill_grace", "1 s", "bad duration" },
	{ "group g", "client_may_raise", "1", "expected yes or no" },
	{ "group g", "transient", "yes", "for run-time groups only" },
	{ "daemon", "max_connections_per_uid", "-1", "bad value" },
	{ "daemon", "max_connections_per_uid", "lots", "bad value" },
	{ "daemon", "output_queue_limit", "512Ki", "expected 1Mi or more" },
	{ "daemon", "output_queue_limit", "big", "bad size" },
	{ "daemon", "unshimmed", "yes", "(expected count or kill)" },
	{ "group g", "unshimmed", "KILL", "bad value for 'unshimmed'" },
	{ "jobs", "unshimmed", "", "bad value for 'unshimmed': ''" },
};

static void
test_bad_values(void **state)
{
	const struct bad_value *b;
	char path[64], text[256], quoted[128];
	struct config c;
	struct errs e;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad_values) / sizeof(bad_values[0]); i++) {
		b = &bad_values[i];
		snprintf(text, sizeof(text), "; a comment\n[%s]\n%s = %s\n%s",
		    b->section, b->key, b->value,
		    strncmp(b->section, "group", 5) == 0 &&
		    strcmp(b->key, "match") != 0 ? "match = uid:1\n" : "");
		temp_conf(path, sizeof(path), text);
		print_message("[%s] %s = %s\n", b->section, b->key, b->value);
		assert_int_equal(load(&c, path, 0, &e), 1);
		assert_non_null(strstr(e.first, ":3: "));
		assert_non_null(strstr(e.first, b->message));
		/* The message quotes both the key and the value. */
		snprintf(quoted, sizeof(quoted), "'%s'", b->key);
		assert_non_null(strstr(e.first, quoted));
		snprintf(quoted, sizeof(quoted), "'%s'", b->value);
		assert_non_null(strstr(e.first, quoted));
		config_free(&c);
		unlink(path);
	}
}

/* Every error in a file is reported, not only the first. */
static void
test_all_errors(void **state)
{
	char path[64];
	struct config c;
	struct errs e;

	(void)state;
	temp_conf(path, sizeof(path), "[daemon]\nlog_level = loud\n"
	    "[nothing]\nx = 1\n[daemon]\nsocket_mode = 9\nbogus = 1\n");
	assert_int_equal(load(&c, path, 0, &e), 4);
	assert_non_null(strstr(e.first, ":2: bad level"));
	config_free(&c);
	unlink(path);
}

static void
test_missing_file(void **state)
{
	struct config c;
	struct errs e;

	(void)state;
	/* Given with -c: an error. */
	assert_int_equal(load(&c, FIX "no-such.conf", 0, &e), 1);
	assert_string_equal(e.first, "cannot open '" FIX "no-such.conf': "
	    "No such file or directory");
	config_free(&c);
	/* The default path: built-in defaults. */
	assert_int_equal(load(&c, FIX "no-such.conf", 1, &e), 0);
	assert_int_equal(c.wait_timeout_ms, 30000);
	config_free(&c);
	/* ... and its drop-ins still count. */
	assert_int_equal(load(&c, FIX "onlydropins.conf", 1, &e), 0);
	assert_int_equal(c.wait_timeout_ms, 5000);
	config_free(&c);
	/* A directory is not a file. */
	assert_int_equal(load(&c, FIX "dropin.conf.d", 0, &e), 1);
	assert_non_null(strstr(e.first, "Is a directory"));
	config_free(&c);
}

/*
 * The main file is read only when it is a regular file (issue 22): a FIFO
 * blocked the daemon, /dev/zero grew its line without bound. A FIFO with
 * no writer would hang this test on the old code: alarm() ends it.
 */
static void
test_not_regular(void **state)
{
	char path[64], fifo[64];
	struct config c;
	struct errs e;
	FILE *fp;
	long i;

	(void)state;
	alarm(10);
	snprintf(fifo, sizeof(fifo), "/tmp/gpufrac-test-fifo.%ld",
	    (long)getpid());
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(load(&c, fifo, 0, &e), 1);
	assert_true(strstr(e.first, "not a regular file") != NULL);
	assert_true(strstr(e.first, fifo) != NULL);
	config_free(&c);
	unlink(fifo);
	assert_int_equal(load(&c, "/dev/zero", 0, &e), 1);
	assert_string_equal(e.first, "cannot read '/dev/zero': not a regular "
	    "file");
	config_free(&c);
	/* One endless line: an error at line 2, the file read to its end. */
	temp_conf(path, sizeof(path), "[daemon]\n");
	fp = fopen(path, "a");
	assert_non_null(fp);
	for (i = 0; i < (8l << 20); i++)
		putc('x', fp);
	fputs("\nlog_level = loud\n", fp);
	fclose(fp);
	assert_int_equal(load(&c, path, 0, &e), 2);
	assert_non_null(strstr(e.first, ":2: line too long"));
	config_free(&c);
	unlink(path);
	alarm(0);
}

static void
test_dropins(void **state)
{
	struct config c;
	struct errs e;

	(void)state;
	/* 10-first, 20-second, 9-last, in that (byte) order; README and
	 * .hidden.conf are not read. Later files override earlier ones. */
	assert_int_equal(load(&c, FIX "dropin.conf", 0, &e), 0);
	assert_int_equal(c.log_level, LOG_LVL_WARN);
	assert_int_equal(c.default_limit_value, 2500);
	assert_int_equal(c.ndevices, 1);
	assert_int_equal(c.devices[0].reserve, 2ull << 30);
	assert_string_equal(c.devices[0].where, FIX "dropin.conf:5");
	assert_string_equal(c.devices[0].reserve_where,
	    FIX "dropin.conf.d/20-second.conf:5");
	/* Groups: the main file's first, then each drop-in's in order; a
	 * later file overrides a group's keys. */
	assert_int_equal(c.ngroups, 3);
	assert_string_equal(c.groups[0].pol.name, "main");
	assert_string_equal(c.groups[0].where, FIX "dropin.conf:8");
	assert_int_equal(c.groups[0].pol.limit_value, 1ull << 30);
	assert_int_equal(c.groups[0].nrules, 2);
	assert_int_equal(c.groups[0].rules[1].id, 1002);
	assert_string_equal(c.groups[1].pol.name, "c3f2a");
	assert_int_equal(c.groups[1].pol.guarantee_kind, GF_LIMIT_PERCENT);
	assert_int_equal(c.groups[1].pol.guarantee_value, 1000);
	/* An unset limit is the [daemon] default_limit in force at the end. */
	assert_int_equal(c.groups[1].pol.limit_kind, GF_LIMIT_PERCENT);
	assert_int_equal(c.groups[1].pol.limit_value, 2500);
	assert_string_equal(c.groups[2].pol.name, "other");
	config_free(&c);
}

static void
test_dropin_error(void **state)
{
	struct config c;
	struct errs e;

	(void)state;
	assert_int_equal(load(&c, FIX "dropin_bad.conf", 0, &e), 1);
	assert_string_equal(e.first, FIX "dropin_bad.conf.d/20-bad.conf:3: "
	    "unknown key 'reserv' in section '[device 1]'");
	config_free(&c);
}

/* The shipped example must stay valid. */
static void
test_example(void **state)
{
	struct config c;
	struct errs e;

	(void)state;
	assert_int_equal(load(&c, "etc/gpufrac.conf", 0, &e), 0);
	config_free(&c);
}

static void
test_resolver_names(void **state)
{
	(void)state;
	assert_int_equal(name_resolver_parse("fail"), GF_RESOLVER_FAIL);
	assert_int_equal(name_resolver_parse("wait"), GF_RESOLVER_WAIT);
	assert_int_equal(name_resolver_parse("preempt"),
	    GF_RESOLVER_PREEMPT);
	assert_int_equal(name_resolver_parse("swap"), GF_RESOLVER_SWAP);
	assert_int_equal(name_resolver_parse("Fail"), -1);
	assert_string_equal(name_resolver(GF_RESOLVER_SWAP), "swap");
	assert_string_equal(name_resolver(99), "unknown");
}

/*
 * A zero guarantee, however written, is no guarantee (a limit of zero is
 * refused: test_bad_values); every spelling gives the same.
 */
static void
test_zero_guarantee(void **state)
{
	static const char *const zeros[] = { "0", "0Gi", "0%", "0.0%" };
	char path[64], text[256];
	struct config c;
	struct errs e;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(zeros) / sizeof(zeros[0]); i++) {
		snprintf(text, sizeof(text), "[jobs]\nmax_guarantee = %s\n"
		    "[group g]\nmatch = uid:1\nguarantee = %s\n", zeros[i],
		    zeros[i]);
		temp_conf(path, sizeof(path), text);
		print_message("%s\n", zeros[i]);
		assert_int_equal(load(&c, path, 0, &e), 0);
		assert_int_equal(c.jobs.max_guarantee_kind, GF_LIMIT_BYTES);
		assert_int_equal(c.jobs.max_guarantee_value, 0);
		assert_int_equal(c.ngroups, 1);
		assert_int_equal(c.groups[0].pol.guarantee_kind,
		    GF_LIMIT_BYTES);
		assert_int_equal(c.groups[0].pol.guarantee_value, 0);
		config_free(&c);
		unlink(path);
	}
}

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
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_good_groups),
		cmocka_unit_test(test_groups_match),
		cmocka_unit_test(test_bad_fixtures),
		cmocka_unit_test(test_good_values),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_zero_guarantee),
		cmocka_unit_test(test_all_errors),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_not_regular),
		cmocka_unit_test(test_dropins),
		cmocka_unit_test(test_dropin_error),
		cmocka_unit_test(test_example),
		cmocka_unit_test(test_resolver_names),
		cmocka_unit_test(test_check_against_devices),
		cmocka_unit_test(test_check_guarantees),
	};

	log_init("test", LOG_LVL_ERROR, 0);	/* warnings are expected */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
