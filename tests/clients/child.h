/*
 * For the simulator's test programs that run copies of themselves: the
 * device's free memory as this process sees it, starting a child (this
 * program again, with other arguments), and waiting for it. Include after
 * check.h.
 */
#ifndef GF_TEST_CHILD_H
#define GF_TEST_CHILD_H

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static inline uint64_t
free_bytes(void)
{
	size_t fr = 0, total = 0;

	OK(cuMemGetInfo_v2(&fr, &total));
	return fr;
}

/*
 * Run this program with argv and, if not NULL, env added to its
 * environment; its stdin and stdout on pipes where in_fd and out_fd ask.
 * Returns its pid, or -1.
 */
static inline pid_t
spawn(char *const argv[], const char *env, int *in_fd, int *out_fd)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 };
	pid_t pid;

	if ((in_fd != NULL && pipe2(in, O_CLOEXEC) < 0) ||
	    (out_fd != NULL && pipe2(out, O_CLOEXEC) < 0))
		return -1;
	fflush(stdout);
	if ((pid = fork()) == 0) {
		if (in_fd != NULL)
			dup2(in[0], STDIN_FILENO);
		if (out_fd != NULL)
			dup2(out[1], STDOUT_FILENO);
		if (env != NULL)
			putenv((char *)env);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	if (in_fd != NULL) {
		close(in[0]);
		*in_fd = in[1];
	}
	if (out_fd != NULL) {
		close(out[1]);
		*out_fd = out[0];
	}
	return pid;
}

/* Its exit status, 128 + the signal that killed it, or -1. */
static inline int
wait_status(pid_t pid)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Poll for up to 10 s: a killed process takes a moment to die. */
static inline int
wait_free(uint64_t want)
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (free_bytes() == want)
			return 1;
		usleep(10000);
	}
	return 0;
}

#endif
