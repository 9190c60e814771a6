/*
 * daemon/grantfile.c: records written in place and read back by the next
 * open, devices matched by UUID, each its grants, lease and context; a record torn (its generation odd) or
 * changed (its checksum) told from a whole one beside it; the writer's
 * last sign of life read back; a file of
 * another layout version or boot, or not the daemon's own, not
 * believed; two
 * records of one process neither believed; slots
 * reused and the file grown past its first slots (issue 40, B).
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

#include "../../daemon/grantfile.h"

static char dir[] = "/tmp/gf-grants-XXXXXX";	/* each test's own */
static char path[sizeof(dir) + 16];
static const uint8_t devs[2][GF_UUID_LEN] = { { 0xaa, [15] = 1 },
    { 0xbb, [15] = 2 } };
static const uint8_t this_boot[GF_UUID_LEN] = { 0xb0, [15] = 7 };

/* The layout, as grantfile.c lays it out for two devices. */
#define SLOTS_AT	128
#define SLOT_SIZE	(24 + 2 * 24 + 8)

static int
setup(void **state)
{
	(void)state;
	memcpy(dir + sizeof(dir) - 7, "XXXXXX", 6);
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/grants", dir);
	return 0;
}

static int
teardown(void **state)
{
	char tmp[sizeof(path) + 8];

	(void)state;
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	unlink(tmp);
	unlink(path);
	return rmdir(dir);
}

/* Open path in boot for devices uuids (n of them), the read in rd. */
static void
open_booted(struct grantfile *gf, const uint8_t boot[GF_UUID_LEN],
    const uint8_t (*uuids)[GF_UUID_LEN], size_t n, struct grant_read *rd)
{
	char err[256];

	assert_int_equal(grantfile_open(gf, path, boot, uuids, n, rd, err,
	    sizeof(err)), 0);
}

/* The same in this boot. */
static void
open_ok(struct grantfile *gf, const uint8_t (*uuids)[GF_UUID_LEN],
    size_t n, struct grant_read *rd)
{
	open_booted(gf, this_boot, uuids, n, rd);
}

/* A record of pid, started at start_ms, in a new slot. */
static void
put_started(struct grantfile *gf, uint32_t pid, uint64_t start_ms,
    uint64_t g0, uint64_t g1)
{
	uint64_t granted[2] = { g0, g1 }, lease[2] = { 1, 2 };
	uint64_t context[2] = { GRANT_CONTEXT_KNOWN | 3, 0 };
	struct grant_rec r = { pid, start_ms, GRANT_WORD, granted, lease,
	    context, 0 };

	grantfile_put(gf, grantfile_slot(gf), &r);
}

static void
put(struct grantfile *gf, uint32_t pid, uint64_t g0, uint64_t g1)
{
	put_started(gf, pid, 1000 + pid, g0, g1);
}

/* Change one byte of the file at off. */
static void
poke(long off, uint8_t xor)
{
	FILE *f = fopen(path, "r+b");
	int c;

	assert_non_null(f);
	assert_int_equal(fseek(f, off, SEEK_SET), 0);
	c = fgetc(f);
	assert_int_equal(fseek(f, off, SEEK_SET), 0);
	fputc(c ^ xor, f);
	fclose(f);
}

static const struct grant_rec *
rec_of(const struct grant_read *rd, uint32_t pid)
{
	size_t i;

	for (i = 0; i < rd->nrecs; i++)
		if (rd->recs[i].pid == pid)
			return &rd->recs[i];
	return NULL;
}

static void
test_roundtrip(void **state)
{
	struct grantfile gf;
	struct grant_read rd;
	const struct grant_rec *r;
	const uint8_t swapped[2][GF_UUID_LEN] = { { 0xbb, [15] = 2 },
	    { 0xaa, [15] = 1 } };
	struct stat st;

	(void)state;
	open_ok(&gf, devs, 2, &rd);
	assert_false(rd.whole);		/* no earlier file */
	grant_read_free(&rd);
	put(&gf, 10, 100, 200);
	put(&gf, 11, 300, 0);
	grantfile_alive(&gf, 123456);
	grantfile_close(&gf);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* The devices in another order: matched by UUID. */
	open_ok(&gf, swapped, 2, &rd);
	assert_true(rd.whole);
	assert_int_equal(rd.alive_ms, 123456);
	assert_int_equal(rd.nrecs, 2);
	assert_int_equal(rd.nlost, 0);
	assert_non_null(r = rec_of(&rd, 10));
	assert_int_equal(r->start_ms, 1010);
	assert_int_equal(r->flags, GRANT_WORD);
	assert_int_equal(r->granted[0], 200);
	assert_int_equal(r->granted[1], 100);
	assert_int_equal(r->lease[0], 2);
	/* The context, known (0 bytes would be a figure) or not. */
	assert_int_equal(r->context[0], 0);
	assert_int_equal(r->context[1], GRANT_CONTEXT_KNOWN | 3);
	grant_read_free(&rd);
	grantfile_close(&gf);
	/* Put back by the open: read again, the same. */
	open_ok(&gf, devs, 2, &rd);
	assert_int_equal(rd.nrecs, 2);
	assert_non_null(r = rec_of(&rd, 11));
	assert_int_equal(r->granted[0], 300);
	grant_read_free(&rd);
	grantfile_close(&gf);
}

static void
test_torn_and_changed(void **state)
{
	struct grantfile gf;
	struct grant_read rd;

	(void)state;
	open_ok(&gf, devs, 2, &rd);
	grant_read_free(&rd);
	put(&gf, 20, 1, 1);
	put(&gf, 21, 2, 2);
	put(&gf, 22, 3, 3);
	grantfile_close(&gf);
	/* Slot 0: its generation made odd (a writer killed half-way);
	   slot 1: a byte of its granted bytes changed; slot 2 whole. */
	poke(SLOTS_AT + 0, 1);
	poke(SLOTS_AT + SLOT_SIZE + 24, 0x40);
	open_ok(&gf, devs, 2, &rd);
	assert_true(rd.whole);
	assert_int_equal(rd.nrecs, 1);
	assert_int_equal(rd.recs[0].pid, 22);
	assert_int_equal(rd.nlost, 2);
	assert_int_equal(rd.lost[0].pid, 20);
	assert_non_null(strstr(rd.lost[0].why, "torn"));
	assert_int_equal(rd.lost[1].pid, 21);
	assert_non_null(strstr(rd.lost[1].why, "checksum"));
	grant_read_free(&rd);
	grantfile_close(&gf);
}

static void
test_other_version(void **state)
{
	struct grantfile gf;
	struct grant_read rd;

	(void)state;
	open_ok(&gf, devs, 2, &rd);
	grant_read_free(&rd);
	put(&gf, 30, 1, 1);
	grantfile_close(&gf);
	poke(8, 1);			/* version 3 -> 2 */
	open_ok(&gf, devs, 2, &rd);
	assert_false(rd.whole);
	assert_int_equal(rd.nrecs, 0);
	assert_string_equal(rd.why, "the grants' file is of layout version "
	    "2, not 3");
	grant_read_free(&rd);
	grantfile_close(&gf);
	/* Made anew: the next daemon reads a whole, empty one. */
	open_ok(&gf, devs, 2, &rd);
	assert_true(rd.whole);
	assert_int_equal(rd.nrecs, 0);
	grant_read_free(&rd);
	grantfile_close(&gf);
}

/*
 * A file of another boot: its pids and times (ms since that boot) are
 * no process's of this one; none is believed, and the processes that
 * ran before the daemon are not said to have been granted nothing.
 */
static void
test_other_boot(void **state)
{
	const uint8_t other_boot[GF_UUID_LEN] = { 0xb1, [15] = 9 };
	struct grantfile gf;
	struct grant_read rd;

	(void)state;
	open_booted(&gf, other_boot, devs, 2, &rd);
	grant_read_free(&rd);
	put(&gf, 60, 1, 1);
	grantfile_alive(&gf, 5000000);
	grantfile_close(&gf);
	open_ok(&gf, devs, 2, &rd);
	assert_false(rd.whole);
	assert_int_equal(rd.nrecs, 0);
	assert_string_equal(rd.why, "the grants' file was written before "
	    "the machine last started");
	grant_read_free(&rd);
	grantfile_close(&gf);
	/* Made anew in this boot: the next daemon of it believes it. */
	open_ok(&gf, devs, 2, &rd);
	assert_true(rd.whole);
	grant_read_free(&rd);
	grantfile_close(&gf);
}

static void
test_not_its_own(void **state)
{
	struct grantfile gf;
	struct grant_read rd;

	(void)state;
	open_ok(&gf, devs, 2, &rd);
	grant_read_free(&rd);
	put(&gf, 40, 1, 1);
	grantfile_close(&gf);
	assert_int_equal(chmod(path, 0666), 0);
	open_ok(&gf, devs, 2, &rd);
	assert_false(rd.whole);
	assert_non_null(strstr(rd.why, "is not gpufracd's own"));
	grant_read_free(&rd);
	grantfile_close(&gf);
}

/*
 * Two records of one process (pid and start time) are neither believed;
 * two of one pid started at different times (a pid reused) are both.
 */
static void
test_two_of_one(void **state)
{
	struct grantfile gf;
	struct grant_read rd;

	(void)state;
	open_ok(&gf, devs, 2, &rd);
	grant_read_free(&rd);
	put(&gf, 50, 1, 1);
	put(&gf, 51, 2, 2);
	put(&gf, 50, 3, 3);
	put_started(&gf, 52, 7000, 4, 4);
	put_started(&gf, 52, 8000, 5, 5);
	grantfile_close(&gf);
	open_ok(&gf, devs, 2, &rd);
	assert_true(rd.whole);
	assert_int_equal(rd.nrecs, 3);
	assert_null(rec_of(&rd, 50));
	assert_int_equal(rec_of(&rd, 51)->granted[0], 2);
	assert_int_equal(rd.nlost, 2);
	assert_int_equal(rd.lost[0].pid, 50);
	assert_int_equal(rd.lost[1].pid, 50);
	assert_string_equal(rd.lost[0].why, "two records of one process");
	grant_read_free(&rd);
	grantfile_close(&gf);
}

static void
test_reuse_and_grow(void **state)
{
	struct grantfile gf;
	struct grant_read rd;
	uint32_t i, s;

	(void)state;
	open_ok(&gf, devs, 2, &rd);
	grant_read_free(&rd);
	s = grantfile_slot(&gf);
	grantfile_release(&gf, s);
	assert_int_equal(grantfile_slot(&gf), s);	/* reused */
	grantfile_release(&gf, s);
	for (i = 0; i < 200; i++)			/* past the first 64 */
		put(&gf, 100 + i, i, i);
	assert_true(gf.nslots >= 200);
	grantfile_release(&gf, 5);
	grantfile_close(&gf);
	open_ok(&gf, devs, 2, &rd);
	assert_true(rd.whole);
	assert_int_equal(rd.nrecs, 199);
	assert_null(rec_of(&rd, 105));
	assert_int_equal(rec_of(&rd, 299)->granted[1], 199);
	grant_read_free(&rd);
	grantfile_close(&gf);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_roundtrip, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_torn_and_changed, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_other_version, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_other_boot, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_not_its_own, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_two_of_one, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_reuse_and_grow, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
