/*
 * Unit tests of oci/state.c: the container state a runtime writes to a
 * hook, as crun and runc write it, and every way it can be wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../oci/state.h"

#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

/* oci_state_read of text; returns its result, err in err. */
static int
state_of(const char *text, size_t len, struct oci_state *st, char *err,
    size_t errlen)
{
	FILE *fp;
	int r;

	/* fmemopen refuses an empty buffer: /dev/null reads as one */
	fp = len > 0 ? fmemopen((void *)text, len, "r") :
	    fopen("/dev/null", "r");
	assert_non_null(fp);
	err[0] = '\0';
	r = oci_state_read(fp, st, err, errlen);
	fclose(fp);
	return r;
}

static void
state_bad(const char *text, const char *want)
{
	struct oci_state st;
	char err[512];

	if (state_of(text, strlen(text), &st, err, sizeof(err)) != -1)
		fail_msg("accepted: %s", text);
	if (strstr(err, want) == NULL)
		fail_msg("%s: got '%s', want '%s' in it", text, err, want);
	assert_null(st.id);
	assert_null(st.annots);
	assert_int_equal(st.nannots, 0);
}

/* What crun 1.8 writes at createRuntime. */
static void
test_crun_create(void **state)
{
	static const char text[] = "{\"ociVersion\":\"1.0\",\"id\":\"gftest1\","
	    "\"pid\":5803,\"root\":\"rootfs\",\"bundle\":\"/tmp/b\","
	    "\"status\":\"created\",\"annotations\":{\"gpufrac.io/memory\":"
	    "\"64Mi\",\"other\":\"x\",\"gpufrac.io/priority\":\"-3\"}}";
	struct oci_state st;
	char err[256];

	(void)state;
	assert_int_equal(state_of(text, strlen(text), &st, err, sizeof(err)),
	    0);
	assert_string_equal(st.id, "gftest1");
	assert_int_equal(st.pid, 5803);
	assert_string_equal(st.bundle, "/tmp/b");
	assert_string_equal(st.status, "created");
	assert_int_equal(st.nannots, 2);
	assert_string_equal(oci_state_annot(&st, "memory"), "64Mi");
	assert_string_equal(oci_state_annot(&st, "priority"), "-3");
	assert_null(oci_state_annot(&st, "other"));
	assert_null(oci_state_annot(&st, "resolver"));
	oci_state_free(&st);
	assert_null(st.id);
	assert_null(st.status);
	assert_int_equal(st.nannots, 0);
}

/* At poststop the pid is 0 or absent; annotations may be absent too. */
static void
test_poststop_shapes(void **state)
{
	static const char *texts[] = {
		"{\"id\":\"c\",\"pid\":0,\"status\":\"stopped\"}",
		"{\"id\":\"c\",\"status\":\"stopped\",\"annotations\":{}}",
		"{\"id\":\"c\",\"pid\":null,\"annotations\":null}",
		"  {\"id\":\"c\"}\n",
	};
	struct oci_state st;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(texts); i++) {
		if (state_of(texts[i], strlen(texts[i]), &st, err,
		    sizeof(err)) != 0)
			fail_msg("%s: %s", texts[i], err);
		assert_string_equal(st.id, "c");
		assert_int_equal(st.pid, 0);
		assert_int_equal(st.nannots, 0);
		if (i < 2)
			assert_string_equal(st.status, "stopped");
		else
			assert_null(st.status);
		oci_state_free(&st);
	}
}

/* What runc writes at createRuntime: the status a hook given no stage
 * goes by. */
static void
test_runc_create(void **state)
{
	static const char text[] = "{\"ociVersion\":\"1.2.0\",\"id\":\"r1\","
	    "\"status\":\"creating\",\"pid\":4242,\"bundle\":\"/b\","
	    "\"annotations\":{\"gpufrac.io/memory\":\"1Gi\"}}";
	struct oci_state st;
	char err[256];

	(void)state;
	assert_int_equal(state_of(text, strlen(text), &st, err, sizeof(err)),
	    0);
	assert_string_equal(st.status, "creating");
	assert_int_equal(st.pid, 4242);
	oci_state_free(&st);
}

/* A status that is not a string of printable characters is quoted in no
 * message: refused. */
static void
test_bad_status(void **state)
{
	(void)state;
	state_bad("{\"id\":\"c\",\"status\":42}", "container 'c': bad "
	    "status in its state");
	state_bad("{\"id\":\"c\",\"status\":{}}", "bad status");
	state_bad("{\"id\":\"c\",\"bundle\":\"rel/dir\"}", "container "
	    "'c': bad bundle in its state (expected an absolute path)");
	state_bad("{\"id\":\"c\",\"status\":\"stop\\nped\"}", "bad status");
}

static void
test_not_json(void **state)
{
	struct oci_state st;
	char err[256];

	(void)state;
	state_bad("{\"id\":\"c\",", "cannot parse the container state on "
	    "stdin: ");
	state_bad("not json", "cannot parse the container state");
	state_bad("{\"id\":\"c\"} {}", "cannot parse the container state");
	state_bad("[\"id\"]", "the container state on stdin is not a JSON "
	    "object");
	state_bad("\"c\"", "cannot parse the container state");
	assert_int_equal(state_of("", 0, &st, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot parse the container state"));
}

/* A state with one key twice could be read two ways: refused. */
static void
test_duplicate_keys(void **state)
{
	(void)state;
	state_bad("{\"id\":\"a\",\"id\":\"b\"}", "duplicate");
	state_bad("{\"id\":\"a\",\"annotations\":{\"gpufrac.io/memory\":"
	    "\"1Gi\",\"gpufrac.io/memory\":\"2Gi\"}}", "duplicate");
}

static void
test_bad_id(void **state)
{
	(void)state;
	state_bad("{}", "the container state has no id");
	state_bad("{\"id\":\"\"}", "no id");
	state_bad("{\"id\":42}", "no id");
	state_bad("{\"id\":\"a\\nb\"}", "no id, or a bad one");
}

static void
test_bad_pid(void **state)
{
	(void)state;
	state_bad("{\"id\":\"c\",\"pid\":-1}", "container 'c': bad pid");
	state_bad("{\"id\":\"c\",\"pid\":2147483648}", "bad pid");
	state_bad("{\"id\":\"c\",\"pid\":\"12\"}", "bad pid");
	state_bad("{\"id\":\"c\",\"pid\":1.5}", "bad pid");
}

static void
test_bad_annotations(void **state)
{
	(void)state;
	state_bad("{\"id\":\"c\",\"annotations\":[]}",
	    "container 'c': its annotations are not a JSON object");
	state_bad("{\"id\":\"c\",\"annotations\":{\"gpufrac.io/memory\":1}}",
	    "container 'c': annotation 'gpufrac.io/memory' is not a string "
	    "of printable characters");
	state_bad("{\"id\":\"c\",\"annotations\":{\"gpufrac.io/memory\":"
	    "\"1Gi\\n\"}}", "not a string of printable characters");
	state_bad("{\"id\":\"c\",\"annotations\":{\"gpufrac.io/a\\tb\":"
	    "\"1\"}}", "has a control character in its name");
}

/* Only our annotations are looked at: others may be anything. */
static void
test_other_annotations_ignored(void **state)
{
	static const char text[] = "{\"id\":\"c\",\"annotations\":{"
	    "\"io.kubernetes.x\":{\"nested\":[1]},\"gpufrac.iox\":\"1\","
	    "\"run.oci.hooks.stderr\":\"/tmp/e\\n\"}}";
	struct oci_state st;
	char err[256];

	(void)state;
	assert_int_equal(state_of(text, strlen(text), &st, err, sizeof(err)),
	    0);
	assert_int_equal(st.nannots, 0);
	oci_state_free(&st);
}

static void
test_too_large(void **state)
{
	size_t len = OCI_STATE_MAX + 16;
	struct oci_state st;
	char *text, err[256];

	(void)state;
	text = malloc(len);
	assert_non_null(text);
	memset(text, ' ', len);
	memcpy(text, "{\"id\":\"c\"}", 10);
	assert_int_equal(state_of(text, len, &st, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "larger than"));
	free(text);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crun_create),
		cmocka_unit_test(test_poststop_shapes),
		cmocka_unit_test(test_runc_create),
		cmocka_unit_test(test_bad_status),
		cmocka_unit_test(test_not_json),
		cmocka_unit_test(test_duplicate_keys),
		cmocka_unit_test(test_bad_id),
		cmocka_unit_test(test_bad_pid),
		cmocka_unit_test(test_bad_annotations),
		cmocka_unit_test(test_other_annotations_ignored),
		cmocka_unit_test(test_too_large),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
