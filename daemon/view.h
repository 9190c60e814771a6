/*
 * What a client is shown of a device (DESIGN.md §3, issue 25): DEVICE_INFO,
 * its limit and the device's capacity, and what the others hold of them
 * (taken), from which its shim shows as free, without asking, what a
 * request of its own may take at once.
 *
 * It is told in reply to DEVICE_OPEN, and again, unasked (seq 0):
 *  - when its limit, the capacity or its context memory changes;
 *  - when taken moves by more than 1/VIEW_SLACK of min(limit, capacity)
 *    (a group-mate's or another process's big allocation or free), as
 *    soon as the loop turns after the message that moved it;
 *  - when taken moves at all, within VIEW_PERIOD_MS: what no message
 *    tells the daemon (a lease drawn from, memory foreign to gpufrac, a
 *    waiter served, a process gone) is looked at that often.
 */
#ifndef GF_DAEMON_VIEW_H
#define GF_DAEMON_VIEW_H

#include <stddef.h>

#include "gpufrac/proto.h"

#define VIEW_PERIOD_MS	1000
#define VIEW_SLACK	64

struct arbiter;
struct conn;
struct ledger_client;

/* DEVICE_INFO for lc on dev, now its last word. */
void	view_info(struct arbiter *a, struct ledger_client *lc, size_t dev,
	    struct gf_device_info *info);

/*
 * Send each client DEVICE_INFO (seq 0) for every open device whose limit,
 * capacity or context memory is no longer what it was last told, or whose
 * taken moved by more than the slack. A connection that cannot take it is
 * closed, except self (the one whose message is being handled, or NULL),
 * which its handler closes.
 */
void	view_notify(struct arbiter *a, struct conn *self);

/* Charges moved (a message said so): look once the loop turns. */
void	view_moved(struct arbiter *a);

void	view_free(struct arbiter *a);

#endif
