/*
 * The message layers (dispatch, conversation, queries, adminctl) and
 * control.c over socketpairs: which messages each connection state
 * accepts, the replies of the shim's conversation and of the queries,
 * groups in them, RELOAD_REQ and the limit updates it pushes, and
 * (through the event loop) that a bad peer is closed, a departing
 * client's charge returned once its process has exited (not merely
 * closed its connection), and a slow reader's queue bounded.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../daemon/arbiter.h"
#include "../../daemon/dispatch.h"
#include "../../daemon/event.h"
#include "../../daemon/resolve.h"
#include "log.h"
#include "proto.h"

#define GiB	(1ull << 30)
#define MiB	(1ull << 20)

struct fixture {
	struct arbiter	a;
	uint8_t		uuid[2][GF_UUID_LEN];
	char		conf[64];	/* a configuration file, for reloads */
};

/* A daemon without a listener: two devices, 16Gi and 8Gi. */
static int
setup(void **state)
{
	struct fixture *f = test_calloc(1, sizeof(*f));
	int i;

	config_init(&f->a.conf);
	assert_int_equal(ledger_init(&f->a.ledger), 0);
	f->a.loop = event_loop_new();
	assert_non_null(f->a.loop);
	TAILQ_INIT(&f->a.departs);
	assert_int_equal(arbiter_wire(&f->a), 0);
	assert_int_equal(resolve_init(&f->a), 0);
	f->a.start_ms = event_now_ms();
	for (i = 0; i < 2; i++) {
		memset(f->uuid[i], 0xc0 + i, GF_UUID_LEN);
		assert_int_equal(ledger_device_add(&f->a.ledger, f->uuid[i],
		    (uint32_t)i, "Sim", i ? 8 * GiB : 16 * GiB), i);
	}
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	arbiter_stop(&f->a);
	event_loop_free(f->a.loop);
	if (f->conf[0] != '\0')
		unlink(f->conf);
	test_free(f);
	return 0;
}

/* Make text the daemon's configuration file (read at the next reload). */
static void
write_conf(struct fixture *f, const char *text)
{
	FILE *fp;
	int fd;

	if (f->conf[0] == '\0') {
		snprintf(f->conf, sizeof(f->conf), "/tmp/gpufrac-disp.XXXXXX");
		fd = mkstemp(f->conf);
		assert_true(fd >= 0);
		close(fd);
		f->a.conf_path = f->conf;
	}
	fp = fopen(f->conf, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

/* write_conf, then a reload that must succeed. */
static void
reload_with(struct fixture *f, const char *text)
{
	char err[256] = "";

	write_conf(f, text);
	if (arbiter_reload(&f->a, NULL, err, sizeof(err)) < 0)
		fail_msg("reload failed: %s", err);
}

/* A connection from ourselves; *peer is the other end. */
static struct conn *
connect_pair(struct fixture *f, int *peer)
{
	struct conn *c;
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0, sv), 0);
	c = control_adopt(&f->a.control, sv[0]);
	assert_non_null(c);
	assert_int_equal(c->pid, (uint32_t)getpid());
	*peer = sv[1];
	return c;
}

/* Hand c one message as if it had arrived; returns dispatch's verdict. */
static int
feed(struct fixture *f, struct conn *c, uint16_t type, const void *payload)
{
	struct gf_msg m;
	char why[160];
	int rc;

	assert_true(proto_pack(&m, type, 7, payload) > 0);
	why[0] = '\0';
	rc = dispatch_msg(&f->a.dispatch, &f->a, c, &m, why, sizeof(why));
	if (rc < 0)
		assert_true(why[0] != '\0');
	return rc;
}

/* The next message on peer, which must be of type. */
static void
expect(int peer, uint16_t type, struct gf_msg *m)
{
	const char *why = NULL;
	int r = proto_recv(peer, m, MSG_DONTWAIT, &why);

	if (r != 1)
		fail_msg("no message (%d, %s)", r, why ? why : strerror(errno));
	if (m->hdr.type != type)
		fail_msg("got %s, want %s", proto_type_name(m->hdr.type),
		    proto_type_name(type));
	assert_int_equal(m->hdr.seq, 7);
}

static void
expect_nothing(int peer)
{
	struct gf_msg m;
	const char *why;

	assert_int_equal(proto_recv(peer, &m, MSG_DONTWAIT, &why), -1);
	assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
}

static struct conn *
client(struct fixture *f, int *peer)
{
	struct gf_hello h = { INT32_MIN, GF_UNSET, GF_UNSET, 0, "" };
	struct conn *c = connect_pair(f, peer);
	struct gf_msg m;

	assert_int_equal(feed(f, c, GF_MSG_HELLO, &h), 0);
	expect(*peer, GF_MSG_HELLO_OK, &m);
	assert_int_equal(m.u.hello_ok.pid, (uint32_t)getpid());
	return c;
}

static void
open_dev(struct fixture *f, struct conn *c, int peer, int dev, uint32_t kind,
    uint64_t value, struct gf_msg *m)
{
	struct gf_device_open o;

	memset(&o, 0, sizeof(o));
	memcpy(o.uuid, f->uuid[dev], GF_UUID_LEN);
	o.limit_kind = kind;
	o.limit_value = value;
	assert_int_equal(feed(f, c, GF_MSG_DEVICE_OPEN, &o), 0);
	expect(peer, GF_MSG_DEVICE_INFO, m);
}

static void
reserve(struct fixture *f, struct conn *c, int peer, int dev, uint64_t size,
    uint16_t want, struct gf_msg *m)
{
	struct gf_reserve r;

	memset(&r, 0, sizeof(r));
	memcpy(r.uuid, f->uuid[dev], GF_UUID_LEN);
	r.size = size;
	r.kind = GF_KIND_MEM;
	assert_int_equal(feed(f, c, GF_MSG_RESERVE, &r), 0);
	expect(peer, want, m);
}

static void
commit(struct fixture *f, struct conn *c, int dev, uint64_t ptr,
    uint64_t reserved, uint64_t size)
{
	struct gf_commit cm;

	memset(&cm, 0, sizeof(cm));
	memcpy(cm.uuid, f->uuid[dev], GF_UUID_LEN);
	cm.ptr = ptr;
	cm.reserved = reserved;
	cm.size = size;
	cm.kind = GF_KIND_MEM;
	assert_int_equal(feed(f, c, GF_MSG_COMMIT, &cm), 0);
}

static void
test_before_hello(void **state)
{
	static const uint16_t shim_types[] = { GF_MSG_DEVICE_OPEN,
	    GF_MSG_RESERVE, GF_MSG_COMMIT, GF_MSG_ROLLBACK, GF_MSG_FREE };
	struct fixture *f = *state;
	uint8_t zero[GF_MSG_MAX] = { 0 };
	struct gf_msg m;
	struct conn *c;
	size_t i;
	int peer;

	for (i = 0; i < sizeof(shim_types) / sizeof(shim_types[0]); i++) {
		c = connect_pair(f, &peer);
		assert_int_equal(feed(f, c, shim_types[i], zero), -1);
		expect(peer, GF_MSG_ERROR, &m);
		assert_int_equal(m.u.error.code, GF_ERR_STATE);
		assert_non_null(strstr(m.u.error.msg, "before HELLO"));
		control_close(c, "test");
		close(peer);
	}
	assert_int_equal(f->a.ledger.nclients, 0);
}

static void
test_hello_twice(void **state)
{
	struct gf_hello h = { INT32_MIN, GF_UNSET, GF_UNSET, 0, "" };
	struct fixture *f = *state;
	struct gf_msg m;
	struct conn *c;
	int peer;

	c = client(f, &peer);
	assert_int_equal(f->a.ledger.nclients, 1);
	assert_int_equal(feed(f, c, GF_MSG_HELLO, &h), -1);
	expect(peer, GF_MSG_ERROR, &m);
	assert_int_equal(m.u.error.code, GF_ERR_STATE);
	assert_string_equal(m.u.error.msg, "HELLO twice");
	control_close(c, "test");
	assert_int_equal(f->a.ledger.nclients, 0);
	close(peer);

	/* A resolver the protocol does not define is malformed. */
	c = connect_pair(f, &peer);
	h.resolver = 9;
	assert_int_equal(feed(f, c, GF_MSG_HELLO, &h), -1);
	close(peer);
}

static void
test_reply_types_refused(void **state)
{
	struct fixture *f = *state;
	uint8_t zero[GF_MSG_MAX] = { 0 };
	struct conn *c;
	uint16_t t;
	int peer;

	c = client(f, &peer);
	for (t = GF_MSG_HELLO_OK; t <= GF_MSG_ALLOC_END; t++)
		assert_int_equal(feed(f, c, t, zero), -1);
	close(peer);
}

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

/* Groups in PS and STATUS: a client matched by its uid. */
static void
test_groups_in_queries(void **state)
{
	struct fixture *f = *state;
	struct gf_msg m;
	struct conn *a, *b, *q;
	char text[512];
	int pa, pb, pq;

	snprintf(text, sizeof(text), "[daemon]\ndefault_limit = 50%%\n"
	    "[group nobody-here]\nmatch = uid:4242424\nguarantee = 10%%\n"
	    "priority = -1\n"
	    "[group mine]\nmatch = cgroup:/no/such uid:%u\nlimit = 4Gi\n"
	    "guarantee = 1Gi\npriority = 7\non_preempt = none\n",
	    (unsigned)getuid());
	reload_with(f, text);
	a = client(f, &pa);
	b = client(f, &pb);
	assert_string_equal(f->a.ledger.groups[a->client->group].pol.name,
	    "mine");
	open_dev(f, a, pa, 0, GF_LIMIT_NONE, 0, &m);
	assert_int_equal(m.u.device_info.limit, 4 * GiB);
	open_dev(f, b, pb, 0, GF_LIMIT_BYTES, GiB, &m);
	assert_int_equal(m.u.device_info.limit, GiB);
	commit(f, a, 0, 0x1000, 0, 2 * GiB);
	commit(f, b, 0, 0x1000, 0, 512 * MiB);
	/* The group's 4Gi are shared: within a's own limit, beyond what b
	 * left. */
	reserve(f, a, pa, 0, 1536 * MiB + 1, GF_MSG_DENY, &m);
	assert_int_equal(m.u.deny.reason, GF_DENY_LIMIT);
	assert_int_equal(m.u.deny.limit, 4 * GiB);

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

static void
test_device_open(void **state)
{
	struct fixture *f = *state;
	struct gf_device_open o;
	struct gf_msg m;
	struct conn *c;
	int peer;

	ledger_set_default_limit(&f->a.ledger, GF_LIMIT_PERCENT, 5000);
	c = client(f, &peer);
	open_dev(f, c, peer, 0, GF_LIMIT_NONE, 0, &m);
	assert_memory_equal(m.u.device_info.uuid, f->uuid[0], GF_UUID_LEN);
	assert_int_equal(m.u.device_info.limit, 8 * GiB);
	assert_int_equal(m.u.device_info.capacity, 16 * GiB);
	assert_int_equal(m.u.device_info.used, 0);
	open_dev(f, c, peer, 1, GF_LIMIT_BYTES, GiB, &m);
	assert_int_equal(m.u.device_info.limit, GiB);
	open_dev(f, c, peer, 1, GF_LIMIT_PERCENT, 10000, &m);
	assert_int_equal(m.u.device_info.limit, 4 * GiB);

	/* An unknown device is an ERROR; the connection stays. */
	memset(&o, 0, sizeof(o));
	memset(o.uuid, 0x99, GF_UUID_LEN);
	assert_int_equal(feed(f, c, GF_MSG_DEVICE_OPEN, &o), 0);
	expect(peer, GF_MSG_ERROR, &m);
	assert_int_equal(m.u.error.code, GF_ERR_UNKNOWN_DEVICE);
	assert_string_equal(m.u.error.msg,
	    "no device GPU-99999999-9999-9999-9999-999999999999");

	/* A limit the protocol does not define closes the connection. */
	memcpy(o.uuid, f->uuid[0], GF_UUID_LEN);
	o.limit_kind = 7;
	assert_int_equal(feed(f, c, GF_MSG_DEVICE_OPEN, &o), -1);
	o.limit_kind = GF_LIMIT_PERCENT;
	o.limit_value = 10001;
	assert_int_equal(feed(f, c, GF_MSG_DEVICE_OPEN, &o), -1);
	close(peer);
}

static void
test_reserve_replies(void **state)
{
	struct fixture *f = *state;
	struct gf_reserve r;
	struct gf_msg m;
	struct conn *a, *b;
	int pa, pb;

	a = client(f, &pa);
	b = client(f, &pb);
	/* Not opened yet: denied as an unknown device. */
	reserve(f, a, pa, 1, MiB, GF_MSG_DENY, &m);
	assert_int_equal(m.u.deny.cuda_error, 2);
	assert_int_equal(m.u.deny.reason, GF_DENY_UNKNOWN_DEVICE);
	/* A uuid the daemon does not know at all: the same. */
	memset(&r, 0, sizeof(r));
	memset(r.uuid, 0x55, GF_UUID_LEN);
	r.size = 1;
	assert_int_equal(feed(f, a, GF_MSG_RESERVE, &r), 0);
	expect(pa, GF_MSG_DENY, &m);
	assert_int_equal(m.u.deny.reason, GF_DENY_UNKNOWN_DEVICE);

	open_dev(f, a, pa, 1, GF_LIMIT_BYTES, 6 * GiB, &m);
	open_dev(f, b, pb, 1, GF_LIMIT_BYTES, 6 * GiB, &m);
	reserve(f, a, pa, 1, 5 * GiB, GF_MSG_GRANT, &m);
	assert_int_equal(m.u.grant.used, 5 * GiB);
	assert_int_equal(m.u.grant.limit, 6 * GiB);
	/* Beyond a's own limit. */
	reserve(f, a, pa, 1, GiB + 1, GF_MSG_DENY, &m);
	assert_int_equal(m.u.deny.cuda_error, 2);
	assert_int_equal(m.u.deny.reason, GF_DENY_LIMIT);
	assert_int_equal(m.u.deny.used, 5 * GiB);
	assert_int_equal(m.u.deny.limit, 6 * GiB);
	/* Within b's limit, but the device is full: the fail resolver. */
	reserve(f, b, pb, 1, 4 * GiB, GF_MSG_DENY, &m);
	assert_int_equal(m.u.deny.reason, GF_DENY_DEVICE_FULL);
	assert_int_equal(m.u.deny.used, 0);
	reserve(f, b, pb, 1, 3 * GiB, GF_MSG_GRANT, &m);
	assert_int_equal(f->a.ledger.devices[1].used, 8 * GiB);
	close(pa);
	close(pb);
}

static void
test_commit_free_rollback(void **state)
{
	struct fixture *f = *state;
	struct gf_rollback rb;
	struct gf_free fr;
	struct gf_msg m;
	struct conn *c;
	int peer;

	c = client(f, &peer);
	open_dev(f, c, peer, 0, GF_LIMIT_NONE, 0, &m);
	reserve(f, c, peer, 0, GiB, GF_MSG_GRANT, &m);
	commit(f, c, 0, 0x7f0000000000, GiB, GiB);
	reserve(f, c, peer, 0, 2 * GiB, GF_MSG_GRANT, &m);
	memset(&rb, 0, sizeof(rb));
	memcpy(rb.uuid, f->uuid[0], GF_UUID_LEN);
	rb.size = 2 * GiB;
	assert_int_equal(feed(f, c, GF_MSG_ROLLBACK, &rb), 0);
	/* Re-registration after a daemon restart. */
	commit(f, c, 0, 0x7f0040000000, 0, 512 * MiB);
	expect_nothing(peer);		/* none of these is answered */
	assert_int_equal(c->client->usage[0].used, GiB + 512 * MiB);
	memset(&fr, 0, sizeof(fr));
	fr.ptr = 0x7f0000000000;
	assert_int_equal(feed(f, c, GF_MSG_FREE, &fr), 0);
	assert_int_equal(c->client->usage[0].used, 512 * MiB);
	/* An unknown pointer is ignored; the connection stays. */
	fr.ptr = 0x1234;
	assert_int_equal(feed(f, c, GF_MSG_FREE, &fr), 0);
	/* COMMIT and ROLLBACK on a device not opened: ignored. */
	commit(f, c, 1, 0x5000, 0, GiB);
	memcpy(rb.uuid, f->uuid[1], GF_UUID_LEN);
	assert_int_equal(feed(f, c, GF_MSG_ROLLBACK, &rb), 0);
	assert_int_equal(f->a.ledger.devices[1].used, 0);
	expect_nothing(peer);
	close(peer);
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

static void
stop_loop(struct event_loop *loop, void *arg)
{
	(void)arg;
	event_stop(loop);
}

/* Run the event loop for ms milliseconds. */
static void
run_for(struct fixture *f, uint64_t ms)
{
	assert_true(event_timer_add(f->a.loop, ms, stop_loop, NULL) > 0);
	assert_int_equal(event_run(f->a.loop), 0);
}

/*
 * A process to stand for a client: it lives until *wfd is closed. Forked
 * before any connection it must not hold, and it closes the rest.
 */
static pid_t
child_start(int *wfd)
{
	int p[2], fd;
	pid_t pid;
	char ch;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		for (fd = 3; fd < 1024; fd++)
			if (fd != p[0])
				close(fd);
		while (read(p[0], &ch, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(p[0]);
	*wfd = p[1];
	return pid;
}

/* Let the child of child_start exit; leave it a zombie (not reaped). */
static void
child_exit(int wfd, pid_t pid)
{
	siginfo_t si;

	close(wfd);
	memset(&si, 0, sizeof(si));
	assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
}

/* Through the real read path: a bad peer is closed, the others served. */
static void
test_loop_closes_bad_peer(void **state)
{
	struct fixture *f = *state;
	struct gf_msg m, good;
	uint8_t junk[300];
	const char *why;
	int pa, pb, pc, zfd;
	pid_t zpid;

	zpid = child_start(&zfd);
	client(f, &pa);
	open_dev(f, TAILQ_FIRST(&f->a.control.conns), pa, 0, GF_LIMIT_NONE,
	    0, &m);
	commit(f, TAILQ_FIRST(&f->a.control.conns), 0, 0x1000, 0, GiB);
	connect_pair(f, &pb);
	connect_pair(f, &pc);
	assert_int_equal(f->a.control.nconns, 3);

	/* b: RESERVE before HELLO. c: an oversized packet. */
	memset(junk, 0, sizeof(junk));
	assert_int_equal(proto_send(pb, GF_MSG_RESERVE, 7, junk), 0);
	assert_int_equal(send(pc, junk, sizeof(junk), 0), (ssize_t)sizeof(junk));
	/* a: a query, served in the same round. */
	assert_int_equal(proto_send(pa, GF_MSG_STATUS_REQ, 7, NULL), 0);
	run_for(f, 50);
	assert_int_equal(f->a.control.nconns, 1);
	expect(pb, GF_MSG_ERROR, &m);
	assert_int_equal(m.u.error.code, GF_ERR_STATE);
	assert_int_equal(proto_recv(pb, &m, MSG_DONTWAIT, &why), 0);
	assert_int_equal(proto_recv(pc, &m, MSG_DONTWAIT, &why), 0);
	expect(pa, GF_MSG_STATUS, &good);
	assert_int_equal(good.u.status.nclients, 1);

	/* a leaves, its process already gone: its charge comes back. */
	assert_int_equal(f->a.ledger.devices[0].used, GiB);
	child_exit(zfd, zpid);
	TAILQ_FIRST(&f->a.control.conns)->pid = (uint32_t)zpid;
	TAILQ_FIRST(&f->a.control.conns)->client->pid = (uint32_t)zpid;
	close(pa);
	run_for(f, 50);
	assert_int_equal(f->a.control.nconns, 0);
	assert_int_equal(f->a.ledger.nclients, 0);
	assert_int_equal(f->a.ledger.devices[0].used, 0);
	close(pb);
	close(pc);
	assert_int_equal(waitpid(zpid, NULL, 0), zpid);
}

/* A peer that does not read: replies queue, then drain in order. */
/*
 * A client whose connection closes while its process lives keeps its
 * charge, and shows in PS, until the process has exited; then the charge
 * comes back and a waiter is served. A zombie's comes back at once.
 */
static void
test_departing(void **state)
{
	struct fixture *f = *state;
	struct gf_msg m;
	struct conn *c, *w;
	int pa, pw, pq, pz, wfd, zfd, i;
	pid_t pid, zpid;

	pid = child_start(&wfd);
	zpid = child_start(&zfd);
	reload_with(f, "[daemon]\ndefault_resolver = wait\n");
	c = client(f, &pa);
	c->pid = c->client->pid = (uint32_t)pid;	/* stands for the child */
	open_dev(f, c, pa, 1, GF_LIMIT_NONE, 0, &m);
	reserve(f, c, pa, 1, 6 * GiB, GF_MSG_GRANT, &m);
	commit(f, c, 1, 0x1000, 6 * GiB, 6 * GiB);
	w = client(f, &pw);
	open_dev(f, w, pw, 1, GF_LIMIT_NONE, 0, &m);
	reserve(f, w, pw, 1, 4 * GiB, GF_MSG_WAIT, &m);

	/* c's connection closes; its process lives on. */
	close(pa);
	run_for(f, 20);
	assert_int_equal(f->a.control.nconns, 1);
	assert_int_equal(f->a.ledger.nclients, 2);
	assert_int_equal(f->a.ledger.devices[1].used, 6 * GiB);
	expect_nothing(pw);
	connect_pair(f, &pq);
	assert_int_equal(proto_send(pq, GF_MSG_PS_REQ, 7, NULL), 0);
	run_for(f, 20);
	expect(pq, GF_MSG_CLIENT, &m);
	assert_int_equal(m.u.client.pid, (uint32_t)pid);
	assert_int_equal(m.u.client.used, 6 * GiB);
	assert_int_equal(m.u.client.state, GF_STATE_RUNNING);

	/* It exits: the charge comes back, the waiter is granted. */
	child_exit(wfd, pid);
	for (i = 0; i < 500 && f->a.ledger.nclients > 1; i++)
		run_for(f, 10);
	assert_int_equal(f->a.ledger.nclients, 1);
	assert_int_equal(f->a.ledger.devices[1].used, 4 * GiB);
	expect(pw, GF_MSG_GRANT, &m);
	assert_int_equal(waitpid(pid, NULL, 0), pid);

	/* A zombie's charge comes back as its connection closes. */
	child_exit(zfd, zpid);
	c = client(f, &pz);
	c->pid = c->client->pid = (uint32_t)zpid;
	open_dev(f, c, pz, 0, GF_LIMIT_NONE, 0, &m);
	commit(f, c, 0, 0x2000, 0, GiB);
	close(pz);
	run_for(f, 20);
	assert_int_equal(f->a.ledger.devices[0].used, 0);
	assert_int_equal(waitpid(zpid, NULL, 0), zpid);
	close(pw);
	close(pq);
}

/* The same live process says HELLO again: its departing charge goes. */
static void
test_departing_reconnects(void **state)
{
	struct fixture *f = *state;
	struct gf_hello h = { INT32_MIN, GF_UNSET, GF_UNSET, 0, "" };
	struct gf_msg m;
	struct conn *c;
	int pa, pb, wfd;
	pid_t pid;

	pid = child_start(&wfd);
	c = client(f, &pa);
	c->pid = c->client->pid = (uint32_t)pid;
	open_dev(f, c, pa, 0, GF_LIMIT_NONE, 0, &m);
	commit(f, c, 0, 0x1000, 0, 2 * GiB);
	close(pa);
	run_for(f, 20);
	assert_int_equal(f->a.ledger.nclients, 1);
	assert_int_equal(f->a.ledger.devices[0].used, 2 * GiB);

	c = connect_pair(f, &pb);
	c->pid = (uint32_t)pid;
	assert_int_equal(feed(f, c, GF_MSG_HELLO, &h), 0);
	expect(pb, GF_MSG_HELLO_OK, &m);
	assert_int_equal(f->a.ledger.nclients, 1);
	assert_int_equal(f->a.ledger.devices[0].used, 0);
	/* It re-registers what it holds: counted once. */
	open_dev(f, c, pb, 0, GF_LIMIT_NONE, 0, &m);
	commit(f, c, 0, 0x1000, 0, 2 * GiB);
	assert_int_equal(f->a.ledger.devices[0].used, 2 * GiB);
	close(pb);
	child_exit(wfd, pid);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

static void
test_output_queue(void **state)
{
	struct fixture *f = *state;
	struct gf_msg m;
	struct conn *c;
	int i, n, peer;

	c = connect_pair(f, &peer);
	for (i = 0; i < 2000; i++)
		assert_int_equal(feed(f, c, GF_MSG_STATUS_REQ, NULL), 0);
	assert_true(c->out_len > c->out_head);	/* the socket filled up */
	for (n = 0; n < 2000 * 7; ) {
		const char *why;
		int r = proto_recv(peer, &m, MSG_DONTWAIT, &why);

		if (r == 1) {
			static const uint16_t order[] = { GF_MSG_STATUS,
			    GF_MSG_DEVICE_STATUS, GF_MSG_DEVICE_STATUS,
			    GF_MSG_DEVICE_END, GF_MSG_GROUP_STATUS,
			    GF_MSG_GROUP_STATUS, GF_MSG_GROUP_END };

			assert_int_equal(m.hdr.type, order[n % 7]);
			n++;
			continue;
		}
		assert_true(errno == EAGAIN);
		run_for(f, 1);
	}
	assert_int_equal(c->out_len, 0);
	expect_nothing(peer);

	/* Past CONTROL_OUTQ_MAX the peer is given up. */
	for (i = 0; i < 1000000; i++)
		if (feed(f, c, GF_MSG_STATUS_REQ, NULL) < 0)
			break;
	assert_true(i < 1000000);
	assert_non_null(strstr(c->err, "output queue"));
	assert_true(c->out_len - c->out_head <= CONTROL_OUTQ_MAX);
	close(peer);
}

int
main(void)
{
#define T(t)	cmocka_unit_test_setup_teardown(t, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_before_hello),
		T(test_hello_twice),
		T(test_reply_types_refused),
		T(test_status),
		T(test_groups_in_queries),
		T(test_reload_req),
		T(test_reload_denied),
		T(test_device_open),
		T(test_reserve_replies),
		T(test_commit_free_rollback),
		T(test_ps_and_allocs),
		T(test_loop_closes_bad_peer),
		T(test_departing),
		T(test_departing_reconnects),
		T(test_output_queue),
	};
#undef T

	log_init("test", -1, 0);	/* closing bad peers logs warnings */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
