/*
 * control.c through the event loop, over socketpairs: a bad peer is
 * closed and the others served, a departing client's charge returned
 * once its process has exited (not merely closed its connection), and a
 * slow reader's queue bounded. The fixture is in dispatch_fixture.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "dispatch_fixture.h"
#include "log.h"

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
 * c stands for process pid: its pid, and the pidfd taken at accept (the
 * test's own process) replaced by one of pid, as if pid had connected.
 */
static void
stand_for(struct fixture *f, struct conn *c, pid_t pid)
{
	if (c->pidfd >= 0) {
		event_set(f->a.loop, c->pidfd, 0, NULL, NULL);
		close(c->pidfd);
	}
	c->pid = (uint32_t)pid;
	c->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	assert_true(c->pidfd >= 0);
	if (c->client != NULL) {
		c->client->pid = (uint32_t)pid;
		c->client->pidfd = c->pidfd;
	}
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
	stand_for(f, TAILQ_FIRST(&f->a.control.conns), zpid);
	close(pa);
	run_for(f, 50);
	assert_int_equal(f->a.control.nconns, 0);
	assert_int_equal(f->a.ledger.nclients, 0);
	assert_int_equal(f->a.ledger.devices[0].used, 0);
	close(pb);
	close(pc);
	assert_int_equal(waitpid(zpid, NULL, 0), zpid);
}

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
	stand_for(f, c, pid);
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
	stand_for(f, c, zpid);
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
	stand_for(f, c, pid);
	open_dev(f, c, pa, 0, GF_LIMIT_NONE, 0, &m);
	commit(f, c, 0, 0x1000, 0, 2 * GiB);
	close(pa);
	run_for(f, 20);
	assert_int_equal(f->a.ledger.nclients, 1);
	assert_int_equal(f->a.ledger.devices[0].used, 2 * GiB);

	c = connect_pair(f, &pb);
	stand_for(f, c, pid);
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

/* A peer that does not read: replies queue, then drain in order. */
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
		T(test_loop_closes_bad_peer),
		T(test_departing),
		T(test_departing_reconnects),
		T(test_output_queue),
	};
#undef T

	log_init("test", -1, 0);	/* closing bad peers logs warnings */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
