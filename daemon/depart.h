/*
 * Clients whose connection has closed but whose process has not exited
 * yet. A process's socket closes during its exit (exit_files) a little
 * before the driver releases its device memory, so its charge is kept
 * until the process has exited (a pidfd in the event loop), and only then
 * returned and the wait queue served.
 */
#ifndef GF_DAEMON_DEPART_H
#define GF_DAEMON_DEPART_H

#include <stdint.h>
#include <sys/queue.h>

struct arbiter;
struct ledger_client;

struct depart {
	TAILQ_ENTRY(depart) entry;
	struct arbiter	*a;
	struct ledger_client *lc;	/* lc->departing is set */
	int		 pidfd;
};

TAILQ_HEAD(departs, depart);

/*
 * lc's connection has closed. Keep lc, its charge and the preemption of
 * it under way, until its process has exited; or, when it has exited
 * already, holds nothing, cannot be watched or the daemon is stopping,
 * drop it now. Returns 1 when kept, 0 when dropped (the caller serves
 * the wait queue either way).
 */
int	depart_begin(struct arbiter *a, struct ledger_client *lc);

/*
 * A new client of pid says HELLO: drop every departing record of pid now
 * (the process lives and re-registers what it holds). Returns how many
 * were dropped; the caller serves the wait queue if any.
 */
int	depart_cancel(struct arbiter *a, uint32_t pid);

/* Drop every departing record at once (shutdown). */
void	depart_free(struct arbiter *a);

#endif
