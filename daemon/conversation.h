/*
 * The shim's conversation (conversation.c): its handlers, the limits
 * pushed to clients, and a client's connection closing.
 */
#ifndef GF_DAEMON_CONVERSATION_H
#define GF_DAEMON_CONVERSATION_H

struct arbiter;
struct conn;
struct dispatch;

/* Add the handlers of HELLO ... LEASE_RESTORE, SWAP_IN. 0 or -1. */
int	conversation_register(struct dispatch *d);

/*
 * After a reload or a new measure of context memory: send each client an
 * unsolicited DEVICE_INFO (seq 0) for every open device whose limit,
 * capacity or context memory is no longer what it was last told. A
 * connection that cannot take it is closed, except self (the one whose
 * message is being handled, or NULL), which its handler closes.
 */
void	conversation_limits_notify(struct arbiter *a, struct conn *self);

/*
 * c is closing: its waiters end, and its client leaves the ledger now or,
 * if its process has not exited yet, once it has (depart.h; its
 * preemption goes on meanwhile). c->client is NULL afterwards. Returns 1
 * when the client's charge waits for the exit, else 0.
 */
int	conversation_closing(struct arbiter *a, struct conn *c);

#endif
