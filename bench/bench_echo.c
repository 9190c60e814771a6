/*
 * The floor for the daemon's round trip: a SOCK_SEQPACKET server in a
 * process of its own, one epoll loop like gpufracd's, that answers each
 * packet of a RESERVE's size with a GRANT-sized packet carrying its seq and
 * drops the others (a ROLLBACK), with no validation and no state.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench.h"
#include "harness.h"
#include "log.h"
#include "proto.h"
#include "sock.h"

#define ECHO_EVENTS	64
#define ECHO_BATCH	16	/* packets read per wake-up per peer */
#define ECHO_ASK	(sizeof(struct gf_hdr) + sizeof(struct gf_reserve))

static void
echo_accept(int ep, int lfd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fd;

	while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK |
	    SOCK_CLOEXEC)) >= 0) {
		ev.data.fd = fd;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
			close(fd);
	}
}

static void
echo_serve(int fd, struct gf_msg *grant, size_t grantlen)
{
	struct gf_msg in;
	ssize_t n;
	int i;

	for (i = 0; i < ECHO_BATCH; i++) {
		n = recv(fd, &in, sizeof(in), MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			close(fd);	/* and out of the epoll set */
			return;
		}
		if ((size_t)n != ECHO_ASK)
			continue;
		grant->hdr.seq = in.hdr.seq;
		if (send(fd, grant, grantlen, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
		    errno != EAGAIN) {
			close(fd);
			return;
		}
	}
}

static void __attribute__((noreturn))
echo_loop(int lfd)
{
	struct epoll_event ev = { .events = EPOLLIN }, evs[ECHO_EVENTS];
	struct gf_grant g;
	struct gf_msg grant;
	ssize_t grantlen;
	int ep, i, n;

	memset(&g, 0, sizeof(g));
	if ((grantlen = proto_pack(&grant, GF_MSG_GRANT, 0, &g)) < 0 ||
	    (ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
		_exit(1);
	ev.data.fd = lfd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) < 0)
		_exit(1);
	for (;;) {
		if ((n = epoll_wait(ep, evs, ECHO_EVENTS, -1)) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		for (i = 0; i < n; i++) {
			if (evs[i].data.fd == lfd)
				echo_accept(ep, lfd);
			else
				echo_serve(evs[i].data.fd, &grant,
				    (size_t)grantlen);
		}
	}
}

pid_t
echo_start(const char *path)
{
	char err[SOCK_ERR_LEN];
	pid_t pid;
	int lfd;

	/* Listening before the fork: clients may connect at once. */
	if ((lfd = sock_listen(path, 0600, err, sizeof(err))) < 0) {
		log_warnx("%s", err);
		return -1;
	}
	if ((pid = harness_fork()) == 0)
		echo_loop(lfd);
	close(lfd);
	return pid;
}
