/*
 * The checkpoint engine: the driver's cuCheckpointProcess* calls on other
 * processes (DESIGN.md §4, host swap), run on one worker thread so that
 * the event loop never waits for a lock timeout or a copy of gigabytes.
 * Jobs run one at a time, in the order submitted; each one's end is
 * reported on the event loop's thread, through a pipe it watches.
 */
#ifndef GF_DAEMON_CKPT_H
#define GF_DAEMON_CKPT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include <cuda.h>

struct event_loop;

/* The driver's checkpoint API; all NULL when it has none. */
struct ckpt_api {
	CUresult (*lock)(int, CUcheckpointLockArgs *);
	CUresult (*checkpoint)(int, CUcheckpointCheckpointArgs *);
	CUresult (*restore)(int, CUcheckpointRestoreArgs *);
	CUresult (*unlock)(int, CUcheckpointUnlockArgs *);
	CUresult (*get_state)(int, CUprocessState *);
};

enum {
	CKPT_OUT = 1,		/* lock (with a timeout), checkpoint */
	CKPT_IN,		/* restore, unlock */
};

struct ckpt_job {
	TAILQ_ENTRY(ckpt_job) entry;
	/* the caller's */
	int		 op;		/* CKPT_OUT or CKPT_IN */
	pid_t		 pid;
	unsigned	 lock_timeout_ms;
	void		*arg;
	/* the engine's answer */
	CUresult	 result;	/* CUDA_SUCCESS, or the failed call's */
	const char	*stage;		/* the call that failed: "lock" ... */
	uint64_t	 duration_us;	/* of the whole job */
};

/* A job has ended (on the event loop's thread); the caller owns it again. */
typedef void	ckpt_done_fn(void *arg, struct ckpt_job *job);

struct ckpt {
	struct ckpt_api	 api;
	struct event_loop *loop;
	ckpt_done_fn	*done;
	void		*done_arg;
	pthread_t	 worker;
	int		 running;	/* the worker thread exists */
	int		 pipe[2];	/* worker -> loop: jobs ended */
	pthread_mutex_t	 mu;		/* the queues and stop, below */
	pthread_cond_t	 cv;
	TAILQ_HEAD(, ckpt_job) todo;
	TAILQ_HEAD(, ckpt_job) ended;
	int		 stop;
	int		 busy;		/* a job submitted and not yet reported */
};

/*
 * Start the engine over api (copied) on loop, reporting through done.
 * Returns 0, or -1 after logging why.
 */
int	ckpt_init(struct ckpt *k, struct event_loop *loop,
	    const struct ckpt_api *api, ckpt_done_fn *done, void *done_arg);

/*
 * Stop: jobs not yet started are dropped unreported (the caller still
 * owns them), the one running is waited for. Safe on a zeroed or
 * stopped engine.
 */
void	ckpt_free(struct ckpt *k);

/* Queue job; done() gets it back later. */
void	ckpt_submit(struct ckpt *k, struct ckpt_job *job);

/* Run job now, on the caller's thread (shutdown); no done() call. */
void	ckpt_run(struct ckpt *k, struct ckpt_job *job);

/* Jobs submitted and not yet reported. */
int	ckpt_busy(const struct ckpt *k);

#endif
