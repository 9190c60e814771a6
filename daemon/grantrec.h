/*
 * What the daemon granted, kept where its next self finds it (issue 40,
 * B): each client's record in the grants' file (grantfile.h), written as
 * the ledger changes (its watch), read at start before any connection is
 * accepted. A record whose process still lives (pid and start time)
 * becomes what that process was granted (granted.h): its
 * re-registration is held to it, and its page's word that the copy
 * engine left it out to host counts only where its record says so. A
 * record torn or changed, or a file of another layout, leaves the
 * processes of the earlier daemon to today's rules (trust.h), each said
 * in an `unrecorded` event; so is a process with no record, which
 * never asked the earlier daemon for anything: it started after that
 * daemon's last sign of life (written in the file every second), or its
 * shim had not registered yet when that daemon went. Every process that
 * registers is recorded at its HELLO, granted nothing yet; a process
 * judged to hold memory without the shim (unshimmed.h), once its grace
 * is over, or whose word was refused (trust.h): granted nothing, flagged
 * so.
 */
#ifndef GF_DAEMON_GRANTREC_H
#define GF_DAEMON_GRANTREC_H

#include <stdint.h>

#include "grantfile.h"

struct arbiter;
struct ledger_client;

struct grants {
	struct grantfile file;
	int		 whole;		/* the earlier daemon's file was read,
					   every record whole */
	char		 why[160];	/* else why not */
	uint64_t	 alive_ms;	/* the earlier daemon's last sign of
					   life (ms since boot) */
	int64_t		 alive_timer;	/* ours, told every second */
	uint64_t	*granted;	/* a record being made, per device */
	uint64_t	*lease;
	uint64_t	*context;
};

/*
 * Read what the earlier daemon granted (a's devices and configuration
 * known, no connection accepted yet) and start recording. 0, or -1 when
 * out of memory (logged); a file that cannot be made is logged, and
 * nothing is recorded.
 */
int	grantrec_start(struct arbiter *a);

/* The ledger's watch (ledger.h): lc's record follows its charges. */
void	grantrec_watch(void *arg, struct ledger_client *lc, int gone);

/*
 * Write lc's record now (a slot taken if it has none); lc departing, its
 * kept grants follow it (granted_follow).
 */
void	grantrec_put(struct arbiter *a, struct ledger_client *lc);
/* Write departing lc's figures into its kept grants' record, slot (+ 1). */
void	grantrec_put_kept(struct arbiter *a, struct ledger_client *lc,
	    uint32_t slot);

/* Empty the record in slot (+ 1; 0: none), unless the daemon stops. */
void	grantrec_forget(struct arbiter *a, uint32_t slot);

/*
 * lc, a process older than this daemon with no record here, whose word
 * is weighed by today's rules: said in an event, why. Returns 1 when the
 * earlier daemon's file was read whole (lc never registered with it nor
 * was judged without the shim: no daemon can have left it out to host),
 * 0 when the records could not be read.
 */
int	grantrec_unrecorded(struct arbiter *a, const struct ledger_client *lc);

/* Stop recording; the file stays for the next daemon. */
void	grantrec_free(struct arbiter *a);

#endif
