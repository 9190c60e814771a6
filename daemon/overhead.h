/*
 * Context overhead (issue 5): device memory a process holds that no
 * hooked call allocated (its contexts, module code, local memory, a few
 * hundred MiB on a real GPU) is measured, not guessed: NVML's usage of the
 * process less what the ledger charges it. It is charged as one record
 * per process and device, kind "context", whatever the limit (it is held
 * already), so that limits and the device's free memory hold.
 *
 * Measured when a process opens a device, and at each of the driver's
 * looks (driver.c). Without NVML nothing is charged.
 */
#ifndef GF_DAEMON_OVERHEAD_H
#define GF_DAEMON_OVERHEAD_H

#include <stddef.h>
#include <stdint.h>

/* The record's key on dev: never an address, nor a key a shim makes. */
#define OVERHEAD_KEY(dev)	((1ull << 60) | (uint64_t)(dev))

/* Whether ptr is such a key: the daemon's, never a client's to send. */
static inline int
overhead_key_is(uint64_t ptr)
{
	return (ptr & ~(uint64_t)0xffff) == 1ull << 60;
}

struct arbiter;
struct ledger_client;
struct nvml_proc;

/* NVML's bytes for pid in procs[0..n), 0 if it is not there. */
uint64_t proc_bytes(const struct nvml_proc *procs, long n, uint32_t pid);

/* After the devices are known: find them in NVML. */
void	overhead_init(struct arbiter *a);
void	overhead_free(struct arbiter *a);

/* lc's "context" charge on dev (its record's size), or 0. */
uint64_t overhead_of(const struct ledger_client *lc, size_t dev);

/*
 * Measure every client on dev against NVML's list procs[0..n); *shrank
 * set if memory came back. Returns 1 when any charge changed (the caller
 * tells the clients), else 0.
 */
int	overhead_reconcile(struct arbiter *a, size_t dev,
	    const struct nvml_proc *procs, long n, int *shrank);

/* lc opened dev: measure it now (before its first reservation). */
void	overhead_client(struct arbiter *a, struct ledger_client *lc,
	    size_t dev);

/*
 * Measure lc on every device it opened now, from NVML read afresh: it is
 * about to be swapped out whole, its driver calls held back (activity.h),
 * and once out NVML shows nothing of it: a context made since the last
 * look (a rise below what a glance takes for one, glance.h) would stay
 * uncounted on the host until it is back.
 */
void	overhead_fresh(struct arbiter *a, struct ledger_client *lc);

#endif
