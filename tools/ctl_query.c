/*
 * gpufracctl's queries: one connection per request, a reply read with a
 * timeout, streamed records checked against their END count, then sorted.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
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
	uint32_t	 seq;
};

static int
conv_open(struct conv *c, const char *path, uint16_t type,
    const void *payload)
{
	char err[SOCK_ERR_LEN];

	c->path = path;
	c->seq = (uint32_t)getpid();
	if ((c->fd = sock_connect(path, err, sizeof(err))) < 0) {
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
 * The next message of the reply, waiting at most CTL_TIMEOUT_MS for it.
 * An ERROR, silence, a closed connection or a bad packet is reported here.
 */
static int
conv_recv(const struct conv *c, struct gf_msg *m)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	const char *why = "";
	int r;

	for (;;) {
		r = poll(&pfd, 1, CTL_TIMEOUT_MS);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			log_err("cannot wait for '%s'", c->path);
			return -1;
		}
		if (r == 0) {
			log_errx("no reply from '%s' within %d seconds "
			    "(is gpufracd stuck?)", c->path,
			    CTL_TIMEOUT_MS / 1000);
			return -1;
		}
		r = proto_recv(c->fd, m, MSG_DONTWAIT, &why);
		if (r == 1)
			break;
		if (r == 0) {
			log_errx("'%s' closed the connection before the "
			    "reply was complete", c->path);
			return -1;
		}
		if (r == -2) {
			log_errx("malformed reply from '%s': %s", c->path,
			    why);
			return -1;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			log_err("cannot read from '%s'", c->path);
			return -1;
		}
	}
	if (m->hdr.seq != c->seq) {
		log_errx("malformed reply from '%s': %s answers request %u, "
		    "not %u", c->path, proto_type_name(m->hdr.type),
		    m->hdr.seq, c->seq);
		return -1;
	}
	if (m->hdr.type == GF_MSG_ERROR) {
		conv_refused(c, &m->u.error);
		return -1;
	}
	return 0;
}

/*
 * Collect rec messages up to the end message and check its count. *out is
 * a malloc'd array of n payloads of rec's size, NULL when n is 0.
 */
static int
conv_list(const struct conv *c, uint16_t rec, uint16_t end, void **out,
    size_t *nout)
{
	size_t size = (size_t)proto_payload_size(rec), n = 0, cap = 0;
	unsigned char *recs = NULL;
	struct gf_msg m;

	for (;;) {
		if (conv_recv(c, &m) < 0)
			goto out_free;
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

int
ctl_query_status(const char *path, struct ctl_status *st)
{
	struct conv c;
	struct gf_msg m;
	void *devices;
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
	if (conv_list(&c, GF_MSG_DEVICE_STATUS, GF_MSG_DEVICE_END, &devices,
	    &st->ndevices) < 0)
		goto out_close;
	st->devices = devices;
	if (st->ndevices > 1)
		qsort(st->devices, st->ndevices, sizeof(*st->devices),
		    device_cmp);
	rc = 0;
out_close:
	close(c.fd);
	return rc;
}

int
ctl_query_ps(const char *path, struct gf_client **clients, size_t *n)
{
	struct conv c;
	void *recs;
	int rc = -1;

	*clients = NULL;
	*n = 0;
	if (conv_open(&c, path, GF_MSG_PS_REQ, NULL) < 0)
		return -1;
	if (conv_list(&c, GF_MSG_CLIENT, GF_MSG_CLIENT_END, &recs, n) < 0)
		goto out_close;
	*clients = recs;
	if (*n > 1)
		qsort(*clients, *n, sizeof(**clients), client_cmp);
	rc = 0;
out_close:
	close(c.fd);
	return rc;
}

int
ctl_query_allocs(const char *path, uint32_t pid, struct gf_alloc **allocs,
    size_t *n)
{
	struct gf_allocs_req req = { .pid = pid };
	struct conv c;
	void *recs;
	int rc = -1;

	*allocs = NULL;
	*n = 0;
	if (conv_open(&c, path, GF_MSG_ALLOCS_REQ, &req) < 0)
		return -1;
	if (conv_list(&c, GF_MSG_ALLOC, GF_MSG_ALLOC_END, &recs, n) < 0)
		goto out_close;
	*allocs = recs;
	if (*n > 1)
		qsort(*allocs, *n, sizeof(**allocs), alloc_cmp);
	rc = 0;
out_close:
	close(c.fd);
	return rc;
}
