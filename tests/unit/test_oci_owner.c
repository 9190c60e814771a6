/*
 * Unit tests of oci/owner.c: the container's user on the host, from its
 * bundle's config.json (issue 39: what the daemon bounds its group by),
 * through its user namespace's mappings; refused where it cannot be told.
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

#include "../../oci/owner.h"

static char bundle[] = "/tmp/gpufrac-test-owner.XXXXXX";

static int
setup(void **state)
{
	(void)state;
	return mkdtemp(bundle) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	char path[sizeof(bundle) + 16];

	(void)state;
	snprintf(path, sizeof(path), "%s/config.json", bundle);
	unlink(path);
	return rmdir(bundle);
}

/* oci_owner_read of a bundle whose config.json is text. */
static int
owner_of(const char *text, uint32_t *uid, uint32_t *gid, char *err,
    size_t errlen)
{
	char path[sizeof(bundle) + 16];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/config.json", bundle);
	assert_non_null(fp = fopen(path, "w"));
	fputs(text, fp);
	fclose(fp);
	err[0] = '\0';
	return oci_owner_read(bundle, uid, gid, err, errlen);
}

static void
test_host_ids(void **state)
{
	uint32_t uid, gid;
	char err[512];

	(void)state;
	assert_int_equal(owner_of("{\"process\": {\"user\": {\"uid\": 65534, "
	    "\"gid\": 100}}}", &uid, &gid, err, sizeof(err)), 0);
	assert_int_equal(uid, 65534);
	assert_int_equal(gid, 100);
}

/* In a user namespace: the container's root is the host's 100000. */
static void
test_mapped(void **state)
{
	uint32_t uid, gid;
	char err[512];

	(void)state;
	assert_int_equal(owner_of("{\"process\": {\"user\": {\"uid\": 0, "
	    "\"gid\": 5}}, \"linux\": {\"uidMappings\": [{\"containerID\": 0, "
	    "\"hostID\": 100000, \"size\": 65536}], \"gidMappings\": "
	    "[{\"containerID\": 0, \"hostID\": 200000, \"size\": 10}]}}",
	    &uid, &gid, err, sizeof(err)), 0);
	assert_int_equal(uid, 100000);
	assert_int_equal(gid, 200005);
}

static void
test_refused(void **state)
{
	uint32_t uid, gid;
	char err[512], want[512];

	(void)state;
	snprintf(want, sizeof(want), "'%s/config.json': no process.user uid "
	    "and gid", bundle);
	assert_int_equal(owner_of("{\"process\": {}}", &uid, &gid, err,
	    sizeof(err)), -1);
	assert_string_equal(err, want);
	assert_int_equal(owner_of("{\"process\": {\"user\": {\"uid\": -1, "
	    "\"gid\": 0}}}", &uid, &gid, err, sizeof(err)), -1);
	assert_string_equal(err, want);
	snprintf(want, sizeof(want), "'%s/config.json': user 70000:0 is not "
	    "mapped to the host by its linux.uidMappings and gidMappings",
	    bundle);
	assert_int_equal(owner_of("{\"process\": {\"user\": {\"uid\": 70000, "
	    "\"gid\": 0}}, \"linux\": {\"uidMappings\": [{\"containerID\": 0, "
	    "\"hostID\": 100000, \"size\": 65536}]}}", &uid, &gid, err,
	    sizeof(err)), -1);
	assert_string_equal(err, want);
	assert_int_equal(owner_of("not json", &uid, &gid, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "cannot read '"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_ids),
		cmocka_unit_test(test_mapped),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
