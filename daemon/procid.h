/*
 * Who a process is that the daemon did not hear from: one NVML lists
 * with device memory and no connection (unshimmed.h). The kernel says it
 * (/proc/PID: status, cgroup, maps, environ), read with a pidfd held so
 * that what was read is the process the pidfd names, and the pidfd
 * refused when its process started after NVML listed the pid (another
 * has the number now, issue 22).
 */
#ifndef GF_DAEMON_PROCID_H
#define GF_DAEMON_PROCID_H

#include <stddef.h>
#include <stdint.h>

/*
 * Why a process holds device memory without the shim, as /proc shows
 * it: for the event's reason only, since a process chooses what it maps
 * and what its environment says (issue 38).
 */
enum {
	PROCID_UNKNOWN = 0,	/* maps or environ unreadable */
	PROCID_NO_SHIM,		/* libgpufrac.so is not loaded */
	PROCID_DISABLED,	/* loaded, GPUFRAC_DISABLE=1 */
	PROCID_OTHER_SOCKET,	/* loaded, GPUFRAC_SOCKET is another */
	PROCID_NOT_CONNECTED,	/* a file of that name loaded, this
				   daemon's socket, no connection: a
				   client lost or coming back, or one
				   that only says so */
};

struct procid {
	int		 pidfd;		/* the process's, the caller's to close */
	uint32_t	 uid;		/* effective, as SO_PEERCRED has it */
	uint32_t	 gid;
	uint64_t	 start_ms;	/* its start (pidfd_start_ms) */
	char		*cgroup;	/* malloc'd, the caller's; "" if unknown */
	int		 why;		/* PROCID_* */
	char		 socket[108];	/* PROCID_OTHER_SOCKET's, cut to fit */
};

/*
 * Read pid's identity into *p, the pid as NVML listed it at at_ms
 * (CLOCK_BOOTTIME, pidfd_boot_ms), socket the daemon's. Returns 0; or -1
 * when the process is gone, started after at_ms, or cannot be read
 * (nothing to free then). What its maps show does not matter: NVML's
 * pids are the daemon's pid namespace's (gpufracd(8)).
 */
int	procid_read(uint32_t pid, uint64_t at_ms, const char *socket,
	    struct procid *p);

/*
 * Read again who the live process of pidfd, whose pid is pid, is now:
 * its effective uid and gid, and its cgroup (malloc'd into *cgroup, the
 * caller's). Returns 0; or -1 when it has exited or cannot be read
 * (nothing to free then). What was read is the process the pidfd names:
 * it is checked alive after the reading (issue 39).
 */
int	procid_reread(int pidfd, uint32_t pid, uint32_t *uid, uint32_t *gid,
	    char **cgroup);

/* What why says, for an event: "no shim loaded", ... */
const char *procid_why(const struct procid *p, char *buf, size_t size);

#endif
