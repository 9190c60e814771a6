/*
 * The daemon client's connection to gpufracd: packets on its socket, its
 * state and its loss, and calls: requests on the shared connection matched
 * to their replies by seq, the reader token passed among those waiting.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "client_int.h"
#include "env.h"
#include "gpufrac/proto.h"
#include "log.h"
#include "proto.h"
#include "shim.h"

enum {
	CALL_PENDING = 0,
	CALL_DONE,			/* *reply holds the answer */
	CALL_LOST,			/* the connection went first */
};

/*
 * One request on the shared connection that waits for its reply: a slot
 * on the caller's stack, in client_calls from its send until it is
 * answered, lost or given up.
 */
struct client_call {
	struct client_call *next;
	uint32_t	seq;
	uint16_t	type;
	int		dev;		/* whose limit its reply states; -1 */
	int		state;		/* CALL_* */
	unsigned	gen;		/* the connection it went to */
	int64_t		deadline;	/* client_now_ms() clock */
	uint32_t	wait_ms;	/* WAIT's timeout; GF_UNSET: no WAIT */
	struct gf_msg	*reply;
	pthread_cond_t	cv;		/* answered, lost, or the token is free */
};

/* The connection's state: client_int.h says who may touch it, and when. */
pthread_mutex_t client_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_condattr_t client_condattr;
int client_fd = -1;
int client_up;
unsigned client_gen;
uint32_t client_seq;
int client_said_unreachable;
struct client_call *client_calls;
int client_reading;
int client_watcher_waits;
pthread_cond_t client_token_cv = PTHREAD_COND_INITIALIZER;

/* The calls' waits, and the wait for a lost daemon, time out on the
   monotonic clock. */
void
client_init(void)
{
	pthread_condattr_init(&client_condattr);
	pthread_condattr_setclock(&client_condattr, CLOCK_MONOTONIC);
	client_rejoin_init();
}

int64_t
client_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
client_wait_until(pthread_cond_t *cv, int64_t deadline)
{
	struct timespec ts;

	ts.tv_sec = deadline / 1000;
	ts.tv_nsec = (long)(deadline % 1000) * 1000000;
	pthread_cond_timedwait(cv, &client_lock, &ts);
}

/* ---- packets on a socket --------------------------------------------- */

/* Wait for events on fd until deadline: 1 ready, 0 timed out, -1 error. */
static int
client_poll(int fd, short events, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };

	for (;;) {
		int64_t left = deadline - client_now_ms();
		int n;

		if (left <= 0)
			return 0;
		if (left > INT32_MAX)
			left = INT32_MAX;
		if ((n = poll(&p, 1, (int)left)) > 0)
			return 1;	/* HUP and ERR too: send/recv says */
		if (n == 0)
			return 0;
		if (errno != EINTR)
			return -1;
	}
}

/*
 * Send one message on the non-blocking fd, waiting for room if need be;
 * *seqp (if not NULL) gets the seq it carries, never 0 (which marks what
 * the daemon says unasked).
 */
static int
client_send_fd(int fd, uint16_t type, const void *payload, int passfd,
    uint32_t *seqp, char *why, size_t whylen)
{
	int64_t deadline = client_now_ms() + CLIENT_TIMEOUT_MS;
	uint32_t seq;

	while ((seq = __atomic_add_fetch(&client_seq, 1,
	    __ATOMIC_RELAXED)) == 0)
		;
	if (seqp != NULL)
		*seqp = seq;
	while (proto_send_fd(fd, type, seq, payload, passfd) < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			snprintf(why, whylen, "cannot send %s: %s",
			    proto_type_name(type), strerror(errno));
			return -1;
		}
		if (client_poll(fd, POLLOUT, deadline) <= 0) {
			snprintf(why, whylen, "gpufracd took no %s within "
			    "%d s", proto_type_name(type),
			    CLIENT_TIMEOUT_MS / 1000);
			return -1;
		}
	}
	return 0;
}

int
client_send(int fd, uint16_t type, const void *payload, uint32_t *seqp,
    char *why, size_t whylen)
{
	return client_send_fd(fd, type, payload, -1, seqp, why, whylen);
}

/* Receive one packet without blocking: 1, 0 nothing there, -1 failed. */
int
client_recv(int fd, struct gf_msg *m, char *why, size_t whylen)
{
	const char *bad;
	int r;

	if ((r = proto_recv(fd, m, MSG_DONTWAIT, &bad)) == 1)
		return 1;
	/*
	 * A peer that closed with our packets unread resets the socket, and
	 * the reset is told before what it sent ahead of it (the kernel's
	 * datagram receive reports sk_err first, once): a daemon's refusal,
	 * said just before it closed. Read on once.
	 */
	if (r < 0 && errno == ECONNRESET &&
	    (r = proto_recv(fd, m, MSG_DONTWAIT, &bad)) == 1)
		return 1;
	if (r == 0)
		snprintf(why, whylen, "connection closed by gpufracd");
	else if (r == -2)
		snprintf(why, whylen, "malformed message: %s", bad);
	else if (errno == EAGAIN || errno == EWOULDBLOCK)
		return 0;
	else
		snprintf(why, whylen, "cannot receive: %s", strerror(errno));
	return -1;
}

/* Wait until deadline for one packet: 1, 0 timed out, -1 failed. */
static int
client_read(int fd, struct gf_msg *m, int64_t deadline, char *why,
    size_t whylen)
{
	int r;

	for (;;) {
		if ((r = client_poll(fd, POLLIN, deadline)) <= 0) {
			if (r < 0)
				snprintf(why, whylen, "poll: %s",
				    strerror(errno));
			return r;
		}
		if ((r = client_recv(fd, m, why, whylen)) != 0)
			return r;
	}
}

/* A reply that is not one of those the request allows. */
void
client_unexpected(const struct gf_msg *m, uint16_t request, char *why,
    size_t whylen)
{
	if (m->hdr.type == GF_MSG_ERROR)
		snprintf(why, whylen, "gpufracd refused %s: %s",
		    proto_type_name(request), m->u.error.msg);
	else
		snprintf(why, whylen, "unexpected %s in reply to %s",
		    proto_type_name(m->hdr.type), proto_type_name(request));
}

/*
 * An ERROR said unasked: the daemon refuses the connection itself (a
 * uid's connections past its cap) and closes it after this.
 */
static int
client_said_no(const struct gf_msg *m)
{
	return m->hdr.type == GF_MSG_ERROR && m->hdr.seq == 0;
}

/*
 * A request and its reply on a connection not shared yet (the handshake
 * and re-registration of a new one). What the daemon says unasked
 * meanwhile is applied if the caller holds the client lock (locked), else
 * dropped: before HELLO_OK there is nothing it could say.
 */
int
client_exchange(int fd, uint16_t type, const void *payload, int passfd,
    struct gf_msg *reply, int locked, char *why, size_t whylen)
{
	char ignored[CLIENT_WHY_LEN];
	int64_t deadline;
	uint32_t seq;
	int r;

	if (client_send_fd(fd, type, payload, passfd, &seq, why, whylen) < 0)
		/* Closed already, it may have said why before it did. */
		return client_recv(fd, reply, ignored, sizeof(ignored)) == 1 &&
		    client_said_no(reply) ? 0 : -1;
	deadline = client_now_ms() + CLIENT_TIMEOUT_MS;
	for (;;) {
		if ((r = client_read(fd, reply, deadline, why, whylen)) <= 0) {
			if (r == 0)
				snprintf(why, whylen, "no reply to %s within "
				    "%d s", proto_type_name(type),
				    CLIENT_TIMEOUT_MS / 1000);
			return -1;
		}
		if (reply->hdr.seq == seq || client_said_no(reply))
			return 0;
		if (reply->hdr.seq == 0 && locked)
			client_unsolicited(reply);
		else
			log_debug("dropping a stale %s from gpufracd",
			    proto_type_name(reply->hdr.type));
	}
}

/* ---- connection state ------------------------------------------------ */

/*
 * Lock held. A process that has registered takes nothing more the daemon
 * has not granted (client_rejoin.c); one that never has goes on within
 * the last known limit.
 */
void
client_say_unreachable(const char *why)
{
	const char *then = client_seen ? "allocations wait for it to come "
	    "back" : "enforcing the last known limit locally";

	if (shim_once(&client_said_unreachable))
		log_errx("cannot reach gpufracd at '%s': %s; %s",
		    shim_env.socket, why, then);
	else
		log_info("cannot reach gpufracd at '%s': %s; %s",
		    shim_env.socket, why, then);
}

/*
 * Close a lost connection if nobody reads it and no watcher will: the
 * watcher closes its own. Lock held.
 */
static void
client_close_lost(void)
{
	if (!client_up && client_fd >= 0 && !client_reading &&
	    !client_monitor_running) {
		close(client_fd);
		client_fd = -1;
	}
}

/*
 * The connection failed: stop using it, fail every call waiting on it, and
 * let the watcher replace it. Lock held.
 */
void
client_lost(const char *why)
{
	struct client_call *c;

	if (!client_up)
		return;
	client_up = 0;
	shutdown(client_fd, SHUT_RDWR);
	for (c = client_calls; c != NULL; c = c->next) {
		c->state = CALL_LOST;
		pthread_cond_signal(&c->cv);
	}
	client_calls = NULL;
	client_close_lost();
	client_say_unreachable(why);
}

/* COMMIT of ptr on dev, on fd (see struct gf_commit). */
int
client_send_commit(int fd, int dev, uint64_t ptr, uint64_t reserved,
    uint64_t size, uint32_t kind, char *why, size_t whylen)
{
	struct gf_commit c;

	memset(&c, 0, sizeof(c));
	memcpy(c.uuid, client_devs[dev].uuid, GF_UUID_LEN);
	c.ptr = ptr;
	c.reserved = reserved;
	c.size = size;
	c.kind = kind;
	return client_send(fd, GF_MSG_COMMIT, &c, NULL, why, whylen);
}

/*
 * Tell the live connection, if any, of a commit or a free; a send that
 * fails loses it. Lock held.
 */
void
client_tell_commit(int dev, uint64_t ptr, uint64_t reserved, uint64_t size,
    uint32_t kind)
{
	char why[CLIENT_WHY_LEN];

	if (client_up && client_send_commit(client_fd, dev, ptr, reserved,
	    size, kind, why, sizeof(why)) < 0)
		client_lost(why);
}

void
client_tell_free(uint64_t ptr)
{
	char why[CLIENT_WHY_LEN];
	struct gf_free f;

	if (!client_up)
		return;
	memset(&f, 0, sizeof(f));
	f.ptr = ptr;
	if (client_send(client_fd, GF_MSG_FREE, &f, NULL, why,
	    sizeof(why)) < 0)
		client_lost(why);
}

void
client_tell_ctx_end(int dev, uint64_t bytes, size_t count)
{
	char why[CLIENT_WHY_LEN];
	struct gf_ctx_end e;

	if (!client_up || !client_device_valid(dev))
		return;
	memset(&e, 0, sizeof(e));
	memcpy(e.uuid, client_devs[dev].uuid, GF_UUID_LEN);
	e.bytes = bytes;
	e.count = count > UINT32_MAX ? UINT32_MAX : (uint32_t)count;
	if (client_send(client_fd, GF_MSG_CTX_END, &e, NULL, why,
	    sizeof(why)) < 0)
		client_lost(why);
}

/* ---- calls: requests and their replies (see client_int.h) ------------ */

/* Hand a packet read from the connection to whom it is for. Lock held. */
void
client_dispatch(const struct gf_msg *m)
{
	struct client_call **pp, *c;

	if (m->hdr.seq == 0) {
		client_unsolicited(m);
		return;
	}
	for (pp = &client_calls; (c = *pp) != NULL; pp = &c->next)
		if (c->seq == m->hdr.seq)
			break;
	if (c == NULL) {
		log_debug("dropping a stale %s from gpufracd",
		    proto_type_name(m->hdr.type));
		return;
	}
	if (m->hdr.type == GF_MSG_WAIT && (c->type == GF_MSG_RESERVE ||
	    c->type == GF_MSG_SWAP_IN)) {
		c->wait_ms = m->u.wait.timeout_ms;
		c->deadline = client_now_ms() + (int64_t)c->wait_ms +
		    CLIENT_TIMEOUT_MS;
		log_info("gpufracd queued %s on device %d: waiting up to %u ms",
		    c->type == GF_MSG_SWAP_IN ? "our swap-in" :
		    "a reservation", c->dev, c->wait_ms);
		return;
	}
	if (c->dev >= 0)
		client_device_note(c->dev, m);
	*c->reply = *m;
	c->state = CALL_DONE;
	*pp = c->next;
	pthread_cond_signal(&c->cv);
}

/* The reader token was put down: wake whoever may want it. Lock held. */
void
client_token_free(void)
{
	struct client_call *c;

	for (c = client_calls; c != NULL; c = c->next)
		pthread_cond_signal(&c->cv);
	if (client_watcher_waits)
		pthread_cond_signal(&client_token_cv);
	client_close_lost();
}

/*
 * With the token: read the connection until c is answered, lost, or its
 * deadline passes. Lock held, released while reading.
 */
static void
client_lead(struct client_call *c)
{
	char why[CLIENT_WHY_LEN];
	struct gf_msg m;
	int64_t deadline;
	int fd = client_fd, r;

	client_reading = 1;
	while (c->state == CALL_PENDING) {
		deadline = c->deadline;
		pthread_mutex_unlock(&client_lock);
		r = client_read(fd, &m, deadline, why, sizeof(why));
		pthread_mutex_lock(&client_lock);
		if (r == 0 && client_now_ms() >= c->deadline)
			break;		/* the caller times it out */
		if (r < 0) {
			client_lost(why);
			break;
		}
		if (r == 1)
			client_dispatch(&m);
	}
	client_reading = 0;
	client_token_free();
}

/* Why c timed out. */
static void
client_call_late(const struct client_call *c, char *why, size_t whylen)
{
	if (c->wait_ms == GF_UNSET)
		snprintf(why, whylen, "no reply to %s within %d s",
		    proto_type_name(c->type), CLIENT_TIMEOUT_MS / 1000);
	else
		snprintf(why, whylen, "no GRANT or DENY within %d s of the "
		    "end of a %u ms wait", CLIENT_TIMEOUT_MS / 1000, c->wait_ms);
}

/* Wait for c's reply (lock held): 0 answered, -1 lost or timed out. */
static int
client_call_wait(struct client_call *c)
{
	char why[CLIENT_WHY_LEN];
	struct client_call **pp;

	for (;;) {
		if (c->state == CALL_DONE)
			return 0;
		if (c->state == CALL_LOST)
			return -1;
		if (client_now_ms() >= c->deadline)
			break;
		if (!client_reading) {
			client_lead(c);
			continue;
		}
		client_wait_until(&c->cv, c->deadline);
	}
	for (pp = &client_calls; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	client_call_late(c, why, sizeof(why));
	client_lost(why);
	return -1;
}

/*
 * Send a request on the live connection and wait for its reply, which
 * states dev's limit (-1: none). Lock held on entry and return, released
 * while waiting: the caller must expect any state to have changed. Returns
 * 0 with *reply and *gen (the connection that answered), or -1 when the
 * connection failed or was lost meanwhile (already reported).
 */
int
client_call(uint16_t type, int dev, const void *payload,
    struct gf_msg *reply, unsigned *gen)
{
	char why[CLIENT_WHY_LEN];
	struct client_call c;
	int r;

	c.type = type;
	c.dev = dev;
	c.state = CALL_PENDING;
	c.gen = client_gen;
	c.wait_ms = GF_UNSET;
	c.reply = reply;
	if (client_send(client_fd, type, payload, &c.seq, why,
	    sizeof(why)) < 0) {
		client_lost(why);
		return -1;
	}
	c.deadline = client_now_ms() + CLIENT_TIMEOUT_MS;
	pthread_cond_init(&c.cv, &client_condattr);
	c.next = client_calls;
	client_calls = &c;
	r = client_call_wait(&c);
	pthread_cond_destroy(&c.cv);
	*gen = c.gen;
	return r;
}
