/*
 * What the benchmarks (bench/bench, bench/share) share: the build tree
 * they run from (make's O, default build/), paths, the clock, child processes that die with them
 * (each listed here, so that an early exit leaves nothing running), and
 * the shim preloaded after a sanitizer runtime.
 */
#ifndef GF_TOOLS_HARNESS_H
#define GF_TOOLS_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The build tree, from this program's own path: TOP/bench/PROGRAM. */
int	harness_top(char *top, size_t size);
/* base/name into buf: 0, or -1 (said) when it does not fit. */
int	harness_path(char *buf, size_t size, const char *base,
	    const char *name);

uint64_t harness_now_ns(void);		/* CLOCK_MONOTONIC */
void	harness_sleep_us(unsigned us);

/*
 * fork(2) a child that dies with this process (PDEATHSIG) and is listed
 * for harness_kill_all. As fork: the pid, 0 in the child, -1 (said).
 */
pid_t	harness_fork(void);
/* pid has been waited for elsewhere: no longer listed. */
void	harness_forget(pid_t pid);
/* Wait up to ms for pid, then SIGKILL it: its wait status, or -1. */
int	harness_reap(pid_t pid, int ms);
/* SIGKILL and wait for every child still listed. */
void	harness_kill_all(void);

/*
 * Start a child with a pipe to its stdin (*to) and one from its stdout
 * (*from): it runs child(arg, in, out), which must not return. Returns its
 * pid, or -1 (said).
 */
pid_t	harness_spawn(void (*child)(void *arg, int in, int out), void *arg,
	    int *to, int *from);

/*
 * In a child: become top's gpufracd -f on sock with conf, its log to
 * logpath, stdin and stdout /dev/null. Never returns.
 */
void	harness_daemon_exec(const char *top, const char *sock,
	    const char *conf, const char *logpath)
	    __attribute__((noreturn));

/*
 * Wait up to ms for the daemon just forked as *pid to serve, as
 * serves(arg) says: 0, or -1 (said) when it exited (*pid is then 0) or
 * did not answer in time.
 */
int	harness_daemon_wait(pid_t *pid, int (*serves)(void *), void *arg,
	    int ms);

/*
 * What every child sees: the simulated driver of top (LD_LIBRARY_PATH),
 * its state and devices, the daemon's socket, and none of the settings a
 * user's environment could bring. 0 or -1 (said).
 */
int	harness_env(const char *top, const char *state, const char *devices,
	    const char *sock);
/*
 * The same for the driver the environment finds (the real one): the
 * daemon's socket, and none of the settings a user's environment could
 * bring; LD_LIBRARY_PATH and SIMCUDA_* are left as they are. 0 or -1.
 */
int	harness_env_real(const char *sock);

/* The sanitizer runtime this program was linked with (SANITIZE=), or NULL. */
const char *harness_sanitizer(void);
/*
 * LD_PRELOAD for a child: the shim, after the sanitizer runtime if this
 * program has one, which must come first (as tests/integration/lib.sh
 * does for its programs). 0 or -1.
 */
int	harness_preload_set(const char *shim);

#endif
