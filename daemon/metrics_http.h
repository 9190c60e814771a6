/*
 * The metrics' HTTP server: libmicrohttpd driven by the daemon's own event
 * loop (no thread of its own). Its epoll descriptor is watched by the loop
 * and MHD_run is called when it is readable, or when MHD's next timeout
 * comes; each request is answered on the loop's thread, so rendering may
 * read the ledger. Sockets are non-blocking, connections are few
 * (HTTP_CONN_MAX, HTTP_PER_IP_MAX) and idle ones are closed after
 * HTTP_TIMEOUT_S: a slow or hostile client costs a little memory, never
 * the loop's time.
 *
 * GET or HEAD /metrics: the text render returns; / a line pointing there;
 * anything else 404, a method other than GET or HEAD 405.
 */
#ifndef GF_DAEMON_METRICS_HTTP_H
#define GF_DAEMON_METRICS_HTTP_H

#include <stddef.h>

struct event_loop;
struct metrics_http;

/*
 * The exposition text now (malloc'd, taken over by the server), its length
 * in *len; NULL if there is no memory for it (answered 500).
 */
typedef char	*metrics_render_fn(void *arg, size_t *len);

/*
 * Listen on listen ("ADDR:PORT", metrics_addr.h) and serve from loop.
 * Returns the server, or NULL with one line in err (errlen bytes).
 */
struct metrics_http *metrics_http_start(struct event_loop *loop,
	    const char *listen, metrics_render_fn *render, void *arg,
	    char *err, size_t errlen);

/* Where it listens: the text it was started with. */
const char *metrics_http_listen(const struct metrics_http *h);

/* Close its connections and its socket, and free it (NULL: nothing). */
void	metrics_http_stop(struct metrics_http *h);

#endif
