/*
 * A counted process's uid, gid and cgroup read again (identity.h), and
 * the group it matches now put in force, its memory moved with it.
 */
#include <stdlib.h>
#include <string.h>

#include "arbiter.h"
#include "decision.h"
#include "groups.h"
#include "identity.h"
#include "ledger.h"
#include "log.h"
#include "pidfd.h"
#include "procid.h"
#include "units.h"

/* lc moved from group old to its own now: log and event. */
static void
regrouped_say(struct arbiter *a, struct ledger_client *lc, size_t old)
{
	const char *from = a->ledger.groups[old].pol.name;
	const char *to = a->ledger.groups[lc->group].pol.name;
	uint64_t used = ledger_client_used(&a->ledger, lc);
	char sbuf[32];

	log_info("pid %u is now uid %u gid %u, cgroup '%s': moved from "
	    "group '%s' to '%s' with its %s", lc->pid, lc->uid, lc->gid,
	    lc->cgroup, from, to, size_format(used, sbuf, sizeof(sbuf)));
	decision_event(a, GF_EV_REGROUPED, lc, -1, used, "from group '%s' to "
	    "'%s': now uid %u gid %u", from, to, lc->uid, lc->gid);
}

struct ledger_client *
identity_holder(struct arbiter *a, uint32_t pid)
{
	struct ledger_client *lc = NULL;

	while ((lc = ledger_client_find(&a->ledger, pid, lc)) != NULL) {
		if (lc->pidfd >= 0) {
			if (!pidfd_exited(lc->pidfd))
				return lc;
		} else if (!lc->departing && lc->state != GF_STATE_RELEASING &&
		    (lc->start_ms == 0 || lc->start_ms == pidfd_start_ms(pid)))
			return lc;
	}
	return NULL;
}

int
identity_pid_reused(const struct ledger_client *lc)
{
	uint64_t now;

	/* Unknown: NVML's list is believed, as before issue 39. */
	if (lc->start_ms == 0)
		return 0;
	now = pidfd_start_ms(lc->pid);
	return now != 0 && now != lc->start_ms;
}

int
identity_refresh(struct arbiter *a, struct ledger_client *lc)
{
	uint32_t uid, gid;
	char *cgroup;
	size_t old = lc->group, now;

	if (a->groups.conf == NULL || lc->departing || lc->pidfd < 0 ||
	    procid_reread(lc->pidfd, lc->pid, &uid, &gid, &cgroup) < 0)
		return 0;
	if (uid == lc->uid && gid == lc->gid &&
	    strcmp(cgroup, lc->cgroup) == 0) {
		free(cgroup);
		return 0;
	}
	free(lc->cgroup);
	lc->cgroup = cgroup;
	lc->uid = uid;
	lc->gid = gid;
	now = groups_match(&a->groups, lc->cgroup, lc->uid, lc->gid);
	if (now == old)
		return 0;
	ledger_client_group(&a->ledger, lc, now);
	regrouped_say(a, lc, old);
	return 1;
}

int
identity_refresh_all(struct arbiter *a)
{
	struct ledger_client *lc;
	int n = 0;

	TAILQ_FOREACH(lc, &a->ledger.clients, entry)
		n += identity_refresh(a, lc);
	return n;
}
