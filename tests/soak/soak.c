/*
 * soak: a chaos soak of gpufrac on the simulated driver (make soak,
 * tests/integration/soak.sh). At least 32 clients take and give back
 * memory of every kind the shim interposes, in two groups with limits
 * and guarantees and the default one, some with limits of their own,
 * some waiting under the wait resolver; meanwhile clients are killed and
 * replaced, the daemon is restarted (SIGTERM and SIGKILL), reloaded with
 * a changed configuration, and asked to swap clients out and in. At quiet
 * points and at the end the daemon's ledger is compared, byte for byte,
 * with what each client holds by its own count and with the driver's
 * state. It prints a table, then one JSON line, and exits 1 when a check
 * failed.
 *
 * Settings from the environment: SOAK_SECONDS (of chaos, default 60),
 * SOAK_SEED (default: from the clock; printed), SOAK_CLIENTS (default
 * 32), SOAK_LOG_LEVEL (gpufracd's log_level, default warn: info tells
 * what led to a failure), SOAK_KEEP=1 (keep the work directory, made in TMPDIR, which is
 * kept anyway when the run fails), BUILD (make's O; default: from this
 * program's path), SOAK_SWAP: all (the default) or quiet, which swaps
 * clients out only at quiet points and keeps the daemon from swapping
 * anybody by itself (to tell a swap bug from the others), see README,
 * Soak. SOAK_MODE: chaos (the default, all of the above) or honest
 * (soak_honest.c): SOAK_CLIENTS (default 8) clients of every kind in one
 * group near its limit, nothing killed, restarted, reloaded or swapped;
 * no charge of theirs may be refused or believed past a limit, no
 * connection closed, and every out-of-memory they see is one the ledger
 * denied.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "log.h"
#include "soak.h"
#include "units.h"

#define SECONDS_DEFAULT	60
#define HONEST_CLIENTS	8
#define SECONDS_MAX	86400
#define TICK_US		5000
#define MAX_CRASHES	10	/* then the soak cannot go on */
#define RESTART_EVERY	3	/* quiet points: a kill, records compared */

static volatile sig_atomic_t interrupted;

static void
on_signal(int sig)
{
	interrupted = sig;
}

uint64_t
soak_now_ms(void)
{
	return harness_now_ns() / 1000000u;
}

uint64_t
soak_chaos_ms(const struct soak *s)
{
	return soak_now_ms() - s->start_ms - s->quiet_total_ms;
}

void
soak_fail(struct soak *s, const char *fmt, ...)
{
	va_list ap;

	s->failures++;
	fprintf(stderr, "soak: FAIL at %.1fs: ", (double)soak_chaos_ms(s) /
	    1000);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void
soak_reap(struct soak *s)
{
	int status, i;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		harness_forget(pid);
		if (pid == s->daemon)
			daemon_exited(s, status);
		else if (honest_exited(s, pid))
			continue;
		else if ((i = fleet_find(s, pid)) >= 0)
			fleet_exited(s, i, status);
		else
			(void)chaos_ctl_exited(s, pid, status);
	}
}

/* A whole decimal number from the environment, within [lo, hi]. */
static int
env_number(const char *name, uint64_t lo, uint64_t hi, uint64_t *v)
{
	const char *e = getenv(name);

	if (e == NULL || *e == '\0')
		return 0;
	if (decimal_parse(e, hi, v) < 0 || *v < lo) {
		log_warnx("bad %s '%s': a number from %llu to %llu", name, e,
		    (unsigned long long)lo, (unsigned long long)hi);
		return -1;
	}
	return 0;
}

static int
env_flag(const char *name)
{
	const char *e = getenv(name);

	return e != NULL && strcmp(e, "1") == 0;
}

/* BUILD, or the build tree from this program's path: O/tests/soak/soak. */
static int
build_find(struct soak *s)
{
	const char *b = getenv("BUILD");
	char *slash;
	int i;

	if (b != NULL && *b != '\0')
		return harness_path(s->build, sizeof(s->build), b, ".") < 0 ?
		    -1 : 0;
	if (harness_top(s->build, sizeof(s->build)) < 0)
		return -1;
	/* harness_top takes two names off; the soak is one deeper. */
	for (i = 0; i < 1; i++) {
		if ((slash = strrchr(s->build, '/')) == NULL)
			return -1;
		*slash = '\0';
	}
	return 0;
}

static int
settings(struct soak *s)
{
	uint64_t v = SECONDS_DEFAULT;
	const char *e;

	if (env_number("SOAK_SECONDS", 1, SECONDS_MAX, &v) < 0)
		return -1;
	s->seconds = (unsigned)v;
	if ((e = getenv("SOAK_MODE")) != NULL && *e != '\0' &&
	    strcmp(e, "chaos") != 0 && strcmp(e, "honest") != 0) {
		log_warnx("bad SOAK_MODE '%s': chaos or honest", e);
		return -1;
	}
	s->honest = e != NULL && strcmp(e, "honest") == 0;
	v = s->honest ? HONEST_CLIENTS : SOAK_MIN_CLIENTS;
	if (env_number("SOAK_CLIENTS", 1, SOAK_MAX_SLOTS, &v) < 0)
		return -1;
	s->nclients = (unsigned)v;
	s->seed = harness_now_ns() ^ ((uint64_t)getpid() << 32);
	s->seed %= 1000000000000ull;
	if (env_number("SOAK_SEED", 0, UINT64_MAX, &s->seed) < 0)
		return -1;
	s->rng = s->seed;
	s->wait_bound_ms = SOAK_WAIT_BOUND_MS + (harness_sanitizer() != NULL ?
	    SOAK_SAN_SLACK_MS : SOAK_SLACK_MS);
	s->keep = env_flag("SOAK_KEEP");
	if ((e = getenv("SOAK_SWAP")) != NULL && *e != '\0' &&
	    strcmp(e, "all") != 0 && strcmp(e, "quiet") != 0) {
		log_warnx("bad SOAK_SWAP '%s': all or quiet", e);
		return -1;
	}
	s->quiet_swaps = e != NULL && strcmp(e, "quiet") == 0;
	return build_find(s);
}

/* The work directory and the paths in it. */
static int
workdir(struct soak *s)
{
	const char *tmp = getenv("TMPDIR");

	if (harness_path(s->dir, sizeof(s->dir), tmp && *tmp ? tmp : "/tmp",
	    "gpufrac-soak.XXXXXX") < 0)
		return -1;
	if (mkdtemp(s->dir) == NULL) {
		log_warn("cannot create a directory like '%s'", s->dir);
		return -1;
	}
	snprintf(s->state, sizeof(s->state), "soak-%d", (int)getpid());
	if (harness_path(s->sock, sizeof(s->sock), s->dir, "gpufrac.sock") <
	    0 || harness_path(s->conf, sizeof(s->conf), s->dir,
	    "gpufrac.conf") < 0 || harness_path(s->log, sizeof(s->log),
	    s->dir, "gpufracd.log") < 0 || harness_path(s->clog,
	    sizeof(s->clog), s->dir, "clients.log") < 0)
		return -1;
	return 0;
}

/*
 * What every child inherits: the simulated machine, the socket, and
 * sanitizer reports into the work directory (lib.sh does the same).
 */
static int
environment(struct soak *s)
{
	char opt[PATH_MAX + 64];

	if (harness_env(s->build, s->state, SOAK_DEVICES, s->sock) < 0 ||
	    setenv("SIMCUDA_CONTEXT_BYTES", SOAK_CONTEXT_BYTES, 1) < 0)
		return -1;
	snprintf(opt, sizeof(opt), "log_path=%s/san:abort_on_error=0", s->dir);
	if (setenv("ASAN_OPTIONS", opt, 1) < 0)
		return -1;
	snprintf(opt, sizeof(opt), "log_path=%s/san:print_stacktrace=1",
	    s->dir);
	if (setenv("UBSAN_OPTIONS", opt, 1) < 0)
		return -1;
	snprintf(opt, sizeof(opt), "log_path=%s/san:die_after_fork=0", s->dir);
	return setenv("TSAN_OPTIONS", opt, 1);
}

/* Pause the chaos, let every client settle, compare, carry on. */
static void
quiet_point(struct soak *s)
{
	uint64_t t0 = soak_now_ms();
	int ok;

	s->point_at_ms = soak_chaos_ms(s);
	chaos_drain(s);
	if (s->daemon <= 0 && daemon_start(s) < 0)
		soak_fail(s, "no gpufracd for the quiet point");
	fleet_settle(s);
	s->point_what = "settled";
	/*
	 * Swaps by hand, if nobody is out already: one out that fits again
	 * would come back on its own and could take their room.
	 */
	ok = check_point(s, 0) == 0;
	/*
	 * The first and every RESTART_EVERY-th of the chaos (the honest soak
	 * follows the daemon's decisions), clients out to host or not: the
	 * daemon killed and started again, each client's record the same
	 * after (issue 40); one out keeps its context, which the grants'
	 * file records.
	 */
	if (ok && !s->honest && (s->n.restarts_quiet == 0 ||
	    s->n.quiet_points % RESTART_EVERY == 0)) {
		ok = restart_check(s) == 0;
		s->point_what = "restarted";
		ok = check_point(s, 0) == 0 && ok;
	}
	if (ok && s->last_swapped == 0 && chaos_quiet_out(s) > 0) {
		s->point_what = "some swapped out";
		(void)check_point(s, 0);
		chaos_quiet_in(s);
		s->point_what = "back in";
		(void)check_point(s, 0);
	}
	fleet_resume(s);
	s->n.quiet_points++;
	s->quiet_total_ms += soak_now_ms() - t0;
}

static void
chaos(struct soak *s)
{
	while (!interrupted && (soak_chaos_ms(s) < (uint64_t)s->seconds *
	    1000 || s->plan.next_restart < s->plan.nrestarts)) {
		if (s->n.client_crashes > MAX_CRASHES) {
			soak_fail(s, "more than %d clients crashed: stopping",
			    MAX_CRASHES);
			return;
		}
		soak_reap(s);
		fleet_listen(s);
		fleet_refill(s);
		chaos_tick(s);
		/* Not just before the end, which has one of its own. */
		if (soak_chaos_ms(s) >= s->plan.next_quiet_ms &&
		    s->plan.next_quiet_ms + s->plan.quiet_every_ms / 2 <
		    (uint64_t)s->seconds * 1000) {
			quiet_point(s);
			s->plan.next_quiet_ms += s->plan.quiet_every_ms;
		}
		harness_sleep_us(TICK_US);
	}
}

/* The end: a last quiet point, every client quits, nothing is left. */
static void
finish(struct soak *s)
{
	chaos_drain(s);
	soak_reap(s);
	fleet_refill(s);
	quiet_point(s);
	fleet_quit(s);
	s->point_at_ms = soak_chaos_ms(s);
	s->point_what = "all gone";
	(void)check_point(s, 1);
	daemon_stop(s, SIGTERM);
}

/* Every sanitizer report in the work directory is a failure. */
static void
sanitizer_reports(struct soak *s)
{
	char path[PATH_MAX], line[512];
	struct dirent *e;
	FILE *f;
	DIR *d;
	int n;

	if ((d = opendir(s->dir)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "san.", 4) != 0 ||
		    harness_path(path, sizeof(path), s->dir, e->d_name) < 0)
			continue;
		s->n.san_reports++;
		soak_fail(s, "sanitizer report %s:", path);
		if ((f = fopen(path, "re")) == NULL)
			continue;
		for (n = 0; n < 60 && fgets(line, sizeof(line), f) != NULL; n++)
			fputs(line, stderr);
		fclose(f);
	}
	closedir(d);
}

/* What the clients counted, and the daemon's log, judged at the end. */
static void
verdict(struct soak *s)
{
	const struct soak_counts *n = &s->n;

	if (n->stuck > 0)
		soak_fail(s, "%llu waiter(s) waited past %u ms, not swapped "
		    "out; see %s", (unsigned long long)n->stuck,
		    s->wait_bound_ms, s->clog);
	if (n->errors > 0)
		soak_fail(s, "%llu driver call(s) failed unexpectedly; see %s",
		    (unsigned long long)n->errors, s->clog);
	if (n->corrupt > 0)
		soak_fail(s, "%llu read(s) found data changed; see %s",
		    (unsigned long long)n->corrupt, s->clog);
	if (n->ledger_warnings > 0)
		soak_fail(s, "gpufracd logged %llu broken ledger invariant(s)",
		    (unsigned long long)n->ledger_warnings);
	if (s->honest)
		honest_verdict(s);
	else if (n->restarts_term == 0 || n->restarts_kill == 0)
		soak_fail(s, "the daemon was not restarted both ways");
}

/* The work directory holds files only: logs, the socket, the config. */
static void
dir_remove(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	if ((d = opendir(dir)) != NULL) {
		while ((e = readdir(d)) != NULL)
			if (strcmp(e->d_name, ".") != 0 &&
			    strcmp(e->d_name, "..") != 0 &&
			    harness_path(path, sizeof(path), dir,
			    e->d_name) == 0 && unlink(path) < 0)
				log_warn("cannot remove '%s'", path);
		closedir(d);
	}
	if (rmdir(dir) < 0)
		log_warn("cannot remove '%s'", dir);
}

static void
cleanup(struct soak *s)
{
	char path[PATH_MAX];

	harness_kill_all();
	chaos_free(s);
	snprintf(path, sizeof(path), "/dev/shm/simcuda-%s", s->state);
	unlink(path);
	if (s->keep || s->failures > 0 || interrupted) {
		fprintf(stderr, "soak: the work directory is kept: %s\n",
		    s->dir);
		return;
	}
	dir_remove(s->dir);
}

static int
setup(struct soak *s)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa,
	    NULL) < 0 || signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return -1;
	if (workdir(s) < 0 || environment(s) < 0 || fleet_init(s) < 0 ||
	    chaos_plan(s) < 0 || daemon_conf_write(s, 0) < 0)
		return -1;
	s->start_ms = soak_now_ms();
	if (daemon_start(s) < 0)
		return -1;
	return s->honest ? honest_follow(s) : 0;
}

int
main(void)
{
	static struct soak s;
	uint64_t wall;
	unsigned i;

	log_init("soak", LOG_LVL_WARN, 0);
	if (settings(&s) < 0)
		return 2;
	if (geteuid() != 0) {
		printf("soak: needs root: its clients run under the gids of "
		    "two groups\n");
		return 77;
	}
	printf("soak: %u clients, %u s of %s, seed %llu "
	    "(SOAK_SEED=%llu to repeat it)\n", s.nclients, s.seconds,
	    s.honest ? "honest work" : "chaos", (unsigned long long)s.seed,
	    (unsigned long long)s.seed);
	fflush(stdout);
	if (setup(&s) < 0) {
		cleanup(&s);
		return 1;
	}
	for (i = 0; i < s.nclients; i++)
		if (fleet_spawn(&s, (int)i) < 0)
			soak_fail(&s, "cannot start client %u", i);
	chaos(&s);
	if (!interrupted)
		finish(&s);
	wall = soak_now_ms() - s.start_ms;
	s.n.ledger_warnings = daemon_log_warnings(&s);
	sanitizer_reports(&s);
	if (!interrupted)
		verdict(&s);
	if (s.failures > 0)
		daemon_log_tail(&s, 30);
	cleanup(&s);
	if (interrupted)
		fprintf(stderr, "soak: interrupted\n");
	fflush(stderr);
	/* The JSON line last. */
	report_print(&s, wall);
	return s.failures > 0 || interrupted ? 1 : 0;
}
