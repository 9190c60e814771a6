/*
 * The fast path in instructions: the pairs of bench_fastpath.c counted by
 * callgrind, through the shim and on the bare driver, on one thread and on
 * FP_THREADS at once. Unlike times, instruction counts do not move with
 * whatever else the machine is doing (on several threads, a little: with
 * the order valgrind runs them in). Each thread of a worker turns
 * callgrind's collection on for its own pairs only (a client request), so
 * start-up, the warm-up and the daemon's round trip for the lease are left
 * out. What the shim adds is the difference per pair between the two runs,
 * each less what the driver's own cuMemAlloc_v2 and cuMemFree_v2 cost in
 * it (bench_callgrind.c says why); driver calls the shim adds count.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "harness.h"
#include "log.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define COUNT_BUILT	1
#endif
#endif
#ifndef COUNT_BUILT
#define COUNT_BUILT	0
#endif

#define COUNT_PAIRS	20000		/* per run, over all threads */
#define COUNT_WAIT_MS	300000		/* for a worker under callgrind */

static void
count_toggle(void)
{
#if COUNT_BUILT
	CALLGRIND_TOGGLE_COLLECT;
#endif
}

/* "count PAIRS THREADS": one round of pairs, counted, then one answer. */
int
count_worker(int argc, char *argv[])
{
	struct worker_reply rep;
	struct fp_pool *pool;
	struct cuda_api api;
	long pairs, nthreads;
	char *end;

	errno = 0;
	if (argc != 3 || (pairs = strtol(argv[1], &end, 10)) <= 0 || *end ||
	    (nthreads = strtol(argv[2], &end, 10)) <= 0 || *end || errno)
		return 2;
	memset(&rep, 0, sizeof(rep));
	rep.status = -1;
#if COUNT_BUILT
	if (!RUNNING_ON_VALGRIND)
		log_warnx("not under valgrind: nothing is counted");
	else if (fp_open(&api) == 0 && fp_pool_start(&pool, &api, pairs,
	    (int)nthreads, count_toggle) == 0) {
		rep.status = (int32_t)fp_pool_run(pool);
		fp_pool_stop(pool);
	}
#else
	(void)pool, (void)api, (void)count_toggle;
#endif
	return proc_write(STDOUT_FILENO, &rep, sizeof(rep)) < 0;
}

/* valgrind in the PATH? */
static int
count_valgrind(void)
{
	const char *path = getenv("PATH"), *p, *colon;
	char prog[PATH_MAX];
	int n;

	for (p = path ? path : "/usr/bin:/bin"; *p != '\0'; p = colon + 1) {
		if ((colon = strchr(p, ':')) == NULL)
			colon = p + strlen(p);
		n = snprintf(prog, sizeof(prog), "%.*s/valgrind",
		    (int)(colon - p), p);
		if (n > 0 && (size_t)n < sizeof(prog) &&
		    access(prog, X_OK) == 0)
			return 1;
		if (*colon == '\0')
			break;
	}
	return 0;
}

/*
 * Instructions per pair in one run of a worker, and in *own those not
 * spent inside the driver's cuMemAlloc_v2 and cuMemFree_v2
 * (bench_callgrind.c); NAN with a note.
 */
static double
count_run(const struct bench *b, int preload, int nthreads, double *own,
    char *note, size_t notelen)
{
	char name[32], file[PATH_MAX], out[PATH_MAX + 32], pairs[16];
	char threads[16];
	char *wrap[] = { (char *)"valgrind", (char *)"--tool=callgrind",
	    (char *)"--collect-atstart=no", out, NULL };
	char *args[] = { (char *)"count", pairs, threads, NULL };
	struct worker_reply rep;
	double ir, driver;
	int to, from;
	pid_t pid;

	snprintf(name, sizeof(name), "count-%s-%d", preload ? "shim" : "bare",
	    nthreads);
	snprintf(pairs, sizeof(pairs), "%d", COUNT_PAIRS);
	snprintf(threads, sizeof(threads), "%d", nthreads);
	if (harness_path(file, sizeof(file), b->dir, name) < 0)
		return NAN;
	snprintf(out, sizeof(out), "--callgrind-out-file=%s.cg", file);
	if ((pid = proc_worker_wrapped(b, preload, name, wrap, args, &to,
	    &from)) < 0) {
		snprintf(note, notelen, "cannot start the %s worker", name);
		return NAN;
	}
	if (proc_read(from, &rep, sizeof(rep), COUNT_WAIT_MS) < 0 ||
	    rep.status != 0)
		snprintf(note, notelen, "the %s worker failed (see its .err)",
		    name);
	close(to);
	close(from);
	/* callgrind writes its file as the worker exits. */
	if (harness_reap(pid, COUNT_WAIT_MS) != 0 && note[0] == '\0')
		snprintf(note, notelen, "the %s worker did not exit cleanly",
		    name);
	if (note[0] != '\0')
		return NAN;
	strcat(file, ".cg");
	if (callgrind_read(file, &ir, &driver) < 0) {
		snprintf(note, notelen, "no count of the driver's calls in '%s'",
		    file);
		return NAN;
	}
	*own = (ir - driver) / COUNT_PAIRS;
	return ir / COUNT_PAIRS;
}

void
count_measure(const struct bench *b, struct results *r)
{
	char *note = r->count_note;
	size_t len = sizeof(r->count_note);
	double own[4];

	if (!COUNT_BUILT) {
		snprintf(note, len, "built without valgrind/callgrind.h (make "
		    "deps installs valgrind)");
		return;
	}
	if (harness_sanitizer() != NULL) {
		snprintf(note, len, "not counted in a sanitizer build");
		return;
	}
	if (!count_valgrind()) {
		snprintf(note, len, "valgrind is not installed (make deps)");
		return;
	}
	/* Each only if all before went well: a failure says why once. */
	r->bare_ir = count_run(b, 0, 1, &own[0], note, len);
	if (note[0] == '\0')
		r->shim_ir = count_run(b, 1, 1, &own[1], note, len);
	if (note[0] == '\0')
		r->bare_ir_mt = count_run(b, 0, FP_THREADS, &own[2], note, len);
	if (note[0] == '\0')
		r->shim_ir_mt = count_run(b, 1, FP_THREADS, &own[3], note, len);
	if (note[0] != '\0')
		return;
	r->fastpath_added_ir = own[1] - own[0];
	r->fastpath_added_ir_mt = own[3] - own[2];
}
