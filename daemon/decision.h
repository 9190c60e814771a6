/*
 * The decision log's entries about a client: its pid, its group's name
 * and a device's UUID, read off the ledger for events.c. A room of its
 * own, below every policy file that records a decision and above the
 * ledger and the log, so that none of them has to call the arbiter.
 */
#ifndef GF_DAEMON_DECISION_H
#define GF_DAEMON_DECISION_H

#include <stdint.h>

struct arbiter;
struct ledger_client;

/*
 * Record a decision about client lc (NULL: none) on device dev (-1: none)
 * in the decision log, which logs it and tells the followers.
 */
void	decision_event(struct arbiter *a, uint32_t kind,
	    const struct ledger_client *lc, int dev, uint64_t bytes,
	    const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* The same for a whole process (no device), with a duration (a swap). */
void	decision_event_timed(struct arbiter *a, uint32_t kind,
	    const struct ledger_client *lc, uint64_t bytes,
	    uint32_t duration_ms, const char *fmt, ...)
	    __attribute__((format(printf, 6, 7)));

#endif
