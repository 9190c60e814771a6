/*
 * What the daemon sees while a way runs: device 0's memory that no
 * allocation holds, sampled from its status as gpufracctl asks it
 * (tools/ctl_query.c); and its decisions, counted from its events. The
 * events are followed as they happen (EVENTS_REQ with follow: none is
 * missed, however fast they come); at the end the daemon's ring is read
 * once more for those not yet delivered.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl_query.h"
#include "gpufrac/proto.h"
#include "log.h"
#include "proto.h"
#include "share.h"
#include "sock.h"

/* The events kept to find where the ring's last read starts. */
#define KEEP		1024
#define KEEP_MAX	(4 * KEEP)

void
watch_init(struct watch *w, const char *sock)
{
	memset(w, 0, sizeof(*w));
	w->sock = sock;
	w->fd = -1;
}

void
watch_free(struct watch *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	free(w->seen);
	w->seen = NULL;
	w->nseen = 0;
}

/*
 * Idle is the capacity (less what w->kept says is not shared) less what
 * allocations hold, programs without the shim that held it aside: a lease (memory charged ahead of a process's next
 * allocations) is not in use, and a process swapped out holds nothing on
 * the device.
 */
int
watch_sample(struct watch *w)
{
	const struct gf_device_status *d;
	struct ctl_status st;
	uint64_t held, cap;
	int rc = -1;

	memset(&st, 0, sizeof(st));
	if (ctl_query_status(w->sock, &st) < 0 || st.ndevices == 0 ||
	    st.devices[0].capacity <= w->kept)
		goto out;
	d = &st.devices[0];
	cap = d->capacity - w->kept;
	held = d->used > d->leased ? d->used - d->leased : 0;
	held = held > w->kept_used ? held - w->kept_used : 0;
	if (held > cap)
		held = cap;
	w->capacity = d->capacity;
	snprintf(w->name, sizeof(w->name), "%.*s", (int)sizeof(d->name),
	    d->name);
	w->swap_available = st.daemon.swap_available != 0;
	w->idle_sum += 100.0 * (double)(cap - held) / (double)cap;
	w->samples++;
	rc = 0;
out:
	ctl_status_free(&st);
	return rc;
}

static void
event_count(struct watch *w, const struct gf_event *e)
{
	switch (e->kind) {
	case GF_EV_SWAP_OUT:
		w->swaps++;
		w->swap_bytes += (int64_t)e->bytes;
		w->swap_ms += e->duration_ms;
		break;
	case GF_EV_SWAP_IN:
		w->swap_bytes += (int64_t)e->bytes;
		w->swap_ms += e->duration_ms;
		break;
	case GF_EV_PREEMPT:
		w->preempts++;
		break;
	case GF_EV_KILL:
		w->kills++;
		break;
	}
}

/* Count e and keep it, the last KEEP at least. */
static int
event_keep(struct watch *w, const struct gf_event *e)
{
	struct gf_event *s = w->seen;

	event_count(w, e);
	if (w->nseen == KEEP_MAX) {
		memmove(s, s + KEEP_MAX - KEEP, KEEP * sizeof(*s));
		w->nseen = KEEP;
	}
	if (s == NULL && (s = w->seen = calloc(KEEP_MAX, sizeof(*s))) == NULL) {
		log_warnx("out of memory for events");
		return -1;
	}
	s[w->nseen++] = *e;
	return 0;
}

int
watch_follow(struct watch *w)
{
	struct gf_events_req req = { .follow = 1 };
	char err[SOCK_ERR_LEN];

	if ((w->fd = sock_connect(w->sock, err, sizeof(err))) < 0) {
		log_warnx("%s", err);
		return -1;
	}
	if (proto_send(w->fd, GF_MSG_EVENTS_REQ, 1, &req) < 0) {
		log_warn("cannot ask '%s' for its events", w->sock);
		return -1;
	}
	return 0;
}

int
watch_read(struct watch *w)
{
	const char *why;
	struct gf_msg m;
	int r;

	for (;;) {
		r = proto_recv(w->fd, &m, MSG_DONTWAIT, &why);
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0 || r == -1) {
			log_warnx("'%s' stopped sending its events", w->sock);
			return -1;
		}
		if (r == -2) {
			log_warnx("bad event from '%s': %s", w->sock, why);
			return -1;
		}
		if (m.hdr.type == GF_MSG_EVENT) {
			if (event_keep(w, &m.u.event) < 0)
				return -1;
		} else if (m.hdr.type != GF_MSG_EVENT_END) {
			log_warnx("'%s' sent %s, not events", w->sock,
			    proto_type_name(m.hdr.type));
			return -1;
		}
	}
}

/*
 * Where the events seen (old, nold) end in the ring read now (new): the
 * ring drops its oldest events first, so a suffix of old is a prefix of
 * new, the longest one. The index in new of the first event not seen; 0
 * when none of old is there any more (*lost set when old had events).
 */
static size_t
overlap(const struct gf_event *old, size_t nold, const struct gf_event *new,
    size_t nnew, int *lost)
{
	size_t d, k;

	for (d = 0; d < nold; d++) {
		k = nold - d;
		if (k <= nnew && memcmp(&old[d], new, k * sizeof(*new)) == 0)
			return k;
	}
	*lost = nold > 0;
	return 0;
}

int
watch_finish(struct watch *w)
{
	struct gf_event *ev = NULL;
	size_t n = 0, i, from;
	int rc = -1;

	if (watch_read(w) < 0 || ctl_query_events(w->sock, &ev, &n) < 0)
		goto out;
	from = w->nseen > KEEP ? w->nseen - KEEP : 0;
	i = w->nseen == 0 ? 0 :
	    overlap(w->seen + from, w->nseen - from, ev, n, &w->lost);
	for (; i < n; i++)
		event_count(w, &ev[i]);
	rc = 0;
out:
	free(ev);
	return rc;
}
