/*
 * The activity page shared with gpufracd: made on first contact (a sealed
 * memfd), and the way back when the daemon has swapped the process out.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "activity.h"
#include "client.h"
#include "log.h"
#include "shim.h"

/* Lines of its own, as on the shared page (the leases' slots). */
static struct gf_activity activity_private __attribute__((aligned(64)));
struct gf_activity *activity_page = &activity_private;
static int activity_memfd = -1;
static int activity_said;

/* A look at a move in under way at least this often (ns). */
#define ACTIVITY_IN_LOOK_NS	100000000L

/*
 * The copy engine is bringing the memory back (the mark committed in):
 * nothing is left for the daemon to do, and the call waits for the
 * engine to turn the mark (activity_mark_turn wakes it), whatever the
 * daemon says meanwhile.
 */
static void
activity_wait_in(struct gf_activity *p, uint32_t m)
{
	struct timespec look = { 0, ACTIVITY_IN_LOOK_NS };

	(void)syscall(SYS_futex, &p->swapped, FUTEX_WAIT, m, &look, NULL, 0);
}

struct gf_activity *
activity_swapped(struct gf_activity *p)
{
	uint32_t m;

	/* Not in the driver while waiting: the daemon may lock us now. */
	do {
		__atomic_sub_fetch(&p->inflight, 1, __ATOMIC_SEQ_CST);
		m = __atomic_load_n(&p->swapped, __ATOMIC_SEQ_CST);
		if (m & GF_SWAPPED_IN)
			activity_wait_in(p, m);
		else
			client_swap_in(GF_SWAPIN_CALL);
		__atomic_add_fetch(&p->inflight, 1, __ATOMIC_SEQ_CST);
	} while (__atomic_load_n(&p->swapped, __ATOMIC_SEQ_CST) != 0 &&
	    client_swap_pending());
	return p;
}

int
activity_mark_turn(uint32_t from, uint32_t to)
{
	struct gf_activity *p = __atomic_load_n(&activity_page,
	    __ATOMIC_ACQUIRE);
	int turned = __atomic_compare_exchange_n(&p->swapped, &from, to, 0,
	    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);

	(void)syscall(SYS_futex, &p->swapped, FUTEX_WAKE, INT_MAX, NULL, NULL,
	    0);
	return turned;
}

void
activity_flag(uint32_t flag)
{
	struct gf_activity *p = __atomic_load_n(&activity_page,
	    __ATOMIC_ACQUIRE);

	__atomic_or_fetch(&p->flags, flag, __ATOMIC_SEQ_CST);
}

static int
activity_make(void)
{
	const unsigned seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
	struct gf_activity *p;
	int fd;

	if ((fd = memfd_create("gpufrac-activity", MFD_CLOEXEC |
	    MFD_ALLOW_SEALING)) < 0)
		return -1;
	if (ftruncate(fd, GF_ACTIVITY_SIZE) < 0 ||
	    fcntl(fd, F_ADD_SEALS, seals) < 0)
		goto out_close;
	p = mmap(NULL, GF_ACTIVITY_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
	    fd, 0);
	if (p == MAP_FAILED)
		goto out_close;
	p->magic = GF_ACTIVITY_MAGIC;
	p->version = GF_ACTIVITY_VERSION;
	p->calls = __atomic_load_n(&activity_private.calls, __ATOMIC_RELAXED);
	/* This shim can move its own memory (vback.h): MOVE is understood. */
	p->flags = __atomic_load_n(&activity_private.flags, __ATOMIC_RELAXED) |
	    GF_ACT_COPY;
	__atomic_store_n(&activity_page, p, __ATOMIC_RELEASE);
	return fd;

out_close:
	close(fd);
	return -1;
}

int
activity_shared(void)
{
	return __atomic_load_n(&activity_page, __ATOMIC_ACQUIRE) !=
	    &activity_private;
}

/* Called with the client lock held: no two threads make one. */
int
activity_fd(void)
{
	if (activity_memfd < 0 && (activity_memfd = activity_make()) < 0 &&
	    shim_once(&activity_said))
		log_errx("cannot share an activity page with gpufracd: %s; "
		    "this process will never be swapped out", strerror(errno));
	return activity_memfd;
}

/*
 * The parent's page is still mapped here, and still the parent's: leave
 * it alone (the parent's daemon record reads it) and start afresh.
 */
void
activity_fork_child(void)
{
	activity_private.inflight = 0;
	activity_private.swapped = 0;
	__atomic_store_n(&activity_page, &activity_private, __ATOMIC_RELEASE);
	if (activity_memfd >= 0)
		close(activity_memfd);
	activity_memfd = -1;
	activity_said = 0;
}
