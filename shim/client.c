/*
 * The daemon client: the connection to gpufracd and its watcher thread,
 * request/reply matching on it, per-device state, reserve / commit /
 * rollback / free, local enforcement while the daemon is away,
 * re-registration on reconnect, fork handling.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "activity.h"
#include "alloc_table.h"
#include "client.h"
#include "env.h"
#include "gpufrac/proto.h"
#include "lease.h"
#include "log.h"
#include "proto.h"
#include "real.h"
#include "shim.h"
#include "sock.h"
#include "units.h"
#include "pool_table.h"
#include "uuid.h"
#include "vmm_table.h"

#define CLIENT_TIMEOUT_MS	5000	/* a reply, or a send that cannot go */
#define CLIENT_RETRY_MIN_MS	100	/* reconnection: first retry ... */
#define CLIENT_RETRY_MAX_MS	500	/* ... backing off to this */
#define CLIENT_QUIET_MS		10	/* the watcher leaves callers reading */
#define CLIENT_WHY_LEN		(GF_ERRMSG_LEN + 80)

struct client_device {
	int		uuid_known;
	uint8_t		uuid[GF_UUID_LEN];
	int		in_use;		/* opened on every new connection */
	unsigned	open_gen;	/* connection its DEVICE_OPEN went to */
	int		have_limit;	/* limit came from the daemon */
	uint64_t	limit;		/* the daemon's last word on the limit */
	int		have_capacity;
	uint64_t	capacity;	/* shareable bytes, from DEVICE_INFO */
	uint64_t	real_total;	/* the driver's total; 0: not known */
	uint64_t	pending;	/* reserved, not yet committed or rolled back */
	uint64_t	overhead;	/* charged by the daemon for our context */
	uint64_t	group_limit;	/* DEVICE_INFO's view of our group */
	uint64_t	group_used;
	int		said_uuid;
	int		said_refused;
	int		said_total;
};

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
	int64_t		deadline;	/* now_ms() clock */
	uint32_t	wait_ms;	/* WAIT's timeout; GF_UNSET: no WAIT */
	struct gf_msg	*reply;
	pthread_cond_t	cv;		/* answered, lost, or the token is free */
};

/*
 * The client lock serialises the state below and every send on the
 * connection; nobody holds it while waiting for a reply (see "calls").
 * client_fd is closed only while nobody reads it: by the watcher thread
 * once it watches it, or by whoever made it if the handshake fails, or by
 * a fork child; others only shut it down, which wakes every reader.
 *
 * The free lock is held across the driver's free and the FREE message,
 * and by a commit: see client_free.
 *
 * Lock order: free lock, client lock, the allocation table's lock.
 */
static pthread_mutex_t client_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t client_free_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_condattr_t client_condattr;	/* CLOCK_MONOTONIC */
static int client_fd = -1;
static int client_up;			/* requests go to the daemon */
static unsigned client_gen;		/* bumped by every connection */
static uint32_t client_seq;		/* atomic: HELLO is sent unlocked */
static int client_tried;		/* the first attempt has been made */
static int client_monitor_running;
static int client_said_unreachable;
static struct client_device client_devs[SHIM_MAX_DEVICES];
static struct client_call *client_calls; /* waiting for their replies */
static int client_reading;		/* the reader token is taken */
static int client_watcher_waits;	/* for the token, on client_token_cv */
static pthread_cond_t client_token_cv = PTHREAD_COND_INITIALIZER;

static uint64_t
sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t
sat_sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- packets on a socket --------------------------------------------- */

/* Wait for events on fd until deadline: 1 ready, 0 timed out, -1 error. */
static int
client_poll(int fd, short events, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };

	for (;;) {
		int64_t left = deadline - now_ms();
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
	int64_t deadline = now_ms() + CLIENT_TIMEOUT_MS;
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

static int
client_send(int fd, uint16_t type, const void *payload, uint32_t *seqp,
    char *why, size_t whylen)
{
	return client_send_fd(fd, type, payload, -1, seqp, why, whylen);
}

/* Receive one packet without blocking: 1, 0 nothing there, -1 failed. */
static int
client_recv(int fd, struct gf_msg *m, char *why, size_t whylen)
{
	const char *bad;
	int r;

	if ((r = proto_recv(fd, m, MSG_DONTWAIT, &bad)) == 1)
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
static void
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

static void	client_unsolicited(const struct gf_msg *m);

/*
 * A request and its reply on a connection not shared yet (the handshake
 * and re-registration of a new one). What the daemon says unasked
 * meanwhile is applied if the caller holds the client lock (locked), else
 * dropped: before HELLO_OK there is nothing it could say.
 */
static int
client_exchange(int fd, uint16_t type, const void *payload, int passfd,
    struct gf_msg *reply, int locked, char *why, size_t whylen)
{
	int64_t deadline;
	uint32_t seq;
	int r;

	if (client_send_fd(fd, type, payload, passfd, &seq, why, whylen) < 0)
		return -1;
	deadline = now_ms() + CLIENT_TIMEOUT_MS;
	for (;;) {
		if ((r = client_read(fd, reply, deadline, why, whylen)) <= 0) {
			if (r == 0)
				snprintf(why, whylen, "no reply to %s within "
				    "%d s", proto_type_name(type),
				    CLIENT_TIMEOUT_MS / 1000);
			return -1;
		}
		if (reply->hdr.seq == seq)
			return 0;
		if (reply->hdr.seq == 0 && locked)
			client_unsolicited(reply);
		else
			log_debug("dropping a stale %s from gpufracd",
			    proto_type_name(reply->hdr.type));
	}
}

/* ---- connection state ------------------------------------------------ */

static void
client_say_unreachable(const char *why)
{
	if (shim_once(&client_said_unreachable))
		log_errx("cannot reach gpufracd at '%s': %s; enforcing the "
		    "last known limit locally", shim_env.socket, why);
	else
		log_info("cannot reach gpufracd at '%s': %s; enforcing the "
		    "last known limit locally", shim_env.socket, why);
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
static void
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
static int
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
static void
client_tell_commit(int dev, uint64_t ptr, uint64_t reserved, uint64_t size,
    uint32_t kind)
{
	char why[CLIENT_WHY_LEN];

	if (client_up && client_send_commit(client_fd, dev, ptr, reserved,
	    size, kind, why, sizeof(why)) < 0)
		client_lost(why);
}

static void
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

/* ---- devices ---------------------------------------------------------- */

static int
client_device_valid(int dev)
{
	static int said;

	if (dev >= 0 && dev < SHIM_MAX_DEVICES)
		return 1;
	if (shim_once(&said))
		log_errx("device %d is beyond the %d devices gpufrac accounts "
		    "for; its memory is not accounted", dev, SHIM_MAX_DEVICES);
	return 0;
}

static int
client_device_uuid(int dev)
{
	struct client_device *d = &client_devs[dev];
	CUresult r = CUDA_ERROR_NOT_FOUND;
	CUuuid u;

	if (real_cu.cuDeviceGetUuid_v2 != NULL)
		r = real_cu.cuDeviceGetUuid_v2(&u, dev);
	else if (real_cu.cuDeviceGetUuid_v1 != NULL)
		r = real_cu.cuDeviceGetUuid_v1(&u, dev);
	if (r != CUDA_SUCCESS) {
		if (shim_once(&d->said_uuid))
			log_errx("cannot get the UUID of device %d (CUresult "
			    "%d); its memory is not accounted", dev, (int)r);
		return -1;
	}
	memcpy(d->uuid, u.bytes, GF_UUID_LEN);
	d->uuid_known = 1;
	return 0;
}

/* The driver's total of dev, asked once; 0 if it will not say. */
static uint64_t
client_device_total(int dev)
{
	struct client_device *d = &client_devs[dev];
	size_t bytes;

	if (d->real_total == 0 && real_cu.cuDeviceTotalMem_v2 != NULL &&
	    real_cu.cuDeviceTotalMem_v2(&bytes, dev) == CUDA_SUCCESS)
		d->real_total = bytes;
	return d->real_total;
}

/*
 * The limit in force on dev: the daemon's last word, else the process's
 * own request resolved against the driver's total, else none.
 */
static uint64_t
client_device_limit(int dev)
{
	struct client_device *d = &client_devs[dev];
	const struct limit_one *req = &shim_env.limit.dev[dev];
	uint64_t total;

	if (d->have_limit)
		return d->limit;
	if (req->kind == GF_LIMIT_NONE)
		return UINT64_MAX;
	if (req->kind == GF_LIMIT_BYTES)
		return req->value;
	if ((total = client_device_total(dev)) == 0) {
		if (shim_once(&d->said_total))
			log_errx("cannot get the total memory of device %d; "
			    "its percentage limit is not enforced", dev);
		return UINT64_MAX;
	}
	return limit_resolve(req->kind, req->value, total);
}

/*
 * What a message from the daemon says about dev's limit and capacity.
 * Applied as the message is read, under the lock, so that a later word
 * (a limit update after a reload) is never overwritten by an earlier one.
 */
static void
client_device_note(int dev, const struct gf_msg *m)
{
	struct client_device *d = &client_devs[dev];

	switch (m->hdr.type) {
	case GF_MSG_DEVICE_INFO:
		if (memcmp(m->u.device_info.uuid, d->uuid, GF_UUID_LEN) != 0)
			return;		/* the caller says what is wrong */
		d->have_limit = 1;
		d->limit = m->u.device_info.limit;
		d->have_capacity = 1;
		d->capacity = m->u.device_info.capacity;
		d->overhead = m->u.device_info.overhead;
		d->group_limit = m->u.device_info.group_limit;
		d->group_used = m->u.device_info.group_used;
		break;
	case GF_MSG_GRANT:
		d->have_limit = 1;
		d->limit = m->u.grant.limit;
		break;
	case GF_MSG_DENY:
		if (m->u.deny.reason != GF_DENY_UNKNOWN_DEVICE) {
			d->have_limit = 1;
			d->limit = m->u.deny.limit;
		}
		break;
	}
}

/*
 * A message the daemon sent unasked (seq 0). DEVICE_INFO restates a
 * device's limit and capacity, after a reload changed them; anything else
 * is not for this version of the shim. Lock held.
 */
static void
client_unsolicited(const struct gf_msg *m)
{
	const struct gf_device_info *di = &m->u.device_info;
	char ubuf[UUID_STR_LEN], b1[16], b2[16], b3[16];
	int dev, known = 0;

	if (m->hdr.type != GF_MSG_DEVICE_INFO) {
		log_debug("ignoring an unsolicited %s from gpufracd",
		    proto_type_name(m->hdr.type));
		return;
	}
	uuid_format(di->uuid, ubuf, sizeof(ubuf));
	for (dev = 0; dev < SHIM_MAX_DEVICES; dev++) {
		if (!client_devs[dev].uuid_known || memcmp(client_devs[dev].uuid,
		    di->uuid, GF_UUID_LEN) != 0)
			continue;
		known = 1;
		client_device_note(dev, m);
		log_info("gpufracd says device %d (%s): limit %s, capacity %s, "
		    "context %s", dev, ubuf, size_format(di->limit, b1,
		    sizeof(b1)), size_format(di->capacity, b2, sizeof(b2)),
		    size_format(di->overhead, b3, sizeof(b3)));
	}
	if (!known)
		log_debug("ignoring a limit for device %s, which this process "
		    "does not use", ubuf);
}

/* ---- calls: requests and their replies on the shared connection -------
 *
 * A caller registers a slot (struct client_call) and sends its request
 * under the client lock; whichever thread reads the reply fills the slot.
 * One thread at a time reads the socket, the holder of the reader token:
 * a caller whose reply has not come takes the token if it is free and
 * waits in poll() for its own reply, handing others theirs on the way
 * (client_lead); while another holds it, the caller sleeps on its slot's
 * condition variable. Freeing the token wakes the callers still waiting,
 * and one of them takes it over (leader/follower). The watcher thread
 * reads too, without blocking, when the socket is readable and the token
 * is free: so what the daemon says unasked is read even when the process
 * asks nothing, and never a reply from under its caller. A lone caller
 * reads its reply itself, as cheaply as a plain exchange.
 *
 * Every reply comes within 5 s, except that WAIT (the daemon queued a
 * RESERVE) extends that RESERVE's deadline to WAIT's timeout plus 5 s.
 * A deadline missed, a packet that fails proto_check, or a closed socket
 * is a lost connection.
 */

/* Hand a packet read from the connection to whom it is for. Lock held. */
static void
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
		c->deadline = now_ms() + (int64_t)c->wait_ms +
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
static void
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
		if (r == 0 && now_ms() >= c->deadline)
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
	struct timespec ts;

	for (;;) {
		if (c->state == CALL_DONE)
			return 0;
		if (c->state == CALL_LOST)
			return -1;
		if (now_ms() >= c->deadline)
			break;
		if (!client_reading) {
			client_lead(c);
			continue;
		}
		ts.tv_sec = c->deadline / 1000;
		ts.tv_nsec = (long)(c->deadline % 1000) * 1000000;
		pthread_cond_timedwait(&c->cv, &client_lock, &ts);
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
static int
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
	c.deadline = now_ms() + CLIENT_TIMEOUT_MS;
	pthread_cond_init(&c.cv, &client_condattr);
	c.next = client_calls;
	client_calls = &c;
	r = client_call_wait(&c);
	pthread_cond_destroy(&c.cv);
	*gen = c.gen;
	return r;
}

/* ---- opening devices -------------------------------------------------- */

static void
client_device_open_msg(int dev, struct gf_device_open *o)
{
	const struct limit_one *req = &shim_env.limit.dev[dev];

	memset(o, 0, sizeof(*o));
	memcpy(o->uuid, client_devs[dev].uuid, GF_UUID_LEN);
	o->ordinal = (uint32_t)dev;
	o->limit_kind = req->kind;
	o->limit_value = req->value;
}

/*
 * The daemon's answer m to DEVICE_OPEN of dev, whose limit, if any, is
 * noted already. -1 (why set) when it is no answer to that.
 */
static int
client_device_opened(int dev, const struct gf_msg *m, char *why,
    size_t whylen)
{
	struct client_device *d = &client_devs[dev];
	char ubuf[UUID_STR_LEN];

	uuid_format(d->uuid, ubuf, sizeof(ubuf));
	switch (m->hdr.type) {
	case GF_MSG_DEVICE_INFO:
		if (memcmp(m->u.device_info.uuid, d->uuid, GF_UUID_LEN) != 0) {
			snprintf(why, whylen, "DEVICE_INFO names another "
			    "device");
			return -1;
		}
		log_debug("device %d (%s): limit %llu, capacity %llu", dev,
		    ubuf, (unsigned long long)m->u.device_info.limit,
		    (unsigned long long)m->u.device_info.capacity);
		return 0;
	case GF_MSG_ERROR:
		/* Its RESERVEs will be denied: the daemon decides. */
		if (shim_once(&d->said_refused))
			log_errx("gpufracd refused device %d (%s): %s", dev,
			    ubuf, m->u.error.msg);
		return 0;
	default:
		client_unexpected(m, GF_MSG_DEVICE_OPEN, why, whylen);
		return -1;
	}
}

/* DEVICE_OPEN on fd, a connection not shared yet. Lock held. */
static int
client_device_open_new(int fd, unsigned gen, int dev, char *why,
    size_t whylen)
{
	struct gf_device_open o;
	struct gf_msg m;

	client_device_open_msg(dev, &o);
	if (client_exchange(fd, GF_MSG_DEVICE_OPEN, &o, -1, &m, 1, why,
	    whylen) < 0)
		return -1;
	client_device_note(dev, &m);
	if (client_device_opened(dev, &m, why, whylen) < 0)
		return -1;
	client_devs[dev].open_gen = gen;
	return 0;
}

/*
 * DEVICE_OPEN on the live connection. Requests sent after it are served
 * after it, so dev counts as opened from the moment it is sent: another
 * thread's RESERVE need not wait for its reply. Lock held, released while
 * waiting.
 */
static void
client_device_open_live(int dev)
{
	char why[CLIENT_WHY_LEN];
	struct gf_device_open o;
	struct gf_msg m;
	unsigned gen;

	client_device_open_msg(dev, &o);
	client_devs[dev].open_gen = client_gen;
	if (client_call(GF_MSG_DEVICE_OPEN, dev, &o, &m, &gen) < 0)
		return;
	if (client_device_opened(dev, &m, why, sizeof(why)) < 0 &&
	    gen == client_gen)
		client_lost(why);
}

/* Make dev known (UUID) and opened on the live connection; -1: unaccounted. */
static int
client_device_prepare(int dev)
{
	struct client_device *d = &client_devs[dev];

	if (!d->uuid_known && client_device_uuid(dev) < 0)
		return -1;
	d->in_use = 1;
	if (client_up && d->open_gen != client_gen)
		client_device_open_live(dev);
	return 0;
}

/* ---- connecting ------------------------------------------------------ */

struct client_rereg {
	int		fd;
	unsigned	n;
	char		*why;
	size_t		whylen;
};

static int
client_rereg_one(uint64_t ptr, const struct alloc_entry *e, void *arg)
{
	struct client_rereg *rr = arg;

	if (e->flags & ALLOC_LEASED)
		return 0;	/* the lease it came from is restored whole */
	/* reserved 0: the allocation exists already. */
	if (client_send_commit(rr->fd, e->dev, ptr, 0, e->size, e->kind,
	    rr->why, rr->whylen) < 0)
		return -1;
	rr->n++;
	return 0;
}

/*
 * The lease on dev, as much as the page says it holds (include/gpufrac/
 * activity.h), told to a new connection: the allocations drawn from it
 * are not re-registered one by one. Lock held: a return waits for it.
 */
static int
client_lease_restore(int fd, int dev, char *why, size_t whylen)
{
	struct gf_lease q;

	memset(&q, 0, sizeof(q));
	memcpy(q.uuid, client_devs[dev].uuid, GF_UUID_LEN);
	if ((q.size = __atomic_load_n(&lease_slot(dev)->total,
	    __ATOMIC_SEQ_CST)) == 0)
		return 0;
	return client_send(fd, GF_MSG_LEASE_RESTORE, &q, NULL, why, whylen);
}

/*
 * Introduce the process on a new connection (non-blocking from now on).
 * Needs no lock: the connection is not shared yet.
 */
static int
client_hello(int fd, char *why, size_t whylen)
{
	struct gf_hello h;
	struct gf_msg m;
	int fl;

	if ((fl = fcntl(fd, F_GETFL)) < 0 ||
	    fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		snprintf(why, whylen, "fcntl: %s", strerror(errno));
		return -1;
	}
	memset(&h, 0, sizeof(h));
	h.priority = shim_env.priority;
	h.resolver = shim_env.resolver;
	h.wait_timeout_ms = shim_env.wait_timeout_ms;
	/* The activity page goes with it: the daemon sees our GPU use. */
	if (client_exchange(fd, GF_MSG_HELLO, &h, activity_fd(), &m, 0, why,
	    whylen) < 0)
		return -1;
	if (m.hdr.type != GF_MSG_HELLO_OK) {
		client_unexpected(&m, GF_MSG_HELLO, why, whylen);
		return -1;
	}
	return 0;
}

/*
 * Make fd, introduced, this process's connection: DEVICE_OPEN for every
 * device in use and COMMIT{reserved 0} for every live allocation, so that a
 * restarted daemon knows each of them exactly once (an allocation being
 * committed meanwhile waits for the lock and commits with reserved 0 after,
 * its RESERVE having gone to an earlier connection). Lock held throughout:
 * the exchanges are bounded by the reply timeout, as every one is.
 */
static int
client_register(int fd, unsigned *nrereg, char *why, size_t whylen)
{
	struct client_rereg rr = { fd, 0, why, whylen };
	unsigned gen;
	int dev;

	/* Atomic: client_free reads it unlocked. */
	gen = client_gen + 1 != 0 ? client_gen + 1 : 1;	/* 0: local */
	__atomic_store_n(&client_gen, gen, __ATOMIC_RELEASE);
	for (dev = 0; dev < SHIM_MAX_DEVICES; dev++)
		if (client_devs[dev].in_use &&
		    client_device_open_new(fd, gen, dev, why, whylen) < 0)
			return -1;
	if (alloc_table_walk(client_rereg_one, &rr) != 0)
		return -1;
	for (dev = 0; dev < GF_ACTIVITY_DEVICES; dev++)
		if (client_devs[dev].in_use &&
		    client_lease_restore(fd, dev, why, whylen) < 0)
			return -1;
	client_fd = fd;
	client_up = 1;
	*nrereg = rr.n;
	return 0;
}

static void	client_monitor_start(void);

/* The first connection attempt of the process, on the caller's thread. */
static void
client_start(void)
{
	char why[CLIENT_WHY_LEN];
	unsigned n;
	int fd;

	if (client_tried)
		return;
	client_tried = 1;
	if ((fd = sock_connect(shim_env.socket, why, sizeof(why))) < 0)
		snprintf(why, sizeof(why), "%s", strerror(errno));
	else if (client_hello(fd, why, sizeof(why)) < 0 ||
	    client_register(fd, &n, why, sizeof(why)) < 0) {
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		client_say_unreachable(why);
	else
		log_info("connected to gpufracd at '%s'", shim_env.socket);
	client_monitor_start();
}

/* A later attempt, from the watcher thread. */
static int
client_reconnect(void)
{
	char why[CLIENT_WHY_LEN];
	unsigned n;
	int fd;

	/*
	 * connect() (it blocks while the backlog is full) and HELLO outside
	 * the lock: a daemon that accepts but does not answer must not stall
	 * the program's allocations every retry.
	 */
	if ((fd = sock_connect(shim_env.socket, why, sizeof(why))) < 0) {
		log_debug("%s", why);
		return -1;
	}
	if (client_hello(fd, why, sizeof(why)) < 0)
		goto out_close;
	pthread_mutex_lock(&client_lock);
	if (client_register(fd, &n, why, sizeof(why)) < 0) {
		pthread_mutex_unlock(&client_lock);
		goto out_close;
	}
	pthread_mutex_unlock(&client_lock);
	log_info("reconnected to gpufracd at '%s'; re-registered %u "
	    "allocations", shim_env.socket, n);
	return 0;

out_close:
	close(fd);
	log_debug("cannot rejoin gpufracd: %s", why);
	return -1;
}

/* ---- the watcher ------------------------------------------------------ */

/*
 * Take the token and read what is there without blocking. Returns how many
 * packets it read (a failure counts as one: the socket said something).
 * Lock held, released while reading.
 */
static int
client_drain(int fd)
{
	char why[CLIENT_WHY_LEN];
	struct gf_msg m;
	int n = 0, r;

	client_reading = 1;
	for (;;) {
		pthread_mutex_unlock(&client_lock);
		r = client_recv(fd, &m, why, sizeof(why));
		pthread_mutex_lock(&client_lock);
		if (r == 0)
			break;
		n++;
		if (r < 0) {
			client_lost(why);
			break;
		}
		client_dispatch(&m);
	}
	client_reading = 0;
	client_token_free();
	return n;
}

/*
 * Watch the live connection fd until it is lost, reading whatever arrives
 * while nobody else reads, then close it. It never sleeps holding the
 * reader token: a caller must not wait for the watcher to hand it over.
 *
 * While callers read the socket themselves, each reply would wake the
 * watcher too, for nothing, adding to every request's latency. So once it
 * finds a caller reading, the watcher stops watching for input (HUP still
 * wakes it) for CLIENT_QUIET_MS: what arrives unasked meanwhile is read by
 * the next caller, or when it looks again; an idle process's watcher
 * sleeps until something arrives.
 */
static void
client_watch(int fd)
{
	struct pollfd p = { .fd = fd };
	int quiet = 0, n;

	pthread_mutex_lock(&client_lock);
	while (client_up) {
		pthread_mutex_unlock(&client_lock);
		p.events = quiet ? 0 : POLLIN;
		n = poll(&p, 1, quiet ? CLIENT_QUIET_MS : -1);
		if (n < 0 && errno != EINTR)
			poll(NULL, 0, CLIENT_RETRY_MIN_MS);
		pthread_mutex_lock(&client_lock);
		if (n == 0)
			quiet = 0;
		else if (n > 0 && client_up)
			quiet = client_reading || client_drain(fd) == 0;
	}
	while (client_reading) {
		client_watcher_waits = 1;
		pthread_cond_wait(&client_token_cv, &client_lock);
	}
	client_watcher_waits = 0;
	close(fd);
	client_fd = -1;
	pthread_mutex_unlock(&client_lock);
}

static void *
client_monitor(void *arg)
{
	int backoff = CLIENT_RETRY_MIN_MS;
	int fd;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&client_lock);
		fd = client_fd;
		pthread_mutex_unlock(&client_lock);
		if (fd >= 0) {
			client_watch(fd);
			backoff = CLIENT_RETRY_MIN_MS;
			continue;
		}
		poll(NULL, 0, backoff);
		if (client_reconnect() == 0)
			backoff = CLIENT_RETRY_MIN_MS;
		else if ((backoff *= 2) > CLIENT_RETRY_MAX_MS)
			backoff = CLIENT_RETRY_MAX_MS;
	}
	return NULL;
}

/* The watcher thread, with every signal blocked: they are the program's. */
static void
client_monitor_start(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	int e;

	if (client_monitor_running)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	e = pthread_create(&t, &attr, client_monitor, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0) {
		log_errx("cannot start a thread to watch gpufracd: %s; it will "
		    "not be rejoined", strerror(e));
		return;
	}
	pthread_setname_np(t, "gpufrac-monitor");
	client_monitor_running = 1;
}

/* ---- fork ------------------------------------------------------------ */

static void
client_fork_prepare(void)
{
	pthread_mutex_lock(&client_free_lock);
	pthread_mutex_lock(&client_lock);
	alloc_table_fork_prepare();
}

static void
client_fork_parent(void)
{
	alloc_table_fork_parent();
	pthread_mutex_unlock(&client_lock);
	pthread_mutex_unlock(&client_free_lock);
}

/*
 * The child is a new client: it closes (never shuts down, which would cut
 * the parent off) its copy of the parent's connection, owns no device
 * memory, and connects lazily as its own client on its first CUDA use.
 * The parent's other threads, their calls and whatever reader token one
 * of them held, do not exist here.
 */
static void
client_fork_child(void)
{
	alloc_table_fork_child();
	activity_fork_child();
	vmm_fork_child();
	pool_fork_child();
	if (client_fd >= 0)
		close(client_fd);
	client_fd = -1;
	client_up = 0;
	client_tried = 0;
	client_monitor_running = 0;
	client_said_unreachable = 0;
	client_calls = NULL;
	client_reading = 0;
	client_watcher_waits = 0;
	pthread_cond_init(&client_token_cv, NULL);
	memset(client_devs, 0, sizeof(client_devs));
	pthread_mutex_unlock(&client_lock);
	pthread_mutex_unlock(&client_free_lock);
}

void
client_init(void)
{
	int e;

	pthread_condattr_init(&client_condattr);
	pthread_condattr_setclock(&client_condattr, CLOCK_MONOTONIC);
	if ((e = pthread_atfork(client_fork_prepare, client_fork_parent,
	    client_fork_child)) != 0)
		log_errx("cannot install fork handlers: %s", strerror(e));
}

/* ---- swap ------------------------------------------------------------ */

void
client_swap_in(void)
{
	static int said;
	struct gf_msg m;
	unsigned gen;
	int r = -1;

	pthread_mutex_lock(&client_lock);
	client_start();
	if (client_up)
		r = client_call(GF_MSG_SWAP_IN, -1, NULL, &m, &gen);
	pthread_mutex_unlock(&client_lock);
	if (r == 0 && m.hdr.type == GF_MSG_OK) {
		log_debug("gpufracd swapped us back in");
		return;
	}
	if (r == 0 && shim_once(&said))
		log_errx("gpufracd did not swap us back in: %s",
		    m.hdr.type == GF_MSG_ERROR ? m.u.error.msg :
		    proto_type_name(m.hdr.type));
	/* Down, or it said no: give the watcher time to rejoin it. */
	poll(NULL, 0, CLIENT_RETRY_MIN_MS);
}

/*
 * Whether the driver has us locked, asked of the driver itself; 1 when it
 * cannot say (no checkpoint API: then no daemon ever locked us either,
 * but the flag is not ours to doubt while the daemon is there).
 */
static int
client_locked(void)
{
	static CUresult (*get_state)(int, CUprocessState *);
	static int looked;
	CUprocessState st;

	if (!looked && real_cu.cuGetProcAddress_v2 != NULL)
		(void)real_cu.cuGetProcAddress_v2("cuCheckpointProcessGetState",
		    (void **)&get_state, 12080, CU_GET_PROC_ADDRESS_DEFAULT,
		    NULL);
	looked = 1;
	if (get_state == NULL)
		return 0;
	if (get_state((int)getpid(), &st) != CUDA_SUCCESS)
		return 1;
	return st != CU_PROCESS_STATE_RUNNING;
}

int
client_swap_pending(void)
{
	int up;

	pthread_mutex_lock(&client_lock);
	up = client_up;
	pthread_mutex_unlock(&client_lock);
	if (up || client_locked())
		return 1;
	/*
	 * The daemon went away between marking us and locking us: the
	 * driver is ours. A new daemon sees the same (GetState at HELLO).
	 */
	log_info("swapped-out mark left by a departed gpufracd, but the "
	    "driver has us running: carrying on");
	__atomic_store_n(&activity_page->swapped, 0, __ATOMIC_SEQ_CST);
	return 0;
}

/* ---- accounting ------------------------------------------------------ */

/*
 * Ask the daemon, which may queue the request (WAIT) before it answers.
 * 1 with *res when it answered, 0 when it could not. Lock held, released
 * while waiting.
 */
static int
client_reserve_remote(int dev, uint64_t size, uint32_t kind,
    struct client_ticket *t, CUresult *res)
{
	char why[CLIENT_WHY_LEN], b1[16], b2[16], b3[16];
	struct gf_reserve q;
	struct gf_msg m;
	unsigned gen;

	memset(&q, 0, sizeof(q));
	memcpy(q.uuid, client_devs[dev].uuid, GF_UUID_LEN);
	q.size = size;
	q.kind = kind;
	/* cuMemAlloc's kind is what leases serve. */
	q.flags = kind == GF_KIND_MEM ? GF_RESERVE_LEASE : 0;
	if (client_call(GF_MSG_RESERVE, dev, &q, &m, &gen) < 0)
		return 0;
	switch (m.hdr.type) {
	case GF_MSG_GRANT:
		if (m.u.grant.lease != 0)
			log_debug("device %d: leased %llu bytes", dev,
			    (unsigned long long)m.u.grant.lease);
		t->gen = gen;
		*res = CUDA_SUCCESS;
		return 1;
	case GF_MSG_DENY:
		*res = m.u.deny.cuda_error != 0 ?
		    (CUresult)m.u.deny.cuda_error : CUDA_ERROR_OUT_OF_MEMORY;
		log_info("gpufracd denied %s on device %d (reason %u): %s of "
		    "%s in use", size_format(size, b1, sizeof(b1)), dev,
		    m.u.deny.reason, size_format(m.u.deny.used, b2, sizeof(b2)),
		    size_format(m.u.deny.limit, b3, sizeof(b3)));
		return 1;
	default:
		client_unexpected(&m, GF_MSG_RESERVE, why, sizeof(why));
		if (gen == client_gen)
			client_lost(why);
		return 0;
	}
}

/* Without the daemon: the last known limit, against what is live here. */
static CUresult
client_reserve_local(int dev, uint64_t size, struct client_ticket *t)
{
	uint64_t limit = client_device_limit(dev);
	/* Its lease is the process's too: what is left of it may be drawn. */
	uint64_t used = sat_add(sat_add(sat_add(alloc_table_used(dev),
	    client_devs[dev].pending), client_devs[dev].overhead),
	    lease_unused(dev));
	char b1[16], b2[16], b3[16];

	t->gen = 0;
	if (size > limit || used > limit - size) {
		log_info("denied %s on device %d locally: %s of %s in use",
		    size_format(size, b1, sizeof(b1)), dev,
		    size_format(used, b2, sizeof(b2)),
		    size_format(limit, b3, sizeof(b3)));
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	return CUDA_SUCCESS;
}

CUresult
client_reserve(int dev, uint64_t size, uint32_t kind, struct client_ticket *t)
{
	CUresult r = CUDA_SUCCESS;

	t->dev = -1;
	if (!client_device_valid(dev))
		return CUDA_SUCCESS;
	pthread_mutex_lock(&client_lock);
	client_start();
	if (client_device_prepare(dev) < 0)
		goto out;
	if (!client_up || !client_reserve_remote(dev, size, kind, t, &r))
		r = client_reserve_local(dev, size, t);
	if (r == CUDA_SUCCESS) {
		t->dev = dev;
		t->kind = kind;
		t->size = size;
		client_devs[dev].pending = sat_add(client_devs[dev].pending,
		    size);
	}
out:
	pthread_mutex_unlock(&client_lock);
	return r;
}

int
client_commit(const struct client_ticket *t, uint64_t ptr, uint64_t size)
{
	static int said;
	int r = 0;

	if (t->dev < 0)
		return 0;
	/* After any free of the same address still on its way: client_free. */
	pthread_mutex_lock(&client_free_lock);
	pthread_mutex_lock(&client_lock);
	if (alloc_table_add(ptr, size, t->kind, t->dev, 0) < 0) {
		if (shim_once(&said))
			log_errx("cannot record an allocation: out of memory; "
			    "failing it");
		r = -1;
		goto out;
	}
	client_devs[t->dev].pending = sat_sub(client_devs[t->dev].pending,
	    t->size);
	/*
	 * Down: the next connection re-registers it with the rest. A
	 * RESERVE made on an earlier connection is unknown to this one.
	 */
	client_tell_commit(t->dev, ptr, t->gen == client_gen ? t->size : 0,
	    size, t->kind);
out:
	pthread_mutex_unlock(&client_lock);
	pthread_mutex_unlock(&client_free_lock);
	return r;
}

void
client_rollback(const struct client_ticket *t)
{
	char why[CLIENT_WHY_LEN];
	struct gf_rollback rb;

	if (t->dev < 0)
		return;
	pthread_mutex_lock(&client_lock);
	client_devs[t->dev].pending = sat_sub(client_devs[t->dev].pending,
	    t->size);
	if (client_up && t->gen == client_gen) {
		memset(&rb, 0, sizeof(rb));
		memcpy(rb.uuid, client_devs[t->dev].uuid, GF_UUID_LEN);
		rb.size = t->size;
		if (client_send(client_fd, GF_MSG_ROLLBACK, &rb, NULL, why,
		    sizeof(why)) < 0)
			client_lost(why);
	}
	pthread_mutex_unlock(&client_lock);
}

/*
 * Once the driver has an address back it may hand it to another thread's
 * allocation, whose table entry and COMMIT must come after this free's
 * removal and FREE. So the free lock is held from the driver's free to the
 * FREE message, and a commit takes it first. It is not the client lock:
 * an allocation waiting for its RESERVE's reply (a queued one may wait
 * long, for this very free) holds no lock at all, and other threads'
 * reservations go on while cuMemFree synchronises. The cost: a commit in
 * another thread waits for a free in progress.
 */
CUresult
client_release_keys(const uint64_t *keys, size_t n,
    CUresult (*real_release)(void *), void *arg)
{
	struct alloc_entry e;
	CUresult r;
	size_t i;

	pthread_mutex_lock(&client_free_lock);
	r = real_release(arg);
	if (r == CUDA_SUCCESS) {
		/* Table and message together: client_register walks one. */
		pthread_mutex_lock(&client_lock);
		for (i = 0; i < n; i++)
			if (alloc_table_remove(keys[i], &e))
				client_tell_free(keys[i]);
		pthread_mutex_unlock(&client_lock);
	}
	pthread_mutex_unlock(&client_free_lock);
	return r;
}

CUresult
client_release(uint64_t key, CUresult (*real_release)(void *), void *arg)
{
	return client_release_keys(&key, 1, real_release, arg);
}

void
client_recharge(uint64_t key, int dev, uint32_t kind, uint64_t size)
{
	struct alloc_entry e;

	if (!client_device_valid(dev))
		return;
	pthread_mutex_lock(&client_free_lock);
	pthread_mutex_lock(&client_lock);
	client_start();
	if (client_device_prepare(dev) < 0)
		goto out;
	if (size == 0) {
		if (alloc_table_remove(key, &e))
			client_tell_free(key);
	} else if (alloc_table_add(key, size, kind, dev, 0) == 0)
		/* reserved 0: the record is charged as it now stands. */
		client_tell_commit(dev, key, 0, size, kind);
out:
	pthread_mutex_unlock(&client_lock);
	pthread_mutex_unlock(&client_free_lock);
}

/*
 * The slot of the device with this UUID: one this process uses through
 * CUDA, or one taken from the top for a management query. -1 if full.
 * Lock held.
 */
static int
client_device_by_uuid(const uint8_t uuid[GF_UUID_LEN])
{
	int dev;

	for (dev = 0; dev < SHIM_MAX_DEVICES; dev++)
		if (client_devs[dev].uuid_known &&
		    memcmp(client_devs[dev].uuid, uuid, GF_UUID_LEN) == 0)
			return dev;
	for (dev = SHIM_MAX_DEVICES - 1; dev >= 0; dev--)
		if (!client_devs[dev].uuid_known && !client_devs[dev].in_use) {
			memcpy(client_devs[dev].uuid, uuid, GF_UUID_LEN);
			client_devs[dev].uuid_known = 1;
			return dev;
		}
	return -1;
}

int
client_group_view(const uint8_t uuid[GF_UUID_LEN], uint64_t real_total,
    struct client_view *v)
{
	struct client_device *d;
	int dev, r = -1;

	pthread_mutex_lock(&client_lock);
	client_start();
	if ((dev = client_device_by_uuid(uuid)) < 0)
		goto out;
	d = &client_devs[dev];
	d->in_use = 1;
	/* A fresh DEVICE_OPEN: its answer states the group as it is now. */
	if (client_up)
		client_device_open_live(dev);
	if (!d->have_limit)
		goto out;	/* the daemon never answered: nothing to show */
	v->limit = d->group_limit;
	v->capacity = d->have_capacity ? d->capacity : real_total;
	v->used = d->group_used;
	r = 0;
out:
	pthread_mutex_unlock(&client_lock);
	return r;
}

/*
 * Freed memory drawn from a lease that the daemon has closed meanwhile:
 * it is the daemon's again. Off the page's total first, under the lock a
 * new connection's registration holds, so that a restarted daemon hears
 * of these bytes once: in LEASE_RESTORE's total, or here.
 */
static void
client_lease_return(int dev, uint64_t size)
{
	char why[CLIENT_WHY_LEN];
	struct gf_lease q;

	pthread_mutex_lock(&client_lock);
	__atomic_sub_fetch(&lease_slot(dev)->total, size, __ATOMIC_SEQ_CST);
	if (client_up) {
		memset(&q, 0, sizeof(q));
		memcpy(q.uuid, client_devs[dev].uuid, GF_UUID_LEN);
		q.size = size;
		if (client_send(client_fd, GF_MSG_LEASE_RETURN, &q, NULL, why,
		    sizeof(why)) < 0)
			client_lost(why);
	}
	pthread_mutex_unlock(&client_lock);
}

void
client_lease_give(int dev, uint64_t size)
{
	if (!lease_put(dev, size))
		client_lease_return(dev, size);
}

/*
 * The driver would not free ptr, taken from the table before it was
 * asked: put it back, and tell a connection made meanwhile, whose
 * registration did not see it. Lock held.
 */
static void
client_free_failed(CUdeviceptr ptr, const struct alloc_entry *e,
    unsigned gen)
{
	if (alloc_table_add(ptr, e->size, e->kind, e->dev, e->flags) == 0 &&
	    gen != client_gen)
		client_tell_commit(e->dev, ptr, 0, e->size, e->kind);
}

/*
 * A device pointer leaves the table before the driver frees it: once
 * freed, the address may come back at once from an allocation drawn from
 * a lease, which takes no lock to record it. Memory drawn from a lease
 * goes back to it; the rest is sent in FREE, under the free lock (see
 * client_release_keys).
 */
CUresult
client_free(CUdeviceptr ptr, CUresult (*real_free)(CUdeviceptr))
{
	unsigned gen = __atomic_load_n(&client_gen, __ATOMIC_ACQUIRE);
	struct alloc_entry e;
	CUresult r;

	if (!alloc_table_remove(ptr, &e))
		return real_free(ptr);
	if (e.flags & ALLOC_LEASED) {
		if ((r = real_free(ptr)) == CUDA_SUCCESS)
			client_lease_give(e.dev, e.size);
		else
			(void)alloc_table_add(ptr, e.size, e.kind, e.dev,
			    e.flags);
		return r;
	}
	pthread_mutex_lock(&client_free_lock);
	r = real_free(ptr);
	pthread_mutex_lock(&client_lock);
	if (r != CUDA_SUCCESS)
		client_free_failed(ptr, &e, gen);
	else
		client_tell_free(ptr);
	pthread_mutex_unlock(&client_lock);
	pthread_mutex_unlock(&client_free_lock);
	return r;
}

int
client_view(int dev, uint64_t real_total, struct client_view *v)
{
	struct client_device *d;
	int r = -1;

	if (!client_device_valid(dev))
		return -1;
	d = &client_devs[dev];
	pthread_mutex_lock(&client_lock);
	client_start();
	if (client_device_prepare(dev) < 0)
		goto out;
	if (real_total != 0)
		d->real_total = real_total;
	v->limit = client_device_limit(dev);
	v->capacity = d->have_capacity ? d->capacity : real_total;
	/* What the daemon charges our contexts counts as used, too. */
	v->used = sat_add(alloc_table_used(dev), d->overhead);
	r = 0;
out:
	pthread_mutex_unlock(&client_lock);
	return r;
}
