/*
 * The queries (queries.c): STATUS, PS, ALLOCS and EVENTS.
 */
#ifndef GF_DAEMON_QUERIES_H
#define GF_DAEMON_QUERIES_H

struct arbiter;
struct conn;
struct dispatch;

/* Add the handlers of STATUS_REQ, PS_REQ, ALLOCS_REQ, EVENTS_REQ. */
int	queries_register(struct dispatch *d);

/* c is closing: it follows the events no more. */
void	queries_conn_gone(struct arbiter *a, struct conn *c);

#endif
