/*
 * What a group may take on a device: the shareable capacity less what is
 * held and what other groups are guaranteed, unless it borrows; and what
 * is lent of the unused guarantees, and to whom (ledger.h, Lending).
 */
#include <stdint.h>

#include "ledger.h"
#include "ledger_int.h"

int
ledger_borrows(const struct ledger *l, size_t group)
{
	return l->lend && l->groups[group].pol.on_preempt != GF_PREEMPT_NONE;
}

int
ledger_within_guarantee(const struct ledger *l, const struct ledger_client *c,
    size_t dev, uint64_t size)
{
	const struct ledger_share *sh = &l->groups[c->group].share[dev];

	return size > 0 && sh->used <= sh->guarantee &&
	    size <= sh->guarantee - sh->used;
}

/* The guarantees on dev its groups do not use, g aside (SIZE_MAX: none). */
static uint64_t
unused_guarantees(const struct ledger *l, size_t dev, size_t g)
{
	uint64_t held = 0;
	size_t i;

	for (i = 0; i < l->ngroups; i++) {
		const struct ledger_share *sh = &l->groups[i].share[dev];

		if (i != g && sh->guarantee > sh->used)
			held = add_saturated(held, sh->guarantee - sh->used);
	}
	return held;
}

uint64_t
ledger_lent(const struct ledger *l, size_t dev)
{
	const struct ledger_device *d = &l->devices[dev];
	uint64_t taken = add_saturated(d->used,
	    unused_guarantees(l, dev, SIZE_MAX));

	return taken > d->capacity ? taken - d->capacity : 0;
}

/* Whether group a's memory is taken back before group b's on dev. */
static int
reclaimed_before(const struct ledger *l, size_t dev, size_t a, size_t b)
{
	const struct ledger_group *ga = &l->groups[a], *gb = &l->groups[b];
	uint64_t ea = ga->share[dev].used - ga->share[dev].guarantee;
	uint64_t eb = gb->share[dev].used - gb->share[dev].guarantee;

	if (ga->pol.priority != gb->pol.priority)
		return ga->pol.priority < gb->pol.priority;
	if (ea != eb)
		return ea > eb;
	return a < b;
}

void
ledger_borrowed(const struct ledger *l, size_t dev, uint64_t *borrowed)
{
	uint64_t left = ledger_lent(l, dev), take;
	size_t i, next;

	for (i = 0; i < l->ngroups; i++)
		borrowed[i] = 0;
	/* Few groups: pick the next borrower each round. */
	while (left > 0) {
		next = SIZE_MAX;
		for (i = 0; i < l->ngroups; i++) {
			const struct ledger_share *sh =
			    &l->groups[i].share[dev];

			if (!ledger_borrows(l, i) || borrowed[i] > 0 ||
			    sh->used <= sh->guarantee)
				continue;
			if (next == SIZE_MAX ||
			    reclaimed_before(l, dev, i, next))
				next = i;
		}
		/* A reload can leave others above the free pool. */
		if (next == SIZE_MAX)
			return;
		take = l->groups[next].share[dev].used -
		    l->groups[next].share[dev].guarantee;
		borrowed[next] = take < left ? take : left;
		left -= borrowed[next];
	}
}

uint64_t
ledger_available_as(const struct ledger *l, size_t group, size_t dev,
    int borrow, uint64_t spare)
{
	const struct ledger_device *d = &l->devices[dev];
	uint64_t taken = d->used > spare ? d->used - spare : 0;

	taken = add_saturated(taken, d->foreign);
	if (!borrow)
		taken = add_saturated(taken, unused_guarantees(l, dev, group));
	return taken < d->capacity ? d->capacity - taken : 0;
}

uint64_t
ledger_available(const struct ledger *l, size_t group, size_t dev)
{
	return ledger_available_as(l, group, dev, ledger_borrows(l, group), 0);
}

uint64_t
ledger_available_ever(const struct ledger *l, size_t group, size_t dev)
{
	uint64_t held = 0;
	size_t i;

	if (ledger_borrows(l, group))
		return l->devices[dev].capacity;
	for (i = 0; i < l->ngroups; i++)
		if (i != group)
			held = add_saturated(held,
			    l->groups[i].share[dev].guarantee);
	return held < l->devices[dev].capacity ?
	    l->devices[dev].capacity - held : 0;
}
