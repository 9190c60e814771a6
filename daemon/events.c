/*
 * The decision log: a ring of struct gf_event, its log lines, and the list
 * of followers told of each new event.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "events.h"
#include "log.h"
#include "names.h"
#include "proto.h"
#include "units.h"
#include "uuid.h"

int
events_init(struct events *ev, size_t capacity)
{
	memset(ev, 0, sizeof(*ev));
	if (capacity == 0) {
		errno = EINVAL;
		return -1;
	}
	if ((ev->ring = calloc(capacity, sizeof(*ev->ring))) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	ev->capacity = capacity;
	return 0;
}

void
events_free(struct events *ev)
{
	free(ev->ring);
	free(ev->followers);
	memset(ev, 0, sizeof(*ev));
}

uint64_t
events_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* One line for humans: control characters would break the log and CLI. */
static void
oneline(char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
}

/* "grant pid 123 group trainer GPU-... 1.0GiB: reason" */
static void
event_log(const struct gf_event *e)
{
	char size[32], uuid[UUID_STR_LEN], reason[PROTO_REASON_MAX];
	/* A grant that fits is every allocation's: debug, or the log floods
	 * (and slows) a busy daemon. The ring keeps it either way. */
	void (*say)(const char *, ...) __attribute__((format(printf, 1, 2))) =
	    e->kind == GF_EV_GRANT ? log_debug : log_info;

	if (e->kind == GF_EV_GRANT && log_getlevel() < LOG_LVL_DEBUG)
		return;
	if (uuid_is_zero(e->uuid))
		snprintf(uuid, sizeof(uuid), "-");
	else
		uuid_format(e->uuid, uuid, sizeof(uuid));
	say("%s pid %u group %s %s %s%s%s", name_event(e->kind),
	    (unsigned)e->pid, e->group[0] != '\0' ? e->group : "-", uuid,
	    size_format(e->bytes, size, sizeof(size)),
	    e->reason[0] != '\0' ? ": " : "", (proto_event_reason(e, reason),
	    reason));
}

/* Drop the followers removed during a notification. */
static void
followers_sweep(struct events *ev)
{
	size_t i, n = 0;

	for (i = 0; i < ev->nfollowers; i++)
		if (!ev->followers[i].dead)
			ev->followers[n++] = ev->followers[i];
	ev->nfollowers = n;
}

/* Tell every live follower of e; those added meanwhile start with the next. */
static void
followers_notify(struct events *ev, const struct gf_event *e)
{
	size_t i, n = ev->nfollowers;

	for (i = 0; i < n; i++) {
		/* Indexed, not by pointer: a callback may grow the array. */
		struct events_follower f = ev->followers[i];

		if (!f.dead)
			f.fn(f.arg, e);
	}
}

/*
 * Deliver the events not yet delivered, in order. An event added by a
 * follower is left to this loop, so every follower sees events in order.
 */
static void
followers_deliver(struct events *ev)
{
	struct gf_event copy;
	uint64_t oldest;

	if (ev->notifying)
		return;
	ev->notifying = 1;
	while (ev->delivered < ev->total) {
		oldest = ev->total > ev->capacity ?
		    ev->total - ev->capacity : 0;
		if (ev->delivered < oldest)
			ev->delivered = oldest;
		/* A follower may add events and overwrite the slot. */
		copy = ev->ring[ev->delivered++ % ev->capacity];
		followers_notify(ev, &copy);
	}
	ev->notifying = 0;
	followers_sweep(ev);
}

void
events_vadd(struct events *ev, uint64_t time_ms, uint32_t kind, uint32_t pid,
    const char *group, const uint8_t *uuid, uint64_t bytes,
    uint32_t duration_ms, const char *fmt, va_list ap)
{
	struct gf_event *e = &ev->ring[ev->total % ev->capacity];
	char reason[PROTO_REASON_MAX];

	memset(e, 0, sizeof(*e));
	e->time_ms = time_ms;
	e->pid = pid;
	e->kind = kind;
	if (group != NULL)
		snprintf(e->group, sizeof(e->group), "%s", group);
	if (uuid != NULL)
		memcpy(e->uuid, uuid, sizeof(e->uuid));
	e->bytes = bytes;
	e->duration_ms = duration_ms;
	if (fmt != NULL) {
		vsnprintf(reason, sizeof(reason), fmt, ap);
		oneline(reason);
		proto_event_reason_set(e, reason);
	}
	oneline(e->group);
	ev->total++;

	event_log(e);
	followers_deliver(ev);
}

void
events_add(struct events *ev, uint64_t time_ms, uint32_t kind, uint32_t pid,
    const char *group, const uint8_t *uuid, uint64_t bytes, const char *fmt,
    ...)
{
	va_list ap;

	va_start(ap, fmt);
	events_vadd(ev, time_ms, kind, pid, group, uuid, bytes, 0, fmt, ap);
	va_end(ap);
}

const struct gf_event *
events_next(const struct events *ev, uint64_t *cursor)
{
	uint64_t oldest = ev->total > ev->capacity ?
	    ev->total - ev->capacity : 0;

	if (*cursor < oldest)
		*cursor = oldest;
	if (*cursor >= ev->total)
		return NULL;
	return &ev->ring[(*cursor)++ % ev->capacity];
}

size_t
events_count(const struct events *ev)
{
	return ev->total < ev->capacity ? (size_t)ev->total : ev->capacity;
}

int
events_follow(struct events *ev, events_follow_fn *fn, void *arg)
{
	struct events_follower *f;
	size_t cap;

	if (ev->nfollowers == ev->followcap) {
		cap = ev->followcap ? 2 * ev->followcap : 8;
		if (cap > SIZE_MAX / sizeof(*f) ||
		    (f = realloc(ev->followers, cap * sizeof(*f))) == NULL) {
			errno = ENOMEM;
			return -1;
		}
		ev->followers = f;
		ev->followcap = cap;
	}
	f = &ev->followers[ev->nfollowers++];
	f->fn = fn;
	f->arg = arg;
	f->dead = 0;
	return 0;
}

size_t
events_unfollow(struct events *ev, events_follow_fn *fn, void *arg)
{
	size_t i, n = 0;

	for (i = 0; i < ev->nfollowers; i++) {
		struct events_follower *f = &ev->followers[i];

		if (!f->dead && f->fn == fn && f->arg == arg) {
			f->dead = 1;
			n++;
		}
	}
	if (ev->notifying == 0)
		followers_sweep(ev);
	return n;
}
