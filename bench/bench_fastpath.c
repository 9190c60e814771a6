/*
 * The fast path: alloc+free pairs of BENCH_SIZE bytes through the shim and
 * on the bare simulated driver, in two worker processes that take turns,
 * one repetition each at a time; on one thread, then on FP_THREADS threads
 * at once. Through the shim the first allocation of the warm-up asks the
 * daemon and is given a lease: every pair timed is drawn from it, and the
 * lease never idles long enough to be taken back.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "harness.h"
#include "log.h"

#define FP_REPS		21
#define FP_PAIRS	20000		/* per repetition, over all threads */
#define FP_WARMUP	200

/* One of a worker's threads. */
struct fp_thread {
	struct fp_pool	*pool;
	pthread_t	 thread;
	long		 pairs;
	CUresult	 status;
};

struct fp_pool {
	const struct cuda_api *api;
	pthread_barrier_t start, done;
	int		 nthreads, quit;
	void		 (*around)(void);	/* before and after the pairs */
	struct fp_thread t[FP_THREADS_MAX];
};

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

static void *
fp_thread_main(void *arg)
{
	struct fp_thread *t = arg;
	struct fp_pool *pool = t->pool;

	if (cuda_thread(pool->api) < 0)
		t->status = CUDA_ERROR_INVALID_CONTEXT;
	for (;;) {
		pthread_barrier_wait(&pool->start);
		if (pool->quit)
			return NULL;
		if (t->status == CUDA_SUCCESS) {
			if (pool->around != NULL)
				pool->around();
			t->status = fastpath_pairs(pool->api, t->pairs);
			if (pool->around != NULL)
				pool->around();
		}
		pthread_barrier_wait(&pool->done);
	}
}

int
fp_pool_start(struct fp_pool **pp, const struct cuda_api *api, long pairs,
    int nthreads, void (*around)(void))
{
	struct fp_pool *pool;
	int i;

	if (nthreads < 1 || nthreads > FP_THREADS_MAX ||
	    (pool = calloc(1, sizeof(*pool))) == NULL)
		return -1;
	pool->api = api;
	pool->around = around;
	pool->nthreads = nthreads;
	pool->t[0].pairs = pairs / nthreads;
	*pp = pool;
	if (nthreads == 1)
		return 0;	/* the caller's thread, as a program */
	if (pthread_barrier_init(&pool->start, NULL, nthreads + 1) != 0 ||
	    pthread_barrier_init(&pool->done, NULL, nthreads + 1) != 0)
		fatalx("cannot make a barrier");
	for (i = 0; i < nthreads; i++) {
		pool->t[i].pool = pool;
		pool->t[i].pairs = pairs / nthreads;
		if (pthread_create(&pool->t[i].thread, NULL, fp_thread_main,
		    &pool->t[i]) != 0)
			fatalx("cannot start a thread");
	}
	return 0;
}

/* One round: every thread does its pairs; the first failure, or 0. */
CUresult
fp_pool_run(struct fp_pool *pool)
{
	CUresult r = CUDA_SUCCESS;
	int i;

	if (pool->nthreads == 1) {
		if (pool->around != NULL)
			pool->around();
		r = fastpath_pairs(pool->api, pool->t[0].pairs);
		if (pool->around != NULL)
			pool->around();
		return r;
	}
	pthread_barrier_wait(&pool->start);
	pthread_barrier_wait(&pool->done);
	for (i = 0; i < pool->nthreads; i++)
		if (r == CUDA_SUCCESS)
			r = pool->t[i].status;
	return r;
}

void
fp_pool_stop(struct fp_pool *pool)
{
	int i;

	if (pool->nthreads > 1) {
		pool->quit = 1;
		pthread_barrier_wait(&pool->start);
		for (i = 0; i < pool->nthreads; i++)
			pthread_join(pool->t[i].thread, NULL);
		pthread_barrier_destroy(&pool->start);
		pthread_barrier_destroy(&pool->done);
	}
	free(pool);
}

int
fp_open(struct cuda_api *api)
{
	CUresult r;

	if (cuda_open(api) < 0)
		return -1;
	if ((r = fastpath_pairs(api, FP_WARMUP)) != CUDA_SUCCESS) {
		log_warnx("warm-up alloc+free failed: CUresult %d", (int)r);
		return -1;
	}
	return 0;
}

/* CPUs the pairs can run on at once: the threads, at most the CPUs. */
static int
fp_parallel(int nthreads)
{
	cpu_set_t set;
	int cpus;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		cpus = CPU_COUNT(&set);
	else
		cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	return cpus < 1 || nthreads < cpus ? nthreads : cpus;
}

/*
 * "fastpath PAIRS THREADS": on each 'r' read, time PAIRS pairs spread
 * over THREADS threads; 'q' ends. The time per pair is the round's wall
 * time times the CPUs in use, over the pairs: on one thread, the time of
 * a pair; on several, what a pair costs a CPU, contention included.
 */
int
fastpath_worker(int argc, char *argv[])
{
	struct worker_reply rep;
	struct fp_pool *pool = NULL;
	struct cuda_api api;
	long pairs, nthreads;
	char *end, cmd;
	uint64_t t0;

	errno = 0;
	if (argc != 3 || (pairs = strtol(argv[1], &end, 10)) <= 0 || *end ||
	    (nthreads = strtol(argv[2], &end, 10)) <= 0 || *end || errno ||
	    nthreads > FP_THREADS_MAX)
		return 2;
	memset(&rep, 0, sizeof(rep));
	if (fp_open(&api) < 0 || fp_pool_start(&pool, &api, pairs,
	    (int)nthreads, NULL) < 0)
		rep.status = -1;
	while (read(STDIN_FILENO, &cmd, 1) == 1 && cmd == 'r') {
		if (rep.status == 0) {
			t0 = harness_now_ns();
			rep.status = (int32_t)fp_pool_run(pool);
			rep.ns = (harness_now_ns() - t0) *
			    (uint64_t)fp_parallel((int)nthreads) /
			    (uint64_t)pairs;
		}
		if (proc_write(STDOUT_FILENO, &rep, sizeof(rep)) < 0)
			return 1;
	}
	if (pool != NULL)
		fp_pool_stop(pool);
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

/* bare and shim per pair, and what the shim adds, on nthreads threads. */
static void
fp_run(const struct bench *b, int nthreads, double *bare, double *shim,
    double *added, char *note, size_t notelen)
{
	char pairs[16], threads[16];
	char *args[] = { (char *)"fastpath", pairs, threads, NULL };
	struct fp_worker w[2] = { { .name = "bare" }, { .name = "shim" } };
	char name[2][32];
	double diff[FP_REPS];
	int i, k;

	snprintf(pairs, sizeof(pairs), "%d", FP_PAIRS);
	snprintf(threads, sizeof(threads), "%d", nthreads);
	for (k = 0; k < 2; k++) {
		snprintf(name[k], sizeof(name[k]), "fastpath-%s-%d", w[k].name,
		    nthreads);
		w[k].pid = proc_worker(b, k, name[k], args, &w[k].to,
		    &w[k].from);
	}
	if (w[0].pid < 0 || w[1].pid < 0) {
		snprintf(note, notelen, "cannot start the workers");
		goto out;
	}
	for (i = 0; i < FP_REPS; i++)
		for (k = 0; k < 2; k++)
			if (fp_rep(&w[k], i, note, notelen) < 0)
				goto out;
	/* Each repetition pairs a shim run with the bare run just before. */
	for (i = 0; i < FP_REPS; i++)
		diff[i] = w[1].ns[i] - w[0].ns[i];
	*added = stats_median(diff, FP_REPS);
	*bare = stats_median(w[0].ns, FP_REPS);
	*shim = stats_median(w[1].ns, FP_REPS);
out:
	for (k = 0; k < 2; k++) {
		if (w[k].pid <= 0)
			continue;
		close(w[k].to);		/* end of input: the worker exits */
		close(w[k].from);
		harness_reap(w[k].pid, 5000);
	}
}

void
fastpath_measure(const struct bench *b, struct results *r)
{
	fp_run(b, 1, &r->bare_ns, &r->shim_ns, &r->fastpath_added_ns,
	    r->fastpath_note, sizeof(r->fastpath_note));
	r->fastpath_threads = FP_THREADS;
	if (r->fastpath_note[0] == '\0')
		fp_run(b, FP_THREADS, &r->bare_ns_mt, &r->shim_ns_mt,
		    &r->fastpath_added_ns_mt, r->fastpath_note,
		    sizeof(r->fastpath_note));
}
