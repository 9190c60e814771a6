/*
 * The activity pages, mapped and looked at (activity.h).
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "activity.h"
#include "arbiter.h"
#include "event.h"
#include "gpufrac/activity.h"
#include "ledger.h"
#include "log.h"

static void	activity_arm(struct arbiter *a);

/* A sealed page of this format behind fd, mapped; or NULL (logged). */
static struct gf_activity *
page_map(uint32_t pid, int fd)
{
	struct gf_activity *p;
	struct stat st;
	int seals;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size < GF_ACTIVITY_SIZE ||
	    (seals = fcntl(fd, F_GET_SEALS)) < 0 ||
	    (seals & (F_SEAL_SHRINK | F_SEAL_SEAL)) !=
	    (F_SEAL_SHRINK | F_SEAL_SEAL)) {
		log_warnx("pid %u passed no sealed activity page: it will not "
		    "be swapped", pid);
		return NULL;
	}
	p = mmap(NULL, GF_ACTIVITY_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
	    fd, 0);
	if (p == MAP_FAILED) {
		log_warn("cannot map the activity page of pid %u", pid);
		return NULL;
	}
	if (p->magic != GF_ACTIVITY_MAGIC ||
	    p->version != GF_ACTIVITY_VERSION) {
		log_warnx("pid %u passed an activity page of another format: "
		    "it will not be swapped", pid);
		munmap(p, GF_ACTIVITY_SIZE);
		return NULL;
	}
	return p;
}

/* Note when lc's count moved: now, if it did since the last look. */
static int
activity_look(struct ledger_client *lc, uint64_t now)
{
	uint64_t calls;

	if (lc->act == NULL)
		return 0;
	calls = __atomic_load_n(&lc->act->calls, __ATOMIC_RELAXED);
	if (calls != lc->act_calls) {
		lc->act_calls = calls;
		lc->act_ms = now;
	}
	return 1;
}

static void
activity_fire(struct event_loop *loop, void *arg)
{
	struct arbiter *a = arg;
	struct ledger_client *lc;
	uint64_t now = event_now_ms();
	int any = 0;

	(void)loop;
	a->activity_timer = 0;
	TAILQ_FOREACH(lc, &a->ledger.clients, entry)
		any |= activity_look(lc, now);
	if (any)
		activity_arm(a);
}

static void
activity_arm(struct arbiter *a)
{
	if (a->activity_timer > 0 || a->stopping || a->loop == NULL)
		return;
	a->activity_timer = event_timer_add(a->loop, ACTIVITY_LOOK_MS,
	    activity_fire, a);
	if (a->activity_timer < 0) {
		log_warnx("cannot arm the activity timer: idle times are "
		    "counted from the last look");
		a->activity_timer = 0;
	}
}

struct gf_activity *
activity_map(struct arbiter *a, struct ledger_client *lc, int fd)
{
	struct gf_activity *p = page_map(lc->pid, fd);

	close(fd);
	if ((lc->act = p) != NULL) {
		/* Calls made before the daemon knew of it: made now. */
		lc->act_calls = 0;
		lc->act_ms = 0;
		activity_look(lc, event_now_ms());
		activity_arm(a);
	}
	return p;
}

void
activity_unmap(struct ledger_client *lc)
{
	if (lc->act != NULL)
		munmap(lc->act, GF_ACTIVITY_SIZE);
	lc->act = NULL;
}

uint64_t
activity_idle_ms(const struct ledger_client *lc)
{
	uint64_t now;

	if (lc->act == NULL)
		return UINT64_MAX;
	if (__atomic_load_n(&lc->act->calls, __ATOMIC_RELAXED) !=
	    lc->act_calls)
		return 0;
	if (lc->act_ms == 0)
		return UINT64_MAX;	/* no call yet */
	now = event_now_ms();
	return now > lc->act_ms ? now - lc->act_ms : 0;
}

struct gf_lease_slot *
activity_slot(const struct ledger_client *lc, size_t dev)
{
	const struct ledger_usage *u = &lc->usage[dev];

	if (lc->act == NULL || !u->opened || u->ordinal >= GF_ACTIVITY_DEVICES)
		return NULL;
	return &lc->act->lease[u->ordinal];
}

void
activity_stop(struct arbiter *a)
{
	if (a->activity_timer > 0)
		event_timer_cancel(a->loop, a->activity_timer);
	a->activity_timer = 0;
}
