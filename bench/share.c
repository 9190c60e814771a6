/*
 * share: how well gpufrac shares one GPU, run by `make bench-share`. The
 * same seeded demand traces (share_trace.c) run four ways on the
 * simulated driver, or with -r (`make bench-share SHARE_DRIVER=real`) on
 * 16 GiB of device 0 of the driver the environment has, the daemons
 * keeping the rest back (share_device.c): static partitions (each tenant
 * limited to its equal share, resolver fail), one shared device with
 * resolver wait, with resolver swap, and with priorities and resolver
 * preempt. For each it reports the device memory left idle, failed
 * allocations, time waited, swaps and makespan: an aligned table, then
 * one JSON line.
 *
 * The parent only supervises: it makes the temporary directory, runs the
 * ways in a child, and, however the child ended (an interrupt included),
 * reaps every process left (it is their subreaper) and removes the
 * directory and the simulator's state.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "log.h"
#include "units.h"
#include "share.h"

#define TENANTS		6
#define DURATION_MS	6000
#define QUICK_TENANTS	3
#define QUICK_MS	1000
#define SEED		1

static volatile sig_atomic_t share_child, share_stopped;

static void __attribute__((noreturn))
usage(int status)
{
	fprintf(status ? stderr : stdout,
	    "usage: share [-hqr] [-n tenants] [-s seed]\n");
	exit(status);
}

const char *
share_way_name(int way)
{
	static const char *const names[WAY_COUNT] = {
		[WAY_STATIC] = "static", [WAY_WAIT] = "wait",
		[WAY_SWAP] = "swap", [WAY_PREEMPT] = "preempt",
	};

	return way >= 0 && way < WAY_COUNT ? names[way] : "unknown";
}

/* A seed: decimal, all of s; 0 or -1. */
static int
seed_parse(const char *s, uint64_t *seed)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*s == '\0' || *s == '-' || *end != '\0' || errno == ERANGE) {
		log_warnx("bad seed '%s': expected a decimal number", s);
		return -1;
	}
	*seed = v;
	return 0;
}

/* The child: every way, then the report. */
static int
share_run_all(struct share_run *r)
{
	uint64_t t0 = harness_now_ns();
	int way, rc = 0;

	/* A tenant that died is noticed on its pipe, not by a signal. */
	signal(SIGPIPE, SIG_IGN);
	if (r->p.real && device_probe(r) < 0)
		return 1;
	for (way = 0; way < WAY_COUNT; way++) {
		fprintf(stderr, "share: %s\n", share_way_name(way));
		way_run(r, way);
		if (!r->results[way].ran)
			rc = 1;
	}
	harness_kill_all();
	report_print(r, (double)(harness_now_ns() - t0) / 1e9);
	return rc;
}

static void
on_signal(int sig)
{
	share_stopped = sig;
	if (share_child > 0)
		kill(share_child, SIGKILL);
}

/* The parent: run the child, then clean up after it and its children. */
static int
share_supervise(struct share_run *r)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa, dfl;
	sigset_t stop, old;
	int status = 0, st;
	size_t i;
	pid_t pid, w;

	/* The child's children, orphaned, are ours to reap. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		log_warn("cannot become a subreaper");
	memset(&sa, 0, sizeof(sa));
	memset(&dfl, 0, sizeof(dfl));
	sa.sa_handler = on_signal;
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&stop);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		sigaddset(&stop, sigs[i]);
		sigaction(sigs[i], &sa, NULL);
	}
	/* A stop signal before the child is known is held, not lost. */
	sigprocmask(SIG_BLOCK, &stop, &old);
	if ((pid = harness_fork()) < 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		return 1;
	}
	if (pid == 0) {
		for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			sigaction(sigs[i], &dfl, NULL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		_exit(share_run_all(r));
	}
	share_child = pid;
	sigprocmask(SIG_SETMASK, &old, NULL);
	/* They die with the child (PDEATHSIG): wait for every one. */
	while ((w = waitpid(-1, &st, 0)) > 0 || errno == EINTR)
		if (w == pid)
			status = st;
	daemon_teardown(r);
	if (share_stopped) {
		log_warnx("interrupted by signal %d", (int)share_stopped);
		return 1;
	}
	if (WIFSIGNALED(status)) {
		log_warnx("the benchmark died of signal %d", WTERMSIG(status));
		return 1;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int
main(int argc, char *argv[])
{
	static struct share_run r;
	const char *s;
	uint64_t n;
	int ch, tenants = 0;

	log_init("share", LOG_LVL_INFO, 0);
	r.p.tenants = TENANTS;
	r.p.duration_ms = DURATION_MS;
	r.p.seed = SEED;
	r.p.capacity = SHARE_DEVICE_BYTES;
	if ((s = getenv("SHARE_SEED")) != NULL && *s != '\0' &&
	    seed_parse(s, &r.p.seed) < 0)
		usage(2);
	while ((ch = getopt(argc, argv, "hn:qrs:")) != -1) {
		switch (ch) {
		case 'n':
			if (decimal_parse(optarg, SHARE_TENANTS_MAX, &n) < 0 ||
			    n < 2) {
				log_warnx("bad number of tenants '%s': "
				    "expected 2 to %d", optarg,
				    SHARE_TENANTS_MAX);
				usage(2);
			}
			tenants = (int)n;
			break;
		case 'q':
			r.p.quick = 1;
			r.p.tenants = QUICK_TENANTS;
			r.p.duration_ms = QUICK_MS;
			break;
		case 'r':
			r.p.real = 1;
			break;
		case 's':
			if (seed_parse(optarg, &r.p.seed) < 0)
				usage(2);
			break;
		case 'h':
			usage(0);
		default:
			usage(2);
		}
	}
	if (optind != argc)
		usage(2);
	if (tenants > 0)
		r.p.tenants = (unsigned)tenants;
	trace_make(&r.p, r.traces);
	/* The real driver has no state of ours to name or remove. */
	if (!r.p.real)
		snprintf(r.state, sizeof(r.state), "gfshare-%d",
		    (int)getpid());
	if (harness_top(r.top, sizeof(r.top)) < 0)
		return 1;
	if (daemon_dir_make(&r) < 0 || (r.p.real ? harness_env_real(r.sock) :
	    harness_env(r.top, r.state, SHARE_DEVICE, r.sock)) < 0) {
		daemon_teardown(&r);
		return 1;
	}
	return share_supervise(&r);
}
