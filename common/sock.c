/*
 * Connecting to and listening on the daemon's Unix socket.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "gpufrac/proto.h"
#include "log.h"
#include "sock.h"

const char *
sock_default_path(void)
{
	const char *p = getenv("GPUFRAC_SOCKET");

	return p && *p ? p : GF_SOCKET_DEFAULT;
}

static int
addr_fill(struct sockaddr_un *sun, const char *path, char *err, size_t errlen)
{
	size_t len = strlen(path);

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (len >= sizeof(sun->sun_path)) {
		/* quote at most 128 bytes so that the reason always fits */
		snprintf(err, errlen, "socket path '%.128s%s' is too long "
		    "(%zu bytes, at most %zu)", path, len > 128 ? "..." : "",
		    len, sizeof(sun->sun_path) - 1);
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sun->sun_path, path);
	return 0;
}

long long
sock_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Bound blocking sends, and connect(2) (net/unix/af_unix.c), to ms. */
static int
send_timeout_set(int fd, long long ms)
{
	struct timeval tv;

	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	return setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* Connect fd to sun, by deadline (ms, monotonic) when it is not 0. */
static int
connect_by(int fd, const struct sockaddr_un *sun, long long deadline)
{
	long long left;
	int r;

	for (;;) {
		if (deadline != 0) {
			if ((left = deadline - sock_now_ms()) <= 0) {
				errno = ETIMEDOUT;
				return -1;
			}
			if (send_timeout_set(fd, left) < 0)
				return -1;
		}
		r = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
		if (r == 0)
			return 0;
		if (errno == EINTR)
			continue;
		/* A full backlog for SO_SNDTIMEO: EAGAIN (unix_stream_connect). */
		if (errno == EAGAIN && deadline != 0)
			errno = ETIMEDOUT;
		return -1;
	}
}

static int
connect_path(const char *path, int timeout_ms, char *err, size_t errlen)
{
	struct sockaddr_un sun;
	long long deadline = 0;
	int fd;

	if (timeout_ms > 0)
		deadline = sock_now_ms() + timeout_ms;
	if (addr_fill(&sun, path, err, errlen) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create socket: %s",
		    strerror(errno));
		return -1;
	}
	if (connect_by(fd, &sun, deadline) < 0) {
		int saved = errno;

		if (saved == ETIMEDOUT)
			snprintf(err, errlen, "cannot connect to '%s': no room "
			    "within %d ms (is gpufracd stuck?)", path,
			    timeout_ms);
		else
			snprintf(err, errlen, "cannot connect to '%s': %s",
			    path, strerror(saved));
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

int
sock_connect(const char *path, char *err, size_t errlen)
{
	return connect_path(path, 0, err, errlen);
}

int
sock_connect_within(const char *path, int timeout_ms, char *err,
    size_t errlen)
{
	return connect_path(path, timeout_ms > 0 ? timeout_ms : 1, err,
	    errlen);
}

/* Something other than a socket at path: never ours to remove. */
static int
not_socket(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && !S_ISSOCK(st.st_mode);
}

/* A socket file nobody accepts on is left over from a dead daemon. */
static int
stale_socket(const char *path)
{
	char err[SOCK_ERR_LEN];
	/* A full backlog is a live daemon's too: it must not block us. */
	int fd = sock_connect_within(path, 1000, err, sizeof(err));

	if (fd >= 0 || errno == ETIMEDOUT) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	return errno == ECONNREFUSED;
}

int
sock_listen(const char *path, unsigned mode, char *err, size_t errlen)
{
	struct sockaddr_un sun;
	int fd;

	if (addr_fill(&sun, path, err, errlen) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create socket: %s",
		    strerror(errno));
		return -1;
	}
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		int saved = errno;

		/* connect(2) to a non-socket fails like a stale socket */
		if (saved == EADDRINUSE && not_socket(path)) {
			snprintf(err, errlen, "cannot bind '%s': the file "
			    "there is not a socket", path);
			goto out_close;
		}
		if (saved == EADDRINUSE && !stale_socket(path)) {
			snprintf(err, errlen, "cannot bind '%s': another "
			    "gpufracd is listening there", path);
			goto out_close;
		}
		if (saved != EADDRINUSE || unlink(path) < 0 ||
		    bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
			if (saved == EADDRINUSE)
				saved = errno;
			snprintf(err, errlen, "cannot bind '%s': %s", path,
			    strerror(saved));
			goto out_close;
		}
	}
	if (chmod(path, mode) < 0) {
		snprintf(err, errlen, "cannot chmod '%s': %s", path,
		    strerror(errno));
		goto out_unlink;
	}
	if (listen(fd, 128) < 0) {
		snprintf(err, errlen, "cannot listen on '%s': %s", path,
		    strerror(errno));
		goto out_unlink;
	}
	return fd;

out_unlink:
	unlink(path);
out_close:
	close(fd);
	return -1;
}

void
sock_fd_limit_raise(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			log_warn("cannot raise the limit on open files");
	}
}
