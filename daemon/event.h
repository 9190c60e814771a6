/*
 * The daemon's event loop: readiness of file descriptors (epoll) and
 * one-shot timers, after redis's ae.c. Nothing else: no threads, no signals
 * (a signalfd is just another descriptor).
 *
 * Contract:
 *  - Single-threaded. A handler runs to completion; nothing is re-entered.
 *  - Level-triggered: a handler that leaves data unread is called again on
 *    the next round, so it may read a bounded amount and return (fairness).
 *  - A handler may register, change or remove any descriptor (its own
 *    included) and add or cancel any timer. A descriptor removed during a
 *    round gets no further callback in that round; nor does one closed and
 *    registered again under the same number within the round get the
 *    events of the one it replaced (a pidfd's handler takes any event for
 *    its process's exit).
 *  - Timers fire once, no earlier than asked, in deadline order, after the
 *    round's descriptor callbacks.
 */
#ifndef GF_DAEMON_EVENT_H
#define GF_DAEMON_EVENT_H

#include <stdint.h>

#define EVENT_READ	0x1	/* readable, or hung up / in error */
#define EVENT_WRITE	0x2	/* writable */

struct event_loop;

/* mask is the one condition that fired: EVENT_READ or EVENT_WRITE. */
typedef void	event_fd_fn(struct event_loop *loop, int fd, int mask,
		    void *arg);
typedef void	event_timer_fn(struct event_loop *loop, void *arg);

/* NULL with errno set when epoll or memory is not available. */
struct event_loop *event_loop_new(void);
/* Frees the loop and its timers; closes no registered descriptor. */
void	event_loop_free(struct event_loop *loop);

/*
 * Watch fd for the conditions in mask (EVENT_READ | EVENT_WRITE), calling
 * fn(loop, fd, condition, arg); a second call for the same fd replaces mask,
 * fn and arg, and mask 0 stops watching it. Returns 0 or -1 with errno set.
 */
int	event_set(struct event_loop *loop, int fd, int mask, event_fd_fn *fn,
	    void *arg);

/*
 * Call fn(loop, arg) once, ms milliseconds from now. Returns a timer id
 * (> 0) for event_timer_cancel, or -1 (ENOMEM).
 */
int64_t	event_timer_add(struct event_loop *loop, uint64_t ms,
	    event_timer_fn *fn, void *arg);
/* Cancel a timer that has not fired; unknown ids are ignored. */
void	event_timer_cancel(struct event_loop *loop, int64_t id);

/*
 * Run until event_stop() is called from a handler. Returns 0, or -1 with
 * errno set if epoll_wait fails for a reason other than EINTR.
 */
int	event_run(struct event_loop *loop);
void	event_stop(struct event_loop *loop);

/* Milliseconds on the monotonic clock. */
uint64_t event_now_ms(void);

#endif
