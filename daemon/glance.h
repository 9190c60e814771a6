/*
 * The driver's glance (issue 38, D): between two of the driver's looks
 * (driver.c), which list every process and cost a /proc visit for each
 * stranger, one cheap device-wide figure is read: NVML's used memory per
 * device, every GLANCE_MS on average (jitter.h). When it has risen past
 * what the ledger explains (its charges and the foreign memory, less the
 * leases' unused parts) by more than GLANCE_SLACK since the last look,
 * the look runs at once: memory held between two looks is seen within a
 * glance or two, whenever the looks come.
 *
 * The rise is measured from a base: what the last look left unexplained
 * (a look only raises it: its one reading may fall in an honest free's
 * dip), lowered when the glances find less for GLANCE_DIP_MS on end (a
 * burst's charge outliving the burst until the next look, a pool's
 * reserve outliving its trim), so that room the ledger charges but
 * nobody holds hides no burst for long. Honest clients reserve before
 * the driver allocates, and free in the driver just before they tell the
 * ledger: their rises are explained, their dips too brief to count.
 * Without NVML there is no glance. What one costs (make bench-looks):
 * some 350 instructions of the daemon's own a device, besides NVML's
 * reading, which on the real driver is one query of the device and on
 * the simulated one reads /proc for each process holding memory (about
 * 17,000 instructions and 27 system calls with 8).
 */
#ifndef GF_DAEMON_GLANCE_H
#define GF_DAEMON_GLANCE_H

#include <stddef.h>
#include <stdint.h>

#define GLANCE_MS	100
#define GLANCE_SLACK	(64ull << 20)	/* a rise below this waits for the
					   look: a context, a rounding */
#define GLANCE_DIP_MS	300		/* less held than charged this long:
					   the new base */

struct arbiter;

/* With the driver's looks (driver_init): glance from now on. */
void	glance_init(struct arbiter *a);
void	glance_free(struct arbiter *a);

/*
 * A look at dev found NVML's used at used, and has charged what it found:
 * the ledger now says why (called once the look has settled).
 */
void	glance_base(struct arbiter *a, size_t dev, uint64_t used);

#endif
