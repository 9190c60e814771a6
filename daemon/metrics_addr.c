/*
 * The metrics server's address: parsing "ADDR:PORT" (numeric only) and
 * opening the listening socket it names.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "metrics_addr.h"
#include "units.h"

#define LISTEN_BACKLOG	16	/* scrapers are few; MHD caps connections */

/* The port after the last ':', 1 to 65535. */
static int
port_parse(const char *s, in_port_t *out, char *why, size_t whylen)
{
	uint64_t v;

	if (decimal_parse(s, 65535, &v) < 0 || v == 0) {
		snprintf(why, whylen, "the port must be 1 to 65535");
		return -1;
	}
	*out = htons((in_port_t)v);
	return 0;
}

/*
 * The numeric address of family at s (len bytes, not terminated) into
 * out, with that port; -1 with why.
 */
static int
host_parse(const char *s, size_t len, int family, const char *port,
    struct metrics_addr *out, char *why, size_t whylen)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&out->ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&out->ss;
	char host[INET6_ADDRSTRLEN];

	if (len >= sizeof(host))
		goto out_bad;
	memcpy(host, s, len);
	host[len] = '\0';
	if (inet_pton(family, host, family == AF_INET6 ?
	    (void *)&sin6->sin6_addr : (void *)&sin->sin_addr) != 1)
		goto out_bad;
	out->ss.ss_family = (sa_family_t)family;
	out->len = family == AF_INET6 ? sizeof(*sin6) : sizeof(*sin);
	return port_parse(port, family == AF_INET6 ? &sin6->sin6_port :
	    &sin->sin_port, why, whylen);

out_bad:
	/* s is a configuration value: METRICS_LISTEN_LEN at most. */
	snprintf(why, whylen, "'%.*s' is not a numeric %s address", (int)len,
	    s, family == AF_INET6 ? "IPv6" : "IPv4");
	return -1;
}

/* "[v6]:PORT" */
static int
parse_v6(const char *s, struct metrics_addr *out, char *why, size_t whylen)
{
	const char *end = strchr(s, ']');

	if (end == NULL || end[1] != ':') {
		snprintf(why, whylen, "expected [IPv6 address]:port");
		return -1;
	}
	return host_parse(s + 1, (size_t)(end - s - 1), AF_INET6, end + 2,
	    out, why, whylen);
}

/* "A.B.C.D:PORT" */
static int
parse_v4(const char *s, struct metrics_addr *out, char *why, size_t whylen)
{
	const char *colon = strrchr(s, ':');

	if (colon == NULL || colon == s) {
		snprintf(why, whylen, "expected address:port, e.g. "
		    "127.0.0.1:9477");
		return -1;
	}
	if (memchr(s, ':', (size_t)(colon - s)) != NULL) {
		snprintf(why, whylen, "an IPv6 address goes in brackets, e.g. "
		    "[::1]:9477");
		return -1;
	}
	return host_parse(s, (size_t)(colon - s), AF_INET, colon + 1, out,
	    why, whylen);
}

int
metrics_addr_parse(const char *s, struct metrics_addr *out, char *why,
    size_t whylen)
{
	struct metrics_addr scratch;

	if (out == NULL)
		out = &scratch;
	memset(out, 0, sizeof(*out));
	if (strlen(s) >= METRICS_LISTEN_LEN) {
		snprintf(why, whylen, "longer than %d bytes",
		    METRICS_LISTEN_LEN - 1);
		return -1;
	}
	if (s[0] == '[')
		return parse_v6(s, out, why, whylen);
	return parse_v4(s, out, why, whylen);
}

int
metrics_addr_listen(const struct metrics_addr *addr, const char *name,
    char *err, size_t errlen)
{
	int fd, on = 1, errnum;

	fd = socket(addr->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (fd < 0) {
		errnum = errno;
		goto out_err;
	}
	/* [::] means IPv6 only: 0.0.0.0 is the operator's to ask for. */
	if ((addr->ss.ss_family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6,
	    IPV6_V6ONLY, &on, sizeof(on)) < 0) ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) < 0 ||
	    bind(fd, (const struct sockaddr *)&addr->ss, addr->len) < 0 ||
	    listen(fd, LISTEN_BACKLOG) < 0) {
		errnum = errno;
		goto out_close;
	}
	return fd;

out_close:
	close(fd);
out_err:
	snprintf(err, errlen, "cannot listen on '%s' for metrics: %s", name,
	    strerror(errnum));
	return -1;
}
