/*
 * The daemon's round trip and its floor. While `clients` load processes
 * each loop RESERVE -> GRANT, ROLLBACK as fast as they can, the bench times
 * its own RESERVE -> GRANT; then the same against a bare SEQPACKET echo
 * server (bench_echo.c) with the same client code, sizes and load. The two
 * take turns, a fresh load each repetition, so that what the scheduler does
 * to one over a run it does to the other. With BENCH_BASELINE, another
 * build's daemon takes its turn between them, under the same load: the
 * cost of a change to the daemon, side by side.
 *
 * While it measures, the server is pinned to one CPU and the measuring
 * client to another; the load is not. Unpinned, the result depends on
 * where the scheduler happens to put the two: a client on the server's own
 * CPU is answered at once, one on another CPU waits behind the load.
 */
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "harness.h"
#include "log.h"

#define RT_REPS		5
#define RT_SAMPLES	8000		/* at most, per repetition */
#define RT_REP_NS	1500000000u	/* at most, per repetition */
#define RT_IDLE_REPS	3
#define RT_IDLE_SAMPLES	2000		/* per repetition, without load */
#define RT_WARMUP	300

/* One server (the daemon or the echo) and its load. */
struct rt_phase {
	const char	*path;
	pid_t		 server;
	int		 handshake;	/* HELLO and DEVICE_OPEN first */
	const uint8_t	*uuid;
	int		 clients;
	size_t		 max;		/* samples per repetition */
	/* per repetition */
	double		 p50[RT_REPS], p99[RT_REPS], rps[RT_REPS];
	size_t		 samples;	/* over all repetitions */
	char		 note[BENCH_NOTE_LEN];
};

static int
rt_open(const struct rt_phase *ph)
{
	return ph->handshake ? wire_client(ph->path, ph->uuid) :
	    wire_connect(ph->path);
}

/* One round trip and its ROLLBACK; 0 or -1. */
static int
rt_once(const struct rt_phase *ph, int fd, uint32_t seq, uint64_t *ns)
{
	uint64_t t0 = harness_now_ns();

	if (wire_reserve(fd, seq, ph->uuid, BENCH_SIZE) < 0)
		return -1;
	if (ns != NULL)
		*ns = harness_now_ns() - t0;
	return wire_rollback(fd, seq, ph->uuid, BENCH_SIZE);
}

/* A load process: ready, then busy until *stop; never returns. */
static void __attribute__((noreturn))
rt_load(const struct rt_phase *ph, int ready, const uint64_t *stop,
    uint64_t *count)
{
	uint32_t seq = 16;
	int fd = rt_open(ph);

	if (proc_write(ready, fd < 0 ? "x" : "k", 1) < 0 || fd < 0)
		_exit(1);
	while (!__atomic_load_n(stop, __ATOMIC_RELAXED)) {
		if (rt_once(ph, fd, seq++, NULL) < 0)
			_exit(1);
		__atomic_store_n(count, *count + 1, __ATOMIC_RELAXED);
	}
	_exit(0);
}

/* Start the load; the number of processes that came up ready. */
static int
rt_load_start(const struct rt_phase *ph, pid_t *pids, const uint64_t *stop,
    uint64_t *counts)
{
	int ready[2], i, up = 0;
	char c;

	if (pipe(ready) < 0)
		return 0;
	for (i = 0; i < ph->clients; i++)
		if ((pids[i] = harness_fork()) == 0) {
			close(ready[0]);
			rt_load(ph, ready[1], stop, &counts[i]);
		}
	close(ready[1]);
	for (i = 0; i < ph->clients; i++) {
		if (pids[i] < 0)
			continue;
		if (proc_read(ready[0], &c, 1, 20000) < 0)
			break;
		up += c == 'k';
	}
	close(ready[0]);
	return up;
}

/* Stop the load; the number of processes that failed on the way. */
static int
rt_load_stop(const struct rt_phase *ph, pid_t *pids, uint64_t *stop)
{
	int i, failed = 0, st;

	__atomic_store_n(stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < ph->clients; i++) {
		if (pids[i] <= 0)
			continue;
		st = harness_reap(pids[i], 5000);
		failed += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	}
	return failed;
}

/*
 * The server on the first CPU we may use, this process on the second;
 * 0, or -1 (one CPU only: nothing pinned). all gets the CPUs we may use.
 */
static int
rt_pin(pid_t server, cpu_set_t *all)
{
	cpu_set_t one;
	int cpu, found = 0;

	if (sched_getaffinity(0, sizeof(*all), all) < 0 || CPU_COUNT(all) < 2)
		return -1;
	for (cpu = 0; cpu < CPU_SETSIZE && found < 2; cpu++) {
		if (!CPU_ISSET(cpu, all))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(found++ ? 0 : server, sizeof(one),
		    &one) < 0)
			break;
	}
	if (found == 2)
		return 0;
	sched_setaffinity(server, sizeof(*all), all);
	return -1;
}

static void
rt_unpin(pid_t server, const cpu_set_t *all)
{
	sched_setaffinity(0, sizeof(*all), all);
	sched_setaffinity(server, sizeof(*all), all);
}

/* One repetition's samples, in µs, into v; their number, or -1. */
static long
rt_sample(const struct rt_phase *ph, double *v)
{
	uint32_t seq = 16;
	uint64_t ns, t0;
	size_t n;
	int fd, i;

	if ((fd = rt_open(ph)) < 0)
		return -1;
	for (i = 0; i < RT_WARMUP; i++)
		if (rt_once(ph, fd, seq++, NULL) < 0)
			goto out_close;
	t0 = harness_now_ns();
	for (n = 0; n < ph->max && harness_now_ns() - t0 < RT_REP_NS; n++) {
		if (rt_once(ph, fd, seq++, &ns) < 0)
			goto out_close;
		v[n] = (double)ns / 1000;
	}
	close(fd);
	return (long)n;

out_close:
	close(fd);
	return -1;
}

/* Round trips the load has made so far. */
static uint64_t
rt_count(const uint64_t *counts, int n)
{
	uint64_t total = 0;
	int i;

	for (i = 0; i < n; i++)
		total += __atomic_load_n(&counts[i], __ATOMIC_RELAXED);
	return total;
}

/* Repetition rep under a fresh load: its percentiles; 0 or -1. */
static int
rt_rep(struct rt_phase *ph, int rep, double *v)
{
	size_t shared = (1 + (size_t)ph->clients) * sizeof(uint64_t);
	uint64_t *stop, *counts, done, t0;
	cpu_set_t all;
	pid_t *pids;
	int up, failed, pinned, r = -1;
	long n;

	stop = mmap(NULL, shared, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (stop == MAP_FAILED || (pids = calloc((size_t)ph->clients + 1,
	    sizeof(*pids))) == NULL) {
		snprintf(ph->note, sizeof(ph->note), "out of memory");
		if (stop != MAP_FAILED)
			munmap(stop, shared);
		return -1;
	}
	counts = stop + 1;
	if ((up = rt_load_start(ph, pids, stop, counts)) < ph->clients)
		snprintf(ph->note, sizeof(ph->note), "%d of %d load clients "
		    "could not start", ph->clients - up, ph->clients);
	t0 = harness_now_ns();
	done = rt_count(counts, ph->clients);
	pinned = rt_pin(ph->server, &all) == 0;
	n = rt_sample(ph, v);
	if (pinned)
		rt_unpin(ph->server, &all);
	else
		snprintf(ph->note, sizeof(ph->note), "one CPU: the server and "
		    "the measuring client could not be kept apart");
	if (n < 0) {
		snprintf(ph->note, sizeof(ph->note), "the measuring client's "
		    "round trip failed");
	} else if (up == ph->clients) {
		ph->p99[rep] = stats_quantile(v, (size_t)n, 0.99);
		ph->p50[rep] = stats_quantile(v, (size_t)n, 0.50);
		ph->samples += (size_t)n;
		r = 0;
	}
	done = rt_count(counts, ph->clients) - done;
	ph->rps[rep] = (double)done * 1e9 / (double)(harness_now_ns() - t0);
	if ((failed = rt_load_stop(ph, pids, stop)) > 0 && r == 0) {
		snprintf(ph->note, sizeof(ph->note), "%d load clients failed",
		    failed);
		r = -1;
	}
	free(pids);
	munmap(stop, shared);
	return r;
}

/* The daemon without load: what one round trip costs the fast path. */
static void
rt_idle(const struct bench *b, struct results *r, double *v)
{
	struct rt_phase idle = { .path = b->sock, .server = b->daemon,
	    .handshake = 1, .uuid = b->uuid, .clients = 0,
	    .max = RT_IDLE_SAMPLES };
	int rep;

	for (rep = 0; rep < RT_IDLE_REPS; rep++)
		if (rt_rep(&idle, rep, v) < 0) {
			snprintf(r->rt_note, sizeof(r->rt_note), "without "
			    "load: %.140s", idle.note);
			return;
		}
	r->rt_idle_p50_us = stats_median(idle.p50, RT_IDLE_REPS);
	r->rt_idle_p99_us = stats_median(idle.p99, RT_IDLE_REPS);
}

static void
rt_results(struct rt_phase *ph, double *p50, double *p99, double *rps,
    size_t *samples, char *note, size_t notelen)
{
	*p50 = stats_median(ph->p50, RT_REPS);
	*p99 = stats_median(ph->p99, RT_REPS);
	*rps = stats_median(ph->rps, RT_REPS);
	*samples = ph->samples;
	snprintf(note, notelen, "%s", ph->note);
}

void
roundtrip_measure(const struct bench *b, struct results *r)
{
	struct rt_phase daemon = { .path = b->sock, .server = b->daemon,
	    .handshake = 1, .uuid = b->uuid, .clients = b->clients,
	    .max = RT_SAMPLES };
	struct rt_phase echo = { .handshake = 0, .uuid = b->uuid,
	    .clients = b->clients, .max = RT_SAMPLES };
	/* BENCH_BASELINE's daemon, where there is one: its turn between */
	struct rt_phase base = { .handshake = 1, .uuid = b->uuid,
	    .clients = b->clients, .max = RT_SAMPLES };
	char path[PATH_MAX];
	double rps;
	pid_t server;
	double *v;
	int rep;

	if ((v = calloc(RT_SAMPLES, sizeof(*v))) == NULL) {
		snprintf(r->rt_note, sizeof(r->rt_note), "out of memory");
		return;
	}
	rt_idle(b, r, v);
	if (harness_path(path, sizeof(path), b->dir, "echo.sock") < 0 ||
	    (server = echo_start(path)) < 0) {
		snprintf(r->echo_note, sizeof(r->echo_note), "cannot start "
		    "the echo server");
		free(v);
		return;
	}
	echo.path = path;
	echo.server = server;
	base.path = b->base_sock;
	base.server = b->base_daemon;
	for (rep = 0; rep < RT_REPS; rep++)
		if (rt_rep(&daemon, rep, v) < 0 || (b->base_daemon > 0 &&
		    rt_rep(&base, rep, v) < 0) || rt_rep(&echo, rep, v) < 0)
			break;
	if (rep == RT_REPS) {
		rt_results(&daemon, &r->rt_p50_us, &r->rt_p99_us,
		    &r->rt_load_rps, &r->rt_samples, r->rt_note,
		    sizeof(r->rt_note));
		rt_results(&echo, &r->echo_p50_us, &r->echo_p99_us,
		    &r->echo_load_rps, &r->echo_samples, r->echo_note,
		    sizeof(r->echo_note));
		if (b->base_daemon > 0)
			rt_results(&base, &r->base_p50_us, &r->base_p99_us,
			    &rps, &r->base_samples, r->base_note,
			    sizeof(r->base_note));
	} else {
		snprintf(r->rt_note, sizeof(r->rt_note), "%s", daemon.note);
		snprintf(r->echo_note, sizeof(r->echo_note), "%s", echo.note);
		snprintf(r->base_note, sizeof(r->base_note), "%s", base.note);
	}
	kill(server, SIGTERM);
	harness_reap(server, 5000);
	free(v);
}
