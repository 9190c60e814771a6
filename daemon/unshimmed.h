/*
 * Processes that hold device memory without the shim (issue 31): NVML
 * lists them, no connection explains them. At each of the driver's looks
 * (driver.c) such a process is identified from /proc with a pidfd held
 * (procid.h), matched to a group as its HELLO would be (groups_match),
 * and kept in the ledger as a client of state GF_STATE_UNSHIMMED that
 * opened each device NVML shows it on: overhead.c's measure charges it
 * NVML's figure at every look, counted in its group's and the device's
 * used, no longer as foreign; it is never swapped. Event `unshimmed` at
 * first sight. A process with this daemon's shim, not connected, is
 * taken in only after UNSHIMMED_GRACE_MS. Its group's `unshimmed = kill`
 * has it SIGKILLed through
 * its pidfd at the look that sees it past its limits (event
 * `unshimmed-kill`); root's processes of group "default" never are. Its
 * exit (its pidfd in the event loop) hands it to depart.c: charged until
 * the driver has its memory back. Its HELLO, should it connect after all
 * (a restarted daemon's shimmed processes), ends it: the connection's
 * client takes its place.
 */
#ifndef GF_DAEMON_UNSHIMMED_H
#define GF_DAEMON_UNSHIMMED_H

#include <stddef.h>
#include <stdint.h>

/*
 * How long a process with this daemon's shim loaded has to connect
 * before it is taken in (a daemon restarted, its clients coming back; a
 * program between its context and its first allocation): till then
 * NVML's figure for it is foreign, taken but nobody's.
 */
#define UNSHIMMED_GRACE_MS	5000

struct arbiter;
struct nvml_proc;

/*
 * NVML listed procs[0..n) on dev at at_ms (pidfd_boot_ms): take in each
 * process that is no client and not this daemon, and open dev for each
 * unshimmed process listed there (overhead_reconcile then charges it).
 */
void	unshimmed_see(struct arbiter *a, size_t dev,
	    const struct nvml_proc *procs, long n, uint64_t at_ms);

/*
 * After a look at every device: drop the unshimmed processes NVML lists
 * nowhere (what they held is back), then kill, where their group says
 * so, those past their limits. Returns 1 when memory came back (serve
 * the waiters).
 */
int	unshimmed_settle(struct arbiter *a);

/* pid says HELLO: its unshimmed record (same live process) goes. 1: gone. */
int	unshimmed_hello(struct arbiter *a, uint32_t pid);

/* Drop them all (shutdown). */
void	unshimmed_free(struct arbiter *a);

#endif
