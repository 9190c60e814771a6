/*
 * Inside the daemon client: not for the hooks, which see only client.h.
 * The state that shim/client*.c share, who may touch it and under which
 * lock, and the functions one part of the client offers the others.
 */
#ifndef GF_SHIM_CLIENT_INT_H
#define GF_SHIM_CLIENT_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gpufrac/proto.h"
#include "shim.h"

#define CLIENT_TIMEOUT_MS	5000	/* a reply, or a send that cannot go */
#define CLIENT_REFUSALS_MAX	8	/* driver refusals asked again */
#define CLIENT_RETRY_MIN_MS	100	/* reconnection: first retry ... */
#define CLIENT_RETRY_MAX_MS	500	/* ... backing off to this */
#define CLIENT_QUIET_MS		10	/* the watcher leaves callers reading */
#define CLIENT_WHY_LEN		(GF_ERRMSG_LEN + 80)

struct client_device {
	int		uuid_known;
	uint8_t		uuid[GF_UUID_LEN];
	int		in_use;		/* opened on every new connection */
	unsigned	open_gen;	/* connection its DEVICE_OPEN went to */
	int		have_limit;	/* limit came from the daemon */
	uint64_t	limit;		/* the daemon's last word on the limit */
	int		have_capacity;
	uint64_t	capacity;	/* shareable bytes, from DEVICE_INFO */
	uint64_t	real_total;	/* the driver's total; 0: not known */
	uint64_t	pending;	/* reserved, not yet committed or rolled back */
	uint64_t	overhead;	/* charged by the daemon for our context */
	uint64_t	taken;		/* of min(limit, capacity), what others
					   hold (DEVICE_INFO): bounds the view */
	int		said_uuid;
	int		said_refused;
	int		said_total;
};

struct client_call;			/* client_conn.c */

/*
 * The client lock serialises the state below and every send on the
 * connection; nobody holds it while waiting for a reply (see "calls").
 * client_fd is closed only while nobody reads it: by the watcher thread
 * once it watches it, or by whoever made it if the handshake fails, or by
 * a fork child; others only shut it down, which wakes every reader.
 *
 * The free lock is held across the driver's free and the FREE message,
 * and by a commit: see client_free.
 *
 * Lock order: free lock, client lock, the allocation table's lock.
 */
extern pthread_mutex_t client_lock;
extern pthread_mutex_t client_free_lock;
/*
 * The rejoin lock: held by a reconnection from connect to its HELLO's
 * answer, and by a restore with no daemon, so that a new daemon never
 * reads the page's mark (activity.h) while this side changes it alone.
 * Taken before the client lock.
 */
extern pthread_mutex_t client_rejoin_lock;
extern pthread_condattr_t client_condattr;	/* CLOCK_MONOTONIC */
extern int client_fd;
extern int client_up;			/* requests go to the daemon */
extern unsigned client_gen;		/* bumped by every connection */
extern uint32_t client_seq;		/* atomic: HELLO is sent unlocked */
extern int client_tried;		/* the first attempt has been made */
extern int client_monitor_running;
extern int client_said_unreachable;
extern int client_shut_out;		/* atomic: the daemon refused us */
extern struct client_device client_devs[SHIM_MAX_DEVICES];
extern struct client_call *client_calls; /* waiting for their replies */
extern int client_reading;		/* the reader token is taken */
extern int client_watcher_waits;	/* for the token, on client_token_cv */
extern pthread_cond_t client_token_cv;

/*
 * Calls: requests and their replies on the shared connection.
 *
 * A caller registers a slot (struct client_call) and sends its request
 * under the client lock; whichever thread reads the reply fills the slot.
 * One thread at a time reads the socket, the holder of the reader token:
 * a caller whose reply has not come takes the token if it is free and
 * waits in poll() for its own reply, handing others theirs on the way
 * (client_lead); while another holds it, the caller sleeps on its slot's
 * condition variable. Freeing the token wakes the callers still waiting,
 * and one of them takes it over (leader/follower). The watcher thread
 * reads too, without blocking, when the socket is readable and the token
 * is free: so what the daemon says unasked is read even when the process
 * asks nothing, and never a reply from under its caller. A lone caller
 * reads its reply itself, as cheaply as a plain exchange.
 *
 * Every reply comes within 5 s, except that WAIT (the daemon queued a
 * RESERVE) extends that RESERVE's deadline to WAIT's timeout plus 5 s.
 * A deadline missed, a packet that fails proto_check, or a closed socket
 * is a lost connection.
 */

/* client_conn.c: packets, the connection's state and loss, calls. */
int64_t	client_now_ms(void);		/* CLOCK_MONOTONIC */
/* Wait on cv (made with client_condattr) until deadline; lock held. */
void	client_wait_until(pthread_cond_t *cv, int64_t deadline);
int	client_send(int fd, uint16_t type, const void *payload, uint32_t *seqp,
	    char *why, size_t whylen);
int	client_recv(int fd, struct gf_msg *m, char *why, size_t whylen);
void	client_unexpected(const struct gf_msg *m, uint16_t request, char *why,
	    size_t whylen);
int	client_exchange(int fd, uint16_t type, const void *payload, int passfd,
	    struct gf_msg *reply, int locked, char *why, size_t whylen);
void	client_say_unreachable(const char *why);
void	client_lost(const char *why);
int	client_send_commit(int fd, int dev, uint64_t ptr, uint64_t reserved,
	    uint64_t size, uint32_t kind, char *why, size_t whylen);
void	client_tell_commit(int dev, uint64_t ptr, uint64_t reserved,
	    uint64_t size, uint32_t kind);
void	client_tell_free(uint64_t ptr);
/* A context's end gave back count allocations of bytes on dev. */
void	client_tell_ctx_end(int dev, uint64_t bytes, size_t count);
void	client_dispatch(const struct gf_msg *m);
void	client_token_free(void);
int	client_call(uint16_t type, int dev, const void *payload,
	    struct gf_msg *reply, unsigned *gen);

/* client_device.c: per-device state, opening devices. */
int	client_device_valid(int dev);
uint64_t client_device_limit(int dev);
void	client_device_note(int dev, const struct gf_msg *m);
void	client_unsolicited(const struct gf_msg *m);
int	client_device_open_new(int fd, unsigned gen, int dev, char *why,
	    size_t whylen);
void	client_device_open_live(int dev);
int	client_device_prepare(int dev);
int	client_device_by_uuid(const uint8_t uuid[GF_UUID_LEN]);

/* client.c: the layer above, as client_mover_set gave it. */
void	client_move(uint32_t direction, uint32_t id);

/* client_connect.c: connecting, registering a new connection. */
void	client_start(void);
int	client_reconnect(void);

/*
 * client_rejoin.c: a lost daemon waited for. Once the process has
 * registered (client_seen), a request while the connection is down
 * waits for the watcher's reconnection, GPUFRAC_REJOIN_TIMEOUT at most,
 * instead of taking what no daemon granted. Lock held throughout.
 */
extern int client_seen;			/* registered at least once */
void	client_rejoin_init(void);	/* at start, and in a fork child */
/* A connection was registered: wake the waiters. */
void	client_rejoined(void);
/* An attempt failed (refused, maybe): waiters look again. Unlocked. */
void	client_rejoin_failed(void);
/*
 * Wait until a connection is up or the daemon refuses us (0), or until
 * *deadline (set now + the bound if 0) passes, said once (-1).
 */
int	client_rejoin_wait(int64_t *deadline);

/* client_watcher.c: the watcher thread. */
void	client_monitor_start(void);
extern pid_t client_watcher_tid;	/* its thread id, once it runs */

/*
 * client_stall.c: the stall thread, started by the watcher once the
 * activity page is shared; a fork child has none until it is started
 * again.
 */
void	client_stall_start(void);
extern int client_stall_running;

#endif
