/*
 * What the daemon granted a process whose connection it lost (issue 40,
 * A and C): per device, everything charged to it but its context record
 * (its allocations, its lease, its reserves), kept by pid and start time
 * while the process lives. The process's next connection takes it back,
 * and its re-registration (a charge no RESERVE of this connection
 * covers: a COMMIT beyond its reserve, a LEASE_RESTORE's drawn part) is
 * believed up to it and no further (trust.c): what it has beyond was
 * taken without asking, and its connection is refused, so that its
 * memory is judged as any unshimmed process's (unshimmed.h).
 *
 * A process that ran before this daemon started, with no record here,
 * was an earlier daemon's client: its word is weighed by today's rules
 * (trust.h), on its later connections too (a connection lost before it
 * had re-registered), until the daemon keeps its ledger across its own
 * restart.
 */
#ifndef GF_DAEMON_GRANTED_H
#define GF_DAEMON_GRANTED_H

#include <stddef.h>
#include <stdint.h>

struct arbiter;
struct ledger_client;

/* One process's grants, its connection lost. */
struct granted {
	uint32_t	 pid;
	uint64_t	 start_ms;	/* its start (pidfd_start_ms) */
	uint64_t	*bytes;		/* per device; malloc'd, ours */
	int		 regrant_only;	/* the lost connection's: an earlier
					   daemon's client stays one */
};

/*
 * lc's connection closed while its process (started at start_ms) lives:
 * keep what lc was granted, replacing an earlier record of the process.
 */
void	granted_keep(struct arbiter *a, const struct ledger_client *lc,
	    uint64_t start_ms);

/*
 * lc, a new connection's client of the process started at start_ms,
 * said HELLO: give it what its earlier connection was granted
 * (usage.granted), and set whether its word past that is never believed
 * (lc->regrant_only: a process of this daemon's time, or one whose start
 * cannot be read).
 */
void	granted_take(struct arbiter *a, struct ledger_client *lc,
	    uint64_t start_ms);

/*
 * Whether NVML's bytes on dev for lc's process, its connection lost, are
 * no more than its kept grant there and its context: its kept charge then
 * stands however long it takes to connect again, never counted as an
 * unshimmed process's (unshimmed.h); more, and it is one.
 */
int	granted_holds(struct arbiter *a, const struct ledger_client *lc,
	    size_t dev, uint64_t bytes);

/* Forget the records of processes that have exited (at each look). */
void	granted_prune(struct arbiter *a);

void	granted_free(struct arbiter *a);

#endif
