/*
 * The daemon's state and its life cycle: the configuration in force, the
 * ledger of devices, groups and clients, the control socket. Start-up,
 * reload (SIGHUP or RELOAD_REQ; all or nothing) and shutdown.
 */
#ifndef GF_DAEMON_ARBITER_H
#define GF_DAEMON_ARBITER_H

#include <stdint.h>
#include <sys/queue.h>

#include "config.h"
#include "control.h"
#include "depart.h"
#include "dispatch.h"
#include "events.h"
#include "grantrec.h"
#include "groups.h"
#include "ledger.h"
#include "memlimits.h"
#include "metrics.h"
#include "swap.h"
#include "waitq.h"

struct conn;
struct event_loop;

struct arbiter {
	struct config	 conf;		/* in force */
	struct config	 rt;		/* run-time groups (rtgroups.h) */
	struct config	 aside;		/* saved ones that did not fit at
					   start: kept, saved, not in force */
	struct groups	 groups;	/* of both, as the ledger numbers them */
	char		 state_path[CONFIG_SOCKET_LEN + sizeof(RTGROUPS_FILE)];
	struct ledger	 ledger;
	struct control	 control;
	struct control_ops control_ops;	/* the connections' calls up */
	struct dispatch	 dispatch;	/* the message handlers */
	/* Tell clients of limits that changed (view_notify),
	   for the policy below the messages: set by arbiter_wire. */
	void		(*tell_limits)(struct arbiter *a, struct conn *self);
	struct departs	 departs;	/* closed, process not yet exited */
	struct event_loop *loop;
	const char	*conf_path;	/* -c, or the default */
	int		 conf_optional;	/* the default: absent = built-in */
	const char	*socket_arg;	/* -s: overrides 'socket', or NULL */
	uint64_t	 start_ms;	/* event_now_ms() at start */
	struct events	 events;	/* the decision log */
	struct waitq	 waitq;		/* requests of the wait and preempt
					   resolvers */
	int64_t		 wait_timer;	/* for the earliest deadline, or 0 */
	TAILQ_HEAD(, preempt) preempts;	/* victims given SIGTERM */
	int		 serving;	/* resolve_serve is walking */
	int		 serve_again;	/* memory came back meanwhile */
	int		 stopping;	/* arbiter_stop: grant nothing more */
	struct swap	 swap;		/* host swap */
	struct driver_dev *driver;	/* per device (driver.h) */
	int64_t		 driver_timer;	/* the next NVML look, or 0 */
	uint64_t	 driver_when;	/* and when it comes */
	int64_t		 glance_timer;	/* the next glance (glance.h), or 0 */
	int64_t		 lease_timer;	/* the next look for idle leases */
	int64_t		 view_timer;	/* the next look at what clients are
					   shown free (view.h) */
	int64_t		 view_soon_timer; /* one when the loop turns, or 0 */
	int64_t		 activity_timer; /* the next look at activity pages */
	int64_t		 reap_timer;	/* the next look for transient groups
					   whose cgroups are gone (reap.h) */
	struct metrics	 metrics;	/* counters, HTTP server (metrics.h) */
	struct memlimits memlimits;	/* the driver's walls (memlimits.h) */
	struct expect	*expect;	/* processes given a grace to
					   connect (expect.h) */
	size_t		 nexpect;
	struct granted	*granted;	/* what processes whose connection
					   was lost were granted (granted.h) */
	size_t		 ngranted;
	struct grants	 grants;	/* their record in state_dir, the
					   earlier daemon's read (grantrec.h) */
};

/*
 * Join the layers (arbiter_wire.c): the control socket's callbacks and
 * every part's message handlers. 0, or -1 (a programming error, logged).
 */
int	arbiter_wire(struct arbiter *a);

/*
 * Read the configuration (path, its drop-ins, then socket_arg over
 * 'socket') into c, fresh from config_init. Returns the number of errors,
 * each passed to report.
 */
int	arbiter_read_config(struct config *c, const char *path, int optional,
	    const char *socket_arg, config_report_fn *report, void *arg);

/*
 * Check the configuration and groups gs against the ledger's devices:
 * every [device] names one that exists (else a warning) and no more than
 * once, and its reserve fits the device's total; on each device, with the
 * new reserves, no group's guarantee exceeds its limit and the guarantees
 * add up to no more than the shareable capacity. Fills reserves[i] for
 * each ledger device.
 * Returns the number of errors, each passed to report as "FILE:LINE:
 * message" (a sum of guarantees, which no one line makes, without
 * "FILE:LINE: ").
 */
int	arbiter_check(const struct ledger *l, const struct groups *gs,
	    uint64_t *reserves, config_report_fn *report, void *arg);

/*
 * Start: a.conf_path etc. and a.loop set by the caller, conf read and
 * checked by arbiter_read_config (taken over: a owns it now). Finds the
 * devices through the driver library lib, applies conf, listens. Returns
 * 0, or -1 after logging why.
 */
int	arbiter_start(struct arbiter *a, struct config *conf, const char *lib);

/*
 * SIGHUP or RELOAD_REQ: read the configuration again and apply it only if
 * it is valid, to the running clients too: each is matched to its group
 * again, and told of a changed limit (dispatch_limits_notify; self is the
 * connection that asked, or NULL). Returns 0, or -1 with the first problem
 * in err (errlen bytes; err may be NULL), every problem logged.
 */
int	arbiter_reload(struct arbiter *a, struct conn *self, char *err,
	    size_t errlen);

/*
 * GROUP_SET (with its rules) and GROUP_RM: change the run-time groups, save
 * them, and apply them at once to the running clients, as a reload does.
 * A group of the configuration files cannot be changed here. Returns 0,
 * or -1 with one line in err (nothing changed); GROUP_RM of a name that
 * is no run-time group returns RTGROUPS_NONE.
 */
int	arbiter_group_set(struct arbiter *a, struct conn *self,
	    const struct gf_group_set *s, const struct gf_group_rule *rules,
	    size_t nrules, char *err, size_t errlen);
int	arbiter_group_rm(struct arbiter *a, struct conn *self,
	    const char *name, char *err, size_t errlen);

/* Close every connection, remove the socket, free the state. */
void	arbiter_stop(struct arbiter *a);

#endif
