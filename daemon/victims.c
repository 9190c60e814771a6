/*
 * Victim selection: filter the candidates that may be taken, sort them into
 * preemption order, take them until the need is covered.
 */
#include <stdlib.h>

#include "gpufrac/proto.h"
#include "victims.h"

/* What the candidate's group holds above its guarantee, net of releases. */
static uint64_t
group_excess(const struct victim_cand *c)
{
	uint64_t held = c->group_used > c->group_releasing ?
	    c->group_used - c->group_releasing : 0;

	return held > c->group_guarantee ? held - c->group_guarantee : 0;
}

static int
eligible(const struct victim_cand *c, int32_t priority)
{
	return c->priority < priority && c->on_preempt != GF_PREEMPT_NONE &&
	    !c->preempting && c->charge > 0 && group_excess(c) > 0;
}

#define CMP(a, b)	((a) < (b) ? -1 : (a) > (b))

/* Preemption order; see victims.h. */
static int
cand_cmp(const void *pa, const void *pb)
{
	const struct victim_cand *a = *(const struct victim_cand *const *)pa;
	const struct victim_cand *b = *(const struct victim_cand *const *)pb;
	int r;

	if ((r = CMP(a->priority, b->priority)) != 0)
		return r;
	if ((r = CMP(group_excess(b), group_excess(a))) != 0)
		return r;
	if ((r = CMP(a->group, b->group)) != 0)
		return r;
	if ((r = CMP(b->charge, a->charge)) != 0)
		return r;
	return CMP(a->id, b->id);
}

size_t
victims_select(int32_t priority, uint64_t need,
    const struct victim_cand *cand, size_t ncand,
    const struct victim_cand **chosen, struct victims_result *res)
{
	const struct victim_cand *c, *group = NULL;
	uint64_t left = 0, take;
	size_t i, n = 0;

	res->nchosen = res->freed = res->released = res->available = 0;
	for (i = 0; i < ncand; i++)
		if (eligible(&cand[i], priority))
			chosen[n++] = &cand[i];
	if (n > 1)
		qsort(chosen, n, sizeof(*chosen), cand_cmp);

	/* Processes of a group are adjacent now: count each group once. */
	for (i = 0; i < n; i++) {
		c = chosen[i];
		if (group == NULL || c->group != group->group) {
			group = c;
			left = group_excess(c);
		}
		take = c->charge < left ? c->charge : left;
		left -= take;
		res->available += take;
		if (res->freed < need && take > 0) {
			chosen[res->nchosen++] = c;
			res->freed += take;
			res->released += c->charge;
		}
	}
	if (need == 0 || res->freed < need) {
		res->nchosen = res->freed = res->released = 0;
		return 0;
	}
	return res->nchosen;
}

/* Whether swapping c out whole leaves its group at or above its guarantee. */
static int
swap_allowed(const struct swap_cand *c, int32_t priority)
{
	return c->eligible && c->priority <= priority && c->charge > 0 &&
	    c->group_used >= c->group_guarantee &&
	    c->charge <= c->group_used - c->group_guarantee;
}

long
victims_swap_pick(int32_t priority, const struct swap_cand *cand,
    size_t ncand)
{
	const struct swap_cand *b = NULL, *c;
	size_t i;

	for (i = 0; i < ncand; i++) {
		c = &cand[i];
		if (!swap_allowed(c, priority))
			continue;
		if (b == NULL || c->idle_ms > b->idle_ms ||
		    (c->idle_ms == b->idle_ms && (c->charge > b->charge ||
		    (c->charge == b->charge && c->id < b->id))))
			b = c;
	}
	return b != NULL ? (long)(b - cand) : -1;
}

int
victims_swap_covers(int32_t priority, struct swap_cand *cand, size_t ncand,
    uint64_t need)
{
	uint64_t freed = 0;
	size_t i;
	long k;

	while (freed < need &&
	    (k = victims_swap_pick(priority, cand, ncand)) >= 0) {
		freed += cand[k].charge;
		cand[k].eligible = 0;
		for (i = 0; i < ncand; i++)
			if (cand[i].group == cand[k].group)
				cand[i].group_used -= cand[k].charge;
	}
	return freed >= need;
}
