/*
 * A client's word, where it would change what the others get (issue 32):
 * a COMMIT charged beyond what its RESERVE took (a re-registration after
 * a lost connection or a daemon restart, an allocation reserved on an
 * earlier connection: an honest library sends no other, it reserves
 * what the driver took beyond a reservation first) and a LEASE_RESTORE
 * are believed first up to what an earlier connection of its process
 * was granted (granted.h, issue 40), whatever its limits now; beyond
 * that never, for a process of this daemon's time (refused as below).
 * An earlier daemon's client's word is believed within the
 * client's own and its group's limits, where the device has room too;
 * beyond them only as far as NVML shows the process holding (said in an
 * event); otherwise refused, with an event naming the pid and uid, and
 * the connection is closed. Where NVML cannot say (no per-process list)
 * its limits alone bound its word; out to host, where NVML shows nothing
 * of what it holds, its own limit does, past its group's if need be
 * (said). A lease restored past the limits is restored closed.
 */
#ifndef GF_DAEMON_TRUST_H
#define GF_DAEMON_TRUST_H

#include <stddef.h>
#include <stdint.h>

struct arbiter;
struct gf_commit;
struct ledger_client;

/*
 * What COMMIT cm would add to lc's charge on dev beyond what it had
 * reserved there: its size, less the pending reserve it takes (no more
 * than lc has pending) and the record it replaces on dev.
 */
uint64_t trust_commit_extra(const struct ledger_client *lc, size_t dev,
	    const struct gf_commit *cm);

/*
 * Whether extra more bytes may be charged to lc on dev on its word, what
 * (a message name) says. 0: yes (an event said so if that passes its
 * limits). -1: no, with why set and the refusal recorded as an event:
 * the caller closes the connection.
 */
int	trust_charge(struct arbiter *a, struct ledger_client *lc, size_t dev,
	    uint64_t extra, const char *what, char *why, size_t whylen);

/*
 * Whether lc's lease of size on dev, restored as it registers, is lent
 * again: 1 yes (within its limits); 0 restored closed (the caller takes
 * its undrawn part back at once, lease_take), its drawn part believed as
 * trust_charge believes a COMMIT; -1 refused, as trust_charge's.
 */
int	trust_lease(struct arbiter *a, struct ledger_client *lc, size_t dev,
	    uint64_t size, char *why, size_t whylen);

/*
 * Record that lc's word (bytes on dev, why) was refused: its event; and
 * nothing it was granted is kept once its connection closes (granted.h):
 * its memory is an unshimmed process's.
 */
void	trust_refuse(struct arbiter *a, struct ledger_client *lc,
	    size_t dev, uint64_t bytes, const char *why);

#endif
