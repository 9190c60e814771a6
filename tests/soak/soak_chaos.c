/*
 * The chaos: what goes wrong and when, all from the seed. The daemon's
 * restarts are planned at the start, spread over the run (as many by
 * SIGTERM as by SIGKILL: one of each per 20 s, at least one of each);
 * clients are killed, the configuration reloaded and clients swapped out
 * and back in at random intervals. Reloads and swaps go through
 * gpufracctl, run in the background and judged by their exit status.
 * The honest soak has none of it: only its quiet points.
 */
#include <fcntl.h>
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

#define CTL_MS		30000	/* gpufracctl gives up after 5 s of silence */
#define RESTART_EVERY_S	20	/* a SIGTERM and a SIGKILL each */
#define QUIET_EVERY_S	7
#define QUIET_SWAPS	3	/* clients swapped out at a quiet point */

static uint64_t
draw(struct soak *s, uint64_t lo, uint64_t hi)
{
	return soak_between(&s->rng, lo, hi);
}

int
chaos_plan(struct soak *s)
{
	struct soak_plan *p = &s->plan;
	uint64_t total = (uint64_t)s->seconds * 1000, seg;
	size_t n = s->seconds / RESTART_EVERY_S, i, j;
	unsigned nquiet = s->seconds / QUIET_EVERY_S;
	int t;

	p->quiet_every_ms = total / ((nquiet > 2 ? nquiet : 2) + 1);
	p->next_quiet_ms = p->quiet_every_ms;
	if (s->honest) {
		p->next_kill_ms = p->next_reload_ms = p->next_swap_ms =
		    UINT64_MAX;
		return 0;
	}
	p->nrestarts = 2 * (n > 0 ? n : 1);
	p->restart_ms = calloc(p->nrestarts, sizeof(*p->restart_ms));
	p->restart_kill = calloc(p->nrestarts, sizeof(*p->restart_kill));
	if (p->restart_ms == NULL || p->restart_kill == NULL) {
		log_warnx("out of memory");
		return -1;
	}
	/* One in each of equal stretches of the middle 90% of the run. */
	seg = total * 9 / 10 / p->nrestarts;
	for (i = 0; i < p->nrestarts; i++) {
		p->restart_ms[i] = total / 20 + i * seg + draw(s, seg / 5,
		    seg * 4 / 5);
		p->restart_kill[i] = i % 2;
	}
	for (i = p->nrestarts - 1; i > 0; i--) {	/* which is which */
		j = (size_t)draw(s, 0, i);
		t = p->restart_kill[i];
		p->restart_kill[i] = p->restart_kill[j];
		p->restart_kill[j] = t;
	}
	p->next_kill_ms = draw(s, 200, 1200);
	p->next_reload_ms = draw(s, 1000, 4000);
	p->next_swap_ms = draw(s, 500, 1500);
	return 0;
}

void
chaos_free(struct soak *s)
{
	free(s->plan.restart_ms);
	free(s->plan.restart_kill);
	s->plan.restart_ms = NULL;
	s->plan.restart_kill = NULL;
}

/* Run gpufracctl ARGS... in the background; -1 when none can start. */
static int
ctl_spawn(struct soak *s, int what, pid_t target)
{
	char prog[PATH_MAX], log[PATH_MAX], pid[16];
	struct soak_ctl *c = NULL;
	int i, fd;

	for (i = 0; i < SOAK_CTL_MAX && c == NULL; i++)
		if (s->ctls[i].pid == 0)
			c = &s->ctls[i];
	if (c == NULL || harness_path(prog, sizeof(prog), s->build,
	    "tools/gpufracctl") < 0 || harness_path(log, sizeof(log), s->dir,
	    "gpufracctl.log") < 0)
		return -1;
	snprintf(pid, sizeof(pid), "%d", (int)target);
	if ((c->pid = harness_fork()) < 0) {
		c->pid = 0;
		return -1;
	}
	if (c->pid == 0) {
		if ((fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644)) < 0 ||
		    dup2(fd, STDERR_FILENO) < 0 || (fd = open("/dev/null",
		    O_WRONLY)) < 0 || dup2(fd, STDOUT_FILENO) < 0)
			_exit(127);
		if (what == CTL_RELOAD)
			execl(prog, "gpufracctl", "-s", s->sock, "reload",
			    (char *)NULL);
		else
			execl(prog, "gpufracctl", "-s", s->sock, "swap",
			    what == CTL_SWAP_OUT ? "out" : "in", pid,
			    (char *)NULL);
		_exit(127);
	}
	c->what = what;
	c->target = target;
	c->deadline_ms = soak_now_ms() + CTL_MS;
	return 0;
}

/* The slot of the client swapped out by hand as pid, or -1. */
static int
swapped_slot(const struct soak *s, pid_t pid)
{
	int i;

	for (i = 0; i < SOAK_MAX_SLOTS; i++)
		if (s->plan.swapped[i] == pid && pid > 0)
			return i;
	return -1;
}

/* 0 ok, 1 the daemon said no or was away: both may be; else a failure. */
static void
ctl_judge(struct soak *s, struct soak_ctl *c, int status)
{
	static const char *const what[] = { "reload", "swap out", "swap in" };
	int i, ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;

	if (!WIFEXITED(status) || WEXITSTATUS(status) > 1) {
		soak_fail(s, "gpufracctl %s (pid %d) ended with wait status %#x"
		    "; see %s/gpufracctl.log", what[c->what], (int)c->target,
		    status, s->dir);
		return;
	}
	if (c->what == CTL_RELOAD) {
		if (ok)
			s->n.reloads_ctl++;
		else
			s->n.reloads_refused++;
		return;
	}
	i = fleet_find(s, c->target);
	if (c->what == CTL_SWAP_IN && i >= 0)
		s->clients[i].hand_in = !ok;
	if (!ok) {
		s->n.swaps_refused++;
		return;
	}
	if (c->what == CTL_SWAP_IN) {
		s->n.swaps_in++;
		return;
	}
	s->n.swaps_out++;
	if (i >= 0) {
		s->clients[i].hand_out_ms = soak_chaos_ms(s);
		s->clients[i].hand_in = -1;
		s->plan.swapped[i] = c->target;
		s->plan.swap_back_ms[i] = soak_chaos_ms(s) + draw(s, 200, 2500);
	}
}

int
chaos_ctl_exited(struct soak *s, pid_t pid, int status)
{
	int i;

	for (i = 0; i < SOAK_CTL_MAX; i++)
		if (s->ctls[i].pid == pid) {
			s->ctls[i].pid = 0;
			ctl_judge(s, &s->ctls[i], status);
			return 1;
		}
	return 0;
}

/* gpufracctl commands past their time are hung: said, and killed. */
static void
ctl_overdue(struct soak *s)
{
	uint64_t now = soak_now_ms();
	int i;

	for (i = 0; i < SOAK_CTL_MAX; i++) {
		if (s->ctls[i].pid == 0 || now < s->ctls[i].deadline_ms)
			continue;
		soak_fail(s, "gpufracctl (pid %d) did not finish within %d ms",
		    (int)s->ctls[i].pid, CTL_MS);
		kill(s->ctls[i].pid, SIGKILL);
		(void)harness_reap(s->ctls[i].pid, 1000);
		s->ctls[i].pid = 0;
	}
}

void
chaos_drain(struct soak *s)
{
	int i, busy;

	do {
		soak_reap(s);
		ctl_overdue(s);
		for (i = busy = 0; i < SOAK_CTL_MAX; i++)
			busy |= s->ctls[i].pid != 0;
		if (busy)
			harness_sleep_us(2000);
	} while (busy);
}

/* A random live client of the fleet, or -1. */
static int
client_pick(struct soak *s)
{
	int i, n = fleet_live(s);
	uint64_t k;

	if (n == 0)
		return -1;
	k = draw(s, 0, (uint64_t)n - 1);
	for (i = 0; i < SOAK_MAX_SLOTS; i++)
		if (s->clients[i].pid > 0 && k-- == 0)
			return i;
	return -1;
}

static void
restart(struct soak *s, int by_kill)
{
	chaos_drain(s);
	daemon_stop(s, by_kill ? SIGKILL : SIGTERM);
	if (by_kill)
		s->n.restarts_kill++;
	else
		s->n.restarts_term++;
	/* Down a moment: the shims carry on by themselves. */
	harness_sleep_us((unsigned)draw(s, 0, 300) * 1000);
	(void)daemon_start(s);
}

static void
reload(struct soak *s)
{
	if (daemon_conf_next(s) < 0 || s->daemon <= 0)
		return;
	if (soak_chance(&s->rng, 50)) {
		kill(s->daemon, SIGHUP);
		s->n.reloads_hup++;
	} else
		(void)ctl_spawn(s, CTL_RELOAD, 0);
}

/* Swap one client out; bring back those whose time has come. */
static void
swaps(struct soak *s, uint64_t now)
{
	int i;

	if (now >= s->plan.next_swap_ms && !s->quiet_swaps) {
		s->plan.next_swap_ms = now + draw(s, 300, 1500);
		if ((i = client_pick(s)) >= 0 && s->clients[i].ready &&
		    swapped_slot(s, s->clients[i].pid) < 0)
			(void)ctl_spawn(s, CTL_SWAP_OUT, s->clients[i].pid);
	}
	for (i = 0; i < SOAK_MAX_SLOTS; i++) {
		if (s->plan.swapped[i] == 0 || now < s->plan.swap_back_ms[i])
			continue;
		if (s->clients[i].pid == s->plan.swapped[i])
			(void)ctl_spawn(s, CTL_SWAP_IN, s->plan.swapped[i]);
		s->plan.swapped[i] = 0;
	}
}

void
chaos_tick(struct soak *s)
{
	struct soak_plan *p = &s->plan;
	uint64_t now = soak_chaos_ms(s);
	int i;

	ctl_overdue(s);
	/* Every one planned happens, however late a slow tick makes it. */
	while (p->next_restart < p->nrestarts &&
	    now >= p->restart_ms[p->next_restart]) {
		restart(s, p->restart_kill[p->next_restart]);
		p->next_restart++;
	}
	if (now >= p->next_kill_ms) {
		p->next_kill_ms = now + draw(s, 150, 900);
		if ((i = client_pick(s)) >= 0) {
			fleet_kill(s, i);
			s->n.kills++;
		}
	}
	if (now >= p->next_reload_ms) {
		p->next_reload_ms = now + draw(s, 1500, 4500);
		reload(s);
	}
	swaps(s, now);
}

/* Run one gpufracctl command, and wait for it. */
static void
ctl_run(struct soak *s, int what, pid_t target)
{
	if (ctl_spawn(s, what, target) == 0)
		chaos_drain(s);
}

/* What gpufracd charges pid, unused leases aside, on its devices and on
 * host (host: what of it on host). */
static uint64_t
charged_of(struct soak *s, pid_t pid, int host)
{
	struct gf_client *ps = NULL;
	uint64_t sum = 0;
	size_t n = 0, r;

	if (ctl_query_ps(s->sock, &ps, &n) < 0)
		return 0;
	for (r = 0; r < n; r++)
		if (ps[r].pid == (uint32_t)pid)
			sum += ps[r].host + (host ? 0 : ps[r].used -
			    ps[r].leased);
	free(ps);
	return sum;
}

unsigned
chaos_quiet_out(struct soak *s)
{
	unsigned n = 0, tries;
	uint64_t before;
	int i;

	if (s->honest)
		return 0;
	for (tries = 0; tries < 3 * QUIET_SWAPS && n < QUIET_SWAPS; tries++) {
		if ((i = client_pick(s)) < 0 || !s->clients[i].settled ||
		    s->clients[i].quiet_out)
			continue;
		before = s->n.swaps_out;
		s->clients[i].quiet_before = charged_of(s, s->clients[i].pid,
		    0);
		ctl_run(s, CTL_SWAP_OUT, s->clients[i].pid);
		if (s->n.swaps_out > before) {
			s->clients[i].quiet_host = charged_of(s,
			    s->clients[i].pid, 1);
			s->clients[i].quiet_out = (int)n + 1;
			s->plan.swapped[i] = 0;	/* back in here, not later */
			n++;
		}
	}
	return n;
}

/*
 * The unused leases gpufracd charges (the driver does not hold them) on
 * the devices where pid has host bytes to bring back; with say, what it
 * charges of what on them.
 */
static uint64_t
leases_in_way(struct soak *s, pid_t pid, int say)
{
	struct gf_client *ps = NULL;
	struct ctl_status st;
	uint64_t leased = 0, used = 0, cap = 0;
	size_t n = 0, d, r;

	memset(&st, 0, sizeof(st));
	if (ctl_query_ps(s->sock, &ps, &n) < 0 ||
	    ctl_query_status(s->sock, &st) < 0)
		goto out;
	for (d = 0; d < st.ndevices; d++)
		for (r = 0; r < n; r++)
			if (ps[r].pid == (uint32_t)pid && ps[r].host > 0 &&
			    memcmp(ps[r].uuid, st.devices[d].uuid,
			    GF_UUID_LEN) == 0) {
				leased += st.devices[d].leased;
				used += st.devices[d].used;
				cap += st.devices[d].capacity;
				break;
			}
	if (say)
		fprintf(stderr, "soak:   on its devices gpufracd charges %llu "
		    "of %llu, of which %llu are unused leases the driver does "
		    "not hold\n", (unsigned long long)used,
		    (unsigned long long)cap, (unsigned long long)leased);
out:
	ctl_status_free(&st);
	free(ps);
	return leased;
}

/*
 * Swap in by hand what was swapped out at this quiet point, the last out
 * first: each then finds what it left, or all but what gpufracd gives
 * others by its rules, and says so. The room a group frees may go to
 * another's guarantee (lent to borrowers, or not lent at all), and a
 * checkpoint swap measures contexts afresh (one of a process that
 * re-registered with a restarted daemon may not have been looked at
 * yet): such a refusal is the ledger's to make. Others' unused leases,
 * which the driver does not hold, are never a reason: a refusal while
 * some stand fails.
 */
void
chaos_quiet_in(struct soak *s)
{
	uint64_t before;
	int i, k;

	for (k = QUIET_SWAPS; k > 0; k--) {
		for (i = 0; i < SOAK_MAX_SLOTS; i++)
			if (s->clients[i].quiet_out == k)
				break;
		if (i == SOAK_MAX_SLOTS)
			continue;
		s->clients[i].quiet_out = 0;
		if (s->clients[i].pid <= 0)
			continue;
		before = s->n.swaps_in;
		ctl_run(s, CTL_SWAP_IN, s->clients[i].pid);
		if (s->n.swaps_in > before)
			continue;
		if (leases_in_way(s, s->clients[i].pid, 0) == 0) {
			fprintf(stderr, "soak: client %d, swapped out at a "
			    "quiet point, is refused its way back in, no "
			    "unused lease in its way (charged %llu before it "
			    "went out, %llu on host after)\n",
			    (int)s->clients[i].pid,
			    (unsigned long long)s->clients[i].quiet_before,
			    (unsigned long long)s->clients[i].quiet_host);
			continue;
		}
		soak_fail(s, "client %d, swapped out at a quiet point, is "
		    "refused its way back in while unused leases stand (see "
		    "%s/gpufracctl.log)", (int)s->clients[i].pid, s->dir);
		(void)leases_in_way(s, s->clients[i].pid, 1);
	}
}
