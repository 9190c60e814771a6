/*
 * Message routing: which handler takes which message, in which state of
 * its connection. The handlers are the layers above's (conversation.c,
 * queries.c, adminctl.c), each adding its table at start; dispatch knows
 * none of them and nothing of what they do.
 */
#ifndef GF_DAEMON_DISPATCH_H
#define GF_DAEMON_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

#include "gpufrac/proto.h"

#define DISPATCH_MAX	32	/* handlers in all */

struct arbiter;
struct conn;

/* In which states of its connection a message is valid. */
enum {
	DISPATCH_ANY,		/* queries: before or after HELLO */
	DISPATCH_FRESH,		/* only before HELLO */
	DISPATCH_CLIENT,	/* only after HELLO */
};

/* A handler: 0, or -1 with a one-line reason in why when c must go. */
typedef int	dispatch_fn(struct arbiter *a, struct conn *c,
		    const struct gf_msg *m, char *why, size_t whylen);

struct dispatch_handler {
	uint16_t	 type;		/* GF_MSG_* */
	int		 state;		/* DISPATCH_* */
	dispatch_fn	*fn;
};

struct dispatch {
	const struct dispatch_handler *h[DISPATCH_MAX];
	size_t		 n;
};

/*
 * Add n handlers (kept by reference: a static table). A type handled
 * already, or no room, is a programming error: -1, logged.
 */
int	dispatch_add(struct dispatch *d, const struct dispatch_handler *h,
	    size_t n);

/*
 * Handle one valid packet (proto_check passed) from c. Returns 0, or -1
 * with a one-line reason in why when the connection must be closed: a
 * message no handler takes (one only the daemon sends), one invalid in
 * its state (first answered with ERROR GF_ERR_STATE), or the handler's.
 */
int	dispatch_msg(const struct dispatch *d, struct arbiter *a,
	    struct conn *c, const struct gf_msg *m, char *why, size_t whylen);

#endif
