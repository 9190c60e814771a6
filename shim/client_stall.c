/*
 * The stall thread: asleep until gpufracd marks the process swapped out
 * (a futex on the activity page's mark, which the daemon wakes), then, a
 * look every STALL_LOOK_MS while it stays out, asking for swap-in on
 * behalf of a thread that waits in the driver where no hook sees it
 * (stall.h), which would otherwise wait for ever.
 */
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "activity.h"
#include "client.h"
#include "client_int.h"
#include "gpufrac/proto.h"
#include "log.h"
#include "real.h"
#include "stall.h"

#define STALL_LOOK_MS		100
#define STALL_STACK_SIZE	(256 * 1024)

int client_stall_running;
pid_t client_watcher_tid;
static pid_t stall_spared;		/* client_stall_spare's */

void
client_stall_spare(pid_t tid)
{
	__atomic_store_n(&stall_spared, tid, __ATOMIC_RELEASE);
}

static int
stall_out(struct gf_activity *p)
{
	return __atomic_load_n(&p->swapped, __ATOMIC_SEQ_CST) != 0;
}

/* Sleep until the daemon marks the process out (swap.c wakes us). */
static void
stall_wait_out(struct gf_activity *p)
{
	while (!stall_out(p))
		(void)syscall(SYS_futex, &p->swapped, FUTEX_WAIT, 0, NULL,
		    NULL, 0);
}

/* One time out: look until it is back, or a thread needs it back. */
static void
stall_watch_out(struct stall *s, struct gf_activity *p)
{
	int looks = 0, said = 0;
	pid_t tid;

	/*
	 * The copy engine's thread is in the driver on purpose. Read at
	 * every look: the daemon wakes us before its first MOVE, and the
	 * thread may start after the snapshot (issue 33).
	 */
	s->self[2] = __atomic_load_n(&stall_spared, __ATOMIC_ACQUIRE);
	stall_snapshot(s);
	log_debug("swapped out: watching %zu threads for one that waits in "
	    "the driver unseen", stall_count(s));
	while (stall_out(p)) {
		poll(NULL, 0, STALL_LOOK_MS);
		if (!stall_out(p))
			break;
		looks++;
		s->self[2] = __atomic_load_n(&stall_spared, __ATOMIC_ACQUIRE);
		if ((tid = stall_look(s)) == 0) {
			/* A verdict needs two looks: the fifth says enough. */
			if (looks == 1 || looks == 5)
				log_debug("swapped out: no thread waits in "
				    "the driver unseen after %d look%s", looks,
				    looks == 1 ? "" : "s");
			continue;
		}
		if (!said++)
			log_info("thread %d waits in the driver unseen while "
			    "this process is swapped out: asking gpufracd to "
			    "bring it back", (int)tid);
		client_swap_in(GF_SWAPIN_UNSEEN);
		if (stall_out(p) && !client_swap_pending())
			break;
	}
}

static const void *
stall_driver_fn(void)
{
	if (real_cu.cuMemAlloc_v2 != NULL)
		return (const void *)real_cu.cuMemAlloc_v2;
	return (const void *)real_cu.cuGetProcAddress_v2;
}

static void *
stall_main(void *arg)
{
	struct gf_activity *p = arg;
	/* Static: a fork child's own thread frees what its parent's had. */
	static struct stall s;

	stall_free(&s);
	if (stall_init(&s, stall_driver_fn()) < 0) {
		log_info("cannot find the driver's code: threads that wait in "
		    "it unseen will not be noticed while swapped out");
		return NULL;
	}
	s.self[0] = (pid_t)syscall(SYS_gettid);
	s.self[1] = __atomic_load_n(&client_watcher_tid, __ATOMIC_RELAXED);
	for (;;) {
		stall_wait_out(p);
		stall_watch_out(&s, p);
	}
	return NULL;
}

/*
 * Start the stall thread, once the activity page is the one shared with
 * the daemon (it never moves after that), with every signal blocked.
 */
void
client_stall_start(void)
{
	pthread_attr_t attr;
	struct gf_activity *p;
	sigset_t all, old;
	pthread_t t;
	int e;

	if (client_stall_running || !activity_shared())
		return;
	p = __atomic_load_n(&activity_page, __ATOMIC_ACQUIRE);
	client_stall_running = 1;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, STALL_STACK_SIZE);
	e = pthread_create(&t, &attr, stall_main, p);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0) {
		log_errx("cannot start a thread to watch a swapped-out "
		    "process: %s", strerror(e));
		return;
	}
	pthread_setname_np(t, "gpufrac-stall");
}
