/*
 * The process's leases (include/gpufrac/activity.h): memory the daemon
 * has charged to it ahead of time, per device, that cuMemAlloc draws from
 * and cuMemFree gives back with one atomic operation on the activity page:
 * no lock, no system call, no message. The daemon fills a lease when it
 * grants a RESERVE that asks for one, and takes it back (closing it) when
 * it wants the memory; a closed lease takes nothing back, so what is
 * freed from it then goes to the daemon (client_lease_return).
 */
#ifndef GF_SHIM_LEASE_H
#define GF_SHIM_LEASE_H

#include <stdint.h>

#include "activity.h"
#include "gpufrac/activity.h"

static inline struct gf_lease_slot *
lease_slot(int dev)
{
	return &__atomic_load_n(&activity_page, __ATOMIC_ACQUIRE)->lease[dev];
}

/* Take size from dev's lease: 1 taken; 0 closed, or not that much left. */
static inline int
lease_draw(int dev, uint64_t size)
{
	struct gf_lease_slot *s;
	uint64_t old;

	if ((unsigned)dev >= GF_ACTIVITY_DEVICES)
		return 0;
	s = lease_slot(dev);
	old = __atomic_load_n(&s->avail, __ATOMIC_RELAXED);
	do {
		if ((old & GF_LEASE_CLOSED) || old < size)
			return 0;
	} while (!__atomic_compare_exchange_n(&s->avail, &old, old - size, 1,
	    __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	/* A sign of life for the daemon: a lost increment does no harm. */
	__atomic_store_n(&s->draws, __atomic_load_n(&s->draws,
	    __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
	return 1;
}

/*
 * Give back size drawn from dev's lease: 1 done; 0 the lease is closed,
 * and the caller returns it to the daemon instead.
 */
static inline int
lease_put(int dev, uint64_t size)
{
	struct gf_lease_slot *s = lease_slot(dev);
	uint64_t old = __atomic_load_n(&s->avail, __ATOMIC_RELAXED);

	do {
		if (old & GF_LEASE_CLOSED)
			return 0;
	} while (!__atomic_compare_exchange_n(&s->avail, &old, old + size, 1,
	    __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return 1;
}

/*
 * Close dev's lease on the shim's own authority, as the daemon takes back
 * a lease's unused part (include/gpufrac/activity.h): for a process the
 * daemon refuses (issue 38 G), whose lease an earlier daemon lent. What
 * is drawn stays in total, as it is freed it goes off it
 * (client_lease_return); the unused part goes off at once, so that a
 * daemon that lets the process in later is told only what it holds.
 */
static inline void
lease_shut(int dev)
{
	struct gf_lease_slot *s = lease_slot(dev);
	uint64_t old = __atomic_exchange_n(&s->avail, GF_LEASE_CLOSED,
	    __ATOMIC_SEQ_CST);

	__atomic_sub_fetch(&s->total, old & ~GF_LEASE_CLOSED,
	    __ATOMIC_SEQ_CST);
}

/* What dev's lease holds that is not allocated. */
static inline uint64_t
lease_unused(int dev)
{
	if ((unsigned)dev >= GF_ACTIVITY_DEVICES)
		return 0;
	return __atomic_load_n(&lease_slot(dev)->avail, __ATOMIC_RELAXED) &
	    ~GF_LEASE_CLOSED;
}

#endif
