/*
 * soak_client: one tenant of the soak (make soak), linked against the
 * (simulated) driver and run with the shim preloaded. It takes and gives
 * back device memory of random kinds and sizes, a call at a time, until
 * the driver says quit; it keeps in its slot (soak_proto.h) what it did
 * and, whenever it is paused, what it holds by its own count, for the
 * driver to compare with the daemon's ledger and the driver's state.
 *
 *   soak_client -i slot -s seed -d devmask -k kinds -m min -M max
 *               -H hold -t think_ms -w wait_bound_ms
 *
 * A call that takes longer than wait_bound_ms while the process was not
 * swapped out (a watcher thread asks the driver) is a stuck waiter: the
 * daemon answers a queued request by its wait_timeout, and the shim gives
 * up on a silent daemon 5 s after that. Exit status 0, or 2 on a set-up
 * error (said on stderr).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "soak_client.h"
#include "units.h"

/* Calls this long are waits; the watcher looks at longer ones only. */
#define WAIT_MS		100
#define WATCH_MS	10

static const char *const kind_name[SOAK_KINDS] = {
	[SOAK_MEM] = "cuMemAlloc", [SOAK_PITCH] = "cuMemAllocPitch",
	[SOAK_MANAGED] = "cuMemAllocManaged", [SOAK_POOL] = "pool",
	[SOAK_VMM] = "vmm", [SOAK_ARRAY] = "array",
	[SOAK_IPC] = "ipc", [SOAK_GRAPH] = "graph",
};

/* The call in progress, for the watcher: its start (0: none), and
 * whether the process was seen swapped out meanwhile. */
static uint64_t call_start_ns;
static int call_swapped;
static uint64_t wait_bound_ms;

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void __attribute__((noreturn))
die(const char *what)
{
	fprintf(stderr, "soak_client[%d]: %s\n", (int)getpid(), what);
	exit(2);
}

static void
bump(uint64_t *counter)
{
	__atomic_add_fetch(counter, 1, __ATOMIC_RELAXED);
}

/* Not in the shim's way: the checkpoint calls act on a pid, ungated. */
static void *
watch(void *arg)
{
	struct timespec ts = { 0, WATCH_MS * 1000000L };
	CUprocessState st;
	uint64_t start;

	(void)arg;
	for (;;) {
		nanosleep(&ts, NULL);
		start = __atomic_load_n(&call_start_ns, __ATOMIC_ACQUIRE);
		if (start == 0 || now_ns() - start < 2 * WATCH_MS * 1000000ull)
			continue;
		if (cuCheckpointProcessGetState((int)getpid(), &st) ==
		    CUDA_SUCCESS && st != CU_PROCESS_STATE_RUNNING)
			__atomic_store_n(&call_swapped, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

void
tenant_use(struct tenant *t, int dev)
{
	if (cuCtxSetCurrent(t->ctx[dev]) != CUDA_SUCCESS)
		die("cannot make a context current");
}

void
tenant_count(struct tenant *t, int kind, CUresult r, const char *what)
{
	bump(&t->slot->ops);
	bump(&t->slot->kind_ops[kind]);
	if (r == CUDA_ERROR_OUT_OF_MEMORY)
		bump(&t->slot->denied);
	else if (r != CUDA_SUCCESS) {
		bump(&t->slot->errors);
		fprintf(stderr, "soak_client[%d]: %s: error %d\n",
		    (int)getpid(), what, (int)r);
	}
}

/* Time what fn does: a wait past the bound, unless swapped out, is stuck. */
static void
timed_end(struct tenant *t, uint64_t start, const char *what)
{
	uint64_t ms = (now_ns() - start) / 1000000u;

	__atomic_store_n(&call_start_ns, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&t->slot->call, 0, __ATOMIC_RELAXED);
	if (__atomic_load_n(&call_swapped, __ATOMIC_ACQUIRE)) {
		bump(&t->slot->swapped_calls);
		return;
	}
	if (ms >= WAIT_MS)
		bump(&t->slot->waits);
	if (ms > t->slot->wait_max_ms)
		__atomic_store_n(&t->slot->wait_max_ms, ms, __ATOMIC_RELAXED);
	if (ms > wait_bound_ms) {
		bump(&t->slot->stuck);
		fprintf(stderr, "soak_client[%d]: %s took %llu ms, past the "
		    "bound of %llu ms, not swapped out\n", (int)getpid(), what,
		    (unsigned long long)ms, (unsigned long long)wait_bound_ms);
	}
}

static uint64_t
timed_start(struct tenant *t, uint32_t call)
{
	uint64_t start = now_ns();

	__atomic_store_n(&t->slot->call_ms, start / 1000000u,
	    __ATOMIC_RELAXED);
	__atomic_store_n(&t->slot->call, call, __ATOMIC_RELAXED);
	__atomic_store_n(&call_swapped, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&call_start_ns, start, __ATOMIC_RELEASE);
	return start;
}

/* One of the kinds the tenant uses, at random. */
static int
kind_pick(struct tenant *t)
{
	int k, n = __builtin_popcount(t->kinds);
	uint64_t i = soak_rand(&t->rng) % (uint64_t)n;

	for (k = 0; k < SOAK_KINDS; k++)
		if ((t->kinds & (1u << k)) && i-- == 0)
			return k;
	return SOAK_MEM;
}

static int
dev_pick(struct tenant *t)
{
	int d, n = __builtin_popcount(t->devmask);
	uint64_t i = soak_rand(&t->rng) % (uint64_t)n;

	for (d = 0; d < SOAK_MAX_DEV; d++)
		if ((t->devmask & (1u << d)) && i-- == 0)
			return d;
	return 0;
}

/* Now and then, what pools are for: synchronise, trim, drop ours. */
static int
pool_step(struct tenant *t, int dev)
{
	uint64_t roll = soak_rand(&t->rng) % 100, start;
	CUresult r;

	if (!(t->kinds & (1u << SOAK_POOL)) || roll >= 6)
		return 0;
	start = timed_start(t, SOAK_CALL_POOL);
	r = roll < 3 ? pool_sync(t, dev) : roll < 5 ? pool_trim(t, dev) :
	    pool_drop(t, dev);
	timed_end(t, start, "pool sync, trim or destroy");
	tenant_count(t, SOAK_POOL, r, "pool sync, trim or destroy");
	return 1;
}

static void
verify_step(struct tenant *t)
{
	uint64_t start = timed_start(t, SOAK_CALL_VERIFY);
	CUresult r;

	if (kind_verify(t, &r) < 0) {
		bump(&t->slot->corrupt);
		fprintf(stderr, "soak_client[%d]: data read back differs\n",
		    (int)getpid());
	}
	timed_end(t, start, "cuMemcpyDtoH");
	if (r != CUDA_SUCCESS)
		tenant_count(t, SOAK_MEM, r, "cuMemcpyDtoH");
}

/* One call: allocate, free, check data, or a pool's own business. */
static void
step(struct tenant *t)
{
	int dev = dev_pick(t), kind;
	uint64_t start;
	size_t i;
	CUresult r;

	tenant_use(t, dev);
	if (soak_chance(&t->rng, 3)) {
		verify_step(t);
		return;
	}
	if (pool_step(t, dev))
		return;
	if (t->nheld > 0 && t->charged[dev] > soak_between(&t->rng, 0,
	    t->max_hold)) {
		i = (size_t)(soak_rand(&t->rng) % t->nheld);
		kind = t->held[i].kind;
		start = timed_start(t, SOAK_CALL_FREE | (uint32_t)kind);
		r = kind_free(t, i);
		timed_end(t, start, "free");
		tenant_count(t, kind, r, "free");
		return;
	}
	kind = kind_pick(t);
	start = timed_start(t, SOAK_CALL_ALLOC | (uint32_t)kind);
	r = kind_alloc(t, kind, dev);
	timed_end(t, start, kind_name[kind]);
	tenant_count(t, kind, r, kind_name[kind]);
}

static void
say(char c)
{
	if (write(STDOUT_FILENO, &c, 1) != 1)
		exit(0);	/* the driver is gone */
}

/* What it holds now, for the driver: a seqlock of one writer. */
static void
truth_store(struct tenant *t)
{
	uint64_t charged[SOAK_MAX_DEV], driver[SOAK_MAX_DEV];
	uint32_t seq = t->slot->truth_seq;
	int d;

	/* Release stores: whoever sees a new value sees seq odd before. */
	kinds_truth(t, charged, driver);
	__atomic_store_n(&t->slot->truth_seq, seq + 1, __ATOMIC_RELAXED);
	for (d = 0; d < SOAK_MAX_DEV; d++) {
		__atomic_store_n(&t->slot->charged[d], charged[d],
		    __ATOMIC_RELEASE);
		__atomic_store_n(&t->slot->driver[d], driver[d],
		    __ATOMIC_RELEASE);
	}
	__atomic_store_n(&t->slot->truth_seq, seq + 2, __ATOMIC_RELEASE);
}

/* The next command; EOF (the driver is gone) ends the client. */
static char
command(void)
{
	char c;
	ssize_t n;

	while ((n = read(STDIN_FILENO, &c, 1)) < 0 && errno == EINTR)
		;
	if (n != 1)
		exit(0);
	return c;
}

static void __attribute__((noreturn))
quit(struct tenant *t)
{
	uint64_t start = timed_start(t, SOAK_CALL_QUIT);
	CUresult r = kinds_free_all(t);

	timed_end(t, start, "freeing everything");
	if (r != CUDA_SUCCESS)
		tenant_count(t, SOAK_MEM, r, "freeing everything");
	truth_store(t);
	say(SOAK_SAY_BYE);
	exit(0);
}

/* Paused: what it holds into the slot, then wait to go on or quit. */
static void
pause_here(struct tenant *t)
{
	char c;

	truth_store(t);
	bump(&t->slot->pauses);
	say(SOAK_SAY_SETTLED);
	while ((c = command()) != SOAK_CMD_RESUME)
		if (c == SOAK_CMD_QUIT)
			quit(t);
}

static void
run(struct tenant *t, unsigned think_ms)
{
	struct pollfd p = { STDIN_FILENO, POLLIN, 0 };
	char c;

	for (;;) {
		p.revents = 0;
		if (poll(&p, 1, (int)soak_between(&t->rng, 0, think_ms)) > 0) {
			if ((c = command()) == SOAK_CMD_PAUSE)
				pause_here(t);
			else if (c == SOAK_CMD_QUIT)
				quit(t);
			continue;
		}
		step(t);
		truth_store(t);
	}
}

/* Contexts on its devices, each opened with the daemon (cuMemGetInfo). */
static void
setup(struct tenant *t, int slot)
{
	size_t len = SOAK_MAX_SLOTS * sizeof(struct soak_slot), fr, tot;
	struct soak_slot *page;
	const char *cb = getenv("SIMCUDA_CONTEXT_BYTES");
	struct timespec nap = { 0, 100 * 1000000L };
	pthread_t th;
	CUdevice dev;
	CUresult r;
	int d;

	page = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
	    SOAK_SLOT_FD, 0);
	if (page == MAP_FAILED)
		die("cannot map the slots");
	t->slot = &page[slot];
	if (cb != NULL && *cb != '\0' && size_parse(cb, &t->ctx_bytes) < 0)
		die("bad SIMCUDA_CONTEXT_BYTES");
	if (cuInit(0) != CUDA_SUCCESS)
		die("cuInit failed");
	for (d = 0; d < SOAK_MAX_DEV; d++) {
		if (!(t->devmask & (1u << d)))
			continue;
		if (cuDeviceGet(&dev, d) != CUDA_SUCCESS)
			die("cannot get a device");
		/* A context takes memory: on a full device, wait for room. */
		while ((r = cuDevicePrimaryCtxRetain(&t->ctx[d], dev)) ==
		    CUDA_ERROR_OUT_OF_MEMORY)
			nanosleep(&nap, NULL);
		if (r != CUDA_SUCCESS)
			die("cannot retain a primary context");
		tenant_use(t, d);
		if (cuMemGetInfo_v2(&fr, &tot) != CUDA_SUCCESS)
			die("cuMemGetInfo failed");
	}
	if (pthread_create(&th, NULL, watch, NULL) != 0 ||
	    pthread_detach(th) != 0)
		die("cannot start the watcher");
	truth_store(t);
	__atomic_store_n(&t->slot->pid, (uint32_t)getpid(), __ATOMIC_RELAXED);
}

static uint64_t
num(const char *s)
{
	uint64_t v;

	if (size_parse(s, &v) < 0)
		die("bad number");
	return v;
}

int
main(int argc, char **argv)
{
	struct tenant t;
	unsigned think = 20;
	int ch, slot = -1;

	memset(&t, 0, sizeof(t));
	t.min_size = 512;
	t.max_size = t.max_hold = 64 << 20;
	while ((ch = getopt(argc, argv, "d:H:i:k:m:M:s:t:w:")) != -1) {
		switch (ch) {
		case 'd': t.devmask = (unsigned)num(optarg); break;
		case 'H': t.max_hold = num(optarg); break;
		case 'i': slot = (int)num(optarg); break;
		case 'k': t.kinds = (unsigned)num(optarg); break;
		case 'm': t.min_size = num(optarg); break;
		case 'M': t.max_size = num(optarg); break;
		case 's': t.rng = num(optarg); break;
		case 't': think = (unsigned)num(optarg); break;
		case 'w': wait_bound_ms = num(optarg); break;
		default: die("usage: soak_client -i slot -s seed -d devmask "
		    "-k kinds -m min -M max -H hold -t think_ms -w bound_ms");
		}
	}
	if (slot < 0 || slot >= SOAK_MAX_SLOTS || t.devmask == 0 ||
	    t.devmask >= 1u << SOAK_MAX_DEV || t.kinds == 0 ||
	    t.kinds >= 1u << SOAK_KINDS || t.min_size == 0 ||
	    t.min_size > t.max_size || wait_bound_ms == 0)
		die("bad arguments");
	setup(&t, slot);
	say(SOAK_SAY_READY);
	run(&t, think);
}
