/*
 * What the daemon does with each message: the shim's conversation (HELLO,
 * DEVICE_OPEN, RESERVE, COMMIT, ROLLBACK, FREE) against the ledger, the
 * queries (STATUS, PS, ALLOCS) from anyone, and admin commands (RELOAD)
 * from root and admin_group. Replies go to the connection's output queue
 * (conn_send).
 */
#ifndef GF_DAEMON_DISPATCH_H
#define GF_DAEMON_DISPATCH_H

#include <stddef.h>

#include "gpufrac/proto.h"

struct arbiter;
struct conn;

/*
 * Handle one valid packet (proto_check passed) from c. Returns 0, or -1
 * with a one-line reason in why when the connection must be closed: a
 * message invalid in its state (a state error is first answered with
 * ERROR GF_ERR_STATE), a bad field, or a failed send.
 */
int	dispatch_msg(struct arbiter *a, struct conn *c, const struct gf_msg *m,
	    char *why, size_t whylen);

/*
 * After a reload: send each client an unsolicited DEVICE_INFO (seq 0) for
 * every open device whose limit or capacity is no longer what it was last
 * told. A connection that cannot take it is closed, except self (the one
 * whose message is being handled, or NULL), which its handler closes.
 */
void	dispatch_limits_notify(struct arbiter *a, struct conn *self);

/*
 * c is closing: it stops following events, its waiters end, and its
 * client leaves the ledger now or, if its process has not exited yet,
 * once it has (depart.h; its preemption goes on meanwhile). c->client is
 * NULL afterwards. Returns 1 when the client's charge waits for the exit,
 * else 0. The caller serves the wait queue once c is gone (resolve_serve).
 */
int	dispatch_conn_closing(struct arbiter *a, struct conn *c);

#endif
