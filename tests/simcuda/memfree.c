/*
 * Device memory's pages given back off the caller's thread. A VMM
 * allocation is a memfd, and closing its last descriptor frees its pages,
 * which on a development machine costs 160-200 ms per GiB: far more than
 * a real driver takes to give device memory back, and paid inside every
 * move that releases memory (the copy engine's swap-out). So the file
 * goes to a thread of the driver's own, named as the real driver's are
 * ("cuda-...": the shim's look for stuck threads leaves it alone), which
 * closes it; the device's capacity is given back at once, as the driver's
 * is (vmm.c's phys_put).
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "sim.h"

static pthread_mutex_t memfree_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t memfree_cv = PTHREAD_COND_INITIALIZER;
static pthread_cond_t memfree_idle_cv = PTHREAD_COND_INITIALIZER;
static int *memfree_fds;		/* the files to close */
static size_t memfree_n, memfree_cap;
static int memfree_closing;		/* the thread holds files taken off
					 * the list and not all closed yet */
static pid_t memfree_pid;		/* whose thread runs: 0 none */

static void *
memfree_main(void *arg)
{
	int *mine = NULL, *t;
	size_t n, i, cap = 0, c;

	(void)arg;
	/* Before it first waits: its maker's naming may come too late. */
	pthread_setname_np(pthread_self(), "cuda-memfree");
	for (;;) {
		pthread_mutex_lock(&memfree_lock);
		while (memfree_n == 0)
			pthread_cond_wait(&memfree_cv, &memfree_lock);
		/* Take the list (and leave ours, emptied): closed unlocked. */
		t = memfree_fds;
		memfree_fds = mine;
		mine = t;
		c = memfree_cap;
		memfree_cap = cap;
		cap = c;
		n = memfree_n;
		memfree_n = 0;
		memfree_closing = 1;
		pthread_mutex_unlock(&memfree_lock);
		for (i = 0; i < n; i++)
			close(mine[i]);
		pthread_mutex_lock(&memfree_lock);
		memfree_closing = 0;
		pthread_cond_broadcast(&memfree_idle_cv);
		pthread_mutex_unlock(&memfree_lock);
	}
	return NULL;
}

/* The closing thread of this process (a forked child starts its own). */
static int
memfree_start(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	int r;

	if (memfree_pid == getpid())
		return 0;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* Detached from the start: a fork child's thread may get its id. */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	r = pthread_create(&t, &attr, memfree_main, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0)
		return -1;
	pthread_setname_np(t, "cuda-memfree");
	memfree_pid = getpid();
	return 0;
}

void
memfree_later(int fd)
{
	int *fds;

	pthread_mutex_lock(&memfree_lock);
	if (memfree_n == memfree_cap) {
		fds = realloc(memfree_fds, (memfree_cap * 2 + 16) *
		    sizeof(*fds));
		if (fds != NULL) {
			memfree_fds = fds;
			memfree_cap = memfree_cap * 2 + 16;
		}
	}
	/* No thread, or no room: closed here, as before. */
	if (memfree_n == memfree_cap || memfree_start() < 0) {
		pthread_mutex_unlock(&memfree_lock);
		close(fd);
		return;
	}
	memfree_fds[memfree_n++] = fd;
	pthread_cond_signal(&memfree_cv);
	pthread_mutex_unlock(&memfree_lock);
}

/*
 * Fork (init.c's handlers, after sim_lock: the order memfree_later takes
 * the two in). The lock is held across fork() so that the child's copy
 * of the list is whole, and taken only once the thread has closed what
 * it took off the list: the child has no thread to close its copies of
 * those, and could not tell which of them the parent had closed already.
 * The thread never takes sim_lock, so the wait ends; it costs a fork at
 * most the closing of what was released just before it.
 */
void
memfree_fork_prepare(void)
{
	pthread_mutex_lock(&memfree_lock);
	while (memfree_closing)
		pthread_cond_wait(&memfree_idle_cv, &memfree_lock);
}

void
memfree_fork_parent(void)
{
	pthread_mutex_unlock(&memfree_lock);
}

/*
 * The child closes its copies of the files still listed, and starts with
 * an empty list and no thread (memfree_later starts one). The lock, held
 * by this thread since memfree_fork_prepare, is released, not made anew:
 * ThreadSanitizer keeps a lock made anew while held as held for ever, and
 * then reads the child's next sim_lock as a lock-order inversion. The
 * condition variables are made anew: the parent's thread waited on them.
 */
void
memfree_fork_child(void)
{
	size_t i;

	for (i = 0; i < memfree_n; i++)
		close(memfree_fds[i]);
	memfree_n = 0;
	memfree_closing = 0;
	memfree_pid = 0;
	pthread_cond_init(&memfree_cv, NULL);
	pthread_cond_init(&memfree_idle_cv, NULL);
	pthread_mutex_unlock(&memfree_lock);
}
