/*
 * The copy engine's moves (vback.h): the contents of the backed
 * allocations to pinned host memory and back, run on a thread of their
 * own at the daemon's MOVE.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "activity.h"
#include "alloc_table.h"
#include "client.h"
#include "gpufrac/proto.h"
#include "log.h"
#include "real.h"
#include "shim.h"
#include "vback.h"
#include "vback_int.h"
#include "vmm_virt.h"

#define VBACK_STREAMS	4	/* copies in flight per context */

/*
 * What the daemon asked, under a lock of its own: the watcher thread
 * queues a MOVE without waiting for a move under way (vback_lock).
 */
static pthread_mutex_t vback_qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t vback_cv = PTHREAD_COND_INITIALIZER;
static uint32_t vback_todo;		/* a MOVE's direction, or 0 */
static uint32_t vback_todo_id;		/* and its id */
static int vback_drop_asked;		/* a GF_SWAP_DROP is asked */
static uint32_t vback_drop_id;		/* and its id */
static int vback_running;		/* the move thread exists */

static uint64_t
vback_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000;
}

/*
 * The backed allocations, in an array the caller frees (lock held): all
 * n of them, the nmove that may move first (not exported: vback_int.h).
 */
static struct vback **
vback_list(size_t *n, size_t *nmove)
{
	struct vback **all, *v;
	size_t pos = 0, stay;
	uint64_t key;

	*n = *nmove = 0;
	if ((all = calloc(vback_map.len + 1, sizeof(*all))) == NULL)
		return NULL;
	stay = vback_map.len;
	while ((v = ptrmap_next(&vback_map, &pos, &key)) != NULL)
		if (!vback_exported(v))
			all[(*nmove)++] = v;
		else
			all[--stay] = v;
	*n = vback_map.len;
	return all;
}

/*
 * Copy each of all[0..n) that shares ctx with all[i] to or from the host,
 * spread over a few streams, and wait for them. Returns the first failure.
 */
static CUresult
vback_copy_ctx(struct vback **all, size_t n, size_t i, int out,
    const char **stage)
{
	CUstream s[VBACK_STREAMS];
	CUcontext ctx = all[i]->ctx;
	CUresult r, r2;
	size_t k, ns, j = 0;

	*stage = "cuCtxSetCurrent";
	if ((r = REAL_CALL(cuCtxSetCurrent, ctx)) != CUDA_SUCCESS)
		return r;
	/* What the program queued runs to its end before anything moves. */
	*stage = "cuCtxSynchronize";
	if ((r = REAL_CALL(cuCtxSynchronize)) != CUDA_SUCCESS)
		return r;
	for (ns = 0; ns < VBACK_STREAMS; ns++)
		if (REAL_CALL(cuStreamCreate, &s[ns], CU_STREAM_NON_BLOCKING) !=
		    CUDA_SUCCESS)
			break;
	*stage = out ? "cuMemcpyDtoHAsync" : "cuMemcpyHtoDAsync";
	for (k = i; k < n && r == CUDA_SUCCESS; k++) {
		if (all[k]->ctx != ctx)
			continue;
		if (out)
			r = REAL_CALL(cuMemcpyDtoHAsync_v2, all[k]->host,
			    all[k]->ptr, all[k]->size, ns ? s[j++ % ns] : 0);
		else
			r = REAL_CALL(cuMemcpyHtoDAsync_v2, all[k]->ptr,
			    all[k]->host, all[k]->size, ns ? s[j++ % ns] : 0);
	}
	for (k = 0; k < ns; k++) {
		if ((r2 = REAL_CALL(cuStreamSynchronize, s[k])) !=
		    CUDA_SUCCESS && r == CUDA_SUCCESS)
			r = r2;
		(void)REAL_CALL(cuStreamDestroy_v2, s[k]);
	}
	return r;
}

/* Copy every context's allocations; each context once. */
static CUresult
vback_copy_all(struct vback **all, size_t n, int out, const char **stage)
{
	CUcontext cur = NULL;
	CUresult r = CUDA_SUCCESS;
	size_t i, k;

	(void)REAL_CALL(cuCtxGetCurrent, &cur);
	for (i = 0; i < n && r == CUDA_SUCCESS; i++) {
		for (k = 0; k < i; k++)
			if (all[k]->ctx == all[i]->ctx)
				break;
		if (k == i)
			r = vback_copy_ctx(all, n, i, out, stage);
	}
	(void)REAL_CALL(cuCtxSetCurrent, cur);
	return r;
}

/* What stays on the device while out: what vback does not hold. */
struct vback_stay {
	struct gf_moved	*m;
	unsigned	 kinds;		/* 1 << GF_KIND_*, or VBACK_STAY_IPC */
};

#define VBACK_STAY_IPC	31	/* backed, but exported: another maps it */

static int
vback_stay_one(uint64_t ptr, const struct alloc_entry *e, void *arg)
{
	struct vback_stay *st = arg;
	struct vback *v = ptrmap_get(&vback_map, ptr);

	if ((v != NULL && !vback_exported(v)) || (e->kind == GF_KIND_VMM &&
	    vmm_virt_moves(ptr)))
		return 0;
	if (e->dev >= 0 && e->dev < GF_MOVED_DEVICES)
		st->m->stayed[e->dev] += e->size;
	st->m->nstayed++;
	st->kinds |= 1u << (v != NULL ? VBACK_STAY_IPC : e->kind & 31);
	return 0;
}

/* Fill m's stayed, nstayed and what (lock held). */
static void
vback_stayed(struct gf_moved *m)
{
	static const struct { uint32_t kind; const char *name; } names[] = {
		{ GF_KIND_MEM, "small" }, { GF_KIND_PITCH, "small pitch" },
		{ GF_KIND_MANAGED, "managed" }, { GF_KIND_ARRAY, "arrays" },
		{ GF_KIND_VMM, "vmm" }, { GF_KIND_POOL, "pools" },
		{ VBACK_STAY_IPC, "ipc" },
	};
	struct vback_stay st = { m, 0 };
	size_t i, len = 0;

	(void)alloc_table_walk(vback_stay_one, &st);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(st.kinds & (1u << names[i].kind)) ||
		    len >= sizeof(m->what))
			continue;
		len += (size_t)snprintf(m->what + len, sizeof(m->what) - len,
		    "%s%s", len ? ", " : "", names[i].name);
	}
}

/*
 * Whether the daemon still waits for move id: the page's mark turned
 * from id to id | GF_SWAPPED_COMMITTED (activity.h). Once it has, the
 * device's memory may go; if the daemon took the mark back first, it has
 * given up on this move and the program runs again.
 */
static int
vback_commit(uint32_t id)
{
	struct gf_activity *p = __atomic_load_n(&activity_page,
	    __ATOMIC_ACQUIRE);
	uint32_t want = id;

	return __atomic_compare_exchange_n(&p->swapped, &want,
	    id | GF_SWAPPED_COMMITTED, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/* The page's mark, as it is now. */
static uint32_t
vback_mark(void)
{
	struct gf_activity *p = __atomic_load_n(&activity_page,
	    __ATOMIC_ACQUIRE);

	return __atomic_load_n(&p->swapped, __ATOMIC_SEQ_CST);
}

/*
 * Whether the daemon still waits for move in id (activity.h): the mark
 * turned from id | COMMITTED to id | COMMITTED | IN. Once it has, device
 * memory may be mapped again; if the daemon gave up first, the memory
 * stays out, as the daemon takes it. id 0 (no daemon: vback_restore)
 * commits whatever out mark is there.
 */
static int
vback_commit_in(uint32_t id, uint32_t *mark)
{
	struct gf_activity *p = __atomic_load_n(&activity_page,
	    __ATOMIC_ACQUIRE);
	uint32_t want = id | GF_SWAPPED_COMMITTED;

	if (id == 0 && ((want = vback_mark()) & (GF_SWAPPED_COMMITTED |
	    GF_SWAPPED_IN)) != GF_SWAPPED_COMMITTED)
		return 0;
	*mark = want;
	return __atomic_compare_exchange_n(&p->swapped, &want,
	    want | GF_SWAPPED_IN, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/*
 * The move in committed as mark ended: in (0), or out still (mark). Till
 * then the program's calls wait at the gate, whatever the daemon said.
 */
static void
vback_in_settle(uint32_t mark, int in)
{
	(void)activity_mark_turn(mark | GF_SWAPPED_IN, in ? 0 : mark);
}

/* Out: every backed allocation to pinned host memory, then unmapped. */
static void
vback_move_out(struct gf_moved *m, struct vback **all, size_t n)
{
	const char *stage = "cuMemHostAlloc";
	CUresult r = CUDA_SUCCESS;
	size_t i;

	for (i = 0; i < n && r == CUDA_SUCCESS; i++)
		r = vback_host_get(all[i], &m->pinned);
	/* What any context queued runs to its end before anything moves. */
	vback_ctxs_sync();
	if (r == CUDA_SUCCESS)
		r = vback_copy_all(all, n, 1, &stage);
	if (r == CUDA_SUCCESS && !vback_commit(m->id)) {
		r = CUDA_ERROR_TIMEOUT;
		stage = "gpufracd gave up waiting";
	}
	if (r != CUDA_SUCCESS) {
		/* Nothing has left the device: the process runs on. */
		m->result = (uint32_t)r;
		snprintf(m->what, sizeof(m->what), "%s", stage);
		return;
	}
	for (i = 0; i < n; i++) {
		if (all[i]->prog != NULL)
			vmm_virt_out(all[i]);
		(void)real_cu.cuMemUnmap(all[i]->ptr, all[i]->held);
		(void)real_cu.cuMemRelease(all[i]->h);
		all[i]->h = 0;
		m->moved += all[i]->held;
	}
	__atomic_store_n(&vback_is_out, 1, __ATOMIC_RELEASE);
	vback_stayed(m);
	vback_host_trim();	/* spares no allocation took: not kept */
}

/*
 * In: new memory at the same addresses, the contents copied back. The
 * host memory stays, for the next move out (vback_host.c).
 */
static void
vback_move_in(struct gf_moved *m, struct vback **all, size_t n)
{
	const char *stage = "cuMemCreate";
	CUresult r = CUDA_SUCCESS;
	uint32_t mark;
	size_t i;

	if (!vback_commit_in(m->id, &mark)) {
		m->result = CUDA_ERROR_TIMEOUT;
		snprintf(m->what, sizeof(m->what), "gpufracd gave up waiting");
		return;
	}
	for (i = 0; i < n && r == CUDA_SUCCESS; i++)
		if (all[i]->h == 0)
			r = all[i]->prog != NULL ? vmm_virt_map_new(all[i]) :
			    vback_map_new(all[i]);
	if (r == CUDA_SUCCESS)
		r = vback_copy_all(all, n, 0, &stage);
	if (r != CUDA_SUCCESS) {
		/* Still out, contents kept: the daemon tries again. */
		for (i = 0; i < n; i++)
			if (all[i]->h != 0) {
				(void)real_cu.cuMemUnmap(all[i]->ptr,
				    all[i]->held);
				(void)real_cu.cuMemRelease(all[i]->h);
				all[i]->h = 0;
			}
		m->result = (uint32_t)r;
		snprintf(m->what, sizeof(m->what), "%s", stage);
		vback_in_settle(mark, 0);
		return;
	}
	for (i = 0; i < n; i++)
		m->moved += all[i]->held;
	__atomic_store_n(&vback_is_out, 0, __ATOMIC_RELEASE);
	vback_in_settle(mark, 1);
}

/*
 * Move as dir says, for MOVE id, into m (vback_lock held): out, in, or
 * the kept host memory given back (GF_SWAP_DROP; while out it holds the
 * contents and stays). m->kept says what host memory is held after.
 */
static void
vback_move(uint32_t dir, uint32_t id, struct gf_moved *m)
{
	uint64_t t0 = vback_now_us();
	struct vback **all;
	size_t n, nmove;

	memset(m, 0, sizeof(*m));
	m->direction = dir;
	m->id = id;
	if ((all = vback_list(&n, &nmove)) == NULL) {
		m->result = CUDA_ERROR_OUT_OF_MEMORY;
		snprintf(m->what, sizeof(m->what), "malloc");
		return;
	}
	if (dir == GF_SWAP_OUT && !vback_out())
		vback_move_out(m, all, nmove);
	else if (dir == GF_SWAP_IN && vback_out())
		vback_move_in(m, all, nmove);
	else if (dir == GF_SWAP_DROP && !vback_out())
		vback_host_drop(all, n);
	m->kept = vback_host_kept(all, n);
	free(all);
	m->duration_us = vback_now_us() - t0;
}

int
vback_restore(void)
{
	static int said;
	struct gf_moved m;

	pthread_mutex_lock(&vback_lock);
	vback_move(GF_SWAP_IN, 0, &m);
	/* No daemon counts the host memory kept: give it back. */
	if (m.result == CUDA_SUCCESS)
		vback_move(GF_SWAP_DROP, 0, &m);
	/* Nothing was out (the move went first): the mark is stale. */
	if (m.result == CUDA_SUCCESS && !vback_out())
		(void)activity_mark_turn(vback_mark(), 0);
	pthread_mutex_unlock(&vback_lock);
	if (m.result != CUDA_SUCCESS) {
		/* Tried at every gated call: said once, then at debug level. */
		if (shim_once(&said))
			log_errx("cannot bring this process's memory back from "
			    "the host: %s failed (%d)", m.what, (int)m.result);
		else
			log_debug("cannot bring this process's memory back "
			    "from the host: %s failed (%d)", m.what,
			    (int)m.result);
		return -1;
	}
	return 0;
}

/* The next request, waited for (vback_qlock held): a drop first. */
static void
vback_next(uint32_t *dir, uint32_t *id)
{
	while (vback_todo == 0 && !vback_drop_asked)
		pthread_cond_wait(&vback_cv, &vback_qlock);
	if (vback_drop_asked) {
		vback_drop_asked = 0;
		*dir = GF_SWAP_DROP;
		*id = vback_drop_id;
		return;
	}
	*dir = vback_todo;
	*id = vback_todo_id;
	vback_todo = 0;
}

static void *
vback_main(void *arg)
{
	static const char *const names[] = { "?", "out", "in", "back" };
	struct gf_moved m;
	uint32_t dir, id;

	(void)arg;
	/* Before its first driver call: the stall look spares it. */
	client_stall_spare((pid_t)syscall(SYS_gettid));
	for (;;) {
		pthread_mutex_lock(&vback_qlock);
		vback_next(&dir, &id);
		pthread_mutex_unlock(&vback_qlock);
		pthread_mutex_lock(&vback_lock);
		vback_move(dir, id, &m);
		pthread_mutex_unlock(&vback_lock);
		log_debug("moved %llu bytes %s in %llu us, %llu kept on host",
		    (unsigned long long)m.moved, names[dir & 3],
		    (unsigned long long)m.duration_us,
		    (unsigned long long)m.kept);
		client_moved(&m, 0);
	}
	return NULL;
}

/* The move thread, with every signal blocked (vback_qlock held). */
static int
vback_start(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	int e;

	if (vback_running)
		return 0;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	e = pthread_create(&t, &attr, vback_main, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0) {
		log_errx("cannot start a thread to move memory: %s",
		    strerror(e));
		return -1;
	}
	pthread_setname_np(t, "gpufrac-move");
	vback_running = 1;
	return 0;
}

void
vback_move_fork_child(void)
{
	pthread_mutex_init(&vback_qlock, NULL);
	pthread_cond_init(&vback_cv, NULL);
	vback_todo = 0;
	vback_drop_asked = 0;
	vback_running = 0;	/* the thread is the parent's */
}

void
vback_request(uint32_t direction, uint32_t id)
{
	struct gf_moved m;

	if (direction != GF_SWAP_OUT && direction != GF_SWAP_IN &&
	    direction != GF_SWAP_DROP)
		return;
	pthread_mutex_lock(&vback_qlock);
	if (vback_start() < 0) {
		pthread_mutex_unlock(&vback_qlock);
		memset(&m, 0, sizeof(m));
		m.direction = direction;
		m.id = id;
		m.result = CUDA_ERROR_OPERATING_SYSTEM;
		snprintf(m.what, sizeof(m.what), "pthread_create");
		client_moved(&m, 1);	/* the client lock is the caller's */
		return;
	}
	if (direction == GF_SWAP_DROP) {
		vback_drop_asked = 1;
		vback_drop_id = id;
	} else {
		vback_todo = direction;
		vback_todo_id = id;
	}
	pthread_cond_signal(&vback_cv);
	pthread_mutex_unlock(&vback_qlock);
}
