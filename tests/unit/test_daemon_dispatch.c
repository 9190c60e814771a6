/*
 * The message layers (dispatch, conversation) and control.c over
 * socketpairs: which messages each connection state accepts, and the
 * replies of the shim's conversation (DEVICE_OPEN, RESERVE, COMMIT,
 * ROLLBACK, FREE). The queries are in test_daemon_queries.c, the event
 * loop in test_daemon_loop.c; the fixture in dispatch_fixture.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "dispatch_fixture.h"
#include "log.h"

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

int
main(void)
{
#define T(t)	cmocka_unit_test_setup_teardown(t, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_before_hello),
		T(test_hello_twice),
		T(test_reply_types_refused),
		T(test_device_open),
		T(test_reserve_replies),
		T(test_commit_free_rollback),
	};
#undef T

	log_init("test", -1, 0);	/* closing bad peers logs warnings */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
