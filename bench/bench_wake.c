/*
 * The wait resolver's wake-up: on a full device, B's cuMemAlloc waits in
 * the daemon's queue until A's cuMemFree gives the memory back. Measured
 * from the return of A's free to the return of B's allocation, each taken
 * with CLOCK_MONOTONIC in its own process; the bench sees B waiting (ps)
 * before it lets A free.
 */
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "harness.h"
#include "log.h"
#include "units.h"

#define WAKE_REPS	3
#define WAKE_ITERS	100		/* per repetition */
#define WAKE_WARMUP	3
#define WAKE_A_SIZE	"12Gi"		/* of the 16Gi device: B must wait */
#define WAKE_B_SIZE	"8Gi"
#define WAKE_WAIT_MS	5000		/* for any one step */

/* "wake SIZE": 'a' allocates SIZE, 'f' frees it; each answered. */
int
wake_worker(int argc, char *argv[])
{
	struct worker_reply rep;
	struct cuda_api api;
	CUdeviceptr p = 0;
	uint64_t size;
	char cmd;
	int ok;

	if (argc != 2 || size_parse(argv[1], &size) < 0)
		return 2;
	ok = cuda_open(&api) == 0;
	memset(&rep, 0, sizeof(rep));
	while (read(STDIN_FILENO, &cmd, 1) == 1) {
		if (!ok)
			rep.status = -1;
		else if (cmd == 'a')
			rep.status = (int32_t)api.alloc(&p, (size_t)size);
		else
			rep.status = (int32_t)api.free(p);
		rep.ns = harness_now_ns();
		if (proc_write(STDOUT_FILENO, &rep, sizeof(rep)) < 0)
			return 1;
	}
	return 0;
}

struct wake_proc {
	const char	*name;
	pid_t		 pid;
	int		 to, from;
};

/* The answer to the last command: the time it carries, or 0. */
static uint64_t
wake_answer(const struct wake_proc *w, char *note, size_t notelen)
{
	struct worker_reply rep;

	if (proc_read(w->from, &rep, sizeof(rep), WAKE_WAIT_MS) < 0) {
		snprintf(note, notelen, "worker %s did not answer within "
		    "%d ms (see its .err)", w->name, WAKE_WAIT_MS);
		return 0;
	}
	if (rep.status != 0) {
		snprintf(note, notelen, "worker %s: CUresult %d", w->name,
		    (int)rep.status);
		return 0;
	}
	return rep.ns;
}

static uint64_t
wake_cmd(const struct wake_proc *w, char cmd, char *note, size_t notelen)
{
	if (proc_write(w->to, &cmd, 1) < 0) {
		snprintf(note, notelen, "worker %s is gone", w->name);
		return 0;
	}
	return wake_answer(w, note, notelen);
}

/* Until the daemon shows B waiting; -1 if B was answered instead. */
static int
wake_until_waiting(const struct bench *b, const struct wake_proc *w,
    char *note, size_t notelen)
{
	uint64_t deadline = harness_now_ns() + WAKE_WAIT_MS * 1000000ull;
	struct pollfd pfd = { .fd = w->from, .events = POLLIN };

	while (wire_client_state(b->sock, (uint32_t)w->pid) !=
	    GF_STATE_WAITING) {
		if (poll(&pfd, 1, 0) != 0) {
			snprintf(note, notelen, "worker %s's allocation "
			    "returned without waiting", w->name);
			return -1;
		}
		if (harness_now_ns() > deadline) {
			snprintf(note, notelen, "worker %s was not seen "
			    "waiting within %d ms", w->name, WAKE_WAIT_MS);
			return -1;
		}
		harness_sleep_us(50);
	}
	return 0;
}

/* A fills the device, B waits, A frees: B's wake-up in µs, or NAN. */
static double
wake_once(const struct bench *b, const struct wake_proc *a,
    const struct wake_proc *wb, char *note, size_t notelen)
{
	uint64_t freed, woke;

	if (wake_cmd(a, 'a', note, notelen) == 0)
		return NAN;
	if (proc_write(wb->to, "a", 1) < 0 ||
	    wake_until_waiting(b, wb, note, notelen) < 0)
		return NAN;
	if ((freed = wake_cmd(a, 'f', note, notelen)) == 0 ||
	    (woke = wake_answer(wb, note, notelen)) == 0 ||
	    wake_cmd(wb, 'f', note, notelen) == 0)
		return NAN;
	/* Signed: B may return before A's free has. */
	return ((double)woke - (double)freed) / 1000;
}

static int
wake_reps(const struct bench *b, const struct wake_proc *a,
    const struct wake_proc *wb, struct results *r)
{
	double v[WAKE_ITERS], p50[WAKE_REPS], p99[WAKE_REPS];
	int i, rep;

	for (i = 0; i < WAKE_WARMUP; i++)
		if (isnan(wake_once(b, a, wb, r->wake_note,
		    sizeof(r->wake_note))))
			return -1;
	for (rep = 0; rep < WAKE_REPS; rep++) {
		for (i = 0; i < WAKE_ITERS; i++)
			if (isnan(v[i] = wake_once(b, a, wb, r->wake_note,
			    sizeof(r->wake_note))))
				return -1;
		p99[rep] = stats_quantile(v, WAKE_ITERS, 0.99);
		p50[rep] = stats_quantile(v, WAKE_ITERS, 0.50);
	}
	r->wake_p50_us = stats_median(p50, WAKE_REPS);
	r->wake_p99_us = stats_median(p99, WAKE_REPS);
	r->wake_samples = WAKE_REPS * WAKE_ITERS;
	return 0;
}

void
wake_measure(const struct bench *b, struct results *r)
{
	char *a_args[] = { (char *)"wake", (char *)WAKE_A_SIZE, NULL };
	char *b_args[] = { (char *)"wake", (char *)WAKE_B_SIZE, NULL };
	struct wake_proc w[2] = { { .name = "wake-a" }, { .name = "wake-b" } };
	int k;

	w[0].pid = proc_worker(b, 1, w[0].name, a_args, &w[0].to,
	    &w[0].from);
	w[1].pid = proc_worker(b, 1, w[1].name, b_args, &w[1].to,
	    &w[1].from);
	if (w[0].pid < 0 || w[1].pid < 0)
		snprintf(r->wake_note, sizeof(r->wake_note), "cannot start "
		    "the workers");
	else
		(void)wake_reps(b, &w[0], &w[1], r);
	for (k = 0; k < 2; k++) {
		if (w[k].pid <= 0)
			continue;
		close(w[k].to);
		close(w[k].from);
		harness_reap(w[k].pid, 5000);
	}
}
