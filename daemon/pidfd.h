/*
 * A client's process, by pidfd (issue 22). A pid read once names whoever
 * holds that number later: a process that exited while a forked child
 * kept its socket, and whose pid went to an unrelated process, must never
 * be signalled through it. The daemon takes a pidfd of the peer as it
 * accepts the connection and signals only through it.
 */
#ifndef GF_DAEMON_PIDFD_H
#define GF_DAEMON_PIDFD_H

#include <stdint.h>

/*
 * A pidfd of the process at the other end of the connected socket sock,
 * whose SO_PEERCRED pid is pid: SO_PEERPIDFD (Linux 6.5) names the very
 * process that connected; on older kernels pidfd_open(pid), refused when
 * that process started after the connection was accepted (at_ms, on
 * CLOCK_BOOTTIME: another has the number). Returns the pidfd; or -1 with
 * *exited set when the process has exited already, else when none can be
 * had (logged at debug level).
 */
int	pidfd_of_peer(int sock, uint32_t pid, uint64_t at_ms, int *exited);

/*
 * A pidfd of pid's process, refused (-1, *exited set) when that process
 * started after at_ms (CLOCK_BOOTTIME: it is not the one seen then) or
 * has exited; -1 with *exited 0 when none can be had (logged at debug
 * level). What pidfd_of_peer does before SO_PEERPIDFD, and how a
 * process NVML lists is held (unshimmed.h).
 */
int	pidfd_by_pid(uint32_t pid, uint64_t at_ms, int *exited);

/*
 * When pid's process started, in ms since boot (/proc/PID/stat), what a
 * process is known by besides its pid; 0 if unknown (it has exited).
 */
uint64_t pidfd_start_ms(uint32_t pid);
/* How coarse pidfd_start_ms is: a process began within this after it. */
uint64_t pidfd_start_grain_ms(void);

/* Milliseconds since boot (CLOCK_BOOTTIME), what pidfd_of_peer compares. */
uint64_t pidfd_boot_ms(void);
/*
 * This boot's identity (/proc/sys/kernel/random/boot_id), which ms since
 * boot and start times are relative to: 0, or -1 (id all zero).
 */
int	pidfd_boot_id(uint8_t id[16]);

/*
 * Send sig (0: only ask whether it may be sent) to the process of pidfd,
 * whose pid is pid (for the log, and the fuzzer's simulated processes).
 * Returns 0, or -1 with errno (ESRCH: it has exited, or pidfd is -1).
 */
int	pidfd_signal(int pidfd, uint32_t pid, int sig);

/* Whether the process of pidfd has exited (its pidfd is readable). */
int	pidfd_exited(int pidfd);

#endif
