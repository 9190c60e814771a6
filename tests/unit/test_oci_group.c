/*
 * Unit tests of oci/group.c: group names from container ids, group
 * settings from annotations, and the cgroup a container's group matches.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gpufrac/proto.h"
#include "../../oci/group.h"

#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

static void
name_is(const char *id, const char *want)
{
	char name[GF_GROUP_LEN];

	memset(name, 'X', sizeof(name));
	oci_group_name(id, name);
	if (strcmp(name, want) != 0)
		fail_msg("id '%s': name '%s', want '%s'", id, name, want);
}

/* What the daemon takes: 1 to 31 letters, digits, '.', '_', '-'. */
static void
name_valid(const char *id)
{
	char name[GF_GROUP_LEN];
	size_t len;

	oci_group_name(id, name);
	len = strnlen(name, sizeof(name));
	if (len == 0 || len >= GF_GROUP_LEN || strspn(name,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789._-") != len)
		fail_msg("id '%s': bad name '%.*s'", id, GF_GROUP_LEN, name);
	if (strncmp(name, "oci", 3) != 0 || (name[3] != '-' &&
	    name[3] != OCI_GROUP_DERIVED))
		fail_msg("id '%s': name '%s' without the prefix", id, name);
}

static void
test_name_short_ids_kept(void **state)
{
	(void)state;
	name_is("web", "oci-web");
	name_is("a", "oci-a");
	name_is("my_app.v2-1", "oci-my_app.v2-1");
	/* 27 characters: the most that fits whole */
	name_is("abcdefghijklmnopqrstuvwxyz0", "oci-abcdefghijklmnopqrstuvwxyz0");
}

/* Longer ids, or ids with other characters, get a hash of the whole. */
static void
test_name_long_ids_hashed(void **state)
{
	static const char podman[] = "3f2a9c5e8b7d6a1f0e9d8c7b6a5f4e3d"
	    "2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f";
	char a[GF_GROUP_LEN], b[GF_GROUP_LEN];

	(void)state;
	oci_group_name(podman, a);
	assert_int_equal(strlen(a), GF_GROUP_LEN - 1);
	assert_memory_equal(a, "oci.3f2a9c5e8b.", 15);
	name_valid(podman);
	/* nettle's SHA-256 against Python's hashlib.sha256(id) */
	assert_string_equal(a, "oci.3f2a9c5e8b.8c66c261f9f9dfc2");
	oci_group_name("my container", a);
	assert_string_equal(a, "oci.my_contain.481618a37688a00d");

	/* 28 characters no longer fit; the hash is SHA-256's first bytes */
	oci_group_name("abcdefghijklmnopqrstuvwxyz01", a);
	assert_string_equal(a, "oci.abcdefghij.2d0d638860a1f217");

	/* ids alike up to what is kept differ in the hash */
	oci_group_name("web-frontend-production-replica-1", a);
	oci_group_name("web-frontend-production-replica-2", b);
	assert_memory_equal(a, b, 15);
	assert_string_not_equal(a, b);

	/* the same id, the same name: poststop finds createRuntime's */
	oci_group_name(podman, b);
	oci_group_name(podman, a);
	assert_string_equal(a, b);
}

static void
test_name_unsafe_characters(void **state)
{
	static const char *ids[] = {
		"my container", "a/b", "caf\xc3\xa9", "x:y@z", "*",
		"a very long id with spaces, slashes/ and more than 27",
	};
	char a[GF_GROUP_LEN], b[GF_GROUP_LEN];
	size_t i;

	(void)state;
	for (i = 0; i < NITEMS(ids); i++)
		name_valid(ids[i]);
	oci_group_name("my container", a);
	assert_memory_equal(a, "oci.my_contain.", 15);
	/* "a b" and "a_b" are different containers */
	oci_group_name("a b", a);
	oci_group_name("a_b", b);
	assert_string_equal(b, "oci-a_b");
	assert_string_not_equal(a, b);
}

/*
 * No id is given another's derived name (issue 27): the 27-character id
 * that spells a long id's derived name after "oci-" keeps "oci-".
 */
static void
test_name_no_id_takes_a_derived_one(void **state)
{
	char derived[GF_GROUP_LEN], kept[GF_GROUP_LEN];

	(void)state;
	oci_group_name("web-frontend-production-replica-1", derived);
	assert_int_equal(derived[3], OCI_GROUP_DERIVED);
	oci_group_name(derived + 4, kept);
	assert_string_not_equal(kept, derived);
	assert_int_equal(kept[3], '-');
	/* nor does an id that is the whole derived name */
	oci_group_name(derived, kept);
	assert_string_not_equal(kept, derived);
}

/* A state of id "c" with the annotations given as name, value pairs. */
static void
state_make(struct oci_state *st, struct oci_annot *annots, size_t n)
{
	memset(st, 0, sizeof(*st));
	st->id = "c";
	st->annots = annots;
	st->nannots = n;
}

static void
test_wanted(void **state)
{
	struct oci_annot one[] = { { "memory", "1Gi" } };
	struct oci_state st;

	(void)state;
	state_make(&st, NULL, 0);
	assert_false(oci_group_wanted(&st));
	state_make(&st, one, 1);
	assert_true(oci_group_wanted(&st));
}

static void
test_build_all(void **state)
{
	struct oci_annot annots[] = {
		{ "priority", "-7" }, { "memory", "64Mi" },
		{ "guarantee", "25%" }, { "resolver", "wait" },
		{ "unshimmed", "kill" },
	};
	struct ctlreq_group g;
	struct oci_state st;
	char err[512];

	(void)state;
	state_make(&st, annots, NITEMS(annots));
	if (oci_group_build(&st, &g, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_string_equal(g.set.name, "oci-c");
	assert_int_equal(g.set.limit_kind, GF_LIMIT_BYTES);
	assert_int_equal(g.set.limit_value, 64ull << 20);
	assert_int_equal(g.set.guarantee_kind, GF_LIMIT_PERCENT);
	assert_int_equal(g.set.guarantee_value, 2500);
	assert_int_equal(g.set.priority_set, 1);
	assert_int_equal(g.set.priority, -7);
	assert_int_equal(g.set.resolver, GF_RESOLVER_WAIT);
	assert_true(g.set.flags & GF_GROUP_UNSHIMMED_KILL);
	/* what no annotation sets stays unset: the daemon's defaults */
	assert_int_equal(g.set.on_preempt, GF_UNSET);
	assert_int_equal(g.set.wait_timeout_ms, GF_UNSET);
	assert_int_equal(g.nrules, 0);
}

static void
test_build_memory_only(void **state)
{
	struct oci_annot annots[] = { { "memory", "50%" } };
	struct ctlreq_group g;
	struct oci_state st;
	char err[512];

	(void)state;
	state_make(&st, annots, NITEMS(annots));
	assert_int_equal(oci_group_build(&st, &g, err, sizeof(err)), 0);
	assert_int_equal(g.set.limit_kind, GF_LIMIT_PERCENT);
	assert_int_equal(g.set.limit_value, 5000);
	assert_int_equal(g.set.guarantee_kind, GF_LIMIT_NONE);
	assert_int_equal(g.set.priority_set, 0);
	assert_int_equal(g.set.resolver, GF_UNSET);
}

static void
build_bad(struct oci_annot *annots, size_t n, const char *want)
{
	struct ctlreq_group g;
	struct oci_state st;
	char err[512];

	state_make(&st, annots, n);
	err[0] = '\0';
	if (oci_group_build(&st, &g, err, sizeof(err)) != -1)
		fail_msg("accepted annotation %s=%s", annots[n - 1].name,
		    annots[n - 1].value);
	if (strcmp(err, want) != 0)
		fail_msg("got '%s', want '%s'", err, want);
}

static void
test_build_bad_values(void **state)
{
	struct oci_annot mem[] = { { "memory", "4GB-ish" } };
	struct oci_annot empty[] = { { "memory", "" } };
	struct oci_annot prio[] = { { "memory", "1Gi" }, { "priority", "abc" } };
	struct oci_annot prio2[] = { { "memory", "1Gi" }, { "priority", "1e3" } };
	struct oci_annot big[] = { { "memory", "1Gi" },
	    { "priority", "2147483648" } };
	struct oci_annot res[] = { { "memory", "1Gi" }, { "resolver", "bogus" } };
	struct oci_annot guar[] = { { "memory", "1Gi" }, { "guarantee", "-1" } };

	(void)state;
	build_bad(mem, 1, "container 'c': annotation 'gpufrac.io/memory': "
	    "bad limit '4GB-ish' (expected a size such as 8Gi or a share such "
	    "as 50%)");
	build_bad(empty, 1, "container 'c': annotation 'gpufrac.io/memory': "
	    "bad limit '' (expected a size such as 8Gi or a share such as "
	    "50%)");
	build_bad(prio, 2, "container 'c': annotation 'gpufrac.io/priority': "
	    "bad priority 'abc' (expected an integer)");
	build_bad(prio2, 2, "container 'c': annotation 'gpufrac.io/priority': "
	    "bad priority '1e3' (expected an integer)");
	build_bad(big, 2, "container 'c': annotation 'gpufrac.io/priority': "
	    "bad priority '2147483648' (expected an integer)");
	build_bad(res, 2, "container 'c': annotation 'gpufrac.io/resolver': "
	    "bad resolver 'bogus' (expected fail, wait, preempt or swap)");
	build_bad(guar, 2, "container 'c': annotation 'gpufrac.io/guarantee': "
	    "bad guarantee '-1' (expected a size such as 8Gi or a share such "
	    "as 50%)");
}

/* A typo must not leave a container running without its quota. */
static void
test_build_unknown_or_missing(void **state)
{
	struct oci_annot typo[] = { { "memory", "1Gi" }, { "memroy", "2Gi" } };
	struct oci_annot nomem[] = { { "priority", "3" } };
	struct oci_annot typo2[] = { { "Memory", "1Gi" } };

	(void)state;
	build_bad(typo, 2, "container 'c': unknown annotation "
	    "'gpufrac.io/memroy' (expected memory, guarantee, priority, "
	    "resolver or unshimmed)");
	build_bad(nomem, 1, "container 'c': annotation 'gpufrac.io/memory' is "
	    "missing (the other gpufrac.io/ annotations need it)");
	build_bad(typo2, 1, "container 'c': annotation 'gpufrac.io/memory' is "
	    "missing (the other gpufrac.io/ annotations need it)");
}

static void
cgroup_ok(const char *cg, const char *self, const char *want0,
    const char *want1)
{
	struct ctlreq_group g;
	char err[512];

	assert_int_equal(ctlreq_group_init(&g, "oci-c", err, sizeof(err)), 0);
	if (oci_group_cgroup(&g, "c", cg, self, err, sizeof(err)) != 0)
		fail_msg("cgroup '%s' (self '%s'): %s", cg, self, err);
	assert_int_equal(g.nrules, 2);
	assert_int_equal(g.set.nrules, 2);
	assert_string_equal(g.rules[0].rule, want0);
	assert_string_equal(g.rules[1].rule, want1);
}

static void
cgroup_bad(const char *cg, const char *self, const char *want)
{
	struct ctlreq_group g;
	char err[512];

	assert_int_equal(ctlreq_group_init(&g, "oci-c", err, sizeof(err)), 0);
	if (oci_group_cgroup(&g, "c", cg, self, err, sizeof(err)) != -1)
		fail_msg("cgroup '%s' (self '%s') accepted", cg, self);
	if (strstr(err, want) == NULL)
		fail_msg("got '%s', want '%s' in it", err, want);
	assert_int_equal(g.nrules, 0);
}

static void
test_cgroup_rules(void **state)
{
	(void)state;
	cgroup_ok("/machine.slice/libpod-3f2a.scope", "/user.slice/crun",
	    "cgroup:/machine.slice/libpod-3f2a.scope",
	    "cgroup:/machine.slice/libpod-3f2a.scope/*");
	/* a sibling whose name starts like the runtime's is not above it */
	cgroup_ok("/gf-test-1", "/gf-test", "cgroup:/gf-test-1",
	    "cgroup:/gf-test-1/*");
	/* below the runtime's own cgroup is the container's own */
	cgroup_ok("/gf/ctr", "/gf", "cgroup:/gf/ctr", "cgroup:/gf/ctr/*");
	/* glob characters in the path are matched as themselves */
	cgroup_ok("/k[8]s/p*d", "/", "cgroup:/k\\[8\\]s/p\\*d",
	    "cgroup:/k\\[8\\]s/p\\*d/*");
	/* the hook's own cgroup unreadable: nothing to compare */
	cgroup_ok("/a", "", "cgroup:/a", "cgroup:/a/*");
}

/*
 * A runtime that made no cgroup in the hierarchy read leaves the container
 * where the runtime is: a rule there would take in the runtime's
 * neighbours, so the container is refused.
 */
static void
test_cgroup_not_its_own(void **state)
{
	(void)state;
	cgroup_bad("/user.slice/session-1.scope", "/user.slice/session-1.scope",
	    "container 'c' has no cgroup of its own: its process is in cgroup "
	    "'/user.slice/session-1.scope', which holds the runtime's too");
	cgroup_bad("/user.slice", "/user.slice/session-1.scope",
	    "no cgroup of its own");
	cgroup_bad("/user.slice/", "/user.slice/session-1.scope",
	    "no cgroup of its own");
	cgroup_bad("/", "/user.slice", "no cgroup of its own");
	cgroup_bad("/", "", "container 'c': refusing cgroup '/'");
	cgroup_bad("", "", "container 'c': refusing cgroup ''");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_short_ids_kept),
		cmocka_unit_test(test_name_long_ids_hashed),
		cmocka_unit_test(test_name_unsafe_characters),
		cmocka_unit_test(test_name_no_id_takes_a_derived_one),
		cmocka_unit_test(test_wanted),
		cmocka_unit_test(test_build_all),
		cmocka_unit_test(test_build_memory_only),
		cmocka_unit_test(test_build_bad_values),
		cmocka_unit_test(test_build_unknown_or_missing),
		cmocka_unit_test(test_cgroup_rules),
		cmocka_unit_test(test_cgroup_not_its_own),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
