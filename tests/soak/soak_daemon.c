/*
 * The soak's gpufracd: its configurations (each reload brings a new one,
 * drawn from the seed), starting it, stopping it and judging how it
 * ended, and reading its log for broken invariants.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl_query.h"
#include "harness.h"
#include "log.h"
#include "soak.h"

#define START_MS	30000	/* a sanitizer on a loaded machine */
#define TERM_MS		30000	/* SIGTERM swaps everyone back in first */
#define KILL_MS		5000

/* One of n choices, for configuration gen. */
static const char *
pick(uint64_t *rng, const char *const *choices, size_t n)
{
	return choices[soak_rand(rng) % n];
}

#define PICK(rng, ...) pick(rng, (const char *const []){ __VA_ARGS__ }, \
	sizeof((const char *const []){ __VA_ARGS__ }) / sizeof(const char *))

/*
 * Two groups matched by gid, each with a limit and a guarantee; alpha
 * never borrows (on_preempt none) and waits, beta borrows and is swapped
 * out when its loan is taken back; the default group's processes borrow
 * too, and are stopped then (on_preempt kill). Every wait_timeout is at
 * most SOAK_WAIT_TIMEOUT_MS. The first configuration waits everywhere.
 * With quiet_swaps, the daemon never swaps anybody out by itself: no
 * swap resolver, and beta's loans are taken back by stopping its
 * processes.
 */
/* SOAK_LOG_LEVEL, or warn: what gpufracd.log says of a failed run. */
static const char *
log_level(void)
{
	const char *v = getenv("SOAK_LOG_LEVEL");

	return v != NULL && *v != '\0' && strchr(v, '\n') == NULL ? v :
	    "warn";
}

static void
conf_print(FILE *f, unsigned gen, uint64_t rng, int quiet_swaps)
{
	fprintf(f, "; the soak's configuration %u\n[daemon]\n"
	    "log_level = %s\n", gen, log_level());
	fprintf(f, "default_limit = %s\n", PICK(&rng, "60%", "70%", "80%"));
	fprintf(f, "default_resolver = %s\n", gen == 0 || quiet_swaps ?
	    "wait" : PICK(&rng, "wait", "wait", "fail", "swap"));
	fprintf(f, "wait_timeout = %s\n", PICK(&rng, "1s", "1500ms", "2s"));
	fprintf(f, "swap_min_idle = %s\n", PICK(&rng, "500ms", "1s"));
	fprintf(f, "lend_guarantees = %s\n", PICK(&rng, "yes", "yes", "no"));
	fprintf(f, "\n[group alpha]\nmatch = gid:%u\n", SOAK_GID_ALPHA);
	fprintf(f, "limit = %s\n", PICK(&rng, "40%", "50%", "60%"));
	fprintf(f, "guarantee = %s\n", PICK(&rng, "15%", "20%", "25%"));
	fprintf(f, "priority = 5\nresolver = wait\non_preempt = none\n");
	fprintf(f, "\n[group beta]\nmatch = gid:%u\n", SOAK_GID_BETA);
	fprintf(f, "limit = %s\n", PICK(&rng, "50%", "60%", "70%"));
	fprintf(f, "guarantee = %s\n", PICK(&rng, "5%", "10%"));
	fprintf(f, "resolver = %s\n", gen == 0 || quiet_swaps ? "wait" :
	    PICK(&rng, "wait", "swap"));
	fprintf(f, "wait_timeout = %s\non_preempt = %s\n",
	    PICK(&rng, "1s", "2s"), quiet_swaps ? "kill" : "swap");
}

/*
 * The honest soak's: every client in one group, whose limit they pass
 * together (their holds add up to more), refused at once when they
 * would (resolver fail), so that each out-of-memory is a DENY.
 */
static void
conf_print_honest(FILE *f)
{
	fprintf(f, "; the honest soak's configuration\n[daemon]\n"
	    "log_level = %s\ndefault_resolver = fail\n", log_level());
	fprintf(f, "\n[group alpha]\nmatch = gid:%u\nlimit = %s\n"
	    "resolver = fail\n", SOAK_GID_ALPHA, SOAK_HONEST_LIMIT);
}

int
daemon_conf_write(struct soak *s, unsigned gen)
{
	char tmp[PATH_MAX + 8];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.new", s->conf);
	if ((f = fopen(tmp, "we")) == NULL) {
		log_warn("cannot create '%s'", tmp);
		return -1;
	}
	if (s->honest)
		conf_print_honest(f);
	else
		conf_print(f, gen, s->seed ^ (0x5851f42d4c957f2dull *
		    (gen + 1)), s->quiet_swaps);
	if (fclose(f) != 0 || rename(tmp, s->conf) < 0) {
		log_warn("cannot write '%s'", s->conf);
		return -1;
	}
	s->conf_gen = gen;
	return 0;
}

int
daemon_conf_next(struct soak *s)
{
	return daemon_conf_write(s, s->conf_gen + 1);
}

static int
daemon_serves(const struct soak *s)
{
	struct ctl_status st;
	int rc, level = log_getlevel();

	if (s->daemon <= 0)
		return 0;
	memset(&st, 0, sizeof(st));
	log_setlevel(-1);	/* not listening yet is expected */
	rc = ctl_query_status(s->sock, &st);
	log_setlevel(level);
	ctl_status_free(&st);
	return rc == 0;
}

static int
serves(void *arg)
{
	return daemon_serves(arg);
}

int
daemon_start(struct soak *s)
{
	if ((s->daemon = harness_fork()) < 0) {
		s->daemon = 0;
		return -1;
	}
	if (s->daemon == 0)
		harness_daemon_exec(s->build, s->sock, s->conf, s->log);
	s->restarted_ms = soak_now_ms();
	if (harness_daemon_wait(&s->daemon, serves, s, START_MS) < 0) {
		soak_fail(s, "gpufracd did not start (see %s)", s->log);
		return -1;
	}
	return 0;
}

/* "exited with status 1", "killed by SIGSEGV". */
static void
status_text(int status, char *buf, size_t size)
{
	if (WIFEXITED(status))
		snprintf(buf, size, "exited with status %d",
		    WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, size, "killed by signal %d (%s)",
		    WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(buf, size, "ended with wait status %#x", status);
}

void
daemon_stop(struct soak *s, int sig)
{
	uint64_t t0 = soak_now_ms(), ms;
	char how[80];
	int status;

	if (s->daemon <= 0)
		return;
	kill(s->daemon, sig);
	status = harness_reap(s->daemon, sig == SIGKILL ? KILL_MS : TERM_MS);
	ms = soak_now_ms() - t0;
	s->daemon = 0;
	status_text(status, how, sizeof(how));
	if (sig == SIGKILL) {
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
			s->n.daemon_crashes++;
			soak_fail(s, "gpufracd sent SIGKILL %s", how);
		}
		return;
	}
	if (ms >= TERM_MS)
		soak_fail(s, "gpufracd did not stop within %d ms of SIGTERM",
		    TERM_MS);
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		s->n.daemon_crashes++;
		soak_fail(s, "gpufracd %s on SIGTERM, not 0", how);
	}
}

void
daemon_exited(struct soak *s, int status)
{
	char how[80];

	s->daemon = 0;
	s->n.daemon_crashes++;
	status_text(status, how, sizeof(how));
	soak_fail(s, "gpufracd %s unasked; starting another", how);
	(void)daemon_start(s);
}

unsigned
daemon_log_warnings(const struct soak *s)
{
	char line[1024];
	unsigned n = 0;
	FILE *f;

	if ((f = fopen(s->log, "re")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, "ledger:") != NULL) {
			if (n++ < 10)
				fprintf(stderr, "soak: gpufracd: %s", line);
		}
	fclose(f);
	return n;
}

void
daemon_log_tail(const struct soak *s, unsigned lines)
{
	char cmd[PATH_MAX + 32];

	fprintf(stderr, "soak: the last %u lines of %s:\n", lines, s->log);
	fflush(stderr);
	snprintf(cmd, sizeof(cmd), "tail -n %u '%s' >&2", lines, s->log);
	if (system(cmd) != 0)
		log_warnx("cannot show '%s'", s->log);
}
