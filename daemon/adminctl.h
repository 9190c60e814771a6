/*
 * The administrators' commands (root and admin_group): RELOAD_REQ,
 * SWAP_REQ, run-time groups (GROUP_RULE, GROUP_SET, GROUP_RM) and one
 * process's limit (LIMIT_REQ), its connections closed (DISCONNECT_REQ), each handled as dispatch.h says: 0, or -1
 * with why when the connection must go.
 */
#ifndef GF_DAEMON_ADMINCTL_H
#define GF_DAEMON_ADMINCTL_H

struct conn;
struct dispatch;

/* Add the handlers of RELOAD_REQ ... DISCONNECT_REQ. 0 or -1. */
int	adminctl_register(struct dispatch *d);

/* c is closing: the GROUP_RULEs it sent for a GROUP_SET go. */
void	adminctl_conn_gone(struct conn *c);

#endif
