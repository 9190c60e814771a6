/*
 * The processes given a grace before they are judged unshimmed: one
 * record each, by pid and start time, kept while the process lives.
 * expect.h says who gets one.
 */
#include <stdlib.h>
#include <unistd.h>

#include "arbiter.h"
#include "event.h"
#include "expect.h"
#include "log.h"
#include "pidfd.h"

static struct expect *
expect_find(struct arbiter *a, uint32_t pid)
{
	size_t i;

	for (i = 0; i < a->nexpect; i++)
		if (a->expect[i].pid == pid)
			return &a->expect[i];
	return NULL;
}

/* A record for pid (a reused pid's replaced), or NULL (ENOMEM). */
static struct expect *
expect_add(struct arbiter *a, uint32_t pid, uint64_t start_ms,
    uint64_t until_ms)
{
	struct expect *e;

	if ((e = expect_find(a, pid)) == NULL) {
		if ((e = realloc(a->expect, (a->nexpect + 1) *
		    sizeof(*e))) == NULL) {
			log_warnx("no memory to note pid %u's grace: it has "
			    "none", pid);
			return NULL;
		}
		a->expect = e;
		e = &a->expect[a->nexpect++];
	}
	*e = (struct expect){ pid, start_ms, until_ms };
	return e;
}

void
expect_lost(struct arbiter *a, uint32_t pid, uint64_t start_ms)
{
	struct expect *e = expect_find(a, pid);

	if (e != NULL && e->start_ms == start_ms)
		return;		/* once in a process's life */
	(void)expect_add(a, pid, start_ms, event_now_ms() + EXPECT_GRACE_MS);
}

uint64_t
expect_until(struct arbiter *a, uint32_t pid, uint64_t start_ms)
{
	static uint64_t self_ms;
	uint64_t window = a->start_ms + EXPECT_GRACE_MS;
	struct expect *e = expect_find(a, pid);

	if (e != NULL && e->start_ms == start_ms)
		return e->until_ms;
	/* Only one that ran before the daemon: it may be its clients'. */
	if (self_ms == 0)
		self_ms = pidfd_start_ms((uint32_t)getpid());
	if (event_now_ms() >= window || start_ms == 0 || start_ms >= self_ms)
		return 0;
	e = expect_add(a, pid, start_ms, window);
	return e != NULL ? e->until_ms : 0;
}

void
expect_prune(struct arbiter *a)
{
	size_t i, k = 0;

	for (i = 0; i < a->nexpect; i++)
		if (pidfd_start_ms(a->expect[i].pid) == a->expect[i].start_ms &&
		    a->expect[i].start_ms != 0)
			a->expect[k++] = a->expect[i];
	a->nexpect = k;
}

void
expect_free(struct arbiter *a)
{
	free(a->expect);
	a->expect = NULL;
	a->nexpect = 0;
}
