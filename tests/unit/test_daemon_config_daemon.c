/*
 * daemon/config_daemon.c and config_jobs.c: the [daemon], [device] and
 * [jobs] keys, their defaults, every value accepted and the struct it
 * gives, and every key rejecting garbage at its line.
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
#include "names.h"
#include "uuid.h"

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_good_values),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_resolver_names),
	};

	log_init("test", LOG_LVL_ERROR, 0);	/* warnings are expected */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
