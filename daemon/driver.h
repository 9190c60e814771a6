/*
 * The driver is the truth of what is free (DESIGN.md §4, issue 20). The
 * ledger counts what its clients hold; the device may hold more, and
 * NVML, looked at every look_interval (gpufrac.conf; DRIVER_FAST_MS
 * while memory is on its way back) on average, each wait drawn at random (jitter.h), and
 * at once when the glance between looks sees the device hold more than
 * the ledger explains (glance.h), says how much:
 *  - foreign memory: what NVML shows held by processes gpufrac does not
 *    know, and by no process NVML lists beyond what departed clients
 *    still account for (the driver's own, another pid namespace's); the
 *    ledger counts it as taken (ledger_device.foreign);
 *  - releasing: a client whose process has exited keeps its charge, state
 *    GF_STATE_RELEASING, until the driver has its memory back: NVML no
 *    longer lists the process and the memory NVML lists for nobody no
 *    longer covers it (newest departures first); at most release_timeout,
 *    then an event says the driver kept it and the charge goes;
 *  - a shortfall: the driver refused a request the ledger granted
 *    (GF_RESERVE_DRIVER_OOM); the device is taken to hold that much more
 *    until NVML shows it holding less than it did then.
 * The same look measures context memory (overhead.c). Without NVML there
 * is no look: a departed process's charge goes when it exits, and a
 * shortfall when memory next comes back.
 */
#ifndef GF_DAEMON_DRIVER_H
#define GF_DAEMON_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#define DRIVER_FAST_MS		50
#define DRIVER_SETTLE_LOOKS	5	/* before more memory of nobody is
					   taken for the usual */

struct arbiter;
struct ledger;
struct ledger_client;
struct nvml_proc;

/* Per device, the driver's figures at the last look (driver.c's). */
struct driver_dev {
	uint64_t	foreign;	/* measured, the shortfall aside */
	struct nvml_proc *strangers;	/* of it, the processes NVML lists */
	long		nstrangers;
	uint64_t	unlisted;	/* held by no process NVML lists, when
					   no departed client accounted for any */
	unsigned	rising;		/* looks that saw more than that */
	uint64_t	shortfall;	/* the driver refused this much more */
	uint64_t	shortfall_used;	/* NVML's used when it did (0: no NVML) */
	int64_t		unexplained;	/* the glances' base: NVML's used
					   less what the ledger explains
					   (glance.h) */
	uint64_t	low_since;	/* glances found less since (ms), or 0 */
	int64_t		low_most;	/* and at the most this */
	uint64_t	looked_used;	/* NVML's used at the last look */
	int		looked;		/* by the look under way */
};

/* After overhead_init (NVML open or not): look now, and from now on. */
int	driver_init(struct arbiter *a);
/*
 * The configuration's look_interval in force (at start, after a reload):
 * the next look is drawn again from it, unless memory is on its way back.
 */
void	driver_period_set(struct arbiter *a);
void	driver_free(struct arbiter *a);

/*
 * A client of pid says HELLO, or opens a device: what the last look
 * counted as foreign for pid is its own now (its re-registered
 * allocations, its context), so it is no longer counted twice until the
 * next look. Until it opens a device, what NVML shows it holding there
 * is foreign: taken, nobody's.
 */
void	driver_client_new(struct arbiter *a, uint32_t pid);

/* Look again as soon as the loop turns: a process left, memory may be back. */
void	driver_look_soon(struct arbiter *a);

/*
 * Whether departed clients' memory can be followed into the driver (NVML
 * is there and has answered a look): when not, their charge goes as
 * their process exits.
 */
int	driver_follows(void);

/*
 * The driver refused lc's request of size on dev that the ledger had
 * granted: look now, and if the ledger still has room for it, take the
 * device to hold enough more that it has not. Records the event.
 */
void	driver_refused(struct arbiter *a, struct ledger_client *lc, size_t dev,
	    uint64_t size);

/* Of dev's charges, those of processes gone whose memory is not back yet. */
uint64_t driver_releasing(const struct ledger *l, size_t dev);

#endif
