/*
 * Client processes by pidfd: taken at accept, signalled through, and
 * asked whether they have exited.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "pidfd.h"
#include "uuid.h"

/*
 * Linux 5.3 and 6.5; headers older than the kernel may lack the numbers
 * (the syscalls' are the same on every architecture but alpha, the
 * socket option's on all but parisc, sparc and alpha).
 */
#ifndef SYS_pidfd_open
#define SYS_pidfd_open		434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal	424
#endif
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD		77
#endif

uint64_t
pidfd_boot_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int
pidfd_boot_id(uint8_t id[16])
{
	char line[64], buf[sizeof(line) + 4];
	FILE *fp;
	int rc = -1;

	memset(id, 0, 16);
	if ((fp = fopen("/proc/sys/kernel/random/boot_id", "re")) == NULL)
		return -1;
	/* A UUID as a device's is written, without its "GPU-". */
	if (fgets(line, sizeof(line), fp) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		snprintf(buf, sizeof(buf), "GPU-%s", line);
		rc = uuid_parse(buf, id);
	}
	fclose(fp);
	return rc;
}

uint64_t
pidfd_start_ms(uint32_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ticks;
	long hz = sysconf(_SC_CLK_TCK);
	size_t n;
	FILE *fp;
	int i;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	if ((fp = fopen(path, "re")) == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	/* "PID (COMM) STATE ...": COMM may hold spaces and parentheses;
	 * starttime is field 22, the 20th after it (proc(5)). */
	if ((p = strrchr(buf, ')')) == NULL || hz <= 0)
		return 0;
	for (i = 0; i < 20 && p != NULL; i++)
		p = strchr(p + 1, ' ');
	if (p == NULL || sscanf(p + 1, "%llu", &ticks) != 1)
		return 0;
	return ticks * 1000 / (unsigned long long)hz;
}

uint64_t
pidfd_start_grain_ms(void)
{
	long hz = sysconf(_SC_CLK_TCK);

	return hz > 0 && hz <= 1000 ? (uint64_t)(1000 / hz) : 1;
}

int
pidfd_exited(int pidfd)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

	if (pidfd < 0)
		return 1;
	return poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLIN | POLLHUP));
}

int
pidfd_by_pid(uint32_t pid, uint64_t at_ms, int *exited)
{
	int fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);

	*exited = 0;
	if (fd < 0) {
		if (errno == ESRCH)
			*exited = 1;
		else
			log_debug("cannot open a pidfd for pid %u: %s", pid,
			    strerror(errno));
		return -1;
	}
	/*
	 * Its process started after we accepted (or NVML listed it): the
	 * one meant died and another has its pid. Checked with the pidfd held, so
	 * the pid cannot change hands again meanwhile; a process that has
	 * exited is no one's to watch either.
	 */
	if (pidfd_start_ms(pid) > at_ms || pidfd_exited(fd)) {
		close(fd);
		*exited = 1;
		return -1;
	}
	return fd;
}

int
pidfd_of_peer(int sock, uint32_t pid, uint64_t at_ms, int *exited)
{
	socklen_t len = sizeof(int);
	int fd = -1;

	*exited = 0;
	if (getsockopt(sock, SOL_SOCKET, SO_PEERPIDFD, &fd, &len) == 0 &&
	    fd >= 0) {
		if (pidfd_exited(fd)) {
			close(fd);
			*exited = 1;
			return -1;
		}
		return fd;
	}
	/* ESRCH: the peer has been reaped (net/core/sock.c, pidfd_prepare). */
	if (errno == ESRCH) {
		*exited = 1;
		return -1;
	}
	return pidfd_by_pid(pid, at_ms, exited);
}

int
pidfd_signal(int pidfd, uint32_t pid, int sig)
{
	(void)pid;
	if (pidfd < 0) {
		errno = ESRCH;
		return -1;
	}
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}
