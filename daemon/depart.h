/*
 * Clients whose connection has closed but whose memory the driver has not
 * given back yet. A process's socket closes during its exit (exit_files)
 * before the driver releases its device memory, and on a real GPU the
 * driver gives it back only some time after the process is gone (issue
 * 20): the charge is kept until the process has exited (a pidfd in the
 * event loop), then, where NVML can tell (driver.h), until the driver has
 * the memory back, and only then returned and the wait queue served.
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
	int		 pidfd;		/* -1 once it has exited */
	uint64_t	 exit_ms;	/* when it was seen exited (monotonic);
					   lc->state is GF_STATE_RELEASING */
	int		 held;		/* driver.c's: the last look saw the
					   driver still holding its memory */
};

TAILQ_HEAD(departs, depart);

/*
 * lc's connection has closed; pidfd is its process's, taken at accept
 * (-1: none), and is the departure's now (closed when dropped). Keep lc,
 * its charge and the preemption of it under way, until that process has
 * exited (whoever keeps its socket: a connection closes as its process
 * exits, control.c); or, when it holds nothing, cannot be watched or the
 * daemon is stopping, drop it now. Returns 1 when kept, 0 when dropped
 * (the caller serves the wait queue either way).
 */
int	depart_begin(struct arbiter *a, struct ledger_client *lc, int pidfd);

/*
 * A new client of pid says HELLO: drop every departing record of pid whose
 * process has not exited (its pidfd says so: a live process holds its pid,
 * so it is the same one, and re-registers what it holds; one that has
 * exited is another process's, and stays). Returns how many were dropped;
 * the caller serves the wait queue if any.
 */
int	depart_cancel(struct arbiter *a, uint32_t pid);

/*
 * d's process has exited and the driver has its memory back (kept 0), or
 * release_timeout passed first (kept 1): record the event and return its
 * charge. The caller serves the wait queue.
 */
void	depart_done(struct arbiter *a, struct depart *d, int kept);

/* Drop every departing record at once (shutdown). */
void	depart_free(struct arbiter *a);

#endif
