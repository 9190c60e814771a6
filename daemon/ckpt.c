/*
 * The checkpoint engine's worker thread and its hand-back to the event
 * loop. The worker touches only the job queues (under the mutex) and the
 * job it runs; the loop learns of ended jobs by a byte on the pipe.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ckpt.h"
#include "event.h"
#include "log.h"

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* One call of a job; 0 or -1 with the job's result and stage set. */
static int
step(struct ckpt_job *j, const char *stage, CUresult r)
{
	if (r == CUDA_SUCCESS)
		return 0;
	j->result = r;
	j->stage = stage;
	return -1;
}

void
ckpt_run(struct ckpt *k, struct ckpt_job *j)
{
	const struct ckpt_api *api = &k->api;
	CUcheckpointLockArgs la;
	uint64_t t0 = now_us();

	j->result = CUDA_SUCCESS;
	j->stage = NULL;
	if (api->lock == NULL) {
		(void)step(j, "lock", CUDA_ERROR_NOT_SUPPORTED);
		goto out;
	}
	if (j->op == CKPT_OUT) {
		memset(&la, 0, sizeof(la));
		la.timeoutMs = j->lock_timeout_ms;
		if (step(j, "lock", api->lock(j->pid, &la)) < 0)
			goto out;
		/* Not checkpointed: give the process its driver back. */
		if (step(j, "checkpoint", api->checkpoint(j->pid, NULL)) < 0)
			(void)api->unlock(j->pid, NULL);
	} else {
		if (step(j, "restore", api->restore(j->pid, NULL)) == 0)
			(void)step(j, "unlock", api->unlock(j->pid, NULL));
	}
out:
	j->duration_us = now_us() - t0;
}

static void *
worker(void *arg)
{
	struct ckpt *k = arg;
	struct ckpt_job *j;
	char one = 1;

	pthread_mutex_lock(&k->mu);
	for (;;) {
		while (!k->stop && TAILQ_EMPTY(&k->todo))
			pthread_cond_wait(&k->cv, &k->mu);
		if (k->stop)
			break;
		j = TAILQ_FIRST(&k->todo);
		TAILQ_REMOVE(&k->todo, j, entry);
		pthread_mutex_unlock(&k->mu);
		ckpt_run(k, j);
		pthread_mutex_lock(&k->mu);
		TAILQ_INSERT_TAIL(&k->ended, j, entry);
		/* A full pipe already says there is something to read. */
		if (write(k->pipe[1], &one, 1) < 0 && errno != EAGAIN)
			log_warn("checkpoint engine: cannot wake the loop");
	}
	pthread_mutex_unlock(&k->mu);
	return NULL;
}

/* The pipe is readable: hand the ended jobs back, in order. */
static void
ckpt_event(struct event_loop *loop, int fd, int mask, void *arg)
{
	struct ckpt *k = arg;
	struct ckpt_job *j;
	char buf[64];

	(void)loop;
	(void)mask;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	for (;;) {
		pthread_mutex_lock(&k->mu);
		if ((j = TAILQ_FIRST(&k->ended)) != NULL) {
			TAILQ_REMOVE(&k->ended, j, entry);
			k->busy--;
		}
		pthread_mutex_unlock(&k->mu);
		if (j == NULL)
			break;
		k->done(k->done_arg, j);
	}
}

int
ckpt_init(struct ckpt *k, struct event_loop *loop, const struct ckpt_api *api,
    ckpt_done_fn *done, void *done_arg)
{
	int e;

	memset(k, 0, sizeof(*k));
	k->api = *api;
	k->loop = loop;
	k->done = done;
	k->done_arg = done_arg;
	k->pipe[0] = k->pipe[1] = -1;
	TAILQ_INIT(&k->todo);
	TAILQ_INIT(&k->ended);
	pthread_mutex_init(&k->mu, NULL);
	pthread_cond_init(&k->cv, NULL);
	if (pipe2(k->pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		log_warn("checkpoint engine: pipe");
		return -1;
	}
	if (event_set(loop, k->pipe[0], EVENT_READ, ckpt_event, k) < 0) {
		log_warn("checkpoint engine: cannot watch its pipe");
		goto out_close;
	}
	if ((e = pthread_create(&k->worker, NULL, worker, k)) != 0) {
		log_warnx("checkpoint engine: cannot start a thread: %s",
		    strerror(e));
		event_set(loop, k->pipe[0], 0, NULL, NULL);
		goto out_close;
	}
	k->running = 1;
	return 0;

out_close:
	close(k->pipe[0]);
	close(k->pipe[1]);
	k->pipe[0] = k->pipe[1] = -1;
	return -1;
}

void
ckpt_free(struct ckpt *k)
{
	if (!k->running)
		return;
	pthread_mutex_lock(&k->mu);
	k->stop = 1;
	pthread_cond_signal(&k->cv);
	pthread_mutex_unlock(&k->mu);
	pthread_join(k->worker, NULL);
	k->running = 0;
	event_set(k->loop, k->pipe[0], 0, NULL, NULL);
	close(k->pipe[0]);
	close(k->pipe[1]);
	k->pipe[0] = k->pipe[1] = -1;
	pthread_mutex_destroy(&k->mu);
	pthread_cond_destroy(&k->cv);
}

void
ckpt_submit(struct ckpt *k, struct ckpt_job *j)
{
	pthread_mutex_lock(&k->mu);
	TAILQ_INSERT_TAIL(&k->todo, j, entry);
	k->busy++;
	pthread_cond_signal(&k->cv);
	pthread_mutex_unlock(&k->mu);
}

int
ckpt_busy(const struct ckpt *k)
{
	return k->busy;
}
