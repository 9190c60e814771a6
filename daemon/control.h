/*
 * The control socket: the SOCK_SEQPACKET listener, one struct conn per
 * accepted peer (its kernel-given identity, its output queue), reading
 * packets and closing misbehaving peers. It knows nothing of messages,
 * clients or the ledger: what a packet means, and what a closing
 * connection leaves behind, are the layer above's (struct control_ops).
 */
#ifndef GF_DAEMON_CONTROL_H
#define GF_DAEMON_CONTROL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "config.h"
#include "gpufrac/proto.h"

#define CONTROL_OUTQ_MAX	(32u << 20)	/* a peer that lags more is dropped */

struct conn;
struct ucred;
struct event_loop;
struct gf_group_rule;
struct ledger_client;

/* What the layer above does with connections, given to control_init. */
struct control_ops {
	/*
	 * A valid packet (proto_check passed) from c: 0, or -1 with a
	 * one-line reason in why when c must be closed.
	 */
	int	(*packet)(void *arg, struct conn *c, const struct gf_msg *m,
		    char *why, size_t whylen);
	/*
	 * c is closing: forget it, and free what the layer above hung on it
	 * (c->client, c->rules are NULL afterwards). *held: the bytes its
	 * client held (0: none). Returns 1 when they are returned only once
	 * its process has exited, else 0.
	 */
	int	(*closing)(void *arg, struct conn *c, uint64_t *held);
	/* A connection has gone: what it held may be what another needs. */
	void	(*closed)(void *arg);
	/*
	 * A connection was refused or closed for one of the limits below;
	 * why is one line naming the peer (an event, say).
	 */
	void	(*limited)(void *arg, const char *why);
	/*
	 * Whether the peer of fd (cred, its SO_PEERCRED) is one a reserve
	 * is kept for: root or admin_group. Asked only past max_total.
	 */
	int	(*privileged)(void *arg, int fd, const struct ucred *cred);
	void	*arg;
};

/*
 * A long reply, made a page at a time as the peer reads (conn_pull):
 * send at most a page with conn_send; return 1 while more remains, 0 when
 * done, -1 when c must close (c->err says why).
 */
typedef int	conn_pull_fn(struct conn *c, void *arg);

struct conn {
	TAILQ_ENTRY(conn) entry;
	struct control	*ctl;
	int		 fd;
	uint32_t	 pid;		/* SO_PEERCRED, at accept */
	uint32_t	 uid;
	uint32_t	 gid;
	int		 pidfd;		/* its process from accept on (pidfd.h),
					   -1 if none could be had; the layer
					   above may take it as c closes */
	char		*cgroup;	/* /proc/PID/cgroup, "" if unknown */
	int		 plain;		/* counts in control.max_total */
	/* the layers above's: control only keeps them with the peer */
	struct ledger_client *client;	/* after HELLO, else NULL */
	uint8_t		*out;		/* queued packets, back to back */
	size_t		 out_head;	/* first unsent byte */
	size_t		 out_len;	/* end of the queued bytes */
	size_t		 out_cap;
	size_t		 out_counted;	/* of it, in control.outq_total */
	uint64_t	 out_since;	/* when the queue last stopped being
					   empty (ms), or 0: empty */
	int		 dropped;	/* its queue dropped for the global cap */
	conn_pull_fn	*pull;		/* a long reply under way, or NULL */
	void		*pull_arg;
	void		(*pull_free)(void *);
	size_t		 pull_bytes;	/* what it holds, in outq_total */
	char		 err[96];	/* why the last conn_send failed */
	int		 gone;		/* the peer went away: no error */
	int64_t		 close_timer;	/* control_close_later's, or 0 */
	char		 close_why[96];
	int		 rx_fd;		/* passed with the packet being handled,
					   -1; a handler may take it */
	struct gf_group_rule *rules;	/* GROUP_RULEs for the next */
	size_t		 nrules;	/* GROUP_SET (malloc'd), or NULL */
	int		 following;	/* EVENTS_REQ with follow: events go */
	uint32_t	 follow_seq;	/* out with this seq */
};

TAILQ_HEAD(conns, conn);

/* A kind of refusal said as a warning at most once a minute. */
struct control_quiet {
	uint64_t	 until;		/* not said again until (ms), or 0 */
	uint64_t	 quieted;	/* not said since */
};

struct control {
	int		 fd;		/* the listener, -1 if none */
	char		 path[CONFIG_SOCKET_LEN];
	struct event_loop *loop;
	const struct control_ops *ops;
	struct conns	 conns;
	size_t		 nconns;
	int64_t		 pause_timer;	/* accept paused (fd exhaustion) */
	uint64_t	 accepted;	/* connections ever accepted */
	uint64_t	 errors;	/* connections closed for an error: a
					   bad or refused message, a failed
					   send or receive */
	uint32_t	 max_per_uid;	/* max_connections_per_uid; 0: none */
	uint32_t	 max_total;	/* connections of all but root and
					   admin_group (conncaps.h);
					   UINT32_MAX: none */
	uint32_t	 nplain;	/* of them, open */
	int		 spare;		/* a descriptor kept to refuse with
					   when none is left, or -1 */
	uint64_t	 outq_limit;	/* output_queue_limit; 0: none */
	uint64_t	 outq_total;	/* queued on every connection, and held
					   by long replies under way */
	uint64_t	 refused;	/* connections refused: max_per_uid
					   (the others are events only) */
	uint64_t	 dropped;	/* closed for outq_limit */
	struct control_quiet quiet_refused, quiet_dropped, quiet_total,
			 quiet_nofd;
};

void	control_init(struct control *ctl, struct event_loop *loop,
	    const struct control_ops *ops);

/*
 * Listen on path with mode (creating its directory, 0755, if missing).
 * Returns 0, or -1 after logging why.
 */
int	control_listen(struct control *ctl, const char *path, unsigned mode);
/* Change the socket's permission bits; logs a failure. */
void	control_chmod(struct control *ctl, unsigned mode);
/* Close every connection (their clients leave, the departing ones too)
 * and the listener, and remove the socket file. */
void	control_shutdown(struct control *ctl);

/*
 * Adopt a connected socket: read the peer's credentials and cgroup and
 * watch it. Returns the connection, or NULL (fd closed, logged).
 */
struct conn *control_adopt(struct control *ctl, int fd);

/*
 * Close a connection, telling the layer above (ops->closing, then
 * ops->closed). With why, one log line names the peer and the reason;
 * without, the peer simply left. Whatever is queued is sent if the socket
 * takes it now, never waited for.
 */
void	control_close(struct conn *c, const char *why);

/*
 * Close c from the event loop's next round, not now: for code that may run
 * inside a handler of c or of the wait queue (a grant or an event whose
 * send failed). Nothing more is read from c meanwhile. why as for
 * control_close (NULL: it left).
 */
void	control_close_later(struct conn *c, const char *why);

/*
 * Send a message to the peer: at once if nothing is queued and the socket
 * takes it, else queued and sent as the socket drains. Returns 0, or -1
 * with c->err saying why (the peer is gone, or its queue passed
 * CONTROL_OUTQ_MAX): the caller then closes the connection.
 */
int	conn_send(struct conn *c, uint16_t type, uint32_t seq,
	    const void *payload);

/*
 * Make the rest of a reply with fn, a page each time c's queue has drained
 * (the event loop turns in between: no turn makes all of a long reply).
 * arg is freed with free_fn when it is done or c closes; bytes, what arg
 * holds, counts against outq_limit as queued output does. Returns 0, or -1
 * with c->err set (another long reply under way, or bytes do not fit the
 * limit now); on -1 the caller keeps arg.
 */
int	conn_pull(struct conn *c, conn_pull_fn *fn, void *arg,
	    void (*free_fn)(void *), size_t bytes);

/*
 * conn_send for a handler: on failure, why (whylen bytes) says why the
 * connection must go. conn_reply_error sends ERROR code with msg (cut to
 * fit the message). Both return 0 or -1.
 */
int	conn_reply(struct conn *c, uint16_t type, uint32_t seq,
	    const void *payload, char *why, size_t whylen);
int	conn_reply_error(struct conn *c, uint32_t seq, uint32_t code,
	    const char *msg, char *why, size_t whylen);

#endif
