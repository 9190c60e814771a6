/*
 * What the daemon does with each message: the shim's conversation (HELLO,
 * DEVICE_OPEN, RESERVE, COMMIT, ROLLBACK, FREE) against the ledger, and the
 * queries (STATUS, PS, ALLOCS) from anyone. Replies go to the connection's
 * output queue (conn_send).
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

#endif
