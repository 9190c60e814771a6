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
profile_of(int i)
{
	return &profiles[(unsigned)(i / GROUP_COUNT) % NPROFILES];
}

/* The client's stdin, stdout, page, log, gid and environment; exec. */
static void
child(void *arg, int in, int out)
{
	const struct spawn_arg *a = arg;
	const struct soak_client *c = &a->s->clients[a->i];
	const struct profile *p = profile_of(a->i);
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

	c->group = i % GROUP_COUNT;
	c->devmask = i % 2 == 0 ? (1u << SOAK_NDEV) - 1 :
	    1u << ((unsigned)(i / 2) % SOAK_NDEV);
	if (i % 5 == 3 && c->limit[0] == '\0')
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
	c->ready = c->settled = c->quitting = c->bye = 0;
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
				c->settled |= buf[j] == SOAK_SAY_SETTLED;
				c->bye |= buf[j] == SOAK_SAY_BYE;
			}
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

static const char *
call_name(uint32_t call)
{
	static const char *const kinds[SOAK_KINDS] = {
		[SOAK_MEM] = "mem", [SOAK_PITCH] = "pitch",
		[SOAK_MANAGED] = "managed", [SOAK_POOL] = "pool",
		[SOAK_VMM] = "vmm", [SOAK_ARRAY] = "array",
	};
	static char buf[48];
	unsigned k = call & 0xff;
	const char *kind = k < SOAK_KINDS ? kinds[k] : "?";

	switch (call & ~0xffu) {
	case SOAK_CALL_ALLOC:
		snprintf(buf, sizeof(buf), "allocating (%s)", kind);
		return buf;
	case SOAK_CALL_FREE:
		snprintf(buf, sizeof(buf), "freeing (%s)", kind);
		return buf;
	case SOAK_CALL_VERIFY:
		return "reading memory back (cuMemcpyDtoH)";
	case SOAK_CALL_POOL:
		return "synchronising or trimming a pool";
	case SOAK_CALL_QUIT:
		return "freeing everything";
	default:
		return "in no call of its own";
	}
}

/* Whether the client's stdin is the pipe the driver writes to. */
static int
pipe_same(const struct soak_client *c)
{
	char a[64], b[64], pa[64], pb[64];
	ssize_t na, nb;

	snprintf(pa, sizeof(pa), "/proc/%d/fd/0", (int)c->pid);
	snprintf(pb, sizeof(pb), "/proc/self/fd/%d", c->to);
	if ((na = readlink(pa, a, sizeof(a) - 1)) < 0 ||
	    (nb = readlink(pb, b, sizeof(b) - 1)) < 0)
		return -1;
	return na == nb && memcmp(a, b, (size_t)na) == 0;
}

/* What a stuck client was doing, and what gpufracd says of it. */
static void
stuck_say(struct soak *s, int i)
{
	static const char *const states[] = { "running", "waiting",
	    "swapped" };
	const struct soak_slot *sl = &s->slots[i];
	uint32_t call = __atomic_load_n(&sl->call, __ATOMIC_RELAXED);
	uint64_t since = __atomic_load_n(&sl->call_ms, __ATOMIC_RELAXED);
	struct gf_client *ps = NULL;
	size_t n = 0, r;
	uint64_t ops;
	int out = 0;

	fprintf(stderr, "soak:   it was %s", call_name(call));
	if (call != 0)
		fprintf(stderr, " for %llu ms", (unsigned long long)
		    (soak_now_ms() - since));
	if (ctl_query_ps(s->sock, &ps, &n) == 0)
		for (r = 0; r < n; r++)
			if (ps[r].pid == (uint32_t)s->clients[i].pid) {
				fprintf(stderr, "; gpufracd: %s, used %llu, "
				    "host %llu", ps[r].state < 3 ?
				    states[ps[r].state] : "?",
				    (unsigned long long)ps[r].used,
				    (unsigned long long)ps[r].host);
				out |= ps[r].state == GF_STATE_SWAPPED;
			}
	fputc('\n', stderr);
	free(ps);
	/* Between its own calls it calls cuCtxSetCurrent, unhooked. */
	if (call == 0 && out)
		fprintf(stderr, "soak:   swapped out, and in a driver call "
		    "the shim does not hook: held in the driver's checkpoint "
		    "lock\n");
	if (s->clients[i].hand_out_ms != 0)
		fprintf(stderr, "soak:   swapped out by hand at %.1fs, back "
		    "in by hand: %s\n", (double)s->clients[i].hand_out_ms /
		    1000, s->clients[i].hand_in < 0 ? "not asked" :
		    s->clients[i].hand_in ? "refused" : "done");
	ops = __atomic_load_n(&sl->ops, __ATOMIC_RELAXED);
	harness_sleep_us(200000);
	fprintf(stderr, "soak:   %llu calls in 200 ms; its stdin is %s\n",
	    (unsigned long long)(__atomic_load_n(&sl->ops, __ATOMIC_RELAXED) -
	    ops), pipe_same(&s->clients[i]) == 1 ? "the driver's pipe" :
	    "NOT the driver's pipe");
}

/* Those still not done(c) after the wait are stuck: said, and killed. */
static void
fleet_stuck(struct soak *s, int (*done)(const struct soak_client *),
    const char *what, unsigned ms)
{
	int i;

	for (i = 0; i < SOAK_MAX_SLOTS; i++) {
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
	int i;

	if (fleet_wait(s, is_ready, SETTLE_MS) > 0)
		fleet_stuck(s, is_ready, "ready", SETTLE_MS);
	for (i = 0; i < SOAK_MAX_SLOTS; i++)
		if (s->clients[i].pid > 0) {
			s->clients[i].settled = 0;
			tell(&s->clients[i], SOAK_CMD_PAUSE);
		}
	if (fleet_wait(s, is_settled, SETTLE_MS) > 0)
		fleet_stuck(s, is_settled, "settled", SETTLE_MS);
}

void
fleet_resume(struct soak *s)
{
	int i;

	for (i = 0; i < SOAK_MAX_SLOTS; i++)
		if (s->clients[i].pid > 0 && s->clients[i].settled) {
			s->clients[i].settled = 0;
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
