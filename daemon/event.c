/*
 * The event loop: an fd-indexed table of handlers over epoll, and a list of
 * one-shot timers sorted by deadline.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "event.h"

#define EVENT_BATCH	64	/* epoll events taken per round */

/*
 * An epoll event carries its fd and the registration it was made for: an
 * fd closed and opened again within one round (a number the kernel hands
 * out again at once) must not get the events of the one it replaced.
 */
#define EV_DATA(fd, gen)	((uint64_t)(gen) << 32 | (uint32_t)(fd))
#define EV_FD(data)		((int)(uint32_t)(data))
#define EV_GEN(data)		((uint32_t)((data) >> 32))

struct fd_slot {
	int		 mask;		/* 0: not watched */
	uint32_t	 gen;		/* this fd's registrations so far */
	event_fd_fn	*fn;
	void		*arg;
};

struct timer {
	struct timer	*next;
	int64_t		 id;
	uint64_t	 deadline;	/* event_now_ms() */
	event_timer_fn	*fn;
	void		*arg;
};

struct event_loop {
	int		 epfd;
	struct fd_slot	*slots;		/* indexed by fd */
	int		 nslots;
	struct timer	*timers;	/* sorted by deadline */
	int64_t		 next_id;
	int		 stop;
};

uint64_t
event_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct event_loop *
event_loop_new(void)
{
	struct event_loop *loop = calloc(1, sizeof(*loop));

	if (loop == NULL)
		return NULL;
	loop->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (loop->epfd < 0) {
		free(loop);
		return NULL;
	}
	loop->next_id = 1;
	return loop;
}

void
event_loop_free(struct event_loop *loop)
{
	struct timer *t;

	if (loop == NULL)
		return;
	while ((t = loop->timers) != NULL) {
		loop->timers = t->next;
		free(t);
	}
	close(loop->epfd);
	free(loop->slots);
	free(loop);
}

static int
slots_grow(struct event_loop *loop, int fd)
{
	int n = loop->nslots ? loop->nslots : 64;
	struct fd_slot *s;

	while (n <= fd)
		n *= 2;
	s = realloc(loop->slots, (size_t)n * sizeof(*s));
	if (s == NULL)
		return -1;
	memset(s + loop->nslots, 0, (size_t)(n - loop->nslots) * sizeof(*s));
	loop->slots = s;
	loop->nslots = n;
	return 0;
}

int
event_set(struct event_loop *loop, int fd, int mask, event_fd_fn *fn,
    void *arg)
{
	struct epoll_event ev;
	struct fd_slot *slot;
	int op;

	if (fd < 0) {
		errno = EBADF;
		return -1;
	}
	if (fd >= loop->nslots) {
		if (mask == 0)
			return 0;
		if (slots_grow(loop, fd) < 0)
			return -1;
	}
	slot = &loop->slots[fd];
	memset(&ev, 0, sizeof(ev));
	ev.events = (mask & EVENT_READ ? EPOLLIN : 0) |
	    (mask & EVENT_WRITE ? EPOLLOUT : 0);
	if (mask == 0)
		op = slot->mask ? EPOLL_CTL_DEL : -1;
	else
		op = slot->mask ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
	/* A new registration: events of the last one are stale. */
	ev.data.u64 = EV_DATA(fd, op == EPOLL_CTL_ADD ? slot->gen + 1 :
	    slot->gen);
	/* A descriptor already closed has left the epoll set by itself. */
	if (op != -1 && epoll_ctl(loop->epfd, op, fd, &ev) < 0 &&
	    !(op == EPOLL_CTL_DEL && (errno == EBADF || errno == ENOENT)))
		return -1;
	if (op == EPOLL_CTL_ADD)
		slot->gen++;
	slot->mask = mask;
	slot->fn = mask ? fn : NULL;
	slot->arg = mask ? arg : NULL;
	return 0;
}

int64_t
event_timer_add(struct event_loop *loop, uint64_t ms, event_timer_fn *fn,
    void *arg)
{
	struct timer *t = malloc(sizeof(*t)), **pp;

	if (t == NULL)
		return -1;
	t->id = loop->next_id++;
	t->deadline = event_now_ms() + ms;
	t->fn = fn;
	t->arg = arg;
	/* Equal deadlines keep their order of arrival. */
	for (pp = &loop->timers; *pp && (*pp)->deadline <= t->deadline;
	    pp = &(*pp)->next)
		;
	t->next = *pp;
	*pp = t;
	return t->id;
}

void
event_timer_cancel(struct event_loop *loop, int64_t id)
{
	struct timer **pp, *t;

	for (pp = &loop->timers; (t = *pp) != NULL; pp = &t->next)
		if (t->id == id) {
			*pp = t->next;
			free(t);
			return;
		}
}

/* epoll_wait's timeout: until the first timer, or forever. */
static int
poll_timeout(const struct event_loop *loop)
{
	uint64_t now, wait;

	if (loop->timers == NULL)
		return -1;
	now = event_now_ms();
	if (loop->timers->deadline <= now)
		return 0;
	wait = loop->timers->deadline - now;
	return wait > 1000000 ? 1000000 : (int)wait;
}

static void
timers_run(struct event_loop *loop)
{
	uint64_t now = event_now_ms();
	struct timer *t;

	/* A handler may add timers: take one at a time from the head. */
	while (!loop->stop && (t = loop->timers) != NULL &&
	    t->deadline <= now) {
		loop->timers = t->next;
		t->fn(loop, t->arg);
		free(t);
	}
}

/*
 * Call fd's handler for cond if the registration the event was made for
 * still watches for it.
 */
static void
fire(struct event_loop *loop, uint64_t data, int cond)
{
	int fd = EV_FD(data);
	struct fd_slot *slot;

	if (fd < 0 || fd >= loop->nslots)
		return;
	slot = &loop->slots[fd];
	if (slot->gen == EV_GEN(data) && (slot->mask & cond))
		slot->fn(loop, fd, cond, slot->arg);
}

int
event_run(struct event_loop *loop)
{
	struct epoll_event evs[EVENT_BATCH];
	int i, n;

	loop->stop = 0;
	while (!loop->stop) {
		n = epoll_wait(loop->epfd, evs, EVENT_BATCH,
		    poll_timeout(loop));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		for (i = 0; i < n && !loop->stop; i++) {
			uint64_t data = evs[i].data.u64;
			uint32_t e = evs[i].events;

			if (e & (EPOLLIN | EPOLLHUP | EPOLLERR))
				fire(loop, data, EVENT_READ);
			if (e & (EPOLLOUT | EPOLLERR) && !loop->stop)
				fire(loop, data, EVENT_WRITE);
		}
		timers_run(loop);
	}
	return 0;
}

void
event_stop(struct event_loop *loop)
{
	loop->stop = 1;
}
