/*
 * What unshimmed.c and unshimmed_kill.c share of a process without the
 * shim: the record kept besides its client.
 */
#ifndef GF_DAEMON_UNSHIMMED_INT_H
#define GF_DAEMON_UNSHIMMED_INT_H

#include <stddef.h>
#include <stdint.h>

#include "taken.h"

struct arbiter;
struct ledger_client;

struct unshim {
	struct arbiter	*a;
	struct ledger_client *lc;
	uint64_t	 grace_until;	/* not judged before (monotonic); 0:
					   no grace (expect.h) */
	int		 said;		/* its `unshimmed` event was recorded */
	char		 why[160];	/* what /proc showed (procid_why) */
	struct taken_layers *layers;	/* per device: its memory as the
					   looks saw it come (taken.h) */
};

/*
 * Kill on every device, where their groups say so, the processes past
 * their own limits, then those whose memory came last past their
 * group's (taken.h).
 */
void	unshimmed_enforce(struct arbiter *a);

#endif
