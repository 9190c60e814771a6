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

int
sock_connect(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun;
	int fd, r;

	if (addr_fill(&sun, path, err, errlen) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create socket: %s",
		    strerror(errno));
		return -1;
	}
	do
		r = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		int saved = errno;

		snprintf(err, errlen, "cannot connect to '%s': %s", path,
		    strerror(saved));
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
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
	int fd = sock_connect(path, err, sizeof(err));

	if (fd >= 0) {
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
