/*
 * SIMCUDA_ASYNC=1 (read at cuInit): copies issued on a stream the program
 * made run on a thread of that stream's own, in order, after the call has
 * returned, as a GPU runs them; a synchronisation of the stream, or of its
 * context, waits for them. So work queued in one context and never
 * synchronised is still running while another context reads or unmaps the
 * memory it writes (issue 33). A copy whose memory is gone or no longer
 * accessible when it runs is not done: its stream keeps
 * CUDA_ERROR_ILLEGAL_ADDRESS for its next synchronisation, as a GPU
 * faults. The null, legacy and per-thread streams stay synchronous.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sim.h"

struct async_work {
	struct async_work *next;
	uint64_t	dst, src;
	size_t		n;
	int		dst_side, src_side, phys, bus;
};

/* A stream's queue, kept (and its thread) for the life of the process. */
struct async_queue {
	struct async_queue *next;
	CUstream	s;
	struct CUctx_st	*ctx;		/* the stream's, at its last copy */
	pthread_mutex_t	m;
	pthread_cond_t	cv;		/* work came, or the queue emptied */
	struct async_work *head, *tail;
	int		running;	/* the head is being done */
	CUresult	err;		/* sticky, until synchronised */
};

int async_on;
static pthread_mutex_t queues_lock = PTHREAD_MUTEX_INITIALIZER;
static struct async_queue *queues;

void
async_parse(void)
{
	const char *s = getenv("SIMCUDA_ASYNC");

	if (s == NULL || strcmp(s, "0") == 0)
		return;
	if (strcmp(s, "1") != 0) {
		log_warnx("bad SIMCUDA_ASYNC '%s': synchronous", s);
		return;
	}
	async_on = 1;
}

int
async_stream(CUstream s)
{
	return async_on && s != NULL && s != CU_STREAM_LEGACY &&
	    s != CU_STREAM_PER_THREAD;
}

static void *
async_main(void *arg)
{
	struct async_queue *q = arg;
	struct async_work *w;
	struct timespec start;
	int ok;

	pthread_mutex_lock(&q->m);
	for (;;) {
		while (q->head == NULL)
			pthread_cond_wait(&q->cv, &q->m);
		w = q->head;
		q->running = 1;
		pthread_mutex_unlock(&q->m);
		/* The bytes land when the bus has moved them. */
		bus_start(&start);
		if (w->bus)
			bus_move(&start, w->n, bus_copy_rate);
		ok = copy_now(w->dst, w->dst_side, w->src, w->src_side, w->n,
		    w->phys);
		pthread_mutex_lock(&q->m);
		if (!ok && q->err == CUDA_SUCCESS)
			q->err = CUDA_ERROR_ILLEGAL_ADDRESS;
		if ((q->head = w->next) == NULL)
			q->tail = NULL;
		q->running = 0;
		free(w);
		pthread_cond_broadcast(&q->cv);
	}
	return NULL;
}

/* s's queue, made (and its thread started) if new; NULL: no memory. */
static struct async_queue *
async_queue_of(CUstream s, int make)
{
	struct async_queue *q;
	pthread_t t;

	pthread_mutex_lock(&queues_lock);
	for (q = queues; q != NULL && q->s != s; q = q->next)
		;
	if (q == NULL && make && (q = calloc(1, sizeof(*q))) != NULL) {
		q->s = s;
		pthread_mutex_init(&q->m, NULL);
		pthread_cond_init(&q->cv, NULL);
		if (pthread_create(&t, NULL, async_main, q) != 0) {
			free(q);
			q = NULL;
		} else {
			pthread_detach(t);
			q->next = queues;
			queues = q;
		}
	}
	pthread_mutex_unlock(&queues_lock);
	return q;
}

CUresult
async_copy(CUstream s, struct CUctx_st *ctx, uint64_t dst, int dst_side,
    uint64_t src, int src_side, size_t n, int bus)
{
	struct async_queue *q = async_queue_of(s, 1);
	struct async_work *w;

	if (q == NULL || (w = calloc(1, sizeof(*w))) == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	w->dst = dst;
	w->src = src;
	w->n = n;
	w->dst_side = dst_side;
	w->src_side = src_side;
	w->phys = ctx->phys;
	w->bus = bus;
	pthread_mutex_lock(&q->m);
	q->ctx = ctx;
	if (q->tail != NULL)
		q->tail->next = w;
	else
		q->head = w;
	q->tail = w;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->m);
	return CUDA_SUCCESS;
}

/* Wait for q to empty; its sticky error, cleared. */
static CUresult
async_drain(struct async_queue *q)
{
	CUresult r;

	pthread_mutex_lock(&q->m);
	while (q->head != NULL)
		pthread_cond_wait(&q->cv, &q->m);
	r = q->err;
	q->err = CUDA_SUCCESS;
	pthread_mutex_unlock(&q->m);
	return r;
}

CUresult
async_sync(CUstream s)
{
	struct async_queue *q;

	if (!async_stream(s) || (q = async_queue_of(s, 0)) == NULL)
		return CUDA_SUCCESS;
	return async_drain(q);
}

int
async_busy(CUstream s)
{
	struct async_queue *q;
	int busy;

	if (!async_stream(s) || (q = async_queue_of(s, 0)) == NULL)
		return 0;
	pthread_mutex_lock(&q->m);
	busy = q->head != NULL;
	pthread_mutex_unlock(&q->m);
	return busy;
}

CUresult
async_sync_ctx(struct CUctx_st *ctx)
{
	struct async_queue *q;
	CUresult r = CUDA_SUCCESS, r2;

	if (!async_on)
		return CUDA_SUCCESS;
	/* Queues are never freed: walked without the list's lock after. */
	pthread_mutex_lock(&queues_lock);
	q = queues;
	pthread_mutex_unlock(&queues_lock);
	for (; q != NULL; q = q->next) {
		pthread_mutex_lock(&q->m);
		r2 = q->ctx == ctx ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
		pthread_mutex_unlock(&q->m);
		if (r2 == CUDA_SUCCESS && (r2 = async_drain(q)) !=
		    CUDA_SUCCESS && r == CUDA_SUCCESS)
			r = r2;
	}
	return r;
}

/*
 * Fork. The list's lock and every queue's are held across fork() (in
 * the order of the list, after sim_lock: no thread holding one of them
 * waits for another), so that the child's copies are whole. A child has
 * none of the threads that ran them, nor any of the parent's streams
 * (stream_forget): as the real driver's child has nothing of its
 * parent's work, it drops the queues and the copies they held; its own
 * streams get queues and threads of their own when they first copy.
 */
void
async_fork_prepare(void)
{
	struct async_queue *q;

	pthread_mutex_lock(&queues_lock);
	for (q = queues; q != NULL; q = q->next)
		pthread_mutex_lock(&q->m);
}

void
async_fork_parent(void)
{
	struct async_queue *q;

	for (q = queues; q != NULL; q = q->next)
		pthread_mutex_unlock(&q->m);
	pthread_mutex_unlock(&queues_lock);
}

/*
 * The locks, held by this thread since async_fork_prepare, are released:
 * each queue's before it is freed, the list's kept, not made anew
 * (memfree_fork_child says why). A queue's condition variable is not
 * destroyed: the parent's thread waited on it, and glibc's destroy would
 * wait for that waiter.
 */
void
async_fork_child(void)
{
	struct async_queue *q, *next;
	struct async_work *w, *wnext;

	for (q = queues; q != NULL; q = next) {
		next = q->next;
		for (w = q->head; w != NULL; w = wnext) {
			wnext = w->next;
			free(w);
		}
		pthread_mutex_unlock(&q->m);
		pthread_mutex_destroy(&q->m);
		free(q);
	}
	queues = NULL;
	pthread_mutex_unlock(&queues_lock);
}
