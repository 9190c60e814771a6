/*
 * Connecting to gpufracd: HELLO, then registering the new connection (the
 * devices in use, the live allocations and leases, which a restarted
 * daemon knows nothing of); the first attempt, and the watcher's later ones.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "activity.h"
#include "alloc_table.h"
#include "client_int.h"
#include "env.h"
#include "gpufrac/proto.h"
#include "lease.h"
#include "log.h"
#include "proto.h"
#include "shim.h"
#include "sock.h"

#ifndef GPUFRAC_VERSION
#define GPUFRAC_VERSION	"unknown"	/* the Makefile defines it */
#endif

/* client_hello: the daemon refused this libgpufrac (why says so). */
#define CLIENT_REFUSED	(-2)
/* Why, when connect(2) found the daemon's backlog full for 5 s. */
#define CLIENT_NO_ROOM	"had no room in its backlog within 5 s"

int client_tried;
int client_shut_out;
static int said_refused;

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

static int
client_held_one(uint64_t ptr, const struct alloc_entry *e, void *arg)
{
	uint64_t *held = arg;

	(void)ptr;
	if (!(e->flags & ALLOC_LEASED) && (unsigned)e->dev < GF_ACTIVITY_DEVICES)
		held[e->dev] += e->size;
	return 0;
}

static void
client_held_store(const uint64_t *held)
{
	int dev;

	for (dev = 0; dev < GF_ACTIVITY_DEVICES; dev++)
		__atomic_store_n(&lease_slot(dev)->held, held[dev],
		    __ATOMIC_RELAXED);
}

/*
 * What the allocations about to be registered hold on each device, their
 * leases' drawn part included, told through the page (include/gpufrac/
 * activity.h) while the devices are opened: the daemon's first look at
 * our context memory must not count them. Lock held.
 */
static void
client_held_note(void)
{
	uint64_t held[GF_ACTIVITY_DEVICES] = { 0 }, total, avail;
	int dev;

	(void)alloc_table_walk(client_held_one, held);
	for (dev = 0; dev < GF_ACTIVITY_DEVICES; dev++) {
		total = __atomic_load_n(&lease_slot(dev)->total,
		    __ATOMIC_SEQ_CST);
		avail = __atomic_load_n(&lease_slot(dev)->avail,
		    __ATOMIC_SEQ_CST) & ~GF_LEASE_CLOSED;
		held[dev] += total > avail ? total - avail : 0;
	}
	client_held_store(held);
}

/* The devices are open: a later DEVICE_OPEN registers nothing before it. */
static void
client_held_clear(void)
{
	static const uint64_t none[GF_ACTIVITY_DEVICES];

	client_held_store(none);
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
 * The daemon's ERROR to HELLO, when it refuses this libgpufrac: its header
 * is in the daemon's protocol version, which may not be ours (include/
 * gpufrac/proto.h, Versions). CLIENT_REFUSED with why saying so, or -1.
 */
static int
client_refused(const struct gf_msg *m, char *why, size_t whylen)
{
	if (m->hdr.version != GF_PROTO_VERSION)
		snprintf(why, whylen, "speaks protocol %u, this libgpufrac %s "
		    "speaks %u: %s", m->hdr.version, GPUFRAC_VERSION,
		    GF_PROTO_VERSION, m->u.error.msg);
	else if (m->u.error.code == GF_ERR_VERSION)
		snprintf(why, whylen, "refused this libgpufrac %s: %s",
		    GPUFRAC_VERSION, m->u.error.msg);
	else
		snprintf(why, whylen, "refused this process: %s",
		    m->u.error.msg);
	return CLIENT_REFUSED;
}

/*
 * A daemon that is there and says no (issue 32): the process is shut out,
 * every allocation refused until a connection is let in; a refusal is an
 * answer, and must not open the door that an absent daemon leaves open,
 * nor the lease an earlier daemon lent (issue 38 G: closed here, so that
 * the fast path, which reads only the lease, draws nothing from it).
 * Said at error level once per refusal, as an unreachable daemon is.
 */
static void
client_say_refused(const char *why)
{
	int dev;

	__atomic_store_n(&client_shut_out, 1, __ATOMIC_RELAXED);
	for (dev = 0; dev < GF_ACTIVITY_DEVICES; dev++)
		lease_shut(dev);
	if (shim_once(&said_refused)) {
		(void)shim_once(&client_said_unreachable);
		log_errx("daemon at '%s' %s; allocations fail until it lets "
		    "this process in", shim_env.socket, why);
	} else
		log_debug("daemon at '%s' %s", shim_env.socket, why);
}

/*
 * A connection that reached a daemon that is there, and was not let in
 * (issue 38 G): no HELLO_OK, a registration refused, a connection closed
 * on the way. It fails closed as a stated refusal does: only a daemon
 * that is not there at all (no socket, nobody listening) leaves the shim
 * on its last known limit. why, what went wrong, is made to say so.
 */
static void
client_not_let_in(char *why, size_t whylen)
{
	static const char pre[] = "did not let this process in: ";
	size_t n = strnlen(why, whylen);

	if (whylen > sizeof(pre)) {
		/* Shifted in place, cut to fit. */
		if (n > whylen - sizeof(pre))
			n = whylen - sizeof(pre);
		memmove(why + sizeof(pre) - 1, why, n);
		memcpy(why, pre, sizeof(pre) - 1);
		why[sizeof(pre) - 1 + n] = '\0';
	}
	client_say_refused(why);
}

/* A connection was let in: a refusal said before is over. */
static void
client_let_in(void)
{
	if (!__atomic_exchange_n(&client_shut_out, 0, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&said_refused, 0, __ATOMIC_RELAXED);
	log_errx("daemon at '%s' lets this process in: allocations are "
	    "asked for again", shim_env.socket);
}

/*
 * Introduce the process on a new connection (non-blocking from now on).
 * Needs no lock: the connection is not shared yet. Returns 0, -1, or
 * CLIENT_REFUSED.
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
	proto_strlcpy(h.version, GPUFRAC_VERSION, sizeof(h.version));
	/* The activity page goes with it: the daemon sees our GPU use. */
	if (client_exchange(fd, GF_MSG_HELLO, &h, activity_fd(), &m, 0, why,
	    whylen) < 0)
		return -1;
	if (m.hdr.type == GF_MSG_ERROR &&
	    client_refused(&m, why, whylen) == CLIENT_REFUSED)
		return CLIENT_REFUSED;
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
	client_held_note();
	for (dev = 0; dev < SHIM_MAX_DEVICES; dev++)
		if (client_devs[dev].in_use &&
		    client_device_open_new(fd, gen, dev, why, whylen) < 0)
			break;
	client_held_clear();
	if (dev < SHIM_MAX_DEVICES)
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
	client_let_in();
	client_rejoined();
	return 0;
}

/* The first connection attempt of the process, on the caller's thread. */
void
client_start(void)
{
	char why[CLIENT_WHY_LEN];
	unsigned n;
	int fd, r = 0;

	if (client_tried)
		return;
	client_tried = 1;
	/*
	 * On the program's own thread: a full backlog (a stuck daemon, or
	 * a neighbour's connections) costs it CLIENT_TIMEOUT_MS at most.
	 */
	if ((fd = sock_connect_within(shim_env.socket, CLIENT_TIMEOUT_MS, why,
	    sizeof(why))) < 0) {
		if (errno == ETIMEDOUT)
			client_say_refused(CLIENT_NO_ROOM);
		else
			client_say_unreachable(strerror(errno));
	} else if ((r = client_hello(fd, why, sizeof(why))) < 0 ||
	    client_register(fd, &n, why, sizeof(why)) < 0) {
		close(fd);
		if (r == CLIENT_REFUSED)
			client_say_refused(why);
		else
			client_not_let_in(why, sizeof(why));
	} else
		log_info("connected to gpufracd at '%s'", shim_env.socket);
	client_monitor_start();
}

/* A later attempt, from the watcher thread. */
int
client_reconnect(void)
{
	char why[CLIENT_WHY_LEN];
	unsigned n;
	int fd, r;

	/*
	 * connect() (it blocks while the backlog is full) and HELLO outside
	 * the client lock: a daemon that accepts but does not answer must
	 * not stall the program's allocations every retry. Memory the copy
	 * engine left on the host stays there: the new daemon reads where
	 * it is in the page and brings it back when it fits (issue 33).
	 */
	pthread_mutex_lock(&client_rejoin_lock);
	if ((fd = sock_connect_within(shim_env.socket, CLIENT_TIMEOUT_MS, why,
	    sizeof(why))) < 0) {
		r = errno;
		pthread_mutex_unlock(&client_rejoin_lock);
		if (r == ETIMEDOUT) {
			client_say_refused(CLIENT_NO_ROOM);
			client_rejoin_failed();
		}
		log_debug("%s", why);
		return -1;
	}
	r = client_hello(fd, why, sizeof(why));
	pthread_mutex_unlock(&client_rejoin_lock);
	if (r < 0) {
		if (r == CLIENT_REFUSED)
			client_say_refused(why);
		else
			client_not_let_in(why, sizeof(why));
		goto out_close;
	}
	pthread_mutex_lock(&client_lock);
	if (client_register(fd, &n, why, sizeof(why)) < 0) {
		pthread_mutex_unlock(&client_lock);
		client_not_let_in(why, sizeof(why));
		goto out_close;
	}
	pthread_mutex_unlock(&client_lock);
	log_info("reconnected to gpufracd at '%s'; re-registered %u "
	    "allocations", shim_env.socket, n);
	return 0;

out_close:
	close(fd);
	client_rejoin_failed();
	log_debug("cannot rejoin gpufracd: %s", why);
	return -1;
}
