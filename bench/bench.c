/*
 * bench: gpufrac's numbers (DESIGN.md §7) on the simulated driver, run by
 * `make bench`. Sets up a private gpufracd, takes each measurement (one
 * file each), prints the table and the JSON line (bench_report.c).
 *
 * The parent only supervises: it makes the temporary directory, runs the
 * benchmark in a child, and removes the directory and the simulator's
 * state however the child ended (an interrupt included); every process the
 * child starts dies with it.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "harness.h"
#include "log.h"
#include "units.h"
#include "sock.h"

#define BENCH_CLIENTS	64
#define BENCH_DEVICES	"16Gi"

static volatile sig_atomic_t bench_child;

static void __attribute__((noreturn))
usage(int status)
{
	fprintf(status ? stderr : stdout, "usage: bench [-h] [-c clients]\n");
	exit(status);
}

static void
results_init(struct results *r)
{
	memset(r, 0, sizeof(*r));
	r->bare_ns = r->shim_ns = r->fastpath_added_ns = NAN;
	r->bare_ns_mt = r->shim_ns_mt = r->fastpath_added_ns_mt = NAN;
	r->bare_ir = r->shim_ir = r->fastpath_added_ir = NAN;
	r->bare_ir_mt = r->shim_ir_mt = r->fastpath_added_ir_mt = NAN;
	r->rt_idle_p50_us = r->rt_idle_p99_us = NAN;
	r->rt_p50_us = r->rt_p99_us = r->echo_p50_us = r->echo_p99_us = NAN;
	r->rt_load_rps = r->echo_load_rps = NAN;
	r->base_p50_us = r->base_p99_us = NAN;
	r->wake_p50_us = r->wake_p99_us = NAN;
	r->table_ns_1k = r->table_ns_100k = r->table_ns_1m = NAN;
	r->table_ns_100k_mt = NAN;
	r->rss_kib_0 = r->rss_kib_1000 = NAN;
}

/* Every value that a measurement should have given, given? */
static int
results_complete(const struct results *r)
{
	const double v[] = { r->fastpath_added_ns, r->fastpath_added_ns_mt,
	    r->rt_p99_us, r->echo_p99_us, r->wake_p99_us, r->table_ns_100k,
	    r->table_ns_1m, r->table_ns_100k_mt, r->rss_kib_1000 };
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (isnan(v[i]))
			return 0;
	return 1;
}

/* The child: the measurements, in an order that keeps them apart. */
static int
bench_run(struct bench *b)
{
	struct results r;
	uint64_t t0 = harness_now_ns();
	int status;

	results_init(&r);
	sock_fd_limit_raise();
	/* A worker that died is noticed on its pipe, not by a signal. */
	signal(SIGPIPE, SIG_IGN);
	fprintf(stderr, "bench: allocation table\n");
	table_measure(&r);
	if (daemon_start(b) < 0) {
		daemon_log_tail(b);
		harness_kill_all();
		return 1;
	}
	/* The daemon's memory first, before the others have used it. */
	fprintf(stderr, "bench: daemon memory with 1,000 clients\n");
	rss_measure(b, &r);
	fprintf(stderr, "bench: fast path, 1 and %d threads\n", FP_THREADS);
	fastpath_measure(b, &r);
	fprintf(stderr, "bench: fast path in instructions (callgrind)\n");
	count_measure(b, &r);
	fprintf(stderr, "bench: round trip and echo, %d busy clients\n",
	    b->clients);
	roundtrip_measure(b, &r);
	fprintf(stderr, "bench: wait resolver wake-up\n");
	wake_measure(b, &r);
	if ((status = daemon_stop(b)) != 0) {
		log_warnx("gpufracd did not exit cleanly (status %d)", status);
		daemon_log_tail(b);
	}
	harness_kill_all();
	r.runtime_s = (double)(harness_now_ns() - t0) / 1e9;
	report_print(b, &r);
	return status == 0 && results_complete(&r) ? 0 : 1;
}

static void
on_signal(int sig)
{
	(void)sig;
	if (bench_child > 0)
		kill(bench_child, SIGKILL);
}

/* The parent: run the child, then clean up after it. */
static int
bench_supervise(struct bench *b)
{
	struct sigaction sa;
	int status;
	pid_t pid;

	if ((pid = harness_fork()) < 0)
		return 1;
	if (pid == 0)
		_exit(bench_run(b));
	bench_child = pid;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	harness_forget(pid);
	daemon_teardown(b);
	if (WIFSIGNALED(status)) {
		log_warnx("interrupted by signal %d", WTERMSIG(status));
		return 1;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int
worker_main(int argc, char *argv[])
{
	log_init("bench", LOG_LVL_WARN, 0);
	if (argc >= 1 && strcmp(argv[0], "fastpath") == 0)
		return fastpath_worker(argc, argv);
	if (argc >= 1 && strcmp(argv[0], "wake") == 0)
		return wake_worker(argc, argv);
	if (argc >= 1 && strcmp(argv[0], "count") == 0)
		return count_worker(argc, argv);
	return 2;
}

int
main(int argc, char *argv[])
{
	static struct bench b;
	const char *base;
	uint64_t n;
	int ch;

	if (argc >= 2 && strcmp(argv[1], "-W") == 0)
		return worker_main(argc - 2, argv + 2);
	log_init("bench", LOG_LVL_INFO, 0);
	b.clients = BENCH_CLIENTS;
	while ((ch = getopt(argc, argv, "c:h")) != -1) {
		switch (ch) {
		case 'c':
			if (decimal_parse(optarg, 4096, &n) < 0 || n < 1) {
				log_warnx("bad number of clients '%s'", optarg);
				usage(2);
			}
			b.clients = (int)n;
			break;
		case 'h':
			usage(0);
		default:
			usage(2);
		}
	}
	if (optind != argc)
		usage(2);
	snprintf(b.state, sizeof(b.state), "gfbench-%d", (int)getpid());
	if (harness_top(b.top, sizeof(b.top)) < 0)
		return 1;
	if ((base = getenv("BENCH_BASELINE")) != NULL && *base != '\0' &&
	    snprintf(b.base_top, sizeof(b.base_top), "%s", base) >=
	    (int)sizeof(b.base_top)) {
		log_warnx("BENCH_BASELINE is too long: '%s'", base);
		return 2;
	}
	if (daemon_setup(&b) < 0 || harness_env(b.top, b.state, BENCH_DEVICES, b.sock) < 0) {
		daemon_teardown(&b);
		return 1;
	}
	return bench_supervise(&b);
}
