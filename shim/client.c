/*
 * The accounting API (client.h): reserve, commit, roll back, free, release,
 * recharge, what a program is shown, leases given back, swap-in; and local
 * enforcement of the last known limit while no daemon has ever let the
 * process in (once one has, client_rejoin.c).
 */
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "activity.h"
#include "alloc_table.h"
#include "client.h"
#include "client_int.h"
#include "gpufrac/proto.h"
#include "lease.h"
#include "log.h"
#include "proto.h"
#include "real.h"
#include "shim.h"
#include "units.h"

pthread_mutex_t client_free_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t client_rejoin_lock = PTHREAD_MUTEX_INITIALIZER;

static void	client_free_failed(CUdeviceptr, const struct alloc_entry *,
		    unsigned);

static uint64_t
sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t
sat_sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* ---- swap ------------------------------------------------------------ */

static struct client_mover client_mover;

void
client_mover_set(const struct client_mover *m)
{
	client_mover = *m;
}

void
client_move(uint32_t direction, uint32_t id)
{
	if (client_mover.move != NULL)
		client_mover.move(direction, id);
}

void
client_moved(const struct gf_moved *m, int locked)
{
	char why[CLIENT_WHY_LEN];

	if (!locked)
		pthread_mutex_lock(&client_lock);
	if (client_up && client_send(client_fd, GF_MSG_MOVED, m, NULL, why,
	    sizeof(why)) < 0)
		client_lost(why);
	if (!locked)
		pthread_mutex_unlock(&client_lock);
}

void
client_swap_in(uint32_t reason)
{
	static int said;
	struct gf_swap_in q;
	struct gf_msg m;
	unsigned gen;
	int r = -1;

	memset(&q, 0, sizeof(q));
	q.reason = reason;
	pthread_mutex_lock(&client_lock);
	client_start();
	/* A call's, as it always was: what any daemon reads. */
	if (client_up)
		r = client_call(GF_MSG_SWAP_IN, -1, reason == GF_SWAPIN_CALL ?
		    NULL : &q, &m, &gen);
	pthread_mutex_unlock(&client_lock);
	if (r == 0 && m.hdr.type == GF_MSG_OK) {
		log_debug("gpufracd swapped us back in");
		return;
	}
	if (r == 0 && shim_once(&said))
		log_errx("gpufracd did not swap us back in: %s",
		    m.hdr.type == GF_MSG_ERROR ? m.u.error.msg :
		    proto_type_name(m.hdr.type));
	/* Down, or it said no: give the watcher time to rejoin it. */
	poll(NULL, 0, CLIENT_RETRY_MIN_MS);
}

/* The driver's cuCheckpointProcessGetState, found once. */
static CUresult (*client_get_state)(int, CUprocessState *);

static void
client_get_state_find(void)
{
	if (real_cu.cuGetProcAddress_v2 != NULL)
		(void)real_cu.cuGetProcAddress_v2("cuCheckpointProcessGetState",
		    (void **)&client_get_state, 12080,
		    CU_GET_PROC_ADDRESS_DEFAULT, NULL);
}

/*
 * Whether the driver has us locked, asked of the driver itself; 1 when it
 * cannot say (no checkpoint API: then no daemon ever locked us either,
 * but the flag is not ours to doubt while the daemon is there).
 */
static int
client_locked(void)
{
	/* Asked by the program's threads and the stall thread alike. */
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	CUprocessState st;

	(void)pthread_once(&once, client_get_state_find);
	if (client_get_state == NULL)
		return 0;
	if (client_get_state((int)getpid(), &st) != CUDA_SUCCESS)
		return 1;
	return st != CU_PROCESS_STATE_RUNNING;
}

/*
 * With no daemon: the page's mark says where the memory is (activity.h).
 * Committed, it is out (or leaving: the restore waits for the move): it
 * comes back here, if there is room. Not committed, the daemon went away
 * between marking us and moving or locking us: taken back, as a new
 * daemon would, unless the move commits first. The rejoin lock keeps a
 * new daemon's HELLO from reading the page meanwhile. 1: still out.
 */
static int
client_swap_settle(void)
{
	static int said;
	uint32_t m = __atomic_load_n(&activity_page->swapped,
	    __ATOMIC_SEQ_CST);
	int r;

	while (m != 0 && !(m & GF_SWAPPED_COMMITTED))
		if (__atomic_compare_exchange_n(&activity_page->swapped, &m, 0,
		    0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
			log_info("swapped-out mark left by a departed "
			    "gpufracd, but the driver has us running: "
			    "carrying on");
			return 0;
		}
	if (m == 0)
		return 0;
	r = client_mover.restore != NULL ? client_mover.restore() : -1;
	if (r < 0 && shim_once(&said))
		log_errx("this process's memory stays on the host until "
		    "gpufracd, or room on the device, comes back");
	return r < 0;
}

int
client_swap_pending(void)
{
	int up, r;

	pthread_mutex_lock(&client_rejoin_lock);
	pthread_mutex_lock(&client_lock);
	up = client_up;
	pthread_mutex_unlock(&client_lock);
	r = up || client_locked() ? 1 : client_swap_settle();
	pthread_mutex_unlock(&client_rejoin_lock);
	return r;
}

/* ---- accounting ------------------------------------------------------ */

/*
 * Ask the daemon, which may queue the request (WAIT) before it answers.
 * 1 with *res when it answered, 0 when it could not. Lock held, released
 * while waiting.
 */
static int
client_reserve_remote(int dev, uint64_t size, uint32_t kind, uint32_t flags,
    struct client_ticket *t, CUresult *res)
{
	char why[CLIENT_WHY_LEN], b1[16], b2[16], b3[16];
	struct gf_reserve q;
	struct gf_msg m;
	unsigned gen;

	memset(&q, 0, sizeof(q));
	memcpy(q.uuid, client_devs[dev].uuid, GF_UUID_LEN);
	q.size = size;
	q.kind = kind;
	/* cuMemAlloc's kind is what leases serve. */
	q.flags = flags | (kind == GF_KIND_MEM ? GF_RESERVE_LEASE : 0);
	if (client_call(GF_MSG_RESERVE, dev, &q, &m, &gen) < 0)
		return 0;
	switch (m.hdr.type) {
	case GF_MSG_GRANT:
		if (m.u.grant.lease != 0)
			log_debug("device %d: leased %llu bytes", dev,
			    (unsigned long long)m.u.grant.lease);
		t->gen = gen;
		*res = CUDA_SUCCESS;
		return 1;
	case GF_MSG_DENY:
		*res = m.u.deny.cuda_error != 0 ?
		    (CUresult)m.u.deny.cuda_error : CUDA_ERROR_OUT_OF_MEMORY;
		log_info("gpufracd denied %s on device %d (reason %u): %s of "
		    "%s in use", size_format(size, b1, sizeof(b1)), dev,
		    m.u.deny.reason, size_format(m.u.deny.used, b2, sizeof(b2)),
		    size_format(m.u.deny.limit, b3, sizeof(b3)));
		return 1;
	default:
		client_unexpected(&m, GF_MSG_RESERVE, why, sizeof(why));
		if (gen == client_gen)
			client_lost(why);
		return 0;
	}
}

/*
 * Without a daemon (never reached, or refusing us): the last known
 * limit, against what is live here.
 */
static CUresult
client_reserve_local(int dev, uint64_t size, struct client_ticket *t)
{
	uint64_t limit = client_device_limit(dev);
	/* Its lease is the process's too: what is left of it may be drawn. */
	uint64_t used = sat_add(sat_add(sat_add(alloc_table_used(dev),
	    client_devs[dev].pending), client_devs[dev].overhead),
	    lease_unused(dev));
	char b1[16], b2[16], b3[16];

	t->gen = 0;
	if (__atomic_load_n(&client_shut_out, __ATOMIC_RELAXED)) {
		log_info("denied %s on device %d: gpufracd refused this "
		    "process", size_format(size, b1, sizeof(b1)), dev);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (size > limit || used > limit - size) {
		log_info("denied %s on device %d locally: %s of %s in use",
		    size_format(size, b1, sizeof(b1)), dev,
		    size_format(used, b2, sizeof(b2)),
		    size_format(limit, b3, sizeof(b3)));
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	return CUDA_SUCCESS;
}

/*
 * The daemon decides; while it is away, a process that has registered
 * with it waits for it to come back (client_rejoin.c), and one that never
 * has, or that it refused, decides here. Lock held, released while
 * waiting.
 */
static CUresult
client_reserve_ask(int dev, uint64_t size, uint32_t kind, uint32_t flags,
    struct client_ticket *t)
{
	int64_t deadline = 0;
	CUresult r;

	for (;;) {
		if (client_up &&
		    client_reserve_remote(dev, size, kind, flags, t, &r))
			return r;
		if (!client_seen ||
		    __atomic_load_n(&client_shut_out, __ATOMIC_RELAXED))
			return client_reserve_local(dev, size, t);
		if (client_rejoin_wait(&deadline) < 0)
			return CUDA_ERROR_OUT_OF_MEMORY;
		/* Opened by the registration; once more if it raced it. */
		if (client_device_prepare(dev) < 0)
			return client_reserve_local(dev, size, t);
	}
}

static CUresult
client_reserve_as(int dev, uint64_t size, uint32_t kind, uint32_t flags,
    struct client_ticket *t)
{
	CUresult r = CUDA_SUCCESS;

	t->dev = -1;
	t->refusals = 0;
	if (!client_device_valid(dev))
		return CUDA_SUCCESS;
	pthread_mutex_lock(&client_lock);
	client_start();
	if (client_device_prepare(dev) < 0)
		goto out;
	r = client_reserve_ask(dev, size, kind, flags, t);
	if (r == CUDA_SUCCESS) {
		t->dev = dev;
		t->kind = kind;
		t->size = size;
		client_devs[dev].pending = sat_add(client_devs[dev].pending,
		    size);
	}
out:
	pthread_mutex_unlock(&client_lock);
	return r;
}

CUresult
client_reserve(int dev, uint64_t size, uint32_t kind, struct client_ticket *t)
{
	return client_reserve_as(dev, size, kind, 0, t);
}

CUresult
client_reserve_more(struct client_ticket *t, int dev, uint64_t more,
    uint32_t kind)
{
	struct client_ticket m;
	uint64_t total;
	CUresult r;

	if ((r = client_reserve(dev, more, kind, &m)) != CUDA_SUCCESS)
		return r;
	if (t->dev < 0 || m.dev < 0) {
		if (t->dev < 0)
			*t = m;
		return CUDA_SUCCESS;
	}
	if (m.gen == t->gen) {
		t->size = sat_add(t->size, m.size);
		return CUDA_SUCCESS;
	}
	/* Reconnected between the two: this daemon knows only the second. */
	total = sat_add(t->size, m.size);
	client_rollback(&m);
	client_rollback(t);
	return client_reserve(dev, total, kind, t);
}

CUresult
client_reserve_refused(int dev, uint64_t size, uint32_t kind,
    struct client_ticket *t)
{
	return client_reserve_as(dev, size, kind, GF_RESERVE_DRIVER_OOM, t);
}

int
client_driver_refused(struct client_ticket *t)
{
	char b1[16];
	unsigned refusals = t->refusals + 1;
	int dev = t->dev;

	if (dev < 0 || t->gen == 0 || refusals > CLIENT_REFUSALS_MAX)
		return 0;
	log_info("the driver refused %s on device %d that gpufracd granted: "
	    "asking again", size_format(t->size, b1, sizeof(b1)), dev);
	client_rollback(t);
	if (client_reserve_refused(dev, t->size, t->kind, t) != CUDA_SUCCESS)
		return 0;
	t->refusals = refusals;
	return 1;
}

int
client_commit(const struct client_ticket *t, uint64_t ptr, uint64_t size)
{
	static int said;
	struct alloc_entry old;
	int r = 0, stale;

	if (t->dev < 0)
		return 0;
	/* After any free of the same address still on its way: client_free. */
	pthread_mutex_lock(&client_free_lock);
	pthread_mutex_lock(&client_lock);
	if ((stale = alloc_table_add(ptr, size, t->kind, t->dev, 0,
	    &old)) < 0) {
		if (shim_once(&said))
			log_errx("cannot record an allocation: out of memory; "
			    "failing it");
		r = -1;
		goto out;
	}
	client_devs[t->dev].pending = sat_sub(client_devs[t->dev].pending,
	    t->size);
	/*
	 * Down: the next connection re-registers it with the rest. A
	 * RESERVE made on an earlier connection is unknown to this one.
	 */
	client_tell_commit(t->dev, ptr, t->gen == client_gen ? t->size : 0,
	    size, t->kind);
out:
	pthread_mutex_unlock(&client_lock);
	pthread_mutex_unlock(&client_free_lock);
	/* The daemon's record of a stale one goes with the COMMIT. */
	if (stale == 1 && (old.flags & ALLOC_LEASED))
		client_lease_give(old.dev, old.size);
	return r;
}

void
client_stale(uint64_t ptr, const struct alloc_entry *old)
{
	if (old->flags & ALLOC_LEASED) {
		client_lease_give(old->dev, old->size);
		return;
	}
	pthread_mutex_lock(&client_lock);
	client_tell_free(ptr);
	pthread_mutex_unlock(&client_lock);
}

void
client_rollback(const struct client_ticket *t)
{
	char why[CLIENT_WHY_LEN];
	struct gf_rollback rb;

	if (t->dev < 0)
		return;
	pthread_mutex_lock(&client_lock);
	client_devs[t->dev].pending = sat_sub(client_devs[t->dev].pending,
	    t->size);
	if (client_up && t->gen == client_gen) {
		memset(&rb, 0, sizeof(rb));
		memcpy(rb.uuid, client_devs[t->dev].uuid, GF_UUID_LEN);
		rb.size = t->size;
		if (client_send(client_fd, GF_MSG_ROLLBACK, &rb, NULL, why,
		    sizeof(why)) < 0)
			client_lost(why);
	}
	pthread_mutex_unlock(&client_lock);
}

/*
 * Once the driver has an address back it may hand it to another thread's
 * allocation, whose table entry and COMMIT must come after this free's
 * removal and FREE. So the free lock is held from the driver's free to the
 * FREE message, and a commit takes it first. It is not the client lock:
 * an allocation waiting for its RESERVE's reply (a queued one may wait
 * long, for this very free) holds no lock at all, and other threads'
 * reservations go on while cuMemFree synchronises. The cost: a commit in
 * another thread waits for a free in progress.
 */
CUresult
client_release_keys(const uint64_t *keys, size_t n,
    CUresult (*real_release)(void *), void *arg)
{
	struct alloc_entry e;
	CUresult r;
	size_t i;

	pthread_mutex_lock(&client_free_lock);
	r = real_release(arg);
	if (r == CUDA_SUCCESS) {
		/* Table and message together: client_register walks one. */
		pthread_mutex_lock(&client_lock);
		for (i = 0; i < n; i++)
			if (alloc_table_remove(keys[i], &e))
				client_tell_free(keys[i]);
		pthread_mutex_unlock(&client_lock);
	}
	pthread_mutex_unlock(&client_free_lock);
	return r;
}

CUresult
client_release(uint64_t key, CUresult (*real_release)(void *), void *arg)
{
	return client_release_keys(&key, 1, real_release, arg);
}

struct client_taken {
	uint64_t		key;
	struct alloc_entry	e;
};

/*
 * After end(): give back (gone) or record again what was taken, those of
 * the daemon first, under the client lock; then those of leases, which
 * may need that lock themselves (client_lease_give). Free lock held.
 */
static uint64_t
client_end_settle(const struct client_taken *tk, size_t m, int gone,
    unsigned gen)
{
	uint64_t bytes = 0;
	size_t i;

	for (i = 0; gone && i < m; i++)
		bytes += tk[i].e.size;
	pthread_mutex_lock(&client_lock);
	for (i = 0; i < m; i++) {
		if (tk[i].e.flags & ALLOC_LEASED)
			continue;
		if (!gone)
			client_free_failed(tk[i].key, &tk[i].e, gen);
		else
			client_tell_free(tk[i].key);
	}
	/* A context is on one device: for the daemon's decision log. */
	if (gone)
		client_tell_ctx_end(tk[0].e.dev, bytes, m);
	pthread_mutex_unlock(&client_lock);
	for (i = 0; i < m; i++) {
		if (!(tk[i].e.flags & ALLOC_LEASED))
			continue;
		if (gone)
			client_lease_give(tk[i].e.dev, tk[i].e.size);
		else
			(void)alloc_table_add(tk[i].key, tk[i].e.size,
			    tk[i].e.kind, tk[i].e.dev, tk[i].e.flags, NULL);
	}
	return bytes;
}

/*
 * The keys are out of the table from before end() until they are settled,
 * all under the free lock: a free of one of them meanwhile, on another
 * thread, finds no entry, and waits for that lock to look again
 * (client_free), so that it takes the entry put back by an end that did
 * not end the context, rather than pass the free through unseen and leave
 * the entry charged for ever. A destroy and a free of one array are
 * ordered by the same lock (client_release_keys).
 */
uint64_t
client_end_keys(const uint64_t *keys, size_t n, int (*end)(void *),
    void *arg, size_t *count)
{
	static int said;
	struct client_taken *tk = NULL;
	uint64_t bytes = 0;
	unsigned gen;
	size_t i, m = 0;
	int gone;

	*count = 0;
	if (n != 0 && (tk = calloc(n, sizeof(*tk))) == NULL && shim_once(&said))
		log_errx("cannot list a context's allocations: out of memory; "
		    "they stay charged");
	pthread_mutex_lock(&client_free_lock);
	gen = __atomic_load_n(&client_gen, __ATOMIC_ACQUIRE);
	for (i = 0; tk != NULL && i < n; i++)
		if (alloc_table_remove(keys[i], &tk[m].e))
			tk[m++].key = keys[i];
	gone = end(arg);
	if (m != 0)
		bytes = client_end_settle(tk, m, gone, gen);
	pthread_mutex_unlock(&client_free_lock);
	free(tk);
	*count = gone ? m : 0;
	return bytes;
}

void
client_recharge(uint64_t key, int dev, uint32_t kind, uint64_t size)
{
	struct alloc_entry e;

	if (!client_device_valid(dev))
		return;
	pthread_mutex_lock(&client_free_lock);
	pthread_mutex_lock(&client_lock);
	client_start();
	if (client_device_prepare(dev) < 0)
		goto out;
	if (size == 0) {
		if (alloc_table_remove(key, &e))
			client_tell_free(key);
	} else if (alloc_table_add(key, size, kind, dev, 0, NULL) >= 0)
		/* reserved 0: the record is charged as it now stands. */
		client_tell_commit(dev, key, 0, size, kind);
out:
	pthread_mutex_unlock(&client_lock);
	pthread_mutex_unlock(&client_free_lock);
}

/*
 * Freed memory drawn from a lease that the daemon has closed meanwhile:
 * it is the daemon's again. Off the page's total first, under the lock a
 * new connection's registration holds, so that a restarted daemon hears
 * of these bytes once: in LEASE_RESTORE's total, or here.
 */
static void
client_lease_return(int dev, uint64_t size)
{
	char why[CLIENT_WHY_LEN];
	struct gf_lease q;

	pthread_mutex_lock(&client_lock);
	__atomic_sub_fetch(&lease_slot(dev)->total, size, __ATOMIC_SEQ_CST);
	if (client_up) {
		memset(&q, 0, sizeof(q));
		memcpy(q.uuid, client_devs[dev].uuid, GF_UUID_LEN);
		q.size = size;
		if (client_send(client_fd, GF_MSG_LEASE_RETURN, &q, NULL, why,
		    sizeof(why)) < 0)
			client_lost(why);
	}
	pthread_mutex_unlock(&client_lock);
}

void
client_lease_give(int dev, uint64_t size)
{
	if (!lease_put(dev, size))
		client_lease_return(dev, size);
}

/*
 * The driver would not free ptr, taken from the table before it was
 * asked: put it back, and tell a connection made meanwhile, whose
 * registration did not see it. Lock held.
 */
static void
client_free_failed(CUdeviceptr ptr, const struct alloc_entry *e,
    unsigned gen)
{
	if (alloc_table_add(ptr, e->size, e->kind, e->dev, e->flags, NULL) >= 0 &&
	    gen != client_gen)
		client_tell_commit(e->dev, ptr, 0, e->size, e->kind);
}

/*
 * ptr was not in the table: a context's end may have it meanwhile
 * (client_end_keys), and puts it back if the context did not end. Asked
 * again once that end has settled: 1 with ptr's entry taken to *e. Out
 * of line: the fast path (client_free finding its entry) stays as it was.
 */
static int __attribute__((cold, noinline))
client_free_after_end(CUdeviceptr ptr, struct alloc_entry *e)
{
	int r;

	pthread_mutex_lock(&client_free_lock);
	r = alloc_table_remove(ptr, e);
	pthread_mutex_unlock(&client_free_lock);
	return r;
}

/*
 * A device pointer leaves the table before the driver frees it: once
 * freed, the address may come back at once from an allocation drawn from
 * a lease, which takes no lock to record it. Memory drawn from a lease
 * goes back to it; the rest is sent in FREE, under the free lock (see
 * client_release_keys).
 */
CUresult
client_free(CUdeviceptr ptr, CUresult (*real_free)(CUdeviceptr))
{
	unsigned gen = __atomic_load_n(&client_gen, __ATOMIC_ACQUIRE);
	struct alloc_entry e;
	CUresult r;

	if (!alloc_table_remove(ptr, &e) && !client_free_after_end(ptr, &e))
		return real_free(ptr);
	if (e.flags & ALLOC_LEASED) {
		if ((r = real_free(ptr)) == CUDA_SUCCESS)
			client_lease_give(e.dev, e.size);
		else
			(void)alloc_table_add(ptr, e.size, e.kind, e.dev,
			    e.flags, NULL);
		return r;
	}
	pthread_mutex_lock(&client_free_lock);
	r = real_free(ptr);
	pthread_mutex_lock(&client_lock);
	if (r != CUDA_SUCCESS)
		client_free_failed(ptr, &e, gen);
	else
		client_tell_free(ptr);
	pthread_mutex_unlock(&client_lock);
	pthread_mutex_unlock(&client_free_lock);
	return r;
}

/*
 * What dev is shown to be (DESIGN.md §3, issue 25): its total, the limit
 * within the capacity; free, what the others leave of that (taken, as the
 * daemon last said it) less what this process holds, its lease's unused
 * part aside: what one request may take at once. Lock held.
 */
static void
client_view_of(int dev, uint64_t real_total, struct client_view *v)
{
	struct client_device *d = &client_devs[dev];
	uint64_t limit = client_device_limit(dev), own;

	if (real_total != 0)
		d->real_total = real_total;
	v->total = d->have_capacity ? d->capacity : real_total;
	if (limit < v->total)
		v->total = limit;
	own = sat_add(sat_add(alloc_table_used(dev), d->pending), d->overhead);
	v->free = sat_sub(sat_sub(v->total, d->taken), own);
	/* Refused, it may take nothing (issue 38 H). */
	if (__atomic_load_n(&client_shut_out, __ATOMIC_RELAXED))
		v->free = 0;
}

/*
 * On every gated context call: once the first attempt is over (HELLO
 * said, or no daemon there), one acquire load and no lock.
 */
void
client_context_coming(void)
{
	if (__atomic_load_n(&client_tried, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&client_lock);
	client_start();
	pthread_mutex_unlock(&client_lock);
}

int
client_view(int dev, uint64_t real_total, struct client_view *v)
{
	int r = -1;

	if (!client_device_valid(dev))
		return -1;
	pthread_mutex_lock(&client_lock);
	client_start();
	if (client_device_prepare(dev) == 0) {
		client_view_of(dev, real_total, v);
		r = 0;
	}
	pthread_mutex_unlock(&client_lock);
	return r;
}

int
client_view_uuid(const uint8_t uuid[GF_UUID_LEN], uint64_t real_total,
    struct client_view *v)
{
	struct client_device *d;
	int dev, r = -1;

	pthread_mutex_lock(&client_lock);
	client_start();
	if ((dev = client_device_by_uuid(uuid)) < 0)
		goto out;
	d = &client_devs[dev];
	d->in_use = 1;
	if (client_up && d->open_gen != client_gen)
		client_device_open_live(dev);
	/* The daemon never answered: nothing to show, unless it refused. */
	if (!d->have_limit &&
	    !__atomic_load_n(&client_shut_out, __ATOMIC_RELAXED))
		goto out;
	client_view_of(dev, real_total, v);
	r = 0;
out:
	pthread_mutex_unlock(&client_lock);
	return r;
}
