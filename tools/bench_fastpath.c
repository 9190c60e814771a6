/*
 * The fast path: alloc+free pairs of BENCH_SIZE bytes through the shim and
 * on the bare simulated driver, in two worker processes that take turns,
 * one repetition each at a time. Through the shim the first allocation of
 * the warm-up asks the daemon and is given a lease: every pair timed is
 * drawn from it, and the lease never idles long enough to be taken back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "log.h"

#define FP_REPS		21
#define FP_PAIRS	"20000"
#define FP_WARMUP	200

/* pairs alloc+free; the CUresult of the first failure, or 0. */
static CUresult
fastpath_pairs(const struct cuda_api *api, long pairs)
{
	CUdeviceptr p;
	CUresult r;
	long i;

	for (i = 0; i < pairs; i++) {
		if ((r = api->alloc(&p, BENCH_SIZE)) != CUDA_SUCCESS)
			return r;
		if ((r = api->free(p)) != CUDA_SUCCESS)
			return r;
	}
	return CUDA_SUCCESS;
}

/* "fastpath PAIRS": on each 'r' read, time PAIRS pairs; 'q' ends. */
int
fastpath_worker(int argc, char *argv[])
{
	struct worker_reply rep;
	struct cuda_api api;
	char *end, cmd;
	uint64_t t0;
	long pairs;

	if (argc != 2 || (pairs = strtol(argv[1], &end, 10)) <= 0 || *end)
		return 2;
	memset(&rep, 0, sizeof(rep));
	if (cuda_open(&api) < 0)
		rep.status = -1;
	else
		rep.status = (int32_t)fastpath_pairs(&api, FP_WARMUP);
	while (read(STDIN_FILENO, &cmd, 1) == 1 && cmd == 'r') {
		if (rep.status == 0) {
			t0 = now_ns();
			rep.status = (int32_t)fastpath_pairs(&api, pairs);
			rep.ns = (now_ns() - t0) / (uint64_t)pairs;
		}
		if (proc_write(STDOUT_FILENO, &rep, sizeof(rep)) < 0)
			return 1;
	}
	return 0;
}

struct fp_worker {
	const char	*name;
	pid_t		 pid;
	int		 to, from;
	double		 ns[FP_REPS];
};

static int
fp_rep(struct fp_worker *w, int i, char *note, size_t notelen)
{
	struct worker_reply rep;

	if (proc_write(w->to, "r", 1) < 0 ||
	    proc_read(w->from, &rep, sizeof(rep), 20000) < 0) {
		snprintf(note, notelen, "the %s worker did not answer (see "
		    "its .err)", w->name);
		return -1;
	}
	if (rep.status != 0) {
		snprintf(note, notelen, "%s alloc+free failed: CUresult %d",
		    w->name, (int)rep.status);
		return -1;
	}
	w->ns[i] = (double)rep.ns;
	return 0;
}

void
fastpath_measure(const struct bench *b, struct results *r)
{
	char *bare_args[] = { (char *)"fastpath", (char *)FP_PAIRS, NULL };
	char *shim_args[] = { (char *)"fastpath", (char *)FP_PAIRS, NULL };
	struct fp_worker w[2] = { { .name = "bare" }, { .name = "shim" } };
	double added[FP_REPS];
	int i, k;

	w[0].pid = proc_worker(b, 0, "fastpath-bare", bare_args, &w[0].to,
	    &w[0].from);
	w[1].pid = proc_worker(b, 1, "fastpath-shim", shim_args, &w[1].to,
	    &w[1].from);
	if (w[0].pid < 0 || w[1].pid < 0) {
		snprintf(r->fastpath_note, sizeof(r->fastpath_note),
		    "cannot start the workers");
		goto out;
	}
	for (i = 0; i < FP_REPS; i++)
		for (k = 0; k < 2; k++)
			if (fp_rep(&w[k], i, r->fastpath_note,
			    sizeof(r->fastpath_note)) < 0)
				goto out;
	/* Each repetition pairs a shim run with the bare run just before. */
	for (i = 0; i < FP_REPS; i++)
		added[i] = w[1].ns[i] - w[0].ns[i];
	r->fastpath_added_ns = stats_median(added, FP_REPS);
	r->bare_ns = stats_median(w[0].ns, FP_REPS);
	r->shim_ns = stats_median(w[1].ns, FP_REPS);
out:
	for (k = 0; k < 2; k++) {
		if (w[k].pid <= 0)
			continue;
		close(w[k].to);		/* end of input: the worker exits */
		close(w[k].from);
		proc_reap(w[k].pid, 5000);
	}
}
