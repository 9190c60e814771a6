/*
 * The benchmarks' common ground: the tree, paths, the clock, children
 * that cannot outlive the benchmark, and preloading the shim.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "log.h"

static pid_t *procs;
static size_t nprocs, procs_cap;

int
harness_top(char *top, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", top, size - 1);
	char *slash;
	int i;

	if (n < 0) {
		log_warn("cannot read '/proc/self/exe'");
		return -1;
	}
	top[n] = '\0';
	for (i = 0; i < 2; i++) {
		if ((slash = strrchr(top, '/')) == NULL) {
			log_warnx("cannot find the source tree from '%s'", top);
			return -1;
		}
		*slash = '\0';
	}
	return 0;
}

int
harness_path(char *buf, size_t size, const char *base, const char *name)
{
	if ((size_t)snprintf(buf, size, "%s/%s", base, name) >= size) {
		log_warnx("path '%s/%s' is too long", base, name);
		return -1;
	}
	return 0;
}

uint64_t
harness_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void
harness_sleep_us(unsigned us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void
remember(pid_t pid)
{
	pid_t *p;

	if (nprocs == procs_cap) {
		procs_cap = procs_cap ? 2 * procs_cap : 64;
		if ((p = realloc(procs, procs_cap * sizeof(*p))) == NULL)
			fatalx("out of memory");
		procs = p;
	}
	procs[nprocs++] = pid;
}

void
harness_forget(pid_t pid)
{
	size_t i;

	for (i = 0; i < nprocs; i++)
		if (procs[i] == pid) {
			procs[i] = procs[--nprocs];
			return;
		}
}

pid_t
harness_fork(void)
{
	pid_t parent = getpid(), pid;

	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) < 0) {
		log_warn("cannot fork");
		return -1;
	}
	if (pid > 0) {
		remember(pid);
		return pid;
	}
	/* A child of a child must not kill its parent's other children. */
	nprocs = 0;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(1);
	return 0;
}

int
harness_reap(pid_t pid, int ms)
{
	int status = 0, waited = 0;
	pid_t r;

	while ((r = waitpid(pid, &status, WNOHANG)) == 0 && waited < ms) {
		harness_sleep_us(1000);
		waited++;
	}
	if (r == 0) {
		kill(pid, SIGKILL);
		r = waitpid(pid, &status, 0);
	}
	harness_forget(pid);
	return r == pid ? status : -1;
}

void
harness_kill_all(void)
{
	size_t i;

	for (i = 0; i < nprocs; i++)
		kill(procs[i], SIGKILL);
	for (i = 0; i < nprocs; i++)
		waitpid(procs[i], NULL, 0);
	nprocs = 0;
}

static int
sanitizer_find(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *base = strrchr(info->dlpi_name, '/');

	(void)size;
	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, "libasan.so", 10) == 0 ||
	    strncmp(base, "libtsan.so", 10) == 0) {
		*(const char **)arg = info->dlpi_name;
		return 1;
	}
	return 0;
}

const char *
harness_sanitizer(void)
{
	const char *rt = NULL;

	dl_iterate_phdr(sanitizer_find, &rt);
	return rt;
}

int
harness_preload_set(const char *shim)
{
	const char *rt = harness_sanitizer();
	char both[2 * PATH_MAX];

	if (rt == NULL)
		return setenv("LD_PRELOAD", shim, 1);
	if ((size_t)snprintf(both, sizeof(both), "%s %s", rt, shim) >=
	    sizeof(both))
		return -1;
	return setenv("LD_PRELOAD", both, 1);
}

pid_t
harness_spawn(void (*child)(void *arg, int in, int out), void *arg, int *to,
    int *from)
{
	int in[2], out[2];
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) < 0)
		goto out_fail;
	if (pipe2(out, O_CLOEXEC) < 0)
		goto out_in;
	if ((pid = harness_fork()) < 0)
		goto out_out;
	if (pid == 0)
		child(arg, in[0], out[1]);
	close(in[0]);
	close(out[1]);
	*to = in[1];
	*from = out[0];
	return pid;

out_out:
	close(out[0]);
	close(out[1]);
out_in:
	close(in[0]);
	close(in[1]);
out_fail:
	log_warn("cannot start a child");
	return -1;
}

void
harness_daemon_exec(const char *top, const char *sock, const char *conf,
    const char *logpath)
{
	char prog[PATH_MAX];
	int fd;

	if (harness_path(prog, sizeof(prog), top, "daemon/gpufracd") < 0)
		_exit(127);
	if ((fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND, 0600)) < 0 ||
	    dup2(fd, STDERR_FILENO) < 0)
		_exit(127);
	if ((fd = open("/dev/null", O_RDWR)) < 0 ||
	    dup2(fd, STDIN_FILENO) < 0 || dup2(fd, STDOUT_FILENO) < 0)
		_exit(127);
	execl(prog, "gpufracd", "-f", "-s", sock, "-c", conf, (char *)NULL);
	fprintf(stderr, "cannot run '%s': %s\n", prog, strerror(errno));
	_exit(127);
}

int
harness_daemon_wait(pid_t *pid, int (*serves)(void *), void *arg, int ms)
{
	uint64_t deadline = harness_now_ns() + (uint64_t)ms * 1000000u;
	int status;

	while (!serves(arg)) {
		if (waitpid(*pid, &status, WNOHANG) == *pid) {
			harness_forget(*pid);
			*pid = 0;
			log_warnx("gpufracd exited at start");
			return -1;
		}
		if (harness_now_ns() > deadline) {
			log_warnx("gpufracd did not answer within %d ms", ms);
			return -1;
		}
		harness_sleep_us(10000);
	}
	return 0;
}

int
harness_env_real(const char *sock)
{
	static const char *const drop[] = { "LD_PRELOAD",
	    "GPUFRAC_MEMORY_LIMIT", "GPUFRAC_DISABLE", "GPUFRAC_LOG",
	    "GPUFRAC_PRIORITY", "GPUFRAC_RESOLVER", "GPUFRAC_WAIT_TIMEOUT",
	    "CUDA_VISIBLE_DEVICES", "SIMCUDA_CONTEXT_BYTES",
	    "SIMCUDA_NO_CHECKPOINT" };
	size_t i;

	for (i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
		unsetenv(drop[i]);
	if (setenv("GPUFRAC_SOCKET", sock, 1) < 0) {
		log_warn("cannot set the environment");
		return -1;
	}
	return 0;
}

int
harness_env(const char *top, const char *state, const char *devices,
    const char *sock)
{
	const char *old = getenv("LD_LIBRARY_PATH");
	char lib[2 * PATH_MAX];

	if ((size_t)snprintf(lib, sizeof(lib), "%s/tests/simcuda%s%s", top,
	    old && *old ? ":" : "", old && *old ? old : "") >= sizeof(lib)) {
		log_warnx("LD_LIBRARY_PATH is too long");
		return -1;
	}
	if (harness_env_real(sock) < 0)
		return -1;
	if (setenv("LD_LIBRARY_PATH", lib, 1) < 0 ||
	    setenv("SIMCUDA_STATE", state, 1) < 0 ||
	    setenv("SIMCUDA_DEVICES", devices, 1) < 0) {
		log_warn("cannot set the environment");
		return -1;
	}
	return 0;
}
