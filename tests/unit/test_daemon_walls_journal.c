/*
 * daemon/walls_journal.c: the driver's walls written and read back whole;
 * a line that cannot be read skipped; a journal that is not the daemon's
 * own (writable by others) not believed, while its own is (issue 38 E).
 */
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

#include "../../daemon/walls_journal.h"

static char dir[] = "/tmp/gf-walls-XXXXXX";
static char path[sizeof(dir) + 16];

static int
setup(void **state)
{
	(void)state;
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/driver-walls", dir);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	unlink(path);
	return rmdir(dir);
}

static const struct walls_entry two[] = {
	{ { 0x5f, 0x2c, [15] = 1 }, "/sys/fs/cgroup/job a" },
	{ { 0x5f, 0x2c, [15] = 2 }, "/sys/fs/cgroup/x/y" },
};

static void
test_roundtrip(void **state)
{
	struct walls_entry *e;
	char err[256];
	size_t n, i;

	(void)state;
	assert_int_equal(walls_journal_save(path, two, 2, err, sizeof(err)),
	    0);
	assert_int_equal(walls_journal_load(path, &e, &n), 0);
	assert_int_equal(n, 2);
	for (i = 0; i < n; i++) {
		assert_memory_equal(e[i].uuid, two[i].uuid, GF_UUID_LEN);
		assert_string_equal(e[i].dir, two[i].dir);
	}
	walls_journal_free(e, n);
	/* None written: none read. */
	assert_int_equal(walls_journal_save(path, NULL, 0, err, sizeof(err)),
	    0);
	assert_int_equal(walls_journal_load(path, &e, &n), 0);
	assert_int_equal(n, 0);
	walls_journal_free(e, n);
}

static void
test_missing(void **state)
{
	struct walls_entry *e;
	size_t n = 1;

	(void)state;
	unlink(path);
	assert_int_equal(walls_journal_load(path, &e, &n), 0);
	assert_int_equal(n, 0);
	assert_null(e);
}

/* Bad lines are skipped, the good one kept. */
static void
test_bad_lines(void **state)
{
	struct walls_entry *e;
	size_t n;
	FILE *fp;

	(void)state;
	assert_non_null(fp = fopen(path, "w"));
	fputs("# a comment\n"
	    "GPU-nonsense /sys/fs/cgroup/a\n"
	    "GPU-5f2c0000-0000-0000-0000-000000000001\n"
	    "GPU-5f2c0000-0000-0000-0000-000000000001 relative\n"
	    "GPU-5f2c0000-0000-0000-0000-000000000001 /sys/fs/cgroup/ok\n",
	    fp);
	fclose(fp);
	chmod(path, 0600);
	assert_int_equal(walls_journal_load(path, &e, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(e[0].dir, "/sys/fs/cgroup/ok");
	assert_int_equal(e[0].uuid[0], 0x5f);
	assert_int_equal(e[0].uuid[15], 1);
	walls_journal_free(e, n);
}

/* Writable by others, it could name any cgroup: not believed. */
static void
test_not_own(void **state)
{
	struct walls_entry *e;
	char err[256];
	size_t n;

	(void)state;
	assert_int_equal(walls_journal_save(path, two, 2, err, sizeof(err)),
	    0);
	assert_int_equal(chmod(path, 0666), 0);
	assert_int_equal(walls_journal_load(path, &e, &n), 0);
	assert_int_equal(n, 0);
	walls_journal_free(e, n);
	/* The daemon's own file, the same walls: believed. */
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(walls_journal_load(path, &e, &n), 0);
	assert_int_equal(n, 2);
	walls_journal_free(e, n);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_bad_lines),
		cmocka_unit_test(test_not_own),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
