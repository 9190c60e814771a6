/*
 * The shim's conversation (conversation.c): its handlers and a client's
 * connection closing (what it is told unasked: view.h).
 */
#ifndef GF_DAEMON_CONVERSATION_H
#define GF_DAEMON_CONVERSATION_H

struct arbiter;
struct conn;
struct dispatch;

/* Add the handlers of HELLO ... LEASE_RESTORE, SWAP_IN. 0 or -1. */
int	conversation_register(struct dispatch *d);

/*
 * c is closing: its waiters end, and its client leaves the ledger now or,
 * if its process has not exited yet, once it has (depart.h; its
 * preemption goes on meanwhile). c->client is NULL afterwards. Returns 1
 * when the client's charge waits for the exit, else 0.
 */
int	conversation_closing(struct arbiter *a, struct conn *c);

#endif
