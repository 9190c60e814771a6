/*
 * Unit tests of the daemon client's (shim/client*.c) conversation with the
 * daemon: replies matched by seq while a queued RESERVE (WAIT) waits,
 * WAIT's deadline, messages the daemon sends unasked, stale replies,
 * malformed packets, a connection lost under a waiting caller, and a
 * reservation grown by what the driver took beyond it. The
 * daemon is the test itself, on the other end of a socketpair; no watcher
 * thread runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

/* The Makefile links unit tests with common/ only: build the shim's here. */
#include "../../shim/alloc_table.c"
#include "../../shim/alloc_tab.c"
#include "../../shim/activity.c"
#include "../../shim/vmm_table.c"
#include "../../shim/pool_table.c"
#include "../../shim/ctx_table.c"
#include "../../shim/client_conn.c"
#include "../../shim/client_device.c"
#include "../../shim/client_connect.c"
#include "../../shim/client_rejoin.c"
#include "../../shim/client_watcher.c"
#include "../../shim/client_stall.c"
#include "../../shim/stall.c"
#include "../../shim/client_fork.c"
#include "../../shim/vback.c"
#include "../../shim/vback_host.c"
#include "../../shim/vback_ipc.c"
#include "../../shim/vback_move.c"
#include "../../shim/vmm_virt.c"
#include "../../shim/client.c"

#define GiB		(1ull << 30)
#define MiB		(1ull << 20)

struct real_driver real_cu;		/* no driver: devices are set up here */

CUresult
real_missing(const char *name)
{
	(void)name;
	return CUDA_ERROR_NOT_INITIALIZED;
}
struct shim_env shim_env;

static const uint8_t uuid0[GF_UUID_LEN] = { 0x5f, 0x2c, 1, 2, 3 };
static int daemon_fd = -1;

/* The client connected, introduced, with device 0 open on connection 1. */
static int
setup(void **state)
{
	int sv[2];

	(void)state;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0 ||
	    fcntl(sv[0], F_SETFL, O_NONBLOCK) < 0)
		return -1;
	pthread_condattr_init(&client_condattr);
	pthread_condattr_setclock(&client_condattr, CLOCK_MONOTONIC);
	client_fd = sv[0];
	daemon_fd = sv[1];
	client_up = 1;
	client_gen = 1;
	client_tried = 1;
	client_monitor_running = 0;
	memset(client_devs, 0, sizeof(client_devs));
	client_devs[0].uuid_known = 1;
	memcpy(client_devs[0].uuid, uuid0, GF_UUID_LEN);
	client_devs[0].in_use = 1;
	client_devs[0].open_gen = 1;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	if (client_fd >= 0)
		close(client_fd);
	client_fd = -1;
	client_up = 0;
	close(daemon_fd);
	return 0;
}

/* The daemon's side: the next message the client sent. */
static void
daemon_recv(struct gf_msg *m, uint16_t type)
{
	const char *bad;

	assert_int_equal(proto_recv(daemon_fd, m, 0, &bad), 1);
	assert_int_equal(m->hdr.type, type);
}

static void
daemon_send(uint16_t type, uint32_t seq, const void *payload)
{
	assert_int_equal(proto_send(daemon_fd, type, seq, payload), 0);
}

static void
send_grant(uint32_t seq, uint64_t limit)
{
	struct gf_grant g = { .used = 0, .limit = limit };

	daemon_send(GF_MSG_GRANT, seq, &g);
}

static void
send_wait(uint32_t seq, uint32_t ms)
{
	struct gf_wait w = { .timeout_ms = ms };

	daemon_send(GF_MSG_WAIT, seq, &w);
}

static void
send_device_info(uint32_t seq, const uint8_t *uuid, uint64_t limit,
    uint64_t capacity)
{
	struct gf_device_info di;

	memset(&di, 0, sizeof(di));
	memcpy(di.uuid, uuid, GF_UUID_LEN);
	di.limit = limit;
	di.capacity = capacity;
	daemon_send(GF_MSG_DEVICE_INFO, seq, &di);
}

/* What the watcher does when the socket is readable: read what is there. */
static int
drain(void)
{
	int n;

	pthread_mutex_lock(&client_lock);
	n = client_drain(client_fd);
	pthread_mutex_unlock(&client_lock);
	return n;
}

/* A thread reserving, and what came of it. */
struct reserver {
	pthread_t	thread;
	uint64_t	size;
	struct client_ticket t;
	CUresult	r;
	int		done;		/* atomic */
};

static void *
reserve_main(void *arg)
{
	struct reserver *rs = arg;

	rs->r = client_reserve(0, rs->size, GF_KIND_MEM, &rs->t);
	__atomic_store_n(&rs->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void
reserver_start(struct reserver *rs, uint64_t size)
{
	memset(rs, 0, sizeof(*rs));
	rs->size = size;
	assert_int_equal(pthread_create(&rs->thread, NULL, reserve_main, rs),
	    0);
}

static CUresult
free_ok(CUdeviceptr p)
{
	(void)p;
	return CUDA_SUCCESS;
}

/*
 * A's RESERVE is queued (WAIT); B reserves, commits and frees meanwhile,
 * its reply read by whichever of them reads; then A is granted.
 */
static void
test_wait_does_not_block_others(void **state)
{
	struct reserver a, b;
	struct gf_msg m;
	uint32_t seq_a;

	(void)state;
	reserver_start(&a, GiB);
	daemon_recv(&m, GF_MSG_RESERVE);
	assert_int_equal(m.u.reserve.size, GiB);
	seq_a = m.hdr.seq;
	send_wait(seq_a, 60000);

	reserver_start(&b, MiB);
	daemon_recv(&m, GF_MSG_RESERVE);
	assert_int_equal(m.u.reserve.size, MiB);
	send_grant(m.hdr.seq, 2 * GiB);
	pthread_join(b.thread, NULL);
	assert_int_equal(b.r, CUDA_SUCCESS);
	assert_int_equal(b.t.gen, 1);
	assert_int_equal(client_commit(&b.t, 0x1000, MiB), 0);
	daemon_recv(&m, GF_MSG_COMMIT);
	assert_int_equal(m.u.commit.reserved, MiB);
	assert_int_equal(client_free(0x1000, free_ok), CUDA_SUCCESS);
	daemon_recv(&m, GF_MSG_FREE);
	assert_int_equal(m.u.free.ptr, 0x1000);
	assert_false(__atomic_load_n(&a.done, __ATOMIC_ACQUIRE));

	send_grant(seq_a, 3 * GiB);
	pthread_join(a.thread, NULL);
	assert_int_equal(a.r, CUDA_SUCCESS);
	assert_int_equal(a.t.gen, 1);
	assert_int_equal(client_devs[0].limit, 3 * GiB);
	assert_int_equal(client_up, 1);
	client_rollback(&a.t);
	daemon_recv(&m, GF_MSG_ROLLBACK);
}

/* WAIT moves a RESERVE's deadline to its timeout plus the 5 s margin. */
static void
test_wait_extends_deadline(void **state)
{
	struct client_call c;
	struct gf_msg reply, w;
	struct gf_wait wait = { .timeout_ms = 60000 };
	int64_t before = client_now_ms();

	(void)state;
	memset(&c, 0, sizeof(c));
	c.seq = 7;
	c.type = GF_MSG_RESERVE;
	c.dev = 0;
	c.deadline = before + CLIENT_TIMEOUT_MS;
	c.reply = &reply;
	pthread_cond_init(&c.cv, NULL);
	client_calls = &c;
	proto_pack(&w, GF_MSG_WAIT, 7, &wait);
	pthread_mutex_lock(&client_lock);
	client_dispatch(&w);
	pthread_mutex_unlock(&client_lock);
	assert_int_equal(c.state, CALL_PENDING);
	assert_true(c.deadline >= before + 60000 + CLIENT_TIMEOUT_MS);
	assert_ptr_equal(client_calls, &c);

	/* A WAIT for anything but a RESERVE is the reply: an unexpected one. */
	c.type = GF_MSG_DEVICE_OPEN;
	pthread_mutex_lock(&client_lock);
	client_dispatch(&w);
	pthread_mutex_unlock(&client_lock);
	assert_int_equal(c.state, CALL_DONE);
	assert_int_equal(reply.hdr.type, GF_MSG_WAIT);
	assert_null(client_calls);
	pthread_cond_destroy(&c.cv);
}

/*
 * Read while nobody asks: a limit update (seq 0) is applied, an unknown
 * unsolicited message and a stale reply are dropped, the connection stays.
 */
static void
test_unsolicited(void **state)
{
	static const uint8_t other[GF_UUID_LEN] = { 9 };

	(void)state;
	client_devs[0].have_limit = 1;
	client_devs[0].limit = 2 * GiB;
	send_device_info(0, uuid0, 5 * GiB, 8 * GiB);
	daemon_send(GF_MSG_OK, 0, NULL);
	send_grant(12345, GiB);
	send_device_info(0, other, 1, 1);
	assert_int_equal(drain(), 4);
	assert_int_equal(client_up, 1);
	assert_int_equal(client_devs[0].limit, 5 * GiB);
	assert_int_equal(client_devs[0].capacity, 8 * GiB);
	assert_int_equal(drain(), 0);
}

/* A packet that fails proto_check costs the connection. */
static void
test_malformed(void **state)
{
	struct gf_msg m;

	(void)state;
	proto_pack(&m, GF_MSG_OK, 0, NULL);
	m.hdr.version = GF_PROTO_VERSION + 1;
	assert_int_equal(send(daemon_fd, &m, m.hdr.len, 0), (ssize_t)m.hdr.len);
	drain();
	assert_int_equal(client_up, 0);
	assert_int_equal(client_fd, -1);	/* no watcher: closed at once */
}

/* A reservation grown by more, on another thread: what came of it. */
struct more {
	pthread_t	thread;
	struct client_ticket *t;
	uint64_t	size;
	CUresult	r;
};

static void *
more_main(void *arg)
{
	struct more *mo = arg;

	mo->r = client_reserve_more(mo->t, 0, mo->size, GF_KIND_POOL);
	return NULL;
}

/* Reserve size more for *t, the daemon answering type (GRANT or DENY). */
static CUresult
reserve_more(struct client_ticket *t, uint64_t size, uint16_t type)
{
	struct gf_deny d = { .cuda_error = CUDA_ERROR_OUT_OF_MEMORY };
	struct more mo = { .t = t, .size = size };
	struct gf_msg m;

	assert_int_equal(pthread_create(&mo.thread, NULL, more_main, &mo), 0);
	daemon_recv(&m, GF_MSG_RESERVE);
	assert_int_equal(m.u.reserve.size, size);
	if (type == GF_MSG_GRANT)
		send_grant(m.hdr.seq, 4 * GiB);
	else
		daemon_send(GF_MSG_DENY, m.hdr.seq, &d);
	pthread_join(mo.thread, NULL);
	return mo.r;
}

/*
 * The driver took more than was reserved (a pool grown by a larger
 * chunk): the rest is reserved too, and the COMMIT says the whole was
 * (issue 38: no honest path sends a charge that no reserve covers).
 * Denied, the first reservation stands, for the caller to roll back.
 */
static void
test_reserve_more(void **state)
{
	struct reserver a;
	struct gf_msg m;

	(void)state;
	reserver_start(&a, 2 * MiB);
	daemon_recv(&m, GF_MSG_RESERVE);
	send_grant(m.hdr.seq, 4 * GiB);
	pthread_join(a.thread, NULL);
	assert_int_equal(a.r, CUDA_SUCCESS);
	assert_int_equal(reserve_more(&a.t, 4 * MiB, GF_MSG_GRANT),
	    CUDA_SUCCESS);
	assert_int_equal(a.t.size, 6 * MiB);
	assert_int_equal(client_devs[0].pending, 6 * MiB);
	assert_int_equal(client_commit(&a.t, 0x1000, 6 * MiB), 0);
	daemon_recv(&m, GF_MSG_COMMIT);
	assert_int_equal(m.u.commit.reserved, 6 * MiB);
	assert_int_equal(m.u.commit.size, 6 * MiB);
	assert_int_equal(client_devs[0].pending, 0);

	reserver_start(&a, 2 * MiB);
	daemon_recv(&m, GF_MSG_RESERVE);
	send_grant(m.hdr.seq, 4 * GiB);
	pthread_join(a.thread, NULL);
	assert_int_equal(reserve_more(&a.t, 4 * MiB, GF_MSG_DENY),
	    CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(a.t.size, 2 * MiB);
	client_rollback(&a.t);
	daemon_recv(&m, GF_MSG_ROLLBACK);
	assert_int_equal(m.u.rollback.size, 2 * MiB);
	assert_int_equal(client_devs[0].pending, 0);
}

/* The daemon goes away under a queued RESERVE: it is decided locally. */
static void
test_lost_while_waiting(void **state)
{
	struct reserver a;
	struct gf_msg m;

	(void)state;
	client_devs[0].have_limit = 1;
	client_devs[0].limit = 2 * GiB;
	reserver_start(&a, GiB);
	daemon_recv(&m, GF_MSG_RESERVE);
	send_wait(m.hdr.seq, 60000);
	shutdown(daemon_fd, SHUT_RDWR);
	pthread_join(a.thread, NULL);
	assert_int_equal(a.r, CUDA_SUCCESS);
	assert_int_equal(a.t.gen, 0);		/* a local reservation */
	assert_int_equal(client_up, 0);

	reserver_start(&a, 2 * GiB);		/* 1 GiB pending + 2 > 2 */
	pthread_join(a.thread, NULL);
	assert_int_equal(a.r, CUDA_ERROR_OUT_OF_MEMORY);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_wait_does_not_block_others,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait_extends_deadline,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_unsolicited, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_malformed, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_lost_while_waiting, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_reserve_more, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
