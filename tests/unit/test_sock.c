/*
 * Unit tests of common/sock.c: connecting, listening, stale and live
 * sockets, path length and permissions, in a private temporary directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "gpufrac/proto.h"
#include "sock.h"

#define SUN_PATH_MAX	(sizeof(((struct sockaddr_un *)0)->sun_path) - 1)
/* room for an expected message quoting any path */
#define WANT_LEN	(PATH_MAX + 128)

/* The test's private directory, made by setup and removed by teardown. */
static char dir[64];

static int
dir_setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s", "/tmp/gftest-sock.XXXXXX");
	return mkdtemp(dir) == NULL ? -1 : 0;
}

static int
dir_teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* A path in the test directory. */
static const char *
path_in_dir(const char *name)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

/* A path in the test directory exactly len bytes long. */
static const char *
path_of_len(size_t len)
{
	static char path[PATH_MAX];
	size_t n = (size_t)snprintf(path, sizeof(path), "%s/", dir);

	assert_true(len > n && len < sizeof(path));
	memset(path + n, 'p', len - n);
	path[len] = '\0';
	return path;
}

/* Leave a socket file behind with nobody listening, as a killed daemon. */
static void
stale_make(const char *path)
{
	struct sockaddr_un sun;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	assert_true(strlen(path) < sizeof(sun.sun_path));
	memcpy(sun.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(fd, 1), 0);
	close(fd);
}

static void
test_connect_missing(void **state)
{
	const char *path = path_in_dir("missing.sock");
	char err[SOCK_ERR_LEN], want[WANT_LEN];

	(void)state;
	errno = 0;
	assert_int_equal(sock_connect(path, err, sizeof(err)), -1);
	assert_int_equal(errno, ENOENT);
	snprintf(want, sizeof(want), "cannot connect to '%s': "
	    "No such file or directory", path);
	assert_string_equal(err, want);
}

static void
test_connect_stale(void **state)
{
	const char *path = path_in_dir("stale.sock");
	char err[SOCK_ERR_LEN], want[WANT_LEN];

	(void)state;
	stale_make(path);
	errno = 0;
	assert_int_equal(sock_connect(path, err, sizeof(err)), -1);
	assert_int_equal(errno, ECONNREFUSED);
	snprintf(want, sizeof(want), "cannot connect to '%s': "
	    "Connection refused", path);
	assert_string_equal(err, want);
}

static void
test_connect_ok(void **state)
{
	const char *path = path_in_dir("ok.sock");
	char err[SOCK_ERR_LEN];
	int lfd, fd, type = 0;
	socklen_t len = sizeof(type);

	(void)state;
	lfd = sock_listen(path, 0600, err, sizeof(err));
	assert_true(lfd >= 0);
	fd = sock_connect(path, err, sizeof(err));
	assert_true(fd >= 0);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len), 0);
	assert_int_equal(type, SOCK_SEQPACKET);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	close(lfd);
}

static void
test_path_too_long(void **state)
{
	const char *path = path_of_len(SUN_PATH_MAX + 1);
	char truncated[PATH_MAX], err[SOCK_ERR_LEN], want[WANT_LEN];
	struct stat st;

	(void)state;
	snprintf(want, sizeof(want), "socket path '%s' is too long "
	    "(%zu bytes, at most %zu)", path, SUN_PATH_MAX + 1, SUN_PATH_MAX);
	errno = 0;
	assert_int_equal(sock_listen(path, 0600, err, sizeof(err)), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	assert_string_equal(err, want);
	errno = 0;
	assert_int_equal(sock_connect(path, err, sizeof(err)), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	assert_string_equal(err, want);

	/* nothing was bound at the path cut to what fits */
	snprintf(truncated, sizeof(truncated), "%.*s", (int)SUN_PATH_MAX,
	    path);
	assert_int_equal(stat(truncated, &st), -1);
	assert_int_equal(stat(path, &st), -1);

	/* far too long is refused the same way, and says so in the space */
	assert_int_equal(sock_connect(path_of_len(1000), err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "is too long (1000 bytes, at most"));
	assert_int_equal(sock_listen(path_of_len(3000), 0600, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "is too long (3000 bytes, at most"));
}

static void
test_path_longest(void **state)
{
	const char *path = path_of_len(SUN_PATH_MAX);
	char err[SOCK_ERR_LEN];
	struct stat st;
	int lfd, fd;

	(void)state;
	lfd = sock_listen(path, 0600, err, sizeof(err));
	if (lfd < 0)
		fail_msg("%s", err);
	assert_int_equal(stat(path, &st), 0);
	fd = sock_connect(path, err, sizeof(err));
	assert_true(fd >= 0);
	close(fd);
	close(lfd);
}

static void
test_listen_replaces_stale(void **state)
{
	const char *path = path_in_dir("daemon.sock");
	char err[SOCK_ERR_LEN];
	int lfd, fd;

	(void)state;
	stale_make(path);
	lfd = sock_listen(path, 0600, err, sizeof(err));
	if (lfd < 0)
		fail_msg("stale socket not replaced: %s", err);
	fd = sock_connect(path, err, sizeof(err));
	assert_true(fd >= 0);
	close(fd);
	close(lfd);
}

static void
test_listen_refuses_live(void **state)
{
	const char *path = path_in_dir("live.sock");
	char err[SOCK_ERR_LEN], want[WANT_LEN];
	int lfd, fd, afd;

	(void)state;
	lfd = sock_listen(path, 0600, err, sizeof(err));
	assert_true(lfd >= 0);
	assert_int_equal(sock_listen(path, 0600, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "cannot bind '%s': another gpufracd "
	    "is listening there", path);
	assert_string_equal(err, want);

	/* the live listener still owns its path and still accepts */
	fd = sock_connect(path, err, sizeof(err));
	assert_true(fd >= 0);
	afd = accept(lfd, NULL, NULL);
	assert_true(afd >= 0);
	close(afd);
	close(fd);
	close(lfd);
}

/* A file that is not a socket is not ours to delete. */
static void
test_listen_keeps_other_file(void **state)
{
	const char *path = path_in_dir("gpufrac.conf");
	char err[SOCK_ERR_LEN], want[WANT_LEN], buf[16];
	FILE *fp;

	(void)state;
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("precious\n", fp);
	fclose(fp);
	assert_int_equal(sock_listen(path, 0600, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "cannot bind '%s': the file there is "
	    "not a socket", path);
	assert_string_equal(err, want);
	fp = fopen(path, "r");
	assert_non_null(fp);
	assert_non_null(fgets(buf, sizeof(buf), fp));
	fclose(fp);
	assert_string_equal(buf, "precious\n");
}

static void
test_listen_missing_dir(void **state)
{
	const char *path = path_in_dir("no/such/dir.sock");
	char err[SOCK_ERR_LEN], want[WANT_LEN];

	(void)state;
	assert_int_equal(sock_listen(path, 0600, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "cannot bind '%s': No such file or "
	    "directory", path);
	assert_string_equal(err, want);
}

static void
test_listen_mode(void **state)
{
	static const unsigned modes[] = { 0600, 0660, 0666, 0777 };
	char err[SOCK_ERR_LEN], name[32];
	mode_t old = umask(022);	/* bind alone would give 0755 */
	struct stat st;
	size_t i;
	int lfd;

	(void)state;
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		snprintf(name, sizeof(name), "mode%zu.sock", i);
		lfd = sock_listen(path_in_dir(name), modes[i], err,
		    sizeof(err));
		assert_true(lfd >= 0);
		assert_int_equal(stat(path_in_dir(name), &st), 0);
		assert_true(S_ISSOCK(st.st_mode));
		assert_int_equal(st.st_mode & 07777, modes[i]);
		close(lfd);
	}
	umask(old);
}

static void
test_listen_flags(void **state)
{
	const char *path = path_in_dir("flags.sock");
	char err[SOCK_ERR_LEN];
	int lfd;

	(void)state;
	lfd = sock_listen(path, 0600, err, sizeof(err));
	assert_true(lfd >= 0);
	assert_true(fcntl(lfd, F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(lfd, F_GETFL) & O_NONBLOCK);
	errno = 0;
	assert_int_equal(accept(lfd, NULL, NULL), -1);
	assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
	close(lfd);
}

static void
test_default_path(void **state)
{
	(void)state;
	assert_int_equal(unsetenv("GPUFRAC_SOCKET"), 0);
	assert_string_equal(sock_default_path(), GF_SOCKET_DEFAULT);
	assert_string_equal(sock_default_path(), "/run/gpufrac/gpufrac.sock");
	assert_int_equal(setenv("GPUFRAC_SOCKET", "/tmp/x.sock", 1), 0);
	assert_string_equal(sock_default_path(), "/tmp/x.sock");
	assert_int_equal(setenv("GPUFRAC_SOCKET", "", 1), 0);
	assert_string_equal(sock_default_path(), GF_SOCKET_DEFAULT);
	unsetenv("GPUFRAC_SOCKET");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connect_missing),
		cmocka_unit_test(test_connect_stale),
		cmocka_unit_test(test_connect_ok),
		cmocka_unit_test(test_path_too_long),
		cmocka_unit_test(test_path_longest),
		cmocka_unit_test(test_listen_replaces_stale),
		cmocka_unit_test(test_listen_refuses_live),
		cmocka_unit_test(test_listen_keeps_other_file),
		cmocka_unit_test(test_listen_missing_dir),
		cmocka_unit_test(test_listen_mode),
		cmocka_unit_test(test_listen_flags),
		cmocka_unit_test(test_default_path),
	};

	return cmocka_run_group_tests(tests, dir_setup, dir_teardown);
}
