/*
 * The fixture of the message-layer tests (test_daemon_dispatch.c,
 * test_daemon_queries.c, test_daemon_loop.c): a daemon without a listener
 * on two devices, connections over socketpairs, messages fed to dispatch
 * and the replies read back. Include after cmocka.h.
 */
#ifndef GF_TEST_DISPATCH_FIXTURE_H
#define GF_TEST_DISPATCH_FIXTURE_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../daemon/arbiter.h"
#include "../../daemon/dispatch.h"
#include "../../daemon/event.h"
#include "../../daemon/resolve.h"
#include "proto.h"

#define GiB	(1ull << 30)
#define MiB	(1ull << 20)

struct fixture {
	struct arbiter	a;
	uint8_t		uuid[2][GF_UUID_LEN];
	char		conf[64];	/* a configuration file, for reloads */
	uint32_t	clients;	/* client() so far */
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

/*
 * Make text the daemon's configuration file (read at the next reload).
 * This and reload_with are inline: test_daemon_dispatch.c has no use for
 * them, and an unused static function is a warning.
 */
static inline void
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
static inline void
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

	/*
	 * One process is one client: a second HELLO of a pid closes its
	 * first connection. The test's clients after its first are other
	 * processes, by pids above any the kernel gives (pid_max <= 2^22).
	 */
	if (f->clients++ > 0)
		c->pid = UINT32_MAX - f->clients;
	assert_int_equal(feed(f, c, GF_MSG_HELLO, &h), 0);
	expect(*peer, GF_MSG_HELLO_OK, &m);
	assert_int_equal(m.u.hello_ok.pid, c->pid);
	/*
	 * The test is daemon and client in one process, its "daemon" no
	 * older than its client: the client is taken as an earlier
	 * daemon's (granted.h), whose re-registrations (COMMIT, reserved
	 * 0) these tests make to charge it.
	 */
	c->client->regrant_only = 0;
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

#endif /* GF_TEST_DISPATCH_FIXTURE_H */
