/*
 * Threads that wait in the driver unseen. While the process is swapped
 * out, the driver holds it locked (cuCheckpointProcessLock): a thread that
 * calls the driver where no hook sees it (the private export tables that
 * libcudart uses) waits inside the driver for an unlock that nobody would
 * ask for. Such a thread is told from the others by what the kernel shows
 * of it: blocked in a system call (/proc/self/task/TID/syscall), with a
 * return address into the driver's code near the top of its stack, in a
 * state it was not in when the process went out, and still so at the next
 * look; not one of the driver's own threads (named "cuda..." as the real
 * driver names them), which sit in the driver for ever and wait
 * elsewhere once the process is locked.
 *
 * Only the stall thread (client_stall.c) uses it, and only while the
 * process is out: nothing here runs on a hook's path.
 */
#ifndef GF_SHIM_STALL_H
#define GF_SHIM_STALL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define STALL_TEXTS	4		/* executable segments of the driver */
#define STALL_SELF	3		/* threads of the shim, not looked at */

struct stall_thread;

struct stall {
	uintptr_t	 text[STALL_TEXTS][2];	/* the driver's code: [lo, hi) */
	int		 text_readable[STALL_TEXTS];
	size_t		 ntext;
	pid_t		 self[STALL_SELF];	/* 0: none */
	struct stall_thread *t;		/* the threads, as last seen */
	size_t		 n, cap;
	unsigned char	*buf;		/* a stack's top, as read */
};

/*
 * Find the driver's code from driver_fn, any function of it. Returns 0,
 * or -1 (nothing allocated) when it cannot be found.
 */
int	stall_init(struct stall *s, const void *driver_fn);
void	stall_free(struct stall *s);

/* The process has gone out: note every thread's state now. */
void	stall_snapshot(struct stall *s);

/*
 * Look again: the id of a thread that waits in the driver unseen (as
 * above), or 0.
 */
pid_t	stall_look(struct stall *s);

/* Threads listed now (after a snapshot or a look). */
size_t	stall_count(const struct stall *s);

#endif
