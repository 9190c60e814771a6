/*
 * How the layers are joined, once at start: the connections call up
 * through control_ops (a packet, a closing, a close), and the message
 * handlers of each part are added to dispatch's table. Nothing below
 * this file knows what is above it.
 */
#include <sys/socket.h>

#include "admin.h"
#include "adminctl.h"
#include "arbiter.h"
#include "control.h"
#include "conversation.h"
#include "decision.h"
#include "dispatch.h"
#include "ledger.h"
#include "queries.h"
#include "resolve.h"
#include "view.h"

static int
wire_packet(void *arg, struct conn *c, const struct gf_msg *m, char *why,
    size_t whylen)
{
	struct arbiter *a = arg;

	return dispatch_msg(&a->dispatch, a, c, m, why, whylen);
}

static int
wire_closing(void *arg, struct conn *c, uint64_t *held)
{
	struct arbiter *a = arg;

	*held = c->client != NULL ?
	    ledger_client_used(&a->ledger, c->client) : 0;
	queries_conn_gone(a, c);
	adminctl_conn_gone(c);
	return conversation_closing(a, c);
}

/* A connection refused or closed for a limit: an event of no client. */
static void
wire_limited(void *arg, const char *why)
{
	decision_event(arg, GF_EV_CONN_LIMIT, NULL, -1, 0, "%s", why);
}

/* Past the connection caps, root and admin_group still come in. */
static int
wire_privileged(void *arg, int fd, const struct ucred *cred)
{
	struct arbiter *a = arg;

	return admin_allowed(&a->conf, fd, (uint32_t)cred->pid,
	    (uint32_t)cred->uid, (uint32_t)cred->gid) == ADMIN_ALLOWED;
}

/* What a closed connection held may be what a waiter needs. */
static void
wire_closed(void *arg)
{
	resolve_serve(arg);
}

int
arbiter_wire(struct arbiter *a)
{
	a->control_ops.packet = wire_packet;
	a->control_ops.closing = wire_closing;
	a->control_ops.closed = wire_closed;
	a->control_ops.limited = wire_limited;
	a->control_ops.privileged = wire_privileged;
	a->control_ops.arg = a;
	a->tell_limits = view_notify;
	control_init(&a->control, a->loop, &a->control_ops);
	a->dispatch.n = 0;
	if (conversation_register(&a->dispatch) < 0 ||
	    queries_register(&a->dispatch) < 0 ||
	    adminctl_register(&a->dispatch) < 0)
		return -1;
	return 0;
}
