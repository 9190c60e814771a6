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
 * A process that ran before this daemon started has the record its
 * earlier daemon left in the grants' file (grantrec.h), held to it as
 * to one of this daemon's: the earlier daemon recorded every process that
 * registered with it (granted nothing or more) and every one it judged
 * to hold memory without the shim or whose word it refused (granted
 * nothing, and what it holds is an unshimmed one's). With no record, it
 * never asked that daemon for anything nor was seen without the shim:
 * it took what it holds while no daemon answered (a shim that never
 * registered decides alone then), and its word is weighed by today's
 * rules (trust.h), on its later connections too; so is everyone's when
 * the file could not be read whole.
 */
#ifndef GF_DAEMON_GRANTED_H
#define GF_DAEMON_GRANTED_H

#include <stddef.h>
#include <stdint.h>

struct arbiter;
struct grant_rec;
struct ledger_client;

/* One process's grants, its connection lost. */
struct granted {
	uint32_t	 pid;
	uint64_t	 start_ms;	/* its start (pidfd_start_ms) */
	uint64_t	*bytes;		/* per device; malloc'd, ours */
	uint64_t	*context;	/* per device, its context record
					   (granted_context); in bytes' block */
	int		 regrant_only;	/* the lost connection's: an earlier
					   daemon's client stays one */
	int		 out_by_copy;	/* left out to host by the copy
					   engine: its page is believed */
	uint32_t	 slot;		/* its record in the grants' file, +1,
					   until a connection takes it; 0 */
	int		 nothing;	/* granted nothing: its word refused,
					   or judged without the shim; what
					   it holds is an unshimmed one's */
};

/*
 * All lc was granted on dev: its charge but its context record, and
 * what an earlier connection (or daemon) granted that it has not
 * re-registered yet (a connection lost half-way keeps it).
 */
uint64_t granted_owed(const struct ledger_client *lc, size_t dev);

/*
 * What the daemon knows of lc's context on dev: its record, or the one
 * its earlier connection (or daemon) recorded until it opens dev, |
 * GRANT_CONTEXT_KNOWN; 0 when it knows nothing (dev not opened). Out to
 * host, NVML shows nothing of it: a restarted daemon takes this, never
 * the process's page.
 */
uint64_t granted_context(const struct ledger_client *lc, size_t dev);

/*
 * Whether lc's page, which says where the copy engine's memory is, is
 * believed: the copy engine is moving it (out or in) or has it out, a
 * move in was taken as in before it ended (lc->taken_in: it may yet
 * fail), or an earlier daemon's record says so (lc->page_out).
 */
int	granted_out_by_copy(const struct ledger_client *lc);

/*
 * lc, departing, changed since its connection closed (a move that ended
 * after, a lease taken back): its kept grants, and their record in the
 * grants' file, follow, so that its next connection and the next daemon
 * believe its page where its memory is out, and only there.
 */
void	granted_follow(struct arbiter *a, struct ledger_client *lc);

/*
 * What an earlier daemon granted a process that still lives (its record
 * in the grants' file): kept as a lost connection's. 0, or -1 (ENOMEM).
 */
int	granted_add(struct arbiter *a, const struct grant_rec *r);

/*
 * lc's connection closed while its process (started at start_ms) lives:
 * keep what lc was granted, replacing an earlier record of the process,
 * and with it lc's record in the grants' file (lc->grant_slot then 0):
 * a daemon restarted while the process is away finds it there, even once
 * lc, holding nothing charged, is dropped. lc refused (trust_refuse):
 * nothing, and its record goes.
 */
void	granted_keep(struct arbiter *a, struct ledger_client *lc,
	    uint64_t start_ms);

/*
 * lc, a new connection's client of the process started at start_ms,
 * said HELLO: give it what its earlier connection (or daemon) granted
 * (usage.granted, usage.context_known) and that record, and set whether its word past that is
 * never believed (lc->regrant_only: a process of this daemon's time, one
 * whose start cannot be read, one the grants' file says was granted
 * nothing) and whether its page may say it is out by copy
 * (lc->page_out).
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

/* Whether the grants of pid (started at start_ms) are kept here. */
int	granted_kept(struct arbiter *a, uint32_t pid, uint64_t start_ms);

/* Forget the records of processes that have exited (at each look). */
void	granted_prune(struct arbiter *a);

void	granted_free(struct arbiter *a);

#endif
