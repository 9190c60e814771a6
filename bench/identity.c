/*
 * make bench-identity (issue 39): what reading every counted process's
 * identity again costs a look. Forks N processes (BENCH_IDENTITY_PROCS,
 * 1000) of uid 65534 that wait, holds a pidfd of each as the daemon does, then times
 * R rounds (BENCH_IDENTITY_ROUNDS, 20) of procid_reread over all of them:
 * /proc/PID/status and /proc/PID/cgroup read, the pidfd polled. Prints
 * the median and worst round's CPU time (the host's load aside) and the
 * cost per process, then a JSON line.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pidfd.h"
#include "procid.h"

/* A positive count from the environment, or def. */
static long
env_count(const char *name, long def)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (s == NULL || *s == '\0')
		return def;
	v = strtol(s, &end, 10);
	if (*end != '\0' || v <= 0) {
		fprintf(stderr, "bench-identity: bad %s '%s'\n", name, s);
		exit(2);
	}
	return v;
}

/* CPU time, not wall: what the daemon spends, however loaded the host. */
static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One look's re-reading of n processes: microseconds taken. */
static double
round_us(const pid_t *pids, const int *fds, long n)
{
	double t0 = now_us();
	uint32_t uid, gid;
	char *cg;
	long i;

	for (i = 0; i < n; i++)
		if (procid_reread(fds[i], (uint32_t)pids[i], &uid, &gid,
		    &cg) == 0)
			free(cg);
	return now_us() - t0;
}

int
main(void)
{
	long n = env_count("BENCH_IDENTITY_PROCS", 1000);
	long rounds = env_count("BENCH_IDENTITY_ROUNDS", 20), i;
	pid_t *pids = calloc((size_t)n, sizeof(*pids));
	int *fds = calloc((size_t)n, sizeof(*fds)), exited;
	double *us = calloc((size_t)rounds, sizeof(*us));

	if (pids == NULL || fds == NULL || us == NULL)
		return 1;
	for (i = 0; i < n; i++) {
		if ((pids[i] = fork()) == 0) {
			/* A user's process, as most on a shared GPU are
			   (root's cost a read of /proc/PID/status more). */
			if (getuid() == 0 && (setresgid(65534, 65534, 65534) <
			    0 || setresuid(65534, 65534, 65534) < 0))
				_exit(1);
			(void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
			pause();
			_exit(0);
		}
		if (pids[i] < 0 || (fds[i] = pidfd_by_pid((uint32_t)pids[i],
		    pidfd_boot_ms(), &exited)) < 0) {
			fprintf(stderr, "bench-identity: cannot hold process "
			    "%ld of %ld\n", i, n);
			n = i + (pids[i] > 0);
			goto out_kill;
		}
	}
	for (i = 0; i < rounds; i++)
		us[i] = round_us(pids, fds, n);
	qsort(us, (size_t)rounds, sizeof(*us), cmp_double);
	printf("identity re-read of %ld processes: median %.2f ms, worst "
	    "%.2f ms of CPU a look (%.1f us a process), %ld rounds\n", n,
	    us[rounds / 2] / 1e3, us[rounds - 1] / 1e3, us[rounds / 2] / n,
	    rounds);
	printf("{\"procs\":%ld,\"rounds\":%ld,\"median_ms\":%.3f,"
	    "\"worst_ms\":%.3f,\"per_proc_us\":%.2f}\n", n, rounds,
	    us[rounds / 2] / 1e3, us[rounds - 1] / 1e3, us[rounds / 2] / n);
out_kill:
	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	free(pids);
	free(fds);
	free(us);
	return 0;
}
