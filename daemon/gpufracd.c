/*
 * gpufracd: the arbiter daemon's main(): options, the configuration check,
 * daemonizing, and signals (through a signalfd in the event loop).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "arbiter.h"
#include "config.h"
#include "devices.h"
#include "event.h"
#include "log.h"
#include "sock.h"

#ifndef GPUFRAC_VERSION
#define GPUFRAC_VERSION	"unknown"	/* the Makefile defines it */
#endif

static void __attribute__((noreturn))
usage(int status)
{
	fprintf(status ? stderr : stdout,
	    "usage: gpufracd [-fhnV] [-c file] [-s socket]\n"
	    "  -c file    the configuration (default: %s)\n", CONFIG_PATH_DEFAULT);
	exit(status);
}

static void __attribute__((noreturn))
version(void)
{
	printf("gpufracd %s\n", GPUFRAC_VERSION);
	exit(fflush(stdout) == EOF || ferror(stdout) ? 1 : 0);
}

static void
report_stderr(const char *line, void *arg)
{
	(void)arg;
	fprintf(stderr, "%s\n", line);
}

/* -s as an absolute path: the daemon leaves its directory. */
static const char *
socket_absolute(const char *path, char *buf, size_t size)
{
	char cwd[PATH_MAX];

	if (path[0] == '/')
		return path;
	if (getcwd(cwd, sizeof(cwd)) == NULL) {
		fprintf(stderr, "gpufracd: cannot resolve '%s': %s\n", path,
		    strerror(errno));
		exit(1);
	}
	if ((size_t)snprintf(buf, size, "%s/%s", cwd, path) >= size) {
		fprintf(stderr, "gpufracd: socket path '%s/%s' is too long\n",
		    cwd, path);
		exit(1);
	}
	return buf;
}

/*
 * Fork into the background. The parent waits until the child reports that
 * it serves (exit 0) or dies (exit 1, its reason already on stderr). The
 * child gets the pipe's write end for daemon_ready.
 */
static int
daemon_start(void)
{
	int fds[2];
	ssize_t n;
	char c;

	if (pipe2(fds, O_CLOEXEC) < 0)
		fatalx("cannot create a pipe: %s", strerror(errno));
	switch (fork()) {
	case -1:
		fatalx("cannot fork: %s", strerror(errno));
	case 0:
		close(fds[0]);
		if (setsid() < 0)
			fatalx("cannot start a session: %s", strerror(errno));
		return fds[1];
	default:
		close(fds[1]);
		do
			n = read(fds[0], &c, 1);
		while (n < 0 && errno == EINTR);
		_exit(n == 1 ? 0 : 1);
	}
}

/* The child serves: log to syslog, let go of the terminal and the parent. */
static void
daemon_ready(int fd)
{
	int null;

	log_init("gpufracd", log_getlevel(), 1);
	if (chdir("/") < 0)
		log_warn("cannot chdir to '/'");
	if ((null = open("/dev/null", O_RDWR)) >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		if (null > STDERR_FILENO)
			close(null);
	}
	if (write(fd, "", 1) != 1)
		log_warn("cannot tell the parent process that we are ready");
	close(fd);
}

/* HUP, TERM and INT arrive here through the signalfd, never as handlers. */
static int
signals_block(void)
{
	sigset_t set;
	int fd;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0 ||
	    (fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0)
		fatalx("cannot set up signals: %s", strerror(errno));
	return fd;
}

static void
signal_event(struct event_loop *loop, int fd, int mask, void *arg)
{
	struct signalfd_siginfo si;

	(void)mask;
	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGHUP:
			log_info("SIGHUP: reloading the configuration");
			(void)arbiter_reload(arg, NULL, NULL, 0);
			break;
		case SIGTERM:
		case SIGINT:
			log_info("%s: exiting", si.ssi_signo == SIGTERM ?
			    "SIGTERM" : "SIGINT");
			event_stop(loop);
			break;
		}
	}
}

/* The command line into arb (-c, -s) and the flags; exits on -h, -V. */
static void
options(int argc, char *argv[], struct arbiter *arb, int *foreground,
    int *check)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static char sockbuf[PATH_MAX];
	int ch;

	arb->conf_path = CONFIG_PATH_DEFAULT;
	arb->conf_optional = 1;
	while ((ch = getopt_long(argc, argv, "c:fhns:V", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'c':
			arb->conf_path = optarg;
			arb->conf_optional = 0;
			break;
		case 'f':
			*foreground = 1;
			break;
		case 'h':
			usage(0);
		case 'n':
			*check = 1;
			break;
		case 's':
			arb->socket_arg = socket_absolute(optarg, sockbuf,
			    sizeof(sockbuf));
			break;
		case 'V':
			version();
		default:
			usage(2);
		}
	}
	if (optind != argc)
		usage(2);
}

int
main(int argc, char *argv[])
{
	static struct arbiter arb;
	struct config conf;
	int foreground = 0, check = 0, ready = -1, sigfd, rc = 1;

	/* A descriptor inherited from whoever started us (a pipe, a fifo)
	 * would stay open as long as the daemon runs: its reader would never
	 * see end-of-file. */
	closefrom(STDERR_FILENO + 1);
	log_init("gpufracd", LOG_LVL_INFO, 0);
	options(argc, argv, &arb, &foreground, &check);
	config_init(&conf);
	if (arbiter_read_config(&conf, arb.conf_path, arb.conf_optional,
	    arb.socket_arg, report_stderr, NULL) > 0)
		exit(1);
	if (check) {
		printf("configuration OK\n");
		exit(0);
	}
	log_setlevel(conf.log_level);
	if (!foreground)
		ready = daemon_start();
	sock_fd_limit_raise();
	sigfd = signals_block();
	if ((arb.loop = event_loop_new()) == NULL)
		fatalx("cannot create the event loop: %s", strerror(errno));
	if (arbiter_start(&arb, &conf, DEVICES_LIBCUDA) < 0)
		goto out_stop;
	if (event_set(arb.loop, sigfd, EVENT_READ, signal_event, &arb) < 0) {
		log_warn("cannot watch signals");
		goto out_stop;
	}
	if (ready >= 0)
		daemon_ready(ready);
	log_info("gpufracd %s started", GPUFRAC_VERSION);
	if (event_run(arb.loop) < 0)
		log_warn("the event loop failed");
	else
		rc = 0;

out_stop:
	arbiter_stop(&arb);
	event_loop_free(arb.loop);
	close(sigfd);
	return rc;
}
