/*
 * The cheap reading between the driver's looks: NVML's used memory per
 * device against the ledger, and a look at once when it rose past what
 * the ledger explains. glance.h says why.
 */
#include <stdint.h>

#include "arbiter.h"
#include "driver.h"
#include "event.h"
#include "glance.h"
#include "jitter.h"
#include "lease.h"
#include "ledger.h"
#include "log.h"
#include "nvml.h"

static void	glance_arm(struct arbiter *a);

/*
 * NVML's used on dev less what the ledger explains: its clients' charges
 * and the foreign memory, less the part of the leases nobody drew.
 */
static int64_t
unexplained(const struct arbiter *a, size_t dev, uint64_t used)
{
	const struct ledger_device *ld = &a->ledger.devices[dev];
	uint64_t explained = ld->used + ld->foreign;
	uint64_t unused = leases_unused(&a->ledger, SIZE_MAX, dev);

	explained = explained > unused ? explained - unused : 0;
	return (int64_t)(used - explained);
}

/*
 * The look's figure moves the base up, never down: read while an honest
 * free has left the driver and not yet reached the ledger, it is one
 * instant's dip, which the glances' rule below is there to ignore.
 */
void
glance_base(struct arbiter *a, size_t dev, uint64_t used)
{
	struct driver_dev *dd = &a->driver[dev];
	int64_t u = unexplained(a, dev, used);

	if (u > dd->unexplained)
		dd->unexplained = u;
	dd->low_since = 0;
}

/*
 * Below the base: it comes down to the most the glances have shown since
 * they first found less, once that has lasted GLANCE_DIP_MS (glance.h
 * says why not at once).
 */
static void
lower(struct driver_dev *dd, int64_t u)
{
	uint64_t now = event_now_ms();

	if (u >= dd->unexplained) {
		dd->low_since = 0;
		return;
	}
	if (dd->low_since == 0) {
		dd->low_since = now;
		dd->low_most = u;
		return;
	}
	if (u > dd->low_most)
		dd->low_most = u;
	if (now - dd->low_since >= GLANCE_DIP_MS) {
		dd->unexplained = dd->low_most;
		dd->low_since = 0;
	}
}

/* Whether dev's figure rose past what the ledger explains. */
static int
risen(struct arbiter *a, size_t dev)
{
	struct driver_dev *dd = &a->driver[dev];
	uint64_t used;
	int64_t u;

	if (nvml_used(dev, &used) < 0)
		return 0;
	u = unexplained(a, dev, used);
	if (u > dd->unexplained + (int64_t)GLANCE_SLACK) {
		log_debug("device %zu: %lld bytes held that the ledger does "
		    "not explain: looking now", dev,
		    (long long)(u - dd->unexplained));
		return 1;
	}
	lower(dd, u);
	return 0;
}

static void
glance_fire(struct event_loop *loop, void *arg)
{
	struct arbiter *a = arg;
	size_t dev;
	int rise = 0;

	(void)loop;
	a->glance_timer = 0;
	for (dev = 0; dev < a->ledger.ndevices; dev++)
		rise |= risen(a, dev);
	if (rise)
		driver_look_soon(a);
	glance_arm(a);
}

static void
glance_arm(struct arbiter *a)
{
	if (a->stopping || !nvml_ready())
		return;
	a->glance_timer = event_timer_add(a->loop, jitter_ms(GLANCE_MS),
	    glance_fire, a);
	if (a->glance_timer < 0)
		a->glance_timer = 0;
}

void
glance_init(struct arbiter *a)
{
	a->glance_timer = 0;
	glance_arm(a);
}

void
glance_free(struct arbiter *a)
{
	if (a->glance_timer > 0)
		event_timer_cancel(a->loop, a->glance_timer);
	a->glance_timer = 0;
}
