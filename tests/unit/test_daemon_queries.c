/*
 * The queries (PS_REQ, ALLOCS_REQ, STATUS_REQ) and RELOAD_REQ through
 * dispatch and adminctl over socketpairs: their replies, groups in them,
 * who may reload, and the limit updates a reload pushes to clients. The
 * fixture is in dispatch_fixture.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "dispatch_fixture.h"
#include "log.h"

static void
test_status(void **state)
{
	struct fixture *f = *state;
	struct gf_msg m;
	struct conn *c;
	int peer;

	ledger_set_reserve(&f->a.ledger, 1, GiB);
	c = connect_pair(f, &peer);	/* queries need no HELLO */
	assert_int_equal(feed(f, c, GF_MSG_STATUS_REQ, NULL), 0);
	expect(peer, GF_MSG_STATUS, &m);
	assert_string_equal(m.u.status.version, GPUFRAC_VERSION);
	assert_int_equal(m.u.status.pid, (uint32_t)getpid());
	assert_int_equal(m.u.status.nclients, 0);
	assert_int_equal(m.u.status.ndevices, 2);
	expect(peer, GF_MSG_DEVICE_STATUS, &m);
	assert_memory_equal(m.u.device_status.uuid, f->uuid[0], GF_UUID_LEN);
	assert_int_equal(m.u.device_status.total, 16 * GiB);
	expect(peer, GF_MSG_DEVICE_STATUS, &m);
	assert_int_equal(m.u.device_status.index, 1);
	assert_int_equal(m.u.device_status.total, 8 * GiB);
	assert_int_equal(m.u.device_status.reserve, GiB);
	assert_int_equal(m.u.device_status.capacity, 7 * GiB);
	assert_int_equal(m.u.device_status.used, 0);
	expect(peer, GF_MSG_DEVICE_END, &m);
	assert_int_equal(m.u.end.count, 2);
	/* The group "default" on each device, without members. */
	expect(peer, GF_MSG_GROUP_STATUS, &m);
	assert_string_equal(m.u.group_status.name, "default");
	assert_memory_equal(m.u.group_status.uuid, f->uuid[0], GF_UUID_LEN);
	assert_int_equal(m.u.group_status.limit, 16 * GiB);
	assert_int_equal(m.u.group_status.nclients, 0);
	expect(peer, GF_MSG_GROUP_STATUS, &m);
	assert_memory_equal(m.u.group_status.uuid, f->uuid[1], GF_UUID_LEN);
	assert_int_equal(m.u.group_status.limit, 7 * GiB);
	expect(peer, GF_MSG_GROUP_END, &m);
	assert_int_equal(m.u.end.count, 2);
	expect_nothing(peer);
	/* The connection stays a query connection. */
	assert_null(c->client);
	close(peer);
}

/*
 * For the groups in PS and STATUS: a, b matched by their uid to the group
 * "mine" (4Gi on device 0, a with no limit of its own, b with 1Gi), a
 * holding 2Gi and b 512Mi of it; a group "nobody-here" matches no one.
 */
static void
grouped_clients(struct fixture *f, struct conn **a, int *pa, struct conn **b,
    int *pb)
{
	struct gf_msg m;
	char text[512];

	snprintf(text, sizeof(text), "[daemon]\ndefault_limit = 50%%\n"
	    "[group nobody-here]\nmatch = uid:4242424\nguarantee = 10%%\n"
	    "priority = -1\n"
	    "[group mine]\nmatch = cgroup:/no/such uid:%u\nlimit = 4Gi\n"
	    "guarantee = 1Gi\npriority = 7\non_preempt = none\n",
	    (unsigned)getuid());
	reload_with(f, text);
	*a = client(f, pa);
	*b = client(f, pb);
	assert_string_equal(f->a.ledger.groups[(*a)->client->group].pol.name,
	    "mine");
	open_dev(f, *a, *pa, 0, GF_LIMIT_NONE, 0, &m);
	assert_int_equal(m.u.device_info.limit, 4 * GiB);
	open_dev(f, *b, *pb, 0, GF_LIMIT_BYTES, GiB, &m);
	assert_int_equal(m.u.device_info.limit, GiB);
	commit(f, *a, 0, 0x1000, 0, 2 * GiB);
	commit(f, *b, 0, 0x1000, 0, 512 * MiB);
	/* The group's 4Gi are shared: within a's own limit, beyond what b
	 * left. */
	reserve(f, *a, *pa, 0, 1536 * MiB + 1, GF_MSG_DENY, &m);
	assert_int_equal(m.u.deny.reason, GF_DENY_LIMIT);
	assert_int_equal(m.u.deny.limit, 4 * GiB);
}

/* Groups in PS: each client's group, its priority, guarantee and limit. */
static void
test_ps_groups(void **state)
{
	struct fixture *f = *state;
	struct gf_msg m;
	struct conn *a, *b, *q;
	int pa, pb, pq;

	grouped_clients(f, &a, &pa, &b, &pb);
	q = connect_pair(f, &pq);
	assert_int_equal(feed(f, q, GF_MSG_PS_REQ, NULL), 0);
	expect(pq, GF_MSG_CLIENT, &m);
	assert_string_equal(m.u.client.group, "mine");
	assert_int_equal(m.u.client.priority, 7);
	assert_int_equal(m.u.client.guarantee, GiB);
	assert_int_equal(m.u.client.limit, 4 * GiB);
	assert_int_equal(m.u.client.used, 2 * GiB);
	expect(pq, GF_MSG_CLIENT, &m);
	assert_string_equal(m.u.client.group, "mine");
	assert_int_equal(m.u.client.limit, GiB);
	expect(pq, GF_MSG_CLIENT_END, &m);
	close(pa);
	close(pb);
	close(pq);
}

/* Groups in STATUS, once a has taken what b left of the group's 4Gi. */
static void
test_status_groups(void **state)
{
	struct fixture *f = *state;
	struct gf_msg m;
	struct conn *a, *b, *q;
	int pa, pb, pq;

	grouped_clients(f, &a, &pa, &b, &pb);
	q = connect_pair(f, &pq);
	reserve(f, a, pa, 0, 1536 * MiB, GF_MSG_GRANT, &m);
	commit(f, a, 0, 0x2000, 1536 * MiB, 1536 * MiB);

	assert_int_equal(feed(f, q, GF_MSG_STATUS_REQ, NULL), 0);
	expect(pq, GF_MSG_STATUS, &m);
	expect(pq, GF_MSG_DEVICE_STATUS, &m);
	expect(pq, GF_MSG_DEVICE_STATUS, &m);
	expect(pq, GF_MSG_DEVICE_END, &m);
	/* default, then the sections in file order, each on each device */
	expect(pq, GF_MSG_GROUP_STATUS, &m);
	assert_string_equal(m.u.group_status.name, "default");
	assert_int_equal(m.u.group_status.limit, 8 * GiB);
	assert_int_equal(m.u.group_status.resolver, GF_RESOLVER_FAIL);
	expect(pq, GF_MSG_GROUP_STATUS, &m);
	expect(pq, GF_MSG_GROUP_STATUS, &m);
	assert_string_equal(m.u.group_status.name, "nobody-here");
	assert_int_equal(m.u.group_status.guarantee, 16 * GiB / 10);
	assert_int_equal(m.u.group_status.priority, -1);
	assert_int_equal(m.u.group_status.nclients, 0);
	expect(pq, GF_MSG_GROUP_STATUS, &m);
	assert_int_equal(m.u.group_status.guarantee, 8 * GiB / 10);
	expect(pq, GF_MSG_GROUP_STATUS, &m);
	assert_string_equal(m.u.group_status.name, "mine");
	assert_memory_equal(m.u.group_status.uuid, f->uuid[0], GF_UUID_LEN);
	assert_int_equal(m.u.group_status.limit, 4 * GiB);
	assert_int_equal(m.u.group_status.guarantee, GiB);
	assert_int_equal(m.u.group_status.used, 4 * GiB);
	assert_int_equal(m.u.group_status.priority, 7);
	assert_int_equal(m.u.group_status.on_preempt, GF_PREEMPT_NONE);
	assert_int_equal(m.u.group_status.nclients, 2);
	expect(pq, GF_MSG_GROUP_STATUS, &m);
	assert_memory_equal(m.u.group_status.uuid, f->uuid[1], GF_UUID_LEN);
	assert_int_equal(m.u.group_status.used, 0);
	assert_int_equal(m.u.group_status.nclients, 0);
	expect(pq, GF_MSG_GROUP_END, &m);
	assert_int_equal(m.u.end.count, 6);
	expect_nothing(pq);
	close(pa);
	close(pb);
	close(pq);
}

static void
test_ps_and_allocs(void **state)
{
	struct fixture *f = *state;
	struct gf_allocs_req req = { 0, 0 };
	struct gf_msg m;
	struct conn *a, *b, *q;
	int pa, pb, pq;

	a = client(f, &pa);
	open_dev(f, a, pa, 0, GF_LIMIT_BYTES, 4 * GiB, &m);
	open_dev(f, a, pa, 1, GF_LIMIT_NONE, 0, &m);
	commit(f, a, 1, 0x9000, 0, 3 * MiB);
	commit(f, a, 0, 0x2000, 0, 2 * MiB);
	commit(f, a, 0, 0x1000, 0, MiB);
	b = client(f, &pb);		/* never opens a device */
	(void)b;
	q = connect_pair(f, &pq);

	assert_int_equal(feed(f, q, GF_MSG_PS_REQ, NULL), 0);
	expect(pq, GF_MSG_CLIENT, &m);
	assert_int_equal(m.u.client.pid, (uint32_t)getpid());
	assert_int_equal(m.u.client.uid, (uint32_t)getuid());
	assert_string_equal(m.u.client.group, "default");
	assert_int_equal(m.u.client.state, GF_STATE_RUNNING);
	assert_memory_equal(m.u.client.uuid, f->uuid[0], GF_UUID_LEN);
	assert_int_equal(m.u.client.used, 3 * MiB);
	assert_int_equal(m.u.client.limit, 4 * GiB);
	assert_int_equal(m.u.client.guarantee, 0);
	expect(pq, GF_MSG_CLIENT, &m);
	assert_memory_equal(m.u.client.uuid, f->uuid[1], GF_UUID_LEN);
	assert_int_equal(m.u.client.limit, 8 * GiB);
	expect(pq, GF_MSG_CLIENT, &m);	/* b: no device, zero uuid */
	assert_true(m.u.client.uuid[0] == 0 &&
	    memcmp(m.u.client.uuid, m.u.client.uuid + 1, GF_UUID_LEN - 1) == 0);
	assert_int_equal(m.u.client.used, 0);
	expect(pq, GF_MSG_CLIENT_END, &m);
	assert_int_equal(m.u.end.count, 3);

	/* a and b share our pid: a's three allocations, by device, ptr. */
	req.pid = (uint32_t)getpid();
	assert_int_equal(feed(f, q, GF_MSG_ALLOCS_REQ, &req), 0);
	expect(pq, GF_MSG_ALLOC, &m);
	assert_int_equal(m.u.alloc.ptr, 0x1000);
	assert_int_equal(m.u.alloc.size, MiB);
	assert_int_equal(m.u.alloc.kind, GF_KIND_MEM);
	assert_memory_equal(m.u.alloc.uuid, f->uuid[0], GF_UUID_LEN);
	expect(pq, GF_MSG_ALLOC, &m);
	assert_int_equal(m.u.alloc.ptr, 0x2000);
	expect(pq, GF_MSG_ALLOC, &m);
	assert_int_equal(m.u.alloc.ptr, 0x9000);
	assert_memory_equal(m.u.alloc.uuid, f->uuid[1], GF_UUID_LEN);
	expect(pq, GF_MSG_ALLOC_END, &m);
	assert_int_equal(m.u.end.count, 3);

	req.pid = 123;
	assert_int_equal(feed(f, q, GF_MSG_ALLOCS_REQ, &req), 0);
	expect(pq, GF_MSG_ERROR, &m);
	assert_int_equal(m.u.error.code, GF_ERR_NO_SUCH_PID);
	assert_string_equal(m.u.error.msg, "no client with pid 123");
	close(pa);
	close(pb);
	close(pq);
}

/* RELOAD_REQ: root may; the limits of running clients follow. */
static void
test_reload_req(void **state)
{
	struct fixture *f = *state;
	struct gf_msg m;
	struct conn *a, *q;
	char prefix[128];
	int pa, pq;

	write_conf(f, "[daemon]\ndefault_limit = 50%\n");
	a = client(f, &pa);
	open_dev(f, a, pa, 0, GF_LIMIT_NONE, 0, &m);
	assert_int_equal(m.u.device_info.limit, 16 * GiB);
	open_dev(f, a, pa, 1, GF_LIMIT_BYTES, GiB, &m);
	q = connect_pair(f, &pq);
	assert_int_equal(feed(f, q, GF_MSG_RELOAD_REQ, NULL), 0);
	expect(pq, GF_MSG_OK, &m);
	/* The client hears of its new limit on device 0 only (seq 0). */
	assert_int_equal(proto_recv(pa, &m, MSG_DONTWAIT, NULL), 1);
	assert_int_equal(m.hdr.type, GF_MSG_DEVICE_INFO);
	assert_int_equal(m.hdr.seq, 0);
	assert_memory_equal(m.u.device_info.uuid, f->uuid[0], GF_UUID_LEN);
	assert_int_equal(m.u.device_info.limit, 8 * GiB);
	assert_int_equal(m.u.device_info.capacity, 16 * GiB);
	expect_nothing(pa);
	/* The same again changes nothing, and says nothing. */
	assert_int_equal(feed(f, q, GF_MSG_RELOAD_REQ, NULL), 0);
	expect(pq, GF_MSG_OK, &m);
	expect_nothing(pa);

	/* A bad file: the first error, and the old configuration stays. */
	write_conf(f, "[daemon]\nlog_level = loud\ndefault_limit = 10%\n"
	    "[group x]\n");
	assert_int_equal(feed(f, q, GF_MSG_RELOAD_REQ, NULL), 0);
	expect(pq, GF_MSG_ERROR, &m);
	assert_int_equal(m.u.error.code, GF_ERR_CONFIG);
	snprintf(prefix, sizeof(prefix), "%s:2: bad level for 'log_level'",
	    f->conf);
	assert_true(strncmp(m.u.error.msg, prefix, strlen(prefix)) == 0);
	assert_int_equal(f->a.conf.default_limit_value, 5000);
	assert_int_equal(a->client->usage[0].limit, 8 * GiB);
	expect_nothing(pa);

	/* Guarantees that do not fit a device: the same. */
	write_conf(f, "[group x]\nmatch = uid:1\nguarantee = 10Gi\n"
	    "[group y]\nmatch = uid:2\nguarantee = 10Gi\n");
	assert_int_equal(feed(f, q, GF_MSG_RELOAD_REQ, NULL), 0);
	expect(pq, GF_MSG_ERROR, &m);
	assert_int_equal(m.u.error.code, GF_ERR_CONFIG);
	assert_true(strncmp(m.u.error.msg, "guarantees on GPU-c0c0c0c0-", 27)
	    == 0);
	assert_int_equal(f->a.ledger.ngroups, 1);
	close(pa);
	close(pq);
}

/* RELOAD_REQ from anyone else is refused, with the rule. */
static void
test_reload_denied(void **state)
{
	struct fixture *f = *state;
	struct gf_msg m;
	struct conn *q;
	int pq;

	q = connect_pair(f, &pq);
	q->uid = 65534;			/* as if nobody had connected */
	q->gid = 65534;
	assert_int_equal(feed(f, q, GF_MSG_RELOAD_REQ, NULL), 0);
	expect(pq, GF_MSG_ERROR, &m);
	assert_int_equal(m.u.error.code, GF_ERR_PERMISSION);
	assert_string_equal(m.u.error.msg,
	    "reload: permission denied (root only)");
	proto_strlcpy(f->a.conf.admin_group, "gpufrac",
	    sizeof(f->a.conf.admin_group));
	f->a.conf.admin_gid_valid = 1;
	f->a.conf.admin_gid = 4242;
	assert_int_equal(feed(f, q, GF_MSG_RELOAD_REQ, NULL), 0);
	expect(pq, GF_MSG_ERROR, &m);
	assert_string_equal(m.u.error.msg, "reload: permission denied "
	    "(root or members of group 'gpufrac' only)");
	/* A member by its primary group may (no file: built-in defaults). */
	q->gid = 4242;
	f->a.conf_path = "/nonexistent/gpufrac.conf";
	f->a.conf_optional = 1;
	assert_int_equal(feed(f, q, GF_MSG_RELOAD_REQ, NULL), 0);
	expect(pq, GF_MSG_OK, &m);
	close(pq);
}

int
main(void)
{
#define T(t)	cmocka_unit_test_setup_teardown(t, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_status),
		T(test_ps_groups),
		T(test_status_groups),
		T(test_ps_and_allocs),
		T(test_reload_req),
		T(test_reload_denied),
	};
#undef T

	log_init("test", -1, 0);	/* reloads and refusals log */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
