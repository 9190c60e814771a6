/*
 * The processes the daemon has reason to expect to connect (issue 38, B):
 * one whose connection it has just lost, and one that was running
 * before the daemon started and that it finds holding memory in its
 * first EXPECT_GRACE_MS (an earlier daemon's client coming back). Only these are given time before their memory may cost them
 * their life (unshimmed.h): nothing a process says or names about itself
 * buys any. A process has one grace in its life, however often it is
 * seen, missed or lost: it is known by its pid and start time, and its
 * record stays while it lives.
 */
#ifndef GF_DAEMON_EXPECT_H
#define GF_DAEMON_EXPECT_H

#include <stddef.h>
#include <stdint.h>

/* How long such a process has to connect. */
#define EXPECT_GRACE_MS	5000

struct arbiter;

/* One process given its grace. */
struct expect {
	uint32_t	 pid;
	uint64_t	 start_ms;	/* its start (pidfd_start_ms) */
	uint64_t	 until_ms;	/* its grace ends (monotonic) */
};

/*
 * pid's connection closed while its process (started at start_ms) lives:
 * it has EXPECT_GRACE_MS from now, unless it had its grace already.
 */
void	expect_lost(struct arbiter *a, uint32_t pid, uint64_t start_ms);

/*
 * When pid's grace ends (started at start_ms, first seen holding memory
 * now): its record's, or a new one in the daemon's first
 * EXPECT_GRACE_MS for a process older than the daemon, else 0 (none:
 * it is counted and judged at once).
 */
uint64_t expect_until(struct arbiter *a, uint32_t pid, uint64_t start_ms);

/* Forget the records of processes that have exited (at each look). */
void	expect_prune(struct arbiter *a);

void	expect_free(struct arbiter *a);

#endif
