/*
 * daemon/match.c: group rules against the cgroup paths container runtimes
 * really create (Docker with the cgroupfs and systemd drivers, containerd,
 * CRI-O, Podman, the kubelet's two cgroup drivers for every QoS class),
 * prefixes, non-matches, and malformed rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "../../daemon/match.h"

#define ID1	"4a7b3e3c0d5f6a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6a7b8c9d"
#define ID2	"0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
#define POD	"6f1e8c3a-2b4d-4e5f-9a1b-0c2d3e4f5a6b"
#define POD_	"6f1e8c3a_2b4d_4e5f_9a1b_0c2d3e4f5a6b"

/* Paths as /proc/PID/cgroup shows them (the "0::" line), and what is in
 * them. */
static const struct {
	const char	*what;
	const char	*path;
	const char	*id;		/* NULL: no container id */
	const char	*pod;		/* NULL: no pod */
} layouts[] = {
	{ "docker, cgroupfs driver", "/docker/" ID1, ID1, NULL },
	{ "docker, systemd driver", "/system.slice/docker-" ID1 ".scope",
	    ID1, NULL },
	{ "docker in docker", "/docker/" ID2 "/docker/" ID1, ID1, NULL },
	{ "containerd, k8s systemd, burstable",
	    "/kubepods.slice/kubepods-burstable.slice/"
	    "kubepods-burstable-pod" POD_ ".slice/cri-containerd-" ID1
	    ".scope", ID1, POD },
	{ "containerd, k8s systemd, besteffort",
	    "/kubepods.slice/kubepods-besteffort.slice/"
	    "kubepods-besteffort-pod" POD_ ".slice/cri-containerd-" ID1
	    ".scope", ID1, POD },
	{ "containerd, k8s systemd, guaranteed",
	    "/kubepods.slice/kubepods-pod" POD_ ".slice/cri-containerd-" ID1
	    ".scope", ID1, POD },
	{ "containerd, k8s cgroupfs, burstable",
	    "/kubepods/burstable/pod" POD "/" ID1, ID1, POD },
	{ "containerd, k8s cgroupfs, besteffort",
	    "/kubepods/besteffort/pod" POD "/" ID1, ID1, POD },
	{ "containerd, k8s cgroupfs, guaranteed",
	    "/kubepods/pod" POD "/" ID1, ID1, POD },
	{ "cri-o, k8s systemd", "/kubepods.slice/kubepods-burstable.slice/"
	    "kubepods-burstable-pod" POD_ ".slice/crio-" ID1 ".scope", ID1,
	    POD },
	{ "cri-o conmon", "/kubepods.slice/kubepods-burstable.slice/"
	    "kubepods-burstable-pod" POD_ ".slice/crio-conmon-" ID1 ".scope",
	    ID1, POD },
	{ "k8s pod-level cgroup, no container",
	    "/kubepods.slice/kubepods-burstable.slice/"
	    "kubepods-burstable-pod" POD_ ".slice", NULL, POD },
	{ "kind node (k8s in a docker container)",
	    "/system.slice/docker-" ID2 ".scope/kubelet.slice/"
	    "kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
	    "kubelet-kubepods-besteffort-pod" POD_ ".slice/cri-containerd-"
	    ID1 ".scope", ID1, POD },
	{ "podman rootful", "/machine.slice/libpod-" ID1 ".scope/container",
	    ID1, NULL },
	{ "podman rootless", "/user.slice/user-1000.slice/user@1000.service/"
	    "user.slice/libpod-" ID1 ".scope/container", ID1, NULL },
	{ "podman cgroupfs", "/libpod_parent/libpod-" ID1, ID1, NULL },
	{ "a login session", "/user.slice/user-1000.slice/session-3.scope",
	    NULL, NULL },
	{ "the root", "/", NULL, NULL },
	{ "unknown", "", NULL, NULL },
	{ "a service", "/system.slice/docker.service", NULL, NULL },
	{ "63 hex digits", "/docker/" ID1 "/" "4a7b3e3c0d5f6a1b2c3d4e5f6071"
	    "8293a4b5c6d7e8f90a1b2c3d4e5f6a7b8c9", ID1, NULL },
	{ "65 hex digits", "/docker/" ID1 "0", NULL, NULL },
	{ "an id glued to a name", "/docker/x" ID1, NULL, NULL },
	{ "a pod without kubepods", "/pod" POD "/" ID1, ID1, NULL },
	{ "a pod UID one digit short", "/kubepods/burstable/pod"
	    "6f1e8c3a-2b4d-4e5f-9a1b-0c2d3e4f5a6", NULL, NULL },
	{ "a pod UID with a suffix", "/kubepods/burstable/pod" POD "x",
	    NULL, NULL },
};

static void
test_layouts(void **state)
{
	char id[MATCH_CONTAINER_LEN + 1], pod[MATCH_POD_LEN + 1];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		print_message("%s: %s\n", layouts[i].what, layouts[i].path);
		if (layouts[i].id == NULL)
			assert_int_equal(match_container_id(layouts[i].path,
			    id), -1);
		else {
			assert_int_equal(match_container_id(layouts[i].path,
			    id), 0);
			assert_string_equal(id, layouts[i].id);
		}
		if (layouts[i].pod == NULL)
			assert_int_equal(match_pod_uid(layouts[i].path, pod),
			    -1);
		else {
			assert_int_equal(match_pod_uid(layouts[i].path, pod),
			    0);
			assert_string_equal(pod, layouts[i].pod);
		}
	}
}

/* Whether rule text matches a process with path, uid and gid. */
static int
matches(const char *text, const char *path, uint32_t uid, uint32_t gid)
{
	struct match_subject s = { path, uid, gid };
	struct match_rule r;
	char err[128];
	int m;

	if (match_rule_parse(text, &r, err, sizeof(err)) < 0)
		fail_msg("'%s' rejected: %s", text, err);
	m = match_rule_test(&r, &s);
	match_rule_free(&r);
	return m;
}

static void
test_rules(void **state)
{
	static const struct {
		const char	*rule;
		const char	*path;
		int		 want;
	} cases[] = {
		/* cgroup: '*' crosses '/' */
		{ "cgroup:/docker/*", "/docker/" ID1, 1 },
		{ "cgroup:/system.slice/*", "/system.slice/docker-" ID1
		    ".scope", 1 },
		{ "cgroup:*/gpu-jobs/*", "/user.slice/gpu-jobs/a/b", 1 },
		{ "cgroup:/kubepods*", "/kubepods/burstable/pod" POD "/" ID1,
		    1 },
		{ "cgroup:/docker/*", "/dockers/x", 0 },
		{ "cgroup:/user.slice", "/user.slice/user-0.slice", 0 },
		{ "cgroup:*", "", 0 },
		{ "cgroup:/[ab]/x?", "/b/xy", 1 },
		/* container: a hex prefix, either case */
		{ "container:4a7b3e", "/docker/" ID1, 1 },
		{ "container:4A7B3E", "/system.slice/docker-" ID1 ".scope",
		    1 },
		{ "container:" ID1, "/machine.slice/libpod-" ID1
		    ".scope/container", 1 },
		{ "container:4a7c", "/docker/" ID1, 0 },
		{ "container:0f1e", "/docker/" ID2 "/docker/" ID1, 0 },
		{ "container:4a7b", "/user.slice/user-1000.slice", 0 },
		{ "container:4a7b", "", 0 },
		/* pod: either separator, either case */
		{ "pod:" POD, "/kubepods/pod" POD "/" ID1, 1 },
		{ "pod:" POD_, "/kubepods.slice/kubepods-pod" POD_ ".slice", 1 },
		{ "pod:6F1E8C3A-2B4D-4E5F-9A1B-0C2D3E4F5A6B",
		    "/kubepods/besteffort/pod" POD "/" ID1, 1 },
		{ "pod:6f1e8c3a-2b4d-4e5f-9a1b-0c2d3e4f5a6c",
		    "/kubepods/pod" POD "/" ID1, 0 },
		{ "pod:" POD, "/docker/" ID1, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("%s on '%s'\n", cases[i].rule, cases[i].path);
		assert_int_equal(matches(cases[i].rule, cases[i].path, 0, 0),
		    cases[i].want);
	}
}

static void
test_ids(void **state)
{
	(void)state;
	assert_int_equal(matches("uid:1000", "/", 1000, 100), 1);
	assert_int_equal(matches("uid:1000", "", 1000, 100), 1);
	assert_int_equal(matches("uid:1000", "/", 1001, 1000), 0);
	assert_int_equal(matches("uid:0", "/", 0, 0), 1);
	assert_int_equal(matches("gid:100", "/", 1000, 100), 1);
	assert_int_equal(matches("gid:100", "/", 100, 1000), 0);
	assert_int_equal(matches("uid:4294967294", "/", 4294967294u, 0), 1);
}

static void
test_bad_rules(void **state)
{
	static const struct {
		const char	*rule;
		const char	*reason;
	} cases[] = {
		{ "3f2a9c", "expected cgroup:GLOB" },
		{ "image:nvidia", "expected cgroup:GLOB" },
		{ "Container:3f2a", "expected cgroup:GLOB" },
		{ ":3f2a", "expected cgroup:GLOB" },
		{ "cgroup:", "must match a path that starts with '/'" },
		{ "cgroup:docker/*", "must match a path that starts with '/'" },
		{ "container:", "1 to 64 hex digits" },
		{ "container:3g2a", "1 to 64 hex digits" },
		{ "container:" ID1 "0", "1 to 64 hex digits" },
		{ "container:-3f2a", "1 to 64 hex digits" },
		{ "pod:", "8-4-4-4-12" },
		{ "pod:6f1e8c3a", "8-4-4-4-12" },
		{ "pod:6f1e8c3a2b4d4e5f9a1b0c2d3e4f5a6b", "8-4-4-4-12" },
		{ "pod:6f1e8c3a-2b4d-4e5f-9a1b-0c2d3e4f5a6bb", "8-4-4-4-12" },
		{ "pod:6f1e8c3a-2b4d-4e5f-9a1b-0c2d3e4f5a6g", "8-4-4-4-12" },
		{ "uid:", "expected a number" },
		{ "uid:root", "expected a number" },
		{ "uid:-1", "expected a number" },
		{ "uid:+5", "expected a number" },
		{ "uid:12a", "expected a number" },
		{ "uid:4294967295", "expected a number" },
		{ "gid:99999999999999999999", "expected a number" },
	};
	struct match_rule r;
	char err[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("%s\n", cases[i].rule);
		memset(&r, 0x5a, sizeof(r));
		err[0] = '\0';
		assert_int_equal(match_rule_parse(cases[i].rule, &r, err,
		    sizeof(err)), -1);
		assert_non_null(strstr(err, cases[i].reason));
		/* untouched */
		assert_int_equal(r.kind, 0x5a5a5a5a);
	}
}

static void
test_parsed(void **state)
{
	struct match_rule r;
	char err[128];

	(void)state;
	assert_int_equal(match_rule_parse("container:3F2A9C", &r, err,
	    sizeof(err)), 0);
	assert_int_equal(r.kind, MATCH_CONTAINER);
	assert_string_equal(r.arg, "3f2a9c");
	match_rule_free(&r);
	assert_null(r.arg);
	assert_int_equal(match_rule_parse("pod:" POD_, &r, err, sizeof(err)),
	    0);
	assert_int_equal(r.kind, MATCH_POD);
	assert_string_equal(r.arg, POD);
	match_rule_free(&r);
	assert_int_equal(match_rule_parse("cgroup:/A/*", &r, err,
	    sizeof(err)), 0);
	assert_string_equal(r.arg, "/A/*");	/* paths keep their case */
	match_rule_free(&r);
	assert_int_equal(match_rule_parse("gid:44", &r, err, sizeof(err)), 0);
	assert_int_equal(r.kind, MATCH_GID);
	assert_int_equal(r.id, 44);
	assert_null(r.arg);
	match_rule_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layouts),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_ids),
		cmocka_unit_test(test_bad_rules),
		cmocka_unit_test(test_parsed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
