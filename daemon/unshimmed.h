/*
 * Processes that hold device memory without the shim (issues 31, 38):
 * NVML lists them, no connection explains them. NVML is the authority on
 * who holds memory; /proc only says who the holder is. At each of the
 * driver's looks (driver.c) such a process, whatever its maps show, is
 * identified from /proc with a pidfd held (procid.h), matched to a group
 * as its HELLO would be (groups_match), and kept in the ledger as a
 * client of state GF_STATE_UNSHIMMED that opened each device NVML shows
 * it on: overhead.c's measure charges it NVML's figure at every look,
 * counted in its group's and the device's used, never as foreign; it is
 * never swapped. Event `unshimmed` at first sight, with what /proc shows
 * of the shim as its reason. A process whose connection closed while it
 * lives is one too once its grace is over, if NVML shows it holding
 * more than it was granted (granted.h): its kept grants (depart.h) give
 * way to NVML's figure.
 *
 * Only a process the daemon has reason to expect to connect gets a grace
 * (expect.h: a connection just lost, the daemon's first seconds), once
 * in its life; meanwhile it is counted in its group, binding its mates,
 * and neither judged nor said. Its group's `unshimmed = kill` has it
 * SIGKILLed through its pidfd at the look that sees it past its own
 * limit, or its memory past its group's in the order it was taken
 * (taken.h, unshimmed_kill.c: newest first; event `unshimmed-kill`);
 * root's processes of group "default" never are. Its exit (its pidfd in
 * the event loop) hands it to depart.c: charged until the driver has its
 * memory back. Its HELLO, should it connect after all (a restarted
 * daemon's shimmed processes), ends it: the connection's client takes
 * its place.
 */
#ifndef GF_DAEMON_UNSHIMMED_H
#define GF_DAEMON_UNSHIMMED_H

#include <stddef.h>
#include <stdint.h>

struct arbiter;
struct ledger_client;
struct nvml_proc;

/*
 * NVML listed procs[0..n) on dev at at_ms (pidfd_boot_ms): take in each
 * process that is not this daemon and has no connection (none, or one
 * closed and its grace over), and open dev for each unshimmed process
 * listed there (overhead_reconcile then charges it).
 */
void	unshimmed_see(struct arbiter *a, size_t dev,
	    const struct nvml_proc *procs, long n, uint64_t at_ms);

/*
 * After a look at every device: drop the unshimmed processes NVML lists
 * nowhere (what they held is back), note when the others' memory came
 * (taken.h), then kill, where their group says so, those past their
 * limits. Returns 1 when memory came back (serve the waiters).
 */
int	unshimmed_settle(struct arbiter *a);

/* Whether lc is a process judged to hold memory without the shim (its
   grace over, its `unshimmed` event said). */
int	unshimmed_judged(const struct ledger_client *lc);

/* pid says HELLO: its unshimmed record (same live process) goes. 1: gone. */
int	unshimmed_hello(struct arbiter *a, uint32_t pid);

/* Drop them all (shutdown). */
void	unshimmed_free(struct arbiter *a);

#endif
