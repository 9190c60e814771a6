/*
 * libmicrohttpd in the daemon's event loop: MHD's epoll descriptor is one
 * more descriptor of the loop, MHD's timeout one more timer, and requests
 * are answered from MHD_run, on the loop's thread.
 */
#include <errno.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "event.h"
#include "log.h"
#include "metrics_addr.h"
#include "metrics_http.h"
#include "metrics_text.h"
#include "proto.h"

#define HTTP_CONN_MAX	32		/* connections at once */
#define HTTP_PER_IP_MAX	8		/* from one address */
#define HTTP_TIMEOUT_S	10		/* an idle connection is closed */
#define HTTP_POOL	(32u << 10)	/* per connection: headers and all */

struct metrics_http {
	struct MHD_Daemon *mhd;
	struct event_loop *loop;
	int		 epfd;		/* MHD's, watched by the loop */
	int64_t		 timer;		/* MHD's next timeout, or 0 */
	char		 listen[METRICS_LISTEN_LEN];
	metrics_render_fn *render;
	void		*arg;
};

static const char index_text[] =
    "gpufracd: the metrics are at /metrics\n";
static const char not_found_text[] = "not found: try /metrics\n";
static const char bad_method_text[] = "only GET and HEAD are served\n";
static const char no_memory_text[] = "out of memory\n";

/* MHD's own messages: a hostile client can cause many, so debug only. */
static void
http_log(void *arg, const char *fmt, va_list ap)
{
	char line[256];
	size_t n;

	(void)arg;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	log_debug("metrics server: %s", line);
}

/* Queue a response that takes body (freed by MHD when must_free). */
static enum MHD_Result
http_queue(struct MHD_Connection *conn, unsigned int status, char *body,
    size_t len, int must_free, const char *type)
{
	struct MHD_Response *resp;
	enum MHD_Result rc;

	resp = MHD_create_response_from_buffer(len, body, must_free ?
	    MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (resp == NULL) {
		if (must_free)
			free(body);
		return MHD_NO;
	}
	if (MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
	    type) == MHD_NO || (status == MHD_HTTP_METHOD_NOT_ALLOWED &&
	    MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW,
	    "GET, HEAD") == MHD_NO)) {
		MHD_destroy_response(resp);
		return MHD_NO;
	}
	rc = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return rc;
}

static enum MHD_Result
http_text(struct MHD_Connection *conn, unsigned int status, const char *text)
{
	return http_queue(conn, status, (char *)text, strlen(text), 0,
	    "text/plain; charset=utf-8");
}

static enum MHD_Result
http_request(void *arg, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload_data,
    size_t *upload_data_size, void **req)
{
	struct metrics_http *h = arg;
	size_t len;
	char *body;

	(void)version;
	(void)upload_data;
	(void)req;
	/* A body is never wanted: what came of it is dropped. */
	*upload_data_size = 0;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return http_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
		    bad_method_text);
	if (strcmp(url, "/") == 0)
		return http_text(conn, MHD_HTTP_OK, index_text);
	if (strcmp(url, "/metrics") != 0)
		return http_text(conn, MHD_HTTP_NOT_FOUND, not_found_text);
	if ((body = h->render(h->arg, &len)) == NULL)
		return http_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
		    no_memory_text);
	return http_queue(conn, MHD_HTTP_OK, body, len, 1,
	    METRICS_CONTENT_TYPE);
}

static void http_timer_fire(struct event_loop *, void *);

/* Let MHD work, then wake it again no later than it asks. */
static void
http_run(struct metrics_http *h)
{
	MHD_UNSIGNED_LONG_LONG ms;

	(void)MHD_run(h->mhd);
	if (h->timer > 0)
		event_timer_cancel(h->loop, h->timer);
	h->timer = 0;
	if (MHD_get_timeout(h->mhd, &ms) != MHD_YES)
		return;		/* nothing pending: readiness will tell */
	if ((h->timer = event_timer_add(h->loop, ms > UINT32_MAX ?
	    UINT32_MAX : (uint64_t)ms, http_timer_fire, h)) < 0) {
		/* The next connection's readiness will run it instead. */
		log_warnx("no memory for the metrics server's timer");
		h->timer = 0;
	}
}

static void
http_timer_fire(struct event_loop *loop, void *arg)
{
	struct metrics_http *h = arg;

	(void)loop;
	h->timer = 0;
	http_run(h);
}

static void
http_ready(struct event_loop *loop, int fd, int mask, void *arg)
{
	(void)loop;
	(void)fd;
	(void)mask;
	http_run(arg);
}

/* MHD on listening socket fd (taken over, even on failure): 0 or -1. */
static int
http_mhd_start(struct metrics_http *h, int fd, char *err, size_t errlen)
{
	const union MHD_DaemonInfo *info;

	h->mhd = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL,
	    NULL, http_request, h,
	    MHD_OPTION_EXTERNAL_LOGGER, http_log, NULL,
	    MHD_OPTION_LISTEN_SOCKET, fd,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTP_CONN_MAX,
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)HTTP_PER_IP_MAX,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_TIMEOUT_S,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_POOL,
	    MHD_OPTION_END);
	if (h->mhd == NULL) {
		close(fd);
		snprintf(err, errlen, "cannot start the metrics server on "
		    "'%s' (libmicrohttpd %s without epoll?)", h->listen,
		    MHD_get_version());
		return -1;
	}
	info = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	if (info == NULL || info->epoll_fd < 0) {
		snprintf(err, errlen, "the metrics server on '%s' has no "
		    "epoll descriptor", h->listen);
		return -1;
	}
	h->epfd = info->epoll_fd;
	if (event_set(h->loop, h->epfd, EVENT_READ, http_ready, h) < 0) {
		snprintf(err, errlen, "cannot watch the metrics server on "
		    "'%s': %s", h->listen, strerror(errno));
		return -1;
	}
	return 0;
}

struct metrics_http *
metrics_http_start(struct event_loop *loop, const char *listen,
    metrics_render_fn *render, void *arg, char *err, size_t errlen)
{
	char why[METRICS_ADDR_ERR_LEN];
	struct metrics_addr addr;
	struct metrics_http *h;
	int fd;

	if (metrics_addr_parse(listen, &addr, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "bad metrics address '%s': %s", listen,
		    why);
		return NULL;
	}
	if ((h = calloc(1, sizeof(*h))) == NULL) {
		snprintf(err, errlen, "no memory for the metrics server");
		return NULL;
	}
	h->loop = loop;
	h->epfd = -1;
	h->render = render;
	h->arg = arg;
	proto_strlcpy(h->listen, listen, sizeof(h->listen));
	if ((fd = metrics_addr_listen(&addr, listen, err, errlen)) < 0 ||
	    http_mhd_start(h, fd, err, errlen) < 0) {
		metrics_http_stop(h);
		return NULL;
	}
	http_run(h);
	return h;
}

const char *
metrics_http_listen(const struct metrics_http *h)
{
	return h->listen;
}

void
metrics_http_stop(struct metrics_http *h)
{
	if (h == NULL)
		return;
	if (h->timer > 0)
		event_timer_cancel(h->loop, h->timer);
	if (h->epfd >= 0)
		(void)event_set(h->loop, h->epfd, 0, NULL, NULL);
	/* MHD closes its connections, the listening socket and its epoll. */
	if (h->mhd != NULL)
		MHD_stop_daemon(h->mhd);
	free(h);
}
