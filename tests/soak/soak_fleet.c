/*
 * The soak's clients: one soak_client process per slot, with a profile
 * that follows from its slot (group, devices, kinds, sizes, pace, a limit
 * of its own or none), its stdin and stdout on pipes to the driver and
 * its slot of the shared page on fd 3; started, killed, replaced, paused
 * until settled, resumed, and told to quit.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl_query.h"
#include "harness.h"
#include "log.h"
#include "soak.h"

#define SETTLE_MS	30000	/* past any wait, a swap-in and a restart */
/* Then one not settled may be held out (any wait_timeout is shorter). */
#define HELD_MS		5000
#define QUIT_MS		60000
/* A restarted daemon has forgotten the kills it began (kill_grace). */
#define FORGET_MS	15000

/* What a client of a profile does: kinds, sizes, hold, pace. */
struct profile {
	const char	*name;
	unsigned	kinds;
	const char	*min, *max, *hold;
	unsigned	think_ms;
};

#define K(k)	(1u << (k))
static const struct profile profiles[] = {
	/* small cuMemAlloc pairs, quickly: the lease's fast path */
	{ "lease", K(SOAK_MEM), "256", "256Ki", "24Mi", 3 },
	{ "mixed", K(SOAK_MEM) | K(SOAK_PITCH) | K(SOAK_POOL) | K(SOAK_VMM) |
	    K(SOAK_ARRAY), "4Ki", "24Mi", "160Mi", 20 },
	/* managed memory: never swapped out (killed when it must go) */
	{ "managed", K(SOAK_MEM) | K(SOAK_MANAGED) | K(SOAK_POOL) |
	    K(SOAK_ARRAY), "4Ki", "24Mi", "128Mi", 25 },
	{ "big", K(SOAK_MEM) | K(SOAK_PITCH) | K(SOAK_VMM) | K(SOAK_ARRAY) |
	    K(SOAK_POOL), "4Mi", "96Mi", "400Mi", 40 },
};
#define NPROFILES	(sizeof(profiles) / sizeof(profiles[0]))

/*
 * The honest soak's (soak_honest.c): a pool program as PyTorch's
 * cudaMallocAsync backend is one (cuMemAlloc and pools, trimmed now and
 * then), and one of every kind the shim sees, IPC and graphs included.
 */
static const struct profile honest_profiles[] = {
	{ "pools", K(SOAK_MEM) | K(SOAK_POOL), "1Mi", "64Mi", "256Mi", 5 },
	{ "every", K(SOAK_MEM) | K(SOAK_PITCH) | K(SOAK_MANAGED) |
	    K(SOAK_POOL) | K(SOAK_VMM) | K(SOAK_ARRAY) | K(SOAK_IPC) |
	    K(SOAK_GRAPH), "4Ki", "32Mi", "192Mi", 10 },
};
#define NHONEST		(sizeof(honest_profiles) / sizeof(honest_profiles[0]))

struct spawn_arg {
	struct soak	*s;
	int		 i;
	uint64_t	 seed;
};

int
fleet_init(struct soak *s)
{
	size_t len = SOAK_MAX_SLOTS * sizeof(struct soak_slot);

	if ((s->slotfd = memfd_create("soak-slots", MFD_CLOEXEC)) < 0 ||
	    ftruncate(s->slotfd, (off_t)len) < 0) {
		log_warn("cannot make the clients' page");
		return -1;
	}
	s->slots = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
	    s->slotfd, 0);
	if (s->slots == MAP_FAILED) {
		log_warn("cannot map the clients' page");
		return -1;
	}
	return 0;
}

static const struct profile *
profile_of(const struct soak *s, int i)
{
	if (s->honest)
		return &honest_profiles[(unsigned)i % NHONEST];
	return &profiles[(unsigned)(i / GROUP_COUNT) % NPROFILES];
}

/* The client's stdin, stdout, page, log, gid and environment; exec. */
static void
child(void *arg, int in, int out)
{
	const struct spawn_arg *a = arg;
	const struct soak_client *c = &a->s->clients[a->i];
	const struct profile *p = profile_of(a->s, a->i);
	char prog[PATH_MAX], shim[PATH_MAX], slot[16], seed[24], dev[8];
	char kinds[8], think[12], bound[16];
	int fd;

	/* dup2 onto itself would leave close-on-exec set. */
	if (dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 ||
	    (a->s->slotfd == SOAK_SLOT_FD ? fcntl(SOAK_SLOT_FD, F_SETFD, 0) :
	    dup2(a->s->slotfd, SOAK_SLOT_FD)) < 0 ||
	    (fd = open(a->s->clog, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
	    0644)) < 0 || dup2(fd, STDERR_FILENO) < 0)
		_exit(127);
	if (c->group != GROUP_DEFAULT &&
	    (setgroups(0, NULL) < 0 || setgid(c->group == GROUP_ALPHA ?
	    SOAK_GID_ALPHA : SOAK_GID_BETA) < 0))
		_exit(127);
	if (harness_path(prog, sizeof(prog), a->s->build,
	    "tests/soak/soak_client") < 0 || harness_path(shim, sizeof(shim),
	    a->s->build, "shim/libgpufrac.so") < 0 ||
	    harness_preload_set(shim) < 0 || (c->limit[0] != '\0' &&
	    setenv("GPUFRAC_MEMORY_LIMIT", c->limit, 1) < 0))
		_exit(127);
	snprintf(slot, sizeof(slot), "%d", a->i);
	snprintf(seed, sizeof(seed), "%llu", (unsigned long long)a->seed);
	snprintf(dev, sizeof(dev), "%u", c->devmask);
	snprintf(kinds, sizeof(kinds), "%u", p->kinds);
	snprintf(think, sizeof(think), "%u", p->think_ms);
	snprintf(bound, sizeof(bound), "%u", a->s->wait_bound_ms);
	execl(prog, "soak_client", "-i", slot, "-s", seed, "-d", dev, "-k",
	    kinds, "-m", p->min, "-M", p->max, "-H", p->hold, "-t", think,
	    "-w", bound, (char *)NULL);
	fprintf(stderr, "soak: cannot run '%s': %s\n", prog, strerror(errno));
	_exit(127);
}

/* The slot's profile: fixed by its index, a limit drawn once. */
static void
profile_set(struct soak *s, int i)
{
	struct soak_client *c = &s->clients[i];

	c->group = s->honest ? GROUP_ALPHA : i % GROUP_COUNT;
	c->devmask = i % 2 == 0 ? (1u << SOAK_NDEV) - 1 :
	    1u << ((unsigned)(i / 2) % SOAK_NDEV);
	/* Honest: the group's limit is the one they run near. */
	if (i % 5 == 3 && c->limit[0] == '\0' && !s->honest)
		snprintf(c->limit, sizeof(c->limit), "%lluMi",
		    (unsigned long long)soak_between(&s->rng, 96, 512));
}

int
fleet_spawn(struct soak *s, int i)
{
	struct soak_client *c = &s->clients[i];
	struct spawn_arg a = { s, i, soak_rand(&s->rng) };

	profile_set(s, i);
	memset(&s->slots[i], 0, sizeof(s->slots[i]));
	if ((c->pid = harness_spawn(child, &a, &c->to, &c->from)) < 0) {
		c->pid = 0;
		return -1;
	}
	if (fcntl(c->from, F_SETFL, O_NONBLOCK) < 0)
		log_warn("cannot make a client's pipe non-blocking");
	c->ready = c->settled = c->held_out = c->quitting = c->bye = 0;
	c->pauses_sent = 0;
	c->hand_out_ms = 0;
	c->hand_in = -1;
	c->started_ms = soak_now_ms();
	s->n.spawned++;
	return 0;
}

int
fleet_find(const struct soak *s, pid_t pid)
{
	int i;

	for (i = 0; i < SOAK_MAX_SLOTS; i++)
		if (s->clients[i].pid == pid)
			return i;
	return -1;
}

int
fleet_live(const struct soak *s)
{
	int i, n = 0;

	for (i = 0; i < SOAK_MAX_SLOTS; i++)
		n += s->clients[i].pid > 0;
	return n;
}

static uint64_t
take(uint64_t *v)
{
	uint64_t x = __atomic_load_n(v, __ATOMIC_RELAXED);

	*v = 0;
	return x;
}

/* Add a client's slot to the totals, as it goes. */
static void
fleet_count(struct soak *s, int i)
{
	struct soak_slot *sl = &s->slots[i];
	uint64_t w;
	int k;

	s->n.ops += take(&sl->ops);
	for (k = 0; k < SOAK_KINDS; k++)
		s->n.kind_ops[k] += take(&sl->kind_ops[k]);
	s->n.denied += take(&sl->denied);
	s->n.waits += take(&sl->waits);
	s->n.stuck += take(&sl->stuck);
	s->n.swapped_calls += take(&sl->swapped_calls);
	s->n.errors += take(&sl->errors);
	s->n.corrupt += take(&sl->corrupt);
	if ((w = take(&sl->wait_max_ms)) > s->n.wait_max_ms)
		s->n.wait_max_ms = w;
}

static void
slot_close(struct soak *s, int i)
{
	struct soak_client *c = &s->clients[i];

	fleet_count(s, i);
	close(c->to);
	close(c->from);
	c->pid = 0;
}

/*
 * Whether gpufracd stopped pid (a borrower whose loan it took back, or a
 * victim that could not be swapped): it says so in its events, unless it
 * was restarted since, which forgets them.
 */
static int
stopped_by_daemon(const struct soak *s, pid_t pid)
{
	struct gf_event *ev = NULL;
	size_t n = 0, i;
	int found = 0, level = log_getlevel();

	if (soak_now_ms() - s->restarted_ms < FORGET_MS)
		return 1;
	log_setlevel(-1);
	if (ctl_query_events(s->sock, &ev, &n) < 0) {
		log_setlevel(level);
		return 1;	/* down: cannot tell */
	}
	log_setlevel(level);
	for (i = 0; i < n && !found; i++)
		found = ev[i].pid == (uint32_t)pid &&
		    (ev[i].kind == GF_EV_KILL || ev[i].kind == GF_EV_PREEMPT ||
		    ev[i].kind == GF_EV_FALLBACK);
	free(ev);
	return found;
}

void
fleet_exited(struct soak *s, int i, int status)
{
	struct soak_client *c = &s->clients[i];
	pid_t pid = c->pid;

	slot_close(s, i);
	if (c->quitting && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return;
	/* The daemon stops borrowers it takes a guarantee back from. */
	if (!c->quitting && WIFSIGNALED(status) &&
	    (WTERMSIG(status) == SIGTERM || WTERMSIG(status) == SIGKILL) &&
	    stopped_by_daemon(s, pid)) {
		s->n.died_by_daemon++;
		return;
	}
	s->n.client_crashes++;
	if (WIFSIGNALED(status))
		soak_fail(s, "client %d (slot %d) killed by signal %d (%s)%s; "
		    "see %s", (int)pid, i, WTERMSIG(status),
		    strsignal(WTERMSIG(status)), c->quitting ? "" :
		    ", which gpufracd's events do not explain", s->clog);
	else
		soak_fail(s, "client %d (slot %d) exited with status %d; see "
		    "%s", (int)pid, i, WEXITSTATUS(status), s->clog);
}

void
fleet_kill(struct soak *s, int i)
{
	struct soak_client *c = &s->clients[i];

	if (c->pid <= 0)
		return;
	kill(c->pid, SIGKILL);
	if (waitpid(c->pid, NULL, 0) < 0)
		log_warn("cannot wait for client %d", (int)c->pid);
	harness_forget(c->pid);
	slot_close(s, i);
}

void
fleet_refill(struct soak *s)
{
	unsigned i;

	for (i = 0; i < s->nclients; i++)
		if (s->clients[i].pid == 0 && fleet_spawn(s, (int)i) < 0)
			soak_fail(s, "cannot start a client in slot %u", i);
}

void
fleet_listen(struct soak *s)
{
	struct soak_client *c;
	char buf[16];
	ssize_t n, j;
	int i;

	for (i = 0; i < SOAK_MAX_SLOTS; i++) {
		c = &s->clients[i];
		if (c->pid <= 0)
			continue;
		while ((n = read(c->from, buf, sizeof(buf))) > 0)
			for (j = 0; j < n; j++) {
				c->ready |= buf[j] == SOAK_SAY_READY;
				c->bye |= buf[j] == SOAK_SAY_BYE;
			}
		/* A late SETTLED byte may answer an earlier PAUSE. */
		c->settled = c->pauses_sent > 0 && __atomic_load_n(
		    &s->slots[i].pauses, __ATOMIC_ACQUIRE) == c->pauses_sent;
	}
}

static void
tell(struct soak_client *c, char cmd)
{
	if (write(c->to, &cmd, 1) != 1 && errno != EPIPE)
		log_warn("cannot write to client %d", (int)c->pid);
}

/* Until done(c) holds for every live client, or ms have passed. */
static int
fleet_wait(struct soak *s, int (*done)(const struct soak_client *),
    unsigned ms)
{
	uint64_t deadline = soak_now_ms() + ms;
	int i, left;

	for (;;) {
		soak_reap(s);
		fleet_listen(s);
		for (i = left = 0; i < SOAK_MAX_SLOTS; i++)
			left += s->clients[i].pid > 0 && !done(&s->clients[i]);
		if (left == 0 || soak_now_ms() >= deadline)
			return left;
		harness_sleep_us(2000);
	}
}

static int
is_ready(const struct soak_client *c)
{
	return c->ready;
}

static int
is_settled(const struct soak_client *c)
{
	return c->settled;
}

static int
is_settled_or_held(const struct soak_client *c)
{
	return c->settled || c->held_out;
}

int
fleet_truth(const struct soak *s, int i, uint64_t *charged,
    uint64_t *driver)
{
	const struct soak_slot *sl = &s->slots[i];
	uint32_t seq = __atomic_load_n(&sl->truth_seq, __ATOMIC_ACQUIRE);
	int d;

	/* Acquire loads: the second look at seq comes after them. */
	for (d = 0; d < SOAK_MAX_DEV; d++) {
		charged[d] = __atomic_load_n(&sl->charged[d], __ATOMIC_ACQUIRE);
		driver[d] = __atomic_load_n(&sl->driver[d], __ATOMIC_ACQUIRE);
	}
	return seq % 2 == 0 && __atomic_load_n(&sl->truth_seq,
	    __ATOMIC_RELAXED) == seq ? 0 : -1;
}

/* Clients not settled that gpufracd shows swapped out are held out. */
static void
held_out_mark(struct soak *s)
{
	struct gf_client *ps = NULL;
	size_t n = 0, r;
	int i;

	if (ctl_query_ps(s->sock, &ps, &n) < 0)
		return;
	for (r = 0; r < n; r++)
		if (ps[r].state == GF_STATE_SWAPPED &&
		    (i = fleet_find(s, (pid_t)ps[r].pid)) >= 0 &&
		    !s->clients[i].settled)
			s->clients[i].held_out = 1;
	free(ps);
}

/* Those still not done(c) after the wait are stuck: said, and killed. */
static void
fleet_stuck(struct soak *s, int (*done)(const struct soak_client *),
    const char *what, unsigned ms)
{
	int i;

	for (i = 0; i < SOAK_MAX_SLOTS; i++) {
		/* One killed may have let another go on meanwhile. */
		fleet_listen(s);
		if (s->clients[i].pid <= 0 || done(&s->clients[i]))
			continue;
		s->n.stuck_clients++;
		soak_fail(s, "client %d (slot %d) not %s within %u ms: stuck",
		    (int)s->clients[i].pid, i, what, ms);
		stuck_say(s, i);
		fleet_kill(s, i);
	}
}

void
fleet_settle(struct soak *s)
{
	uint64_t deadline;
	int i, left;

	if (fleet_wait(s, is_ready, SETTLE_MS) > 0)
		fleet_stuck(s, is_ready, "ready", SETTLE_MS);
	for (i = 0; i < SOAK_MAX_SLOTS; i++)
		if (s->clients[i].pid > 0) {
			s->clients[i].settled = s->clients[i].held_out = 0;
			s->clients[i].pauses_sent++;
			tell(&s->clients[i], SOAK_CMD_PAUSE);
		}
	if (fleet_wait(s, is_settled, HELD_MS) == 0)
		return;
	deadline = soak_now_ms() + SETTLE_MS - HELD_MS;
	do {	/* the swap resolver may take one more meanwhile */
		held_out_mark(s);
		left = fleet_wait(s, is_settled_or_held, 1000);
	} while (left > 0 && soak_now_ms() < deadline);
	if (left > 0)
		fleet_stuck(s, is_settled_or_held, "settled", SETTLE_MS);
}

void
fleet_resume(struct soak *s)
{
	int i;

	/* One held out reads it after its PAUSE, once back. */
	for (i = 0; i < SOAK_MAX_SLOTS; i++)
		if (s->clients[i].pid > 0 && (s->clients[i].settled ||
		    s->clients[i].held_out)) {
			s->clients[i].settled = s->clients[i].held_out = 0;
			tell(&s->clients[i], SOAK_CMD_RESUME);
		}
}

static int
is_gone(const struct soak_client *c)
{
	(void)c;
	return 0;	/* only exiting takes it off the list */
}

void
fleet_quit(struct soak *s)
{
	int i;

	for (i = 0; i < SOAK_MAX_SLOTS; i++)
		if (s->clients[i].pid > 0) {
			s->clients[i].quitting = 1;
			tell(&s->clients[i], SOAK_CMD_QUIT);
		}
	if (fleet_wait(s, is_gone, QUIT_MS) > 0)
		fleet_stuck(s, is_gone, "gone", QUIT_MS);
}
