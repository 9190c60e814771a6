/*
 * gpufracctl's queries: one connection per request, a reply read with a
 * timeout, streamed records checked against their END count, then sorted.
 * Following events, the wait has no timeout and ends on SIGINT or SIGTERM.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl_print.h"
#include "ctl_query.h"
#include "log.h"
#include "proto.h"
#include "sock.h"

/* More records than any daemon has: a reply this long is broken. */
#define CTL_MAX_RECORDS	(1u << 22)

/* One request and its reply on one connection. */
struct conv {
	const char	*path;
	int		 fd;
	int		 sigfd;		/* signals that end the wait, or -1 */
	uint32_t	 seq;
};

/* How waiting for the next message of a reply ended. */
enum {
	CONV_MSG,		/* one came, valid and for this request */
	CONV_FAILED,		/* said on stderr */
	CONV_HANGUP,		/* the daemon closed the connection */
	CONV_SIGNAL,		/* sigfd became readable */
};

static int
conv_open(struct conv *c, const char *path, uint16_t type,
    const void *payload)
{
	char err[SOCK_ERR_LEN];

	c->path = path;
	c->sigfd = -1;
	c->seq = (uint32_t)getpid();
	if ((c->fd = sock_connect_within(path, CTL_TIMEOUT_MS, err,
	    sizeof(err))) < 0) {
		if (errno == ENOENT || errno == ECONNREFUSED)
			log_errx("%s (is gpufracd running?)", err);
		else
			log_errx("%s", err);
		return -1;
	}
	if (proto_send(c->fd, type, c->seq, payload) < 0) {
		log_err("cannot send %s to '%s'", proto_type_name(type), path);
		close(c->fd);
		return -1;
	}
	return 0;
}

/* The daemon refused: say what it said, or what its code means. */
static void
conv_refused(const struct conv *c, const struct gf_error *e)
{
	static const char *const names[] = {
		[GF_ERR_NO_SUCH_PID] = "no such pid",
		[GF_ERR_UNKNOWN_DEVICE] = "unknown device",
		[GF_ERR_PERMISSION] = "permission denied",
		[GF_ERR_STATE] = "request not valid in this state",
		[GF_ERR_CONFIG] = "the configuration is not valid",
		[GF_ERR_SWAP] = "the swap could not be done",
		[GF_ERR_GROUP] = "the group change was refused",
		[GF_ERR_NO_SUCH_GROUP] = "no such run-time group",
	};
	char msg[GF_ERRMSG_LEN];

	if (e->msg[0] != '\0')
		log_errx("%s", ctl_printable(e->msg, sizeof(e->msg), msg,
		    sizeof(msg)));
	else if (e->code < sizeof(names) / sizeof(names[0]) &&
	    names[e->code] != NULL)
		log_errx("gpufracd on '%s' refused: %s", c->path,
		    names[e->code]);
	else
		log_errx("gpufracd on '%s' refused with error %u", c->path,
		    e->code);
}

static void
conv_unexpected(const struct conv *c, const struct gf_msg *m)
{
	log_errx("unexpected %s in the reply from '%s'",
	    proto_type_name(m->hdr.type), c->path);
}

/*
 * Wait for the socket (at most timeout_ms, or forever when it is -1) or for
 * sigfd. Returns 1 when the socket is readable, 0 on timeout, CONV_SIGNAL,
 * or -1 (said).
 */
static int
conv_wait(const struct conv *c, int timeout_ms)
{
	struct pollfd pfd[2] = {
		{ .fd = c->fd, .events = POLLIN },
		{ .fd = c->sigfd, .events = POLLIN },
	};
	int r;

	do
		r = poll(pfd, c->sigfd >= 0 ? 2 : 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		log_err("cannot wait for '%s'", c->path);
		return -1;
	}
	if (r == 0)
		return 0;
	if (c->sigfd >= 0 && pfd[1].revents)
		return CONV_SIGNAL;
	return 1;
}

/*
 * The next message of the reply, waiting at most timeout_ms for it (-1:
 * forever). An ERROR, silence or a bad packet is reported here; a hang-up
 * is the caller's to report, since only it knows whether one was due.
 */
static int
conv_next(const struct conv *c, struct gf_msg *m, int timeout_ms)
{
	const char *why = "";
	int r;

	for (;;) {
		r = conv_wait(c, timeout_ms);
		if (r < 0)
			return CONV_FAILED;
		if (r == CONV_SIGNAL)
			return CONV_SIGNAL;
		if (r == 0) {
			log_errx("no reply from '%s' within %d seconds "
			    "(is gpufracd stuck?)", c->path,
			    CTL_TIMEOUT_MS / 1000);
			return CONV_FAILED;
		}
		r = proto_recv(c->fd, m, MSG_DONTWAIT, &why);
		if (r == 1)
			break;
		if (r == 0)
			return CONV_HANGUP;
		if (r == -2) {
			log_errx("malformed reply from '%s': %s", c->path,
			    why);
			return CONV_FAILED;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			log_err("cannot read from '%s'", c->path);
			return CONV_FAILED;
		}
	}
	if (m->hdr.seq != c->seq) {
		log_errx("malformed reply from '%s': %s answers request %u, "
		    "not %u", c->path, proto_type_name(m->hdr.type),
		    m->hdr.seq, c->seq);
		return CONV_FAILED;
	}
	if (m->hdr.type == GF_MSG_ERROR) {
		conv_refused(c, &m->u.error);
		return CONV_FAILED;
	}
	return CONV_MSG;
}

/*
 * The next message of a reply that is not complete yet: 0, -1 (said), or
 * 1 when a stop signal came first (only where c->sigfd is set).
 */
static int
conv_recv(const struct conv *c, struct gf_msg *m)
{
	switch (conv_next(c, m, CTL_TIMEOUT_MS)) {
	case CONV_MSG:
		return 0;
	case CONV_SIGNAL:
		return 1;
	case CONV_HANGUP:
		log_errx("'%s' closed the connection before the reply was "
		    "complete", c->path);
		return -1;
	default:
		return -1;
	}
}

/*
 * Collect rec messages up to the end message and check its count. *out is
 * a malloc'd array of n payloads of rec's size, NULL when n is 0. Returns
 * 0, -1 (said), or 1 when a stop signal came first (nothing kept).
 */
static int
conv_list(const struct conv *c, uint16_t rec, uint16_t end, void **out,
    size_t *nout)
{
	size_t size = (size_t)proto_payload_size(rec), n = 0, cap = 0;
	unsigned char *recs = NULL;
	struct gf_msg m;
	int r;

	for (;;) {
		if ((r = conv_recv(c, &m)) != 0) {
			free(recs);
			return r;
		}
		if (m.hdr.type == end)
			break;
		if (m.hdr.type != rec) {
			conv_unexpected(c, &m);
			goto out_free;
		}
		if (n == CTL_MAX_RECORDS) {
			log_errx("malformed reply from '%s': more than %u "
			    "records", c->path, CTL_MAX_RECORDS);
			goto out_free;
		}
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			unsigned char *p = realloc(recs, ncap * size);

			if (p == NULL) {
				log_err("cannot hold the reply from '%s'",
				    c->path);
				goto out_free;
			}
			recs = p;
			cap = ncap;
		}
		memcpy(recs + n * size, m.u.raw, size);
		n++;
	}
	if (m.u.end.count != n) {
		log_errx("malformed reply from '%s': %s counts %u records, "
		    "%zu came", c->path, proto_type_name(end), m.u.end.count,
		    n);
		goto out_free;
	}
	*out = recs;
	*nout = n;
	return 0;

out_free:
	free(recs);
	return -1;
}

/* Total orders, so that the output never depends on the daemon's. */
static int
device_cmp(const void *a, const void *b)
{
	const struct gf_device_status *x = a, *y = b;

	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return memcmp(x->uuid, y->uuid, GF_UUID_LEN);
}

static int
client_cmp(const void *a, const void *b)
{
	const struct gf_client *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->record != y->record)
		return x->record < y->record ? -1 : 1;
	return memcmp(x->uuid, y->uuid, GF_UUID_LEN);
}

static int
alloc_cmp(const void *a, const void *b)
{
	const struct gf_alloc *x = a, *y = b;

	if (x->ptr != y->ptr)
		return x->ptr < y->ptr ? -1 : 1;
	return memcmp(x->uuid, y->uuid, GF_UUID_LEN);
}

/* A device's position in the sorted devices of st, or ndevices. */
static size_t
device_pos(const struct ctl_status *st, const uint8_t uuid[GF_UUID_LEN])
{
	size_t i;

	for (i = 0; i < st->ndevices; i++)
		if (memcmp(st->devices[i].uuid, uuid, GF_UUID_LEN) == 0)
			break;
	return i;
}

/* By name, then device as the devices are listed, then uuid. */
static int
group_cmp(const void *a, const void *b, void *arg)
{
	const struct gf_group_status *x = a, *y = b;
	const struct ctl_status *st = arg;
	size_t px, py;
	int r;

	if ((r = strncmp(x->name, y->name, sizeof(x->name))) != 0)
		return r;
	px = device_pos(st, x->uuid);
	py = device_pos(st, y->uuid);
	if (px != py)
		return px < py ? -1 : 1;
	return memcmp(x->uuid, y->uuid, GF_UUID_LEN);
}

static int
wall_cmp(const void *a, const void *b)
{
	const struct gf_wall *x = a, *y = b;
	int r = memcmp(x->uuid, y->uuid, GF_UUID_LEN);

	return r != 0 ? r : strncmp(x->dir, y->dir, sizeof(x->dir));
}

/*
 * The driver's walls (WALLS_REQ), where a device has driver limits on: a
 * daemon that has none says nothing of them, and may not know the
 * request. 0, or -1 (said).
 */
static int
status_walls(const char *path, struct ctl_status *st)
{
	struct conv c;
	void *recs;
	size_t i;
	int rc;

	for (i = 0; i < st->ndevices; i++)
		if (st->devices[i].driver_limits == GF_DLIM_ON)
			break;
	if (i == st->ndevices)
		return 0;
	if (conv_open(&c, path, GF_MSG_WALLS_REQ, NULL) < 0)
		return -1;
	rc = conv_list(&c, GF_MSG_WALL, GF_MSG_WALL_END, &recs, &st->nwalls);
	if (rc == 0)
		st->walls = recs;
	if (rc == 0 && st->nwalls > 1)
		qsort(st->walls, st->nwalls, sizeof(*st->walls), wall_cmp);
	close(c.fd);
	return rc;
}

int
ctl_query_status(const char *path, struct ctl_status *st)
{
	struct conv c;
	struct gf_msg m;
	void *recs;
	int rc = -1;

	memset(st, 0, sizeof(*st));
	if (conv_open(&c, path, GF_MSG_STATUS_REQ, NULL) < 0)
		return -1;
	if (conv_recv(&c, &m) < 0)
		goto out_close;
	if (m.hdr.type != GF_MSG_STATUS) {
		conv_unexpected(&c, &m);
		goto out_close;
	}
	st->daemon = m.u.status;
	if (conv_list(&c, GF_MSG_DEVICE_STATUS, GF_MSG_DEVICE_END, &recs,
	    &st->ndevices) < 0)
		goto out_close;
	st->devices = recs;
	if (conv_list(&c, GF_MSG_GROUP_STATUS, GF_MSG_GROUP_END, &recs,
	    &st->ngroups) < 0)
		goto out_close;
	st->groups = recs;
	close(c.fd);
	c.fd = -1;
	if (status_walls(path, st) < 0)
		goto out_close;
	if (st->ndevices > 1)
		qsort(st->devices, st->ndevices, sizeof(*st->devices),
		    device_cmp);
	if (st->ngroups > 1)
		qsort_r(st->groups, st->ngroups, sizeof(*st->groups),
		    group_cmp, st);
	rc = 0;
out_close:
	if (c.fd >= 0)
		close(c.fd);
	return rc;
}

void
ctl_status_free(struct ctl_status *st)
{
	free(st->devices);
	free(st->groups);
	free(st->walls);
	memset(st, 0, sizeof(*st));
}

/*
 * Ask type (its payload req) and collect the list of rec messages up to
 * end, as conv_list does, sorted by cmp (NULL: in the daemon's order).
 * 0 or -1 (said); *out NULL on failure.
 */
static int
conv_query_list(const char *path, uint16_t type, const void *req,
    uint16_t rec, uint16_t end, int (*cmp)(const void *, const void *),
    void **out, size_t *n)
{
	struct conv c;
	int rc = -1;

	*out = NULL;
	*n = 0;
	if (conv_open(&c, path, type, req) < 0)
		return -1;
	if (conv_list(&c, rec, end, out, n) < 0)
		goto out_close;
	if (cmp != NULL && *n > 1)
		qsort(*out, *n, (size_t)proto_payload_size(rec), cmp);
	rc = 0;
out_close:
	close(c.fd);
	return rc;
}

int
ctl_query_ps(const char *path, struct gf_client **clients, size_t *n)
{
	void *recs;
	int rc;

	rc = conv_query_list(path, GF_MSG_PS_REQ, NULL, GF_MSG_CLIENT,
	    GF_MSG_CLIENT_END, client_cmp, &recs, n);
	*clients = recs;
	return rc;
}

int
ctl_query_allocs(const char *path, uint32_t pid, struct gf_alloc **allocs,
    size_t *n)
{
	struct gf_allocs_req req = { .pid = pid };
	void *recs;
	int rc;

	rc = conv_query_list(path, GF_MSG_ALLOCS_REQ, &req, GF_MSG_ALLOC,
	    GF_MSG_ALLOC_END, alloc_cmp, &recs, n);
	*allocs = recs;
	return rc;
}

int
ctl_query_events(const char *path, struct gf_event **events, size_t *n)
{
	struct gf_events_req req = { .follow = 0 };
	void *recs;
	int rc;

	rc = conv_query_list(path, GF_MSG_EVENTS_REQ, &req, GF_MSG_EVENT,
	    GF_MSG_EVENT_END, NULL, &recs, n);
	*events = recs;
	return rc;
}

int
ctl_query_reload(const char *path)
{
	struct conv c;
	struct gf_msg m;
	int rc = -1;

	if (conv_open(&c, path, GF_MSG_RELOAD_REQ, NULL) < 0)
		return -1;
	if (conv_recv(&c, &m) < 0)
		goto out_close;
	if (m.hdr.type != GF_MSG_OK) {
		conv_unexpected(&c, &m);
		goto out_close;
	}
	rc = 0;
out_close:
	close(c.fd);
	return rc;
}

int
ctl_query_swap(const char *path, uint32_t pid, int out)
{
	struct gf_swap_req r;
	struct conv c;
	struct gf_msg m;
	int rc = -1;

	memset(&r, 0, sizeof(r));
	r.pid = pid;
	r.direction = out ? GF_SWAP_OUT : GF_SWAP_IN;
	if (conv_open(&c, path, GF_MSG_SWAP_REQ, &r) < 0)
		return -1;
	/* A swap moves gigabytes: wait as long as it takes. */
	switch (conv_next(&c, &m, -1)) {
	case CONV_MSG:
		if (m.hdr.type == GF_MSG_OK)
			rc = 0;
		else
			conv_unexpected(&c, &m);
		break;
	case CONV_HANGUP:
		log_errx("'%s' closed the connection before answering",
		    path);
		break;
	default:
		break;
	}
	close(c.fd);
	return rc;
}

/*
 * Block SIGINT and SIGTERM and have them readable on a signalfd instead,
 * so that no signal can slip in between a check and a wait. old gets the
 * mask to restore.
 */
static int
stop_signals_open(sigset_t *old)
{
	sigset_t set;
	int fd;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &set, old) < 0) {
		log_err("cannot block SIGINT and SIGTERM");
		return -1;
	}
	if ((fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		log_err("cannot watch SIGINT and SIGTERM");
		sigprocmask(SIG_SETMASK, old, NULL);
		return -1;
	}
	return fd;
}

/*
 * Consume what came on fd, so that unblocking does not deliver it. errno
 * is kept for the caller, who may still report a failed write.
 */
static void
stop_signals_close(int fd, const sigset_t *old)
{
	struct signalfd_siginfo si;
	int saved = errno;

	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		;
	close(fd);
	sigprocmask(SIG_SETMASK, old, NULL);
	errno = saved;
}

/*
 * The records of a followed EVENTS_REQ: EVENTs, one EVENT_END that counts
 * those before it, then EVENTs until the daemon hangs up. Returns 0 on a
 * stop signal, -1 otherwise.
 */
static int
conv_follow(const struct conv *c, const struct ctl_events_cb *cb)
{
	struct gf_msg m;
	void *recs;
	size_t n;
	int r;

	if ((r = conv_list(c, GF_MSG_EVENT, GF_MSG_EVENT_END, &recs, &n)) != 0)
		return r > 0 ? 0 : -1;
	r = cb->backlog(recs, n, cb->arg);
	free(recs);
	if (r < 0)
		return -1;
	for (;;) {
		switch (conv_next(c, &m, -1)) {
		case CONV_MSG:
			break;
		case CONV_SIGNAL:
			return 0;
		case CONV_HANGUP:
			log_errx("'%s' closed the connection (gpufracd "
			    "stopped?)", c->path);
			return -1;
		default:
			return -1;
		}
		if (m.hdr.type != GF_MSG_EVENT) {
			conv_unexpected(c, &m);
			return -1;
		}
		if (cb->event(&m.u.event, cb->arg) < 0)
			return -1;
	}
}

int
ctl_query_events_follow(const char *path, const struct ctl_events_cb *cb)
{
	struct gf_events_req req = { .follow = 1 };
	struct conv c;
	sigset_t old;
	int sigfd, rc;

	if ((sigfd = stop_signals_open(&old)) < 0)
		return -1;
	if (conv_open(&c, path, GF_MSG_EVENTS_REQ, &req) < 0) {
		stop_signals_close(sigfd, &old);
		return -1;
	}
	c.sigfd = sigfd;
	rc = conv_follow(&c, cb);
	close(c.fd);
	stop_signals_close(sigfd, &old);
	return rc;
}
