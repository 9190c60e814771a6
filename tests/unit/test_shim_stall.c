/*
 * Unit tests of shim/stall.c: a thread that waits in the driver unseen is
 * told from the driver's own threads by name, read again before it is
 * accused (a thread's maker names it once it runs, and may be late). The
 * "driver" is this program's code: a thread blocked in read() called
 * from waiter_main waits in it.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <cmocka.h>

/* The Makefile links unit tests with common/ only: build the file here. */
#include "../../shim/stall.c"

#define BLOCKED_TRIES	10000	/* 1 ms each: a thread blocks within 10 s */

struct waiter {
	pthread_t	t;
	int		pipe[2];
	pid_t		tid;		/* once it runs */
};

static void *
waiter_main(void *arg)
{
	struct waiter *w = arg;
	char c;

	__atomic_store_n(&w->tid, (pid_t)syscall(SYS_gettid),
	    __ATOMIC_RELEASE);
	/* Returns into this program's code: "in the driver". */
	return (void *)(intptr_t)read(w->pipe[0], &c, 1);
}

/* Start w, unnamed, and come back once it waits in its read. */
static void
waiter_start(struct waiter *w)
{
	const struct timespec ms = { 0, 1000000 };
	struct stall_state st;
	int i;

	assert_int_equal(pipe(w->pipe), 0);
	w->tid = 0;
	assert_int_equal(pthread_create(&w->t, NULL, waiter_main, w), 0);
	for (i = 0; i < BLOCKED_TRIES; i++) {
		pid_t tid = __atomic_load_n(&w->tid, __ATOMIC_ACQUIRE);

		if (tid != 0) {
			stall_read_state(tid, &st);
			if (st.blocked && st.nr == SYS_read)
				return;
		}
		nanosleep(&ms, NULL);
	}
	fail_msg("the waiting thread did not block in read() within 10 s");
}

static void
waiter_stop(struct waiter *w)
{
	assert_int_equal(write(w->pipe[1], "x", 1), 1);
	assert_int_equal(pthread_join(w->t, NULL), 0);
	close(w->pipe[0]);
	close(w->pipe[1]);
}

/* A look for stuck threads, made before w starts (the process goes out). */
static void
stall_ready(struct stall *s)
{
	assert_int_equal(stall_init(s, (const void *)waiter_main), 0);
	s->self[0] = (pid_t)syscall(SYS_gettid);
	stall_snapshot(s);
}

/* Named "cuda-..." between two looks: the driver's, never accused. */
static void
test_named_late(void **state)
{
	struct stall s;
	struct waiter w;

	(void)state;
	stall_ready(&s);
	waiter_start(&w);
	assert_int_equal(stall_look(&s), 0);	/* a verdict needs two */
	assert_int_equal(pthread_setname_np(w.t, "cuda-late"), 0);
	assert_int_equal(stall_look(&s), 0);
	assert_int_equal(stall_look(&s), 0);
	waiter_stop(&w);
	stall_free(&s);
}

/* The honest case beside it: a program's thread stuck there is found. */
static void
test_program_thread(void **state)
{
	struct stall s;
	struct waiter w;

	(void)state;
	stall_ready(&s);
	waiter_start(&w);
	assert_int_equal(pthread_setname_np(w.t, "worker"), 0);
	assert_int_equal(stall_look(&s), 0);
	assert_int_equal(stall_look(&s), w.tid);
	waiter_stop(&w);
	stall_free(&s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_named_late),
		cmocka_unit_test(test_program_thread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
