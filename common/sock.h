/*
 * Unix SOCK_SEQPACKET helpers. Like redis's anet, they report errors to the
 * caller (a one-line message in err) instead of logging: the shim, the
 * daemon and the CLI each decide what to say and where.
 */
#ifndef GF_COMMON_SOCK_H
#define GF_COMMON_SOCK_H

#include <stddef.h>

#define SOCK_ERR_LEN	256

/* The socket path: GPUFRAC_SOCKET if set and non-empty, else the default. */
const char *sock_default_path(void);

/*
 * Connect to path, close-on-exec. Returns the fd, or -1 with a message such
 * as "cannot connect to '/run/gpufrac/gpufrac.sock': No such file or
 * directory" in err.
 */
int	sock_connect(const char *path, char *err, size_t errlen);

/*
 * sock_connect with a deadline: connect(2) on a Unix socket blocks while
 * the listener's backlog is full (a daemon stuck, or one a neighbour's
 * connections fill), so it gives up after timeout_ms (> 0) with "cannot
 * connect to 'PATH': no room within N ms (is gpufracd stuck?)" in err and
 * errno ETIMEDOUT. Sends on the returned socket, while it blocks, wait no
 * longer than timeout_ms either (SO_SNDTIMEO). Every client of the daemon
 * connects through this: the shim, gpufracctl, the OCI hook, the SPANK
 * plugin.
 */
int	sock_connect_within(const char *path, int timeout_ms, char *err,
	    size_t errlen);

/* Milliseconds on the monotonic clock, for deadlines. */
long long sock_now_ms(void);

/*
 * Bind and listen on path, close-on-exec and non-blocking, with the given
 * permission bits. A stale socket file (nobody accepting) is replaced; a live
 * one is an error. Returns the fd or -1 with err set.
 */
int	sock_listen(const char *path, unsigned mode, char *err, size_t errlen);

/*
 * One descriptor per peer: raise the soft limit on open files to the hard
 * one (a daemon of a thousand clients). A failure is logged.
 */
void	sock_fd_limit_raise(void);

#endif
