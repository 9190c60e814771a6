/*
 * The listener and its connections: accept (the caps in control_admit.c;
 * pausing when descriptors run out and no spare is left), peer identity (a pidfd watched
 * from accept on: a connection outlives its process only as long as it
 * takes to notice), bounded non-blocking reads handed to the layer above
 * (ops->packet), and output queues flushed as the socket drains, all of
 * them together under outq_limit, long replies made a page at a time.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "control.h"
#include "control_int.h"
#include "event.h"
#include "log.h"
#include "path.h"
#include "pidfd.h"
#include "proto.h"
#include "sock.h"
#include "units.h"

#define READ_BATCH	64	/* packets per peer per round: fairness */
#define ACCEPT_BATCH	64
#define ACCEPT_PAUSE_MS	1000	/* after running out of descriptors */
#define OUTQ_KEEP	65536	/* a drained queue keeps at most this */

static void conn_event(struct event_loop *, int, int, void *);
static void conn_pid_event(struct event_loop *, int, int, void *);

void
control_init(struct control *ctl, struct event_loop *loop,
    const struct control_ops *ops)
{
	memset(ctl, 0, sizeof(*ctl));
	ctl->fd = -1;
	ctl->spare = -1;
	ctl->max_total = UINT32_MAX;
	ctl->loop = loop;
	ctl->ops = ops;
	TAILQ_INIT(&ctl->conns);
}

/* Keep control.outq_total in step with what c has queued. */
static void
outq_count(struct conn *c)
{
	size_t queued = c->out_len - c->out_head;

	c->ctl->outq_total -= c->out_counted;
	c->ctl->outq_total += queued;
	c->out_counted = queued;
	if (queued == 0)
		c->out_since = 0;
	else if (c->out_since == 0)
		c->out_since = event_now_ms();
}

static void
pull_end(struct conn *c)
{
	if (c->pull == NULL)
		return;
	if (c->pull_free != NULL)
		c->pull_free(c->pull_arg);
	c->ctl->outq_total -= c->pull_bytes;
	c->pull = NULL;
	c->pull_arg = NULL;
	c->pull_free = NULL;
	c->pull_bytes = 0;
}

static void
conn_free(struct conn *c)
{
	pull_end(c);
	c->out_head = c->out_len = 0;
	outq_count(c);
	if (c->pidfd >= 0)
		close(c->pidfd);
	free(c->cgroup);
	free(c->out);
	free(c);
}

struct conn *
control_adopt(struct control *ctl, int fd)
{
	uint64_t at_ms = pidfd_boot_ms();
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct conn *c;
	int exited, plain;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		log_warn("cannot read the credentials of a new connection");
		close(fd);
		return NULL;
	}
	if (control_admit(ctl, fd, &cred, &plain) < 0)
		return NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		log_warnx("out of memory for a connection from pid %d",
		    (int)cred.pid);
		close(fd);
		return NULL;
	}
	c->ctl = ctl;
	c->pidfd = -1;
	if ((c->cgroup = cgroup_of_pid((uint32_t)cred.pid)) == NULL) {
		log_warnx("out of memory for a connection from pid %d",
		    (int)cred.pid);
		goto out_free;
	}
	c->fd = fd;
	c->rx_fd = -1;
	c->pid = (uint32_t)cred.pid;
	c->uid = (uint32_t)cred.uid;
	c->gid = (uint32_t)cred.gid;
	/*
	 * Its process, from now on: whoever keeps the socket after it has
	 * exited is someone else, and its pid may be another's.
	 */
	c->pidfd = pidfd_of_peer(fd, c->pid, at_ms, &exited);
	if (c->pidfd < 0 && exited) {
		log_debug("pid %u connected and exited before it was "
		    "accepted", c->pid);
		goto out_free;
	}
	if (event_set(ctl->loop, fd, EVENT_READ, conn_event, c) < 0 ||
	    (c->pidfd >= 0 && event_set(ctl->loop, c->pidfd, EVENT_READ,
	    conn_pid_event, c) < 0)) {
		log_warn("cannot watch the connection from pid %u", c->pid);
		event_set(ctl->loop, fd, 0, NULL, NULL);
		goto out_free;
	}
	TAILQ_INSERT_TAIL(&ctl->conns, c, entry);
	ctl->nconns++;
	c->plain = plain;
	ctl->nplain += (uint32_t)plain;
	ctl->accepted++;
	log_debug("connection from pid %u (uid %u, gid %u, cgroup '%s')",
	    c->pid, c->uid, c->gid, c->cgroup);
	return c;

out_free:
	conn_free(c);
	close(fd);
	return NULL;
}

/* A send or receive error that only means the peer has gone. */
static int
peer_left(int errnum)
{
	return errnum == EPIPE || errnum == ECONNRESET;
}

/* Say why sending to c failed; -1. */
static int
send_failed(struct conn *c, int errnum)
{
	c->gone = peer_left(errnum);
	snprintf(c->err, sizeof(c->err), "cannot send: %s", strerror(errnum));
	return -1;
}

/* Send queued packets until the socket is full. -1 (c->err) on an error. */
static int
conn_flush(struct conn *c)
{
	while (c->out_head < c->out_len) {
		uint8_t *p = c->out + c->out_head;
		struct gf_hdr hdr;
		ssize_t n;

		memcpy(&hdr, p, sizeof(hdr));
		n = send(c->fd, p, hdr.len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
		    errno == ENOBUFS))
			return 0;
		if (n < 0)
			return send_failed(c, errno);
		c->out_head += hdr.len;
		outq_count(c);
	}
	c->out_head = c->out_len = 0;
	outq_count(c);
	if (c->out_cap > OUTQ_KEEP) {
		/* A long list has gone out: do not keep its buffer. */
		free(c->out);
		c->out = NULL;
		c->out_cap = 0;
	}
	return 0;
}

void
control_close(struct conn *c, const char *why)
{
	struct control *ctl = c->ctl;
	int client = c->client != NULL, kept;
	const char *when;
	uint64_t held;
	char sbuf[32];

	if (c->out_len > c->out_head && !c->gone && !c->dropped)
		(void)conn_flush(c);	/* e.g. the ERROR that explains why */
	if (c->gone)
		why = NULL;		/* it left: nothing to warn about */
	if (c->close_timer > 0)
		event_timer_cancel(ctl->loop, c->close_timer);
	/* The layer above may take the pidfd, and watch it its own way. */
	if (c->pidfd >= 0)
		event_set(ctl->loop, c->pidfd, 0, NULL, NULL);
	kept = ctl->ops->closing(ctl->ops->arg, c, &held);
	size_format(held, sbuf, sizeof(sbuf));
	when = kept ? " once it has exited and the driver has it back" : "";
	/* One line per departure, whatever the reason. */
	if (why != NULL && client)
		log_warnx("closing the connection of pid %u: %s; %s returned%s",
		    c->pid, why, sbuf, when);
	else if (why != NULL)
		log_warnx("closing the connection of pid %u: %s", c->pid, why);
	else if (client)
		log_info("client pid %u left; %s returned%s", c->pid, sbuf,
		    when);
	else
		log_debug("pid %u hung up", c->pid);
	event_set(ctl->loop, c->fd, 0, NULL, NULL);
	close(c->fd);
	TAILQ_REMOVE(&ctl->conns, c, entry);
	ctl->nconns--;
	ctl->nplain -= (uint32_t)c->plain;
	conn_free(c);
	ctl->ops->closed(ctl->ops->arg);
}

static void
close_later_fire(struct event_loop *loop, void *arg)
{
	struct conn *c = arg;

	(void)loop;
	c->close_timer = 0;
	control_close(c, c->close_why[0] ? c->close_why : NULL);
}

void
control_close_later(struct conn *c, const char *why)
{
	if (c->close_timer > 0)
		return;
	snprintf(c->close_why, sizeof(c->close_why), "%s", why ? why : "");
	c->close_timer = event_timer_add(c->ctl->loop, 0, close_later_fire, c);
	if (c->close_timer < 0) {
		/* No memory for a timer: it lives on until it errs again. */
		log_warnx("cannot schedule the close of pid %u's connection",
		    c->pid);
		c->close_timer = 0;
	}
}

/* Make room for n more bytes in the queue: compact, then grow. */
static int
outq_reserve(struct conn *c, size_t n)
{
	size_t queued = c->out_len - c->out_head, cap;
	uint8_t *p;

	if (queued + n > CONTROL_OUTQ_MAX) {
		snprintf(c->err, sizeof(c->err), "its output queue passed "
		    "%u MiB", CONTROL_OUTQ_MAX >> 20);
		return -1;
	}
	if (c->out_head > 0 && c->out_len + n > c->out_cap) {
		memmove(c->out, c->out + c->out_head, queued);
		c->out_head = 0;
		c->out_len = queued;
	}
	if (c->out_len + n <= c->out_cap)
		return 0;
	for (cap = c->out_cap ? c->out_cap : 4096; cap < c->out_len + n;)
		cap *= 2;
	if ((p = realloc(c->out, cap)) == NULL) {
		snprintf(c->err, sizeof(c->err), "out of memory for its "
		    "output queue");
		return -1;
	}
	c->out = p;
	c->out_cap = cap;
	return 0;
}

/* Watch c for what it waits for: requests, and room for its output. */
static int
conn_watch(struct conn *c)
{
	int mask = EVENT_READ;

	if (c->out_len > c->out_head || c->pull != NULL)
		mask |= EVENT_WRITE;
	if (event_set(c->ctl->loop, c->fd, mask, conn_event, c) < 0) {
		snprintf(c->err, sizeof(c->err), "cannot watch it: %s",
		    strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * All output queues together passed outq_limit: drop the queues of the
 * connections that have read least lately (their queue non-empty the
 * longest; the longer queue first among equals) until they fit, and close
 * those connections at the end of the round. Returns -1 when c was one.
 */
static int
outq_shed(struct conn *c)
{
	struct control *ctl = c->ctl;
	struct conn *v, *worst;
	char why[192];
	int self = 0;

	while (ctl->outq_total > ctl->outq_limit) {
		worst = NULL;
		TAILQ_FOREACH(v, &ctl->conns, entry) {
			if (v->dropped || v->out_counted == 0)
				continue;
			if (worst == NULL || v->out_since < worst->out_since ||
			    (v->out_since == worst->out_since &&
			    v->out_counted > worst->out_counted))
				worst = v;
		}
		if (worst == NULL)
			break;	/* what is left is long replies' */
		snprintf(why, sizeof(why), "closing the connection of pid %u "
		    "(uid %u), which reads least: all output queues together "
		    "passed output_queue_limit (%llu bytes)", worst->pid,
		    worst->uid, (unsigned long long)ctl->outq_limit);
		worst->dropped = 1;
		worst->out_head = worst->out_len = 0;
		outq_count(worst);
		free(worst->out);
		worst->out = NULL;
		worst->out_cap = 0;
		pull_end(worst);
		ctl->dropped++;
		limit_say(ctl, &ctl->quiet_dropped, why);
		snprintf(worst->err, sizeof(worst->err), "its output queue was "
		    "dropped (output_queue_limit)");
		if (worst == c)
			self = 1;
		else
			control_close_later(worst, worst->err);
	}
	return self ? -1 : 0;
}

int
conn_send(struct conn *c, uint16_t type, uint32_t seq, const void *payload)
{
	struct gf_msg m;
	ssize_t len = proto_pack(&m, type, seq, payload);
	ssize_t n;

	if (c->dropped)
		return -1;	/* c->err says why */
	if (len < 0) {
		snprintf(c->err, sizeof(c->err), "cannot send message type "
		    "%u", type);
		return -1;
	}
	if (c->out_len == c->out_head) {
		do
			n = send(c->fd, &m, (size_t)len,
			    MSG_NOSIGNAL | MSG_DONTWAIT);
		while (n < 0 && errno == EINTR);
		if (n == len)
			return 0;
		if (n >= 0)
			return send_failed(c, EMSGSIZE);
		if (errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != ENOBUFS)
			return send_failed(c, errno);
	}
	if (outq_reserve(c, (size_t)len) < 0)
		return -1;
	memcpy(c->out + c->out_len, &m, (size_t)len);
	c->out_len += (size_t)len;
	outq_count(c);
	if (c->ctl->outq_limit != 0 && c->ctl->outq_total >
	    c->ctl->outq_limit && outq_shed(c) < 0)
		return -1;
	return conn_watch(c);
}

int
conn_pull(struct conn *c, conn_pull_fn *fn, void *arg,
    void (*free_fn)(void *), size_t bytes)
{
	struct control *ctl = c->ctl;

	if (c->pull != NULL) {
		snprintf(c->err, sizeof(c->err), "a request while a long "
		    "reply is under way");
		return -1;
	}
	if (ctl->outq_limit != 0 && ctl->outq_total + bytes > ctl->outq_limit) {
		snprintf(c->err, sizeof(c->err), "a reply of %zu bytes does "
		    "not fit output_queue_limit now", bytes);
		return -1;
	}
	c->pull = fn;
	c->pull_arg = arg;
	c->pull_free = free_fn;
	c->pull_bytes = bytes;
	ctl->outq_total += bytes;
	return conn_watch(c);
}

/* The queue has drained: the next page of a long reply, if one is due. */
static int
conn_pull_next(struct conn *c)
{
	int r;

	if (c->pull == NULL || c->out_len > c->out_head)
		return 0;
	if ((r = c->pull(c, c->pull_arg)) < 0)
		return -1;
	if (r == 0)
		pull_end(c);
	return 0;
}

/* Read up to READ_BATCH packets; 0, or -1 when c was closed. */
static int
conn_read(struct conn *c)
{
	char why[160];
	const char *bad;
	struct gf_msg m;
	int i, r;

	for (i = 0; i < READ_BATCH; i++) {
		r = proto_recv_fd(c->fd, &m, MSG_DONTWAIT, &bad, &c->rx_fd);
		if (r == 1) {
			r = c->ctl->ops->packet(c->ctl->ops->arg, c, &m, why,
			    sizeof(why));
			/* A descriptor no handler took is not kept. */
			if (c->rx_fd >= 0)
				close(c->rx_fd);
			c->rx_fd = -1;
			if (r < 0)
				goto out_close;
			if (c->close_timer > 0)
				return 0;	/* closing: read no more */
			continue;
		}
		if (r == 0 || (r == -1 && peer_left(errno))) {
			control_close(c, NULL);
			return -1;
		}
		if (r == -2) {
			snprintf(why, sizeof(why), "%s", bad);
			goto out_close;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		snprintf(why, sizeof(why), "cannot receive: %s",
		    strerror(errno));
		goto out_close;
	}
	return 0;

out_close:
	c->ctl->errors++;
	control_close(c, why);
	return -1;
}

static void
conn_event(struct event_loop *loop, int fd, int mask, void *arg)
{
	struct conn *c = arg;

	(void)loop;
	(void)fd;
	if (c->close_timer > 0)
		return;		/* closed at the end of this round */
	if (mask & EVENT_READ) {
		conn_read(c);
		return;
	}
	if (c->dropped || conn_flush(c) < 0 || conn_pull_next(c) < 0 ||
	    conn_watch(c) < 0) {
		control_close(c, c->err);
		return;
	}
}

/*
 * c's process has exited (its pidfd is readable). Whoever keeps the socket
 * now (a child it forked) is not the client: the connection closes, and
 * the layer above sees it leave as any other (ops->closing).
 */
static void
conn_pid_event(struct event_loop *loop, int fd, int mask, void *arg)
{
	struct conn *c = arg;
	struct pollfd pfd = { .fd = c->fd, .events = POLLRDHUP };

	(void)loop;
	(void)fd;
	(void)mask;
	/* Its socket closed with it (the usual exit): it simply left. */
	if (poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLHUP | POLLRDHUP)))
		control_close(c, NULL);
	else
		control_close(c, "its process has exited, another keeps its "
		    "socket");
}

static void listener_event(struct event_loop *, int, int, void *);

static void
listener_resume(struct event_loop *loop, void *arg)
{
	struct control *ctl = arg;

	ctl->pause_timer = 0;
	if (event_set(loop, ctl->fd, EVENT_READ, listener_event, ctl) < 0) {
		log_warn("cannot watch the listener; trying again");
		ctl->pause_timer = event_timer_add(loop, ACCEPT_PAUSE_MS,
		    listener_resume, ctl);
	}
}

/* Out of descriptors: stop accepting for a while instead of spinning. */
static void
listener_pause(struct control *ctl)
{
	log_warn("cannot accept a connection; pausing for %d ms",
	    ACCEPT_PAUSE_MS);
	event_set(ctl->loop, ctl->fd, 0, NULL, NULL);
	ctl->pause_timer = event_timer_add(ctl->loop, ACCEPT_PAUSE_MS,
	    listener_resume, ctl);
	if (ctl->pause_timer < 0) {
		ctl->pause_timer = 0;
		listener_resume(ctl->loop, ctl);
	}
}

static void
listener_event(struct event_loop *loop, int fd, int mask, void *arg)
{
	struct control *ctl = arg;
	int i, cfd, r;

	(void)loop;
	(void)mask;
	for (i = 0; i < ACCEPT_BATCH; i++) {
		cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd >= 0) {
			control_adopt(ctl, cfd);
			continue;
		}
		switch (errno) {
		case EINTR:
		case ECONNABORTED:
		case EPROTO:
			continue;
		case EAGAIN:
#if EWOULDBLOCK != EAGAIN
		case EWOULDBLOCK:
#endif
			return;
		case EMFILE:
		case ENFILE:
			if ((r = control_refuse_spare(ctl, fd)) > 0)
				continue;
			if (r < 0)
				listener_pause(ctl);
			return;
		case ENOBUFS:
		case ENOMEM:
			listener_pause(ctl);
			return;
		default:
			log_warn("cannot accept a connection");
			return;
		}
	}
}

int
control_listen(struct control *ctl, const char *path, unsigned mode)
{
	char err[SOCK_ERR_LEN];

	if (path_dir_make(path) < 0) {
		log_warn("cannot create the directory of '%s'", path);
		return -1;
	}
	if ((ctl->fd = sock_listen(path, mode, err, sizeof(err))) < 0) {
		log_warnx("%s", err);
		return -1;
	}
	proto_strlcpy(ctl->path, path, sizeof(ctl->path));
	control_spare_open(ctl);
	if (event_set(ctl->loop, ctl->fd, EVENT_READ, listener_event,
	    ctl) < 0) {
		log_warn("cannot watch '%s'", path);
		close(ctl->fd);
		ctl->fd = -1;
		unlink(path);
		return -1;
	}
	log_info("listening on '%s'", path);
	return 0;
}

void
control_chmod(struct control *ctl, unsigned mode)
{
	if (ctl->fd >= 0 && chmod(ctl->path, mode) < 0)
		log_warn("cannot chmod '%s'", ctl->path);
}

void
control_shutdown(struct control *ctl)
{
	struct conn *c;

	while ((c = TAILQ_FIRST(&ctl->conns)) != NULL)
		control_close(c, NULL);
	if (ctl->pause_timer > 0)
		event_timer_cancel(ctl->loop, ctl->pause_timer);
	ctl->pause_timer = 0;
	if (ctl->fd >= 0) {
		event_set(ctl->loop, ctl->fd, 0, NULL, NULL);
		close(ctl->fd);
		ctl->fd = -1;
		if (unlink(ctl->path) < 0 && errno != ENOENT)
			log_warn("cannot remove '%s'", ctl->path);
	}
	if (ctl->spare >= 0)
		close(ctl->spare);
	ctl->spare = -1;
}

int
conn_reply(struct conn *c, uint16_t type, uint32_t seq, const void *payload,
    char *why, size_t whylen)
{
	if (conn_send(c, type, seq, payload) == 0)
		return 0;
	snprintf(why, whylen, "%s", c->err);
	return -1;
}

int
conn_reply_error(struct conn *c, uint32_t seq, uint32_t code,
    const char *msg, char *why, size_t whylen)
{
	struct gf_error e;

	memset(&e, 0, sizeof(e));
	e.code = code;
	proto_strlcpy(e.msg, msg, sizeof(e.msg));
	return conn_reply(c, GF_MSG_ERROR, seq, &e, why, whylen);
}
