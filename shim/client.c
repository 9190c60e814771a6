/*
 * The daemon client: the connection to gpufracd and its monitor thread,
 * per-device state, reserve / commit / rollback / free, local enforcement
 * while the daemon is away, re-registration on reconnect, fork handling.
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

#include "alloc_table.h"
#include "client.h"
#include "env.h"
#include "gpufrac/proto.h"
#include "log.h"
#include "proto.h"
#include "real.h"
#include "shim.h"
#include "sock.h"
#include "units.h"
#include "uuid.h"

#define CLIENT_TIMEOUT_MS	5000	/* a reply, or a send that cannot go */
#define CLIENT_RETRY_MIN_MS	100	/* reconnection: first retry ... */
#define CLIENT_RETRY_MAX_MS	500	/* ... backing off to this */
#define CLIENT_WHY_LEN		(GF_ERRMSG_LEN + 80)

struct client_device {
	int		uuid_known;
	uint8_t		uuid[GF_UUID_LEN];
	int		in_use;		/* opened on every new connection */
	unsigned	open_gen;	/* connection it was opened on; 0: none */
	int		have_limit;	/* limit came from the daemon */
	uint64_t	limit;		/* the daemon's last word on the limit */
	int		have_capacity;
	uint64_t	capacity;	/* shareable bytes, from DEVICE_INFO */
	uint64_t	real_total;	/* the driver's total; 0: not known */
	uint64_t	pending;	/* reserved, not yet committed or rolled back */
	int		said_uuid;
	int		said_refused;
	int		said_total;
};

/*
 * The client lock serialises everything below. client_fd is closed by the
 * monitor thread once it watches it (or by whoever made it, if the
 * handshake fails, or by a fork child): others only shut it down, which
 * wakes the monitor.
 */
static pthread_mutex_t client_lock = PTHREAD_MUTEX_INITIALIZER;
static int client_fd = -1;
static int client_up;			/* requests go to the daemon */
static unsigned client_gen;		/* bumped by every connection attempt */
static uint32_t client_seq;		/* atomic: HELLO is sent unlocked */
static int client_tried;		/* the first attempt has been made */
static int client_monitor_running;
static int client_said_unreachable;
static struct client_device client_devs[SHIM_MAX_DEVICES];

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

/* ---- one exchange on a socket ---------------------------------------- */

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
 * *seqp (if not NULL) gets the seq it carries.
 */
static int
client_send(int fd, uint16_t type, const void *payload, uint32_t *seqp,
    char *why, size_t whylen)
{
	int64_t deadline = now_ms() + CLIENT_TIMEOUT_MS;
	uint32_t seq = __atomic_add_fetch(&client_seq, 1, __ATOMIC_RELAXED);

	if (seqp != NULL)
		*seqp = seq;
	while (proto_send(fd, type, seq, payload) < 0) {
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

/*
 * Send a request and wait at most timeout_ms for the reply that echoes its
 * seq; stale replies (to a request that timed out) are dropped.
 */
static int
client_exchange(int fd, uint16_t type, const void *payload,
    struct gf_msg *reply, int timeout_ms, char *why, size_t whylen)
{
	int64_t deadline;
	uint32_t seq;
	const char *bad;
	int r;

	if (client_send(fd, type, payload, &seq, why, whylen) < 0)
		return -1;
	deadline = now_ms() + timeout_ms;
	for (;;) {
		if ((r = client_poll(fd, POLLIN, deadline)) <= 0) {
			if (r == 0)
				snprintf(why, whylen, "no reply to %s within "
				    "%d s", proto_type_name(type),
				    timeout_ms / 1000);
			else
				snprintf(why, whylen, "poll: %s",
				    strerror(errno));
			return -1;
		}
		r = proto_recv(fd, reply, MSG_DONTWAIT, &bad);
		if (r == 1 && reply->hdr.seq == seq)
			return 0;
		if (r == 1)
			log_debug("dropping a stale %s from gpufracd",
			    proto_type_name(reply->hdr.type));
		else if (r == 0) {
			snprintf(why, whylen, "connection closed by gpufracd");
			return -1;
		} else if (r == -2) {
			snprintf(why, whylen, "malformed reply: %s", bad);
			return -1;
		} else if (errno != EAGAIN && errno != EWOULDBLOCK) {
			snprintf(why, whylen, "cannot receive: %s",
			    strerror(errno));
			return -1;
		}
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

/* The connection failed: stop using it and let the monitor replace it. */
static void
client_lost(const char *why)
{
	if (!client_up)
		return;
	client_up = 0;
	shutdown(client_fd, SHUT_RDWR);
	if (!client_monitor_running) {
		close(client_fd);
		client_fd = -1;
	}
	client_say_unreachable(why);
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

/* DEVICE_OPEN on fd for connection gen. -1 only when the exchange fails. */
static int
client_device_open(int fd, unsigned gen, int dev, char *why, size_t whylen)
{
	struct client_device *d = &client_devs[dev];
	const struct limit_one *req = &shim_env.limit.dev[dev];
	char ubuf[UUID_STR_LEN];
	struct gf_device_open o;
	struct gf_msg m;

	memset(&o, 0, sizeof(o));
	memcpy(o.uuid, d->uuid, GF_UUID_LEN);
	o.ordinal = (uint32_t)dev;
	o.limit_kind = req->kind;
	o.limit_value = req->value;
	if (client_exchange(fd, GF_MSG_DEVICE_OPEN, &o, &m, CLIENT_TIMEOUT_MS,
	    why, whylen) < 0)
		return -1;
	switch (m.hdr.type) {
	case GF_MSG_DEVICE_INFO:
		if (memcmp(m.u.device_info.uuid, d->uuid, GF_UUID_LEN) != 0) {
			snprintf(why, whylen, "DEVICE_INFO names another "
			    "device");
			return -1;
		}
		d->open_gen = gen;
		d->have_limit = 1;
		d->limit = m.u.device_info.limit;
		d->have_capacity = 1;
		d->capacity = m.u.device_info.capacity;
		log_debug("device %d (%s): limit %llu, capacity %llu", dev,
		    uuid_format(d->uuid, ubuf, sizeof(ubuf)),
		    (unsigned long long)d->limit,
		    (unsigned long long)d->capacity);
		return 0;
	case GF_MSG_ERROR:
		/* Its RESERVEs will be denied: the daemon decides. */
		d->open_gen = gen;
		if (shim_once(&d->said_refused))
			log_errx("gpufracd refused device %d (%s): %s", dev,
			    uuid_format(d->uuid, ubuf, sizeof(ubuf)), m.u.error.msg);
		return 0;
	default:
		client_unexpected(&m, GF_MSG_DEVICE_OPEN, why, whylen);
		return -1;
	}
}

/* Make dev known (UUID) and opened on the live connection; -1: unaccounted. */
static int
client_device_prepare(int dev)
{
	struct client_device *d = &client_devs[dev];
	char why[CLIENT_WHY_LEN];

	if (!d->uuid_known && client_device_uuid(dev) < 0)
		return -1;
	d->in_use = 1;
	if (client_up && d->open_gen != client_gen &&
	    client_device_open(client_fd, client_gen, dev, why,
	    sizeof(why)) < 0)
		client_lost(why);
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
	struct gf_commit c;

	memset(&c, 0, sizeof(c));
	memcpy(c.uuid, client_devs[e->dev].uuid, GF_UUID_LEN);
	c.ptr = ptr;
	c.reserved = 0;		/* the allocation exists already */
	c.size = e->size;
	c.kind = e->kind;
	if (client_send(rr->fd, GF_MSG_COMMIT, &c, NULL, rr->why,
	    rr->whylen) < 0)
		return -1;
	rr->n++;
	return 0;
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
	if (client_exchange(fd, GF_MSG_HELLO, &h, &m, CLIENT_TIMEOUT_MS, why,
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
 * made meanwhile waits for the lock and commits with reserved 0 after,
 * its RESERVE having gone to an earlier connection). Lock held.
 */
static int
client_register(int fd, unsigned *nrereg, char *why, size_t whylen)
{
	struct client_rereg rr = { fd, 0, why, whylen };
	unsigned gen;
	int dev;

	if (++client_gen == 0)
		client_gen = 1;		/* 0 marks a local reservation */
	gen = client_gen;
	for (dev = 0; dev < SHIM_MAX_DEVICES; dev++)
		if (client_devs[dev].in_use &&
		    client_device_open(fd, gen, dev, why, whylen) < 0)
			return -1;
	if (alloc_table_walk(client_rereg_one, &rr) != 0)
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

/* A later attempt, from the monitor thread. */
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

/* Block until the connection on fd is gone (POLLHUP), then close it. */
static void
client_watch(int fd)
{
	struct pollfd p = { .fd = fd, .events = 0 };

	/* events = 0: only HUP/ERR wake us; replies stay for the requester */
	while (poll(&p, 1, -1) < 0)
		if (errno != EINTR)
			poll(NULL, 0, CLIENT_RETRY_MIN_MS);
	pthread_mutex_lock(&client_lock);
	if (client_fd == fd) {
		client_lost("connection closed by gpufracd");
		close(fd);
		client_fd = -1;
	}
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

/* The monitor thread, with every signal blocked: they are the program's. */
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
	pthread_mutex_lock(&client_lock);
	alloc_table_fork_prepare();
}

static void
client_fork_parent(void)
{
	alloc_table_fork_parent();
	pthread_mutex_unlock(&client_lock);
}

/*
 * The child is a new client: it closes (never shuts down, which would cut
 * the parent off) its copy of the parent's connection, owns no device
 * memory, and connects lazily as its own client on its first CUDA use.
 */
static void
client_fork_child(void)
{
	alloc_table_fork_child();
	if (client_fd >= 0)
		close(client_fd);
	client_fd = -1;
	client_up = 0;
	client_tried = 0;
	client_monitor_running = 0;
	client_said_unreachable = 0;
	memset(client_devs, 0, sizeof(client_devs));
	pthread_mutex_unlock(&client_lock);
}

void
client_init(void)
{
	int e;

	if ((e = pthread_atfork(client_fork_prepare, client_fork_parent,
	    client_fork_child)) != 0)
		log_errx("cannot install fork handlers: %s", strerror(e));
}

/* ---- accounting ------------------------------------------------------ */

/* How long a RESERVE may take: a wait resolver may hold it back. */
static int
client_reserve_timeout(void)
{
	uint32_t w = shim_env.wait_timeout_ms;

	if (w == GF_UNSET)
		return CLIENT_TIMEOUT_MS;
	if (w > (uint32_t)(INT32_MAX - CLIENT_TIMEOUT_MS))
		return INT32_MAX;
	return CLIENT_TIMEOUT_MS + (int)w;
}

/* Ask the daemon. 1 with *res when it answered, 0 when it could not. */
static int
client_reserve_remote(int dev, uint64_t size, uint32_t kind,
    struct client_ticket *t, CUresult *res)
{
	struct client_device *d = &client_devs[dev];
	char why[CLIENT_WHY_LEN], b1[16], b2[16], b3[16];
	struct gf_reserve q;
	struct gf_msg m;

	memset(&q, 0, sizeof(q));
	memcpy(q.uuid, d->uuid, GF_UUID_LEN);
	q.size = size;
	q.kind = kind;
	if (client_exchange(client_fd, GF_MSG_RESERVE, &q, &m,
	    client_reserve_timeout(), why, sizeof(why)) < 0) {
		client_lost(why);
		return 0;
	}
	switch (m.hdr.type) {
	case GF_MSG_GRANT:
		d->have_limit = 1;
		d->limit = m.u.grant.limit;
		t->gen = client_gen;
		*res = CUDA_SUCCESS;
		return 1;
	case GF_MSG_DENY:
		if (m.u.deny.reason != GF_DENY_UNKNOWN_DEVICE) {
			d->have_limit = 1;
			d->limit = m.u.deny.limit;
		}
		*res = m.u.deny.cuda_error != 0 ?
		    (CUresult)m.u.deny.cuda_error : CUDA_ERROR_OUT_OF_MEMORY;
		log_info("gpufracd denied %s on device %d (reason %u): %s of "
		    "%s in use", size_format(size, b1, sizeof(b1)), dev,
		    m.u.deny.reason, size_format(m.u.deny.used, b2, sizeof(b2)),
		    size_format(m.u.deny.limit, b3, sizeof(b3)));
		return 1;
	default:
		client_unexpected(&m, GF_MSG_RESERVE, why, sizeof(why));
		client_lost(why);
		return 0;
	}
}

/* Without the daemon: the last known limit, against what is live here. */
static CUresult
client_reserve_local(int dev, uint64_t size, struct client_ticket *t)
{
	uint64_t limit = client_device_limit(dev);
	uint64_t used = sat_add(alloc_table_used(dev), client_devs[dev].pending);
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
	char why[CLIENT_WHY_LEN];
	struct gf_commit c;

	if (t->dev < 0)
		return 0;
	pthread_mutex_lock(&client_lock);
	if (alloc_table_add(ptr, size, t->kind, t->dev) < 0) {
		pthread_mutex_unlock(&client_lock);
		if (shim_once(&said))
			log_errx("cannot record an allocation: out of memory; "
			    "failing it");
		return -1;
	}
	client_devs[t->dev].pending = sat_sub(client_devs[t->dev].pending,
	    t->size);
	/* Down: the next connection re-registers it with the rest. */
	if (client_up) {
		memset(&c, 0, sizeof(c));
		memcpy(c.uuid, client_devs[t->dev].uuid, GF_UUID_LEN);
		c.ptr = ptr;
		/* A RESERVE made on an earlier connection is unknown here. */
		c.reserved = t->gen == client_gen ? t->size : 0;
		c.size = size;
		c.kind = t->kind;
		if (client_send(client_fd, GF_MSG_COMMIT, &c, NULL, why,
		    sizeof(why)) < 0)
			client_lost(why);
	}
	pthread_mutex_unlock(&client_lock);
	return 0;
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
 * The client lock is held across the driver's free: once the driver has the
 * address back it may hand it to another thread's allocation, whose table
 * entry and COMMIT must come after this one's removal and FREE. The cost:
 * other threads' allocations wait while cuMemFree synchronises.
 */
CUresult
client_free(CUdeviceptr ptr, CUresult (*real_free)(CUdeviceptr))
{
	char why[CLIENT_WHY_LEN];
	struct alloc_entry e;
	struct gf_free f;
	CUresult r;

	pthread_mutex_lock(&client_lock);
	r = real_free(ptr);
	if (r == CUDA_SUCCESS && alloc_table_remove(ptr, &e) && client_up) {
		memset(&f, 0, sizeof(f));
		f.ptr = ptr;
		if (client_send(client_fd, GF_MSG_FREE, &f, NULL, why,
		    sizeof(why)) < 0)
			client_lost(why);
	}
	pthread_mutex_unlock(&client_lock);
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
	v->used = alloc_table_used(dev);
	r = 0;
out:
	pthread_mutex_unlock(&client_lock);
	return r;
}
