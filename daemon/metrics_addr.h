/*
 * metrics_listen's value, "ADDR:PORT", and the TCP listener made of it.
 * ADDR is a numeric IPv4 address or an IPv6 one in brackets
 * ("127.0.0.1:9477", "[::1]:9477", "0.0.0.0:9477"): never a host name, so
 * that neither reading the configuration nor starting the server waits
 * for a resolver. Like common/sock.c, errors go to the caller as one line.
 */
#ifndef GF_DAEMON_METRICS_ADDR_H
#define GF_DAEMON_METRICS_ADDR_H

#include <stddef.h>
#include <sys/socket.h>

#define METRICS_LISTEN_LEN	64	/* "[v6 address]:65535" and its NUL */
#define METRICS_ADDR_ERR_LEN	256

struct metrics_addr {
	struct sockaddr_storage ss;
	socklen_t	len;
};

/*
 * Parse s into *out (NULL: only check it). Returns 0, or -1 with why the
 * value is bad in why (whylen bytes), e.g. "the port must be 1 to 65535".
 */
int	metrics_addr_parse(const char *s, struct metrics_addr *out,
	    char *why, size_t whylen);

/*
 * A TCP socket bound to addr and listening, non-blocking and
 * close-on-exec, SO_REUSEADDR set (a restarted daemon binds again at
 * once). name is what the operator wrote, for the message. Returns the
 * fd, or -1 with "cannot listen on 'NAME' for metrics: REASON" in err.
 */
int	metrics_addr_listen(const struct metrics_addr *addr, const char *name,
	    char *err, size_t errlen);

#endif
