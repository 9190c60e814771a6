/*
 * daemon/config.c, the reader: files and their errors at FILE:LINE
 * (the fixtures in tests/unit/fixtures, run from the top of the tree),
 * every error reported, a missing or irregular file, drop-in order and
 * errors, and the shipped example.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "config_fixture.h"
#include "log.h"

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_fixtures),
		cmocka_unit_test(test_all_errors),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_not_regular),
		cmocka_unit_test(test_dropins),
		cmocka_unit_test(test_dropin_error),
		cmocka_unit_test(test_example),
	};

	log_init("test", LOG_LVL_ERROR, 0);	/* warnings are expected */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
