/*
 * The soak's driver (make soak): what its parts share. soak.c runs it
 * (settings, the work directory, the phases, the verdict); soak_daemon.c
 * owns gpufracd (its configurations, starts, stops, reloads); soak_fleet.c
 * the client processes, soak_stuck.c what one that is stuck was doing;
 * soak_chaos.c the schedule of what goes wrong and the gpufracctl
 * commands it runs; soak_check.c the comparisons at quiet points and at
 * the end, of what soak_look.c (the daemon's and the driver's state) and
 * soak_json.c (gpufracctl's JSON) see; soak_report.c the table and the
 * JSON line. soak_client.c and soak_kinds.c are the
 * client, a program of its own; soak_proto.h is what both sides share.
 * One thread: every part runs from the loop in soak.c.
 */
#ifndef GF_SOAK_H
#define GF_SOAK_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "soak_proto.h"

#define SOAK_MIN_CLIENTS	32
#define SOAK_DEVICES		"2Gi,1Gi"	/* the simulated GPUs */
#define SOAK_NDEV		2
#define SOAK_CONTEXT_BYTES	"3Mi"		/* each context's overhead */
/* The groups' gids: clients run under them, gpufrac.conf matches them. */
#define SOAK_GID_ALPHA		64101
#define SOAK_GID_BETA		64102
/* The honest soak's group limit, of each device: its clients hold more. */
#define SOAK_HONEST_LIMIT	"25%"
/* The longest wait_timeout of any configuration the soak writes. */
#define SOAK_WAIT_TIMEOUT_MS	2000
/*
 * A call may wait that, and the shim 5 s more for a silent daemon; then
 * the time a loaded machine takes to run them (more under a sanitizer).
 */
#define SOAK_WAIT_BOUND_MS	(SOAK_WAIT_TIMEOUT_MS + 5000)
#define SOAK_SLACK_MS		3000
#define SOAK_SAN_SLACK_MS	10000
#define SOAK_CTL_MAX		8	/* gpufracctl commands at once */

enum { GROUP_ALPHA, GROUP_BETA, GROUP_DEFAULT, GROUP_COUNT };

/* One client process, in slot i of the page (soak_proto.h). */
struct soak_client {
	pid_t		pid;		/* 0: none in the slot */
	int		to, from;	/* its stdin, its stdout */
	int		ready;		/* said READY */
	uint64_t	pauses_sent;	/* PAUSEs told */
	int		settled;	/* settled at the last one (its slot's
					   pauses, fleet_listen) */
	int		held_out;	/* not settled: swapped out and waiting
					   to come back (fleet_settle) */
	int		quitting;	/* told QUIT */
	int		bye;		/* said BYE */
	int		group;		/* GROUP_* */
	unsigned	devmask;
	char		limit[16];	/* GPUFRAC_MEMORY_LIMIT, "" for none */
	uint64_t	started_ms;
	uint64_t	hand_out_ms;	/* chaos time swapped out by hand, 0 */
	int		hand_in;	/* then in by hand: -1 not tried,
					   0 done, 1 refused */
	int		quiet_out;	/* swapped out at this quiet point:
					   the how-manieth (0: not) */
	uint64_t	quiet_before;	/* then what gpufracd charged it, all
					   devices, before it went out */
	uint64_t	quiet_host;	/* and what it charged on host after */
};

/* A gpufracctl command in flight. */
struct soak_ctl {
	pid_t		pid;		/* 0: free */
	int		what;		/* CTL_* */
	pid_t		target;		/* swap: the client */
	uint64_t	deadline_ms;
};

enum { CTL_RELOAD, CTL_SWAP_OUT, CTL_SWAP_IN };

/* What happened, for the report. */
struct soak_counts {
	uint64_t	spawned, kills, died_by_daemon, client_crashes;
	uint64_t	restarts_term, restarts_kill, daemon_crashes;
	uint64_t	restarts_quiet;	/* of the kills, at quiet points:
					   the records compared */
	uint64_t	reloads_hup, reloads_ctl;
	uint64_t	swaps_out, swaps_in, swaps_refused;
	uint64_t	quiet_points, check_failures, stuck_clients;
	uint64_t	reloads_refused;
	uint64_t	lost_bytes, ledger_vs_driver;	/* largest seen */
	uint64_t	san_reports, ledger_warnings;
	/* the clients' own counts, of the dead ones and the live ones */
	uint64_t	ops, kind_ops[SOAK_KINDS], denied, waits, stuck;
	uint64_t	wait_max_ms, swapped_calls, errors, corrupt;
	/* the honest soak's: the daemon's decisions, followed */
	uint64_t	refusals, past_limits, driver_ooms, daemon_denies;
	uint64_t	disconnections;
};

/* One row of the report's table: a quiet point, or the end. */
struct soak_point {
	uint64_t	at_ms;		/* into the chaos */
	const char	*what;		/* settled, swapped out, back in, end */
	unsigned	clients, swapped;
	uint64_t	used, leased, host, driver;	/* all devices */
	uint64_t	lost, vs_driver;
	unsigned	attempts;
	int		ok;
};

#define SOAK_MAX_POINTS	512	/* rows of the report; then counted only */

/* The timeline of chaos, planned from the seed (soak_chaos.c). */
struct soak_plan {
	uint64_t	*restart_ms;	/* when the daemon restarts ... */
	int		*restart_kill;	/* ... and whether by SIGKILL */
	size_t		nrestarts, next_restart;
	uint64_t	next_kill_ms, next_reload_ms, next_swap_ms;
	uint64_t	next_quiet_ms, quiet_every_ms;
	/* swapped out by hand, and when to be swapped back in */
	pid_t		swapped[SOAK_MAX_SLOTS];
	uint64_t	swap_back_ms[SOAK_MAX_SLOTS];
};

struct soak {
	/* settings */
	unsigned	seconds, nclients;
	unsigned	wait_bound_ms;	/* a call that waits longer is stuck */
	uint64_t	seed, rng;
	char		build[PATH_MAX];	/* make's O */
	char		dir[PATH_MAX];	/* the work directory */
	char		sock[PATH_MAX], conf[PATH_MAX], log[PATH_MAX];
	char		clog[PATH_MAX];	/* the clients' stderr */
	char		state[64];	/* SIMCUDA_STATE */
	int		keep;		/* keep the work directory */
	int		quiet_swaps;	/* SOAK_SWAP=quiet: swaps only while the
					   clients are settled */
	int		honest;		/* SOAK_MODE=honest: no chaos, one
					   group near its limit (soak_honest.c) */
	/* the daemon, and the follower of its decisions (honest) */
	pid_t		daemon, follower;
	char		events[PATH_MAX];
	uint64_t	restarted_ms;	/* when it was last (re)started */
	unsigned	conf_gen;	/* the configuration now written */
	/* the clients */
	int		slotfd;
	struct soak_slot *slots;
	struct soak_client clients[SOAK_MAX_SLOTS];
	struct soak_ctl	ctls[SOAK_CTL_MAX];
	/* time: the chaos clock stops at quiet points */
	uint64_t	start_ms, quiet_total_ms;
	uint64_t	point_at_ms;	/* the quiet point's chaos time */
	const char	*point_what;	/* what its check looks at */
	unsigned	last_swapped;	/* clients out at the last check */
	struct soak_plan plan;
	struct soak_counts n;
	struct soak_point points[SOAK_MAX_POINTS];
	size_t		npoints, points_dropped;
	unsigned	failures;
};

/* soak.c */
uint64_t soak_now_ms(void);		/* CLOCK_MONOTONIC */
uint64_t soak_chaos_ms(const struct soak *s);	/* into the chaos */
/* One failed check: counted, and said at once on stderr. */
void	soak_fail(struct soak *s, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* Reap whatever child has exited (the daemon, clients, gpufracctl). */
void	soak_reap(struct soak *s);

/* soak_daemon.c */
int	daemon_conf_write(struct soak *s, unsigned gen);
int	daemon_start(struct soak *s);
/* Stop it with sig (SIGTERM or SIGKILL) and check how it ended. */
void	daemon_stop(struct soak *s, int sig);
/* A status was reaped that was not asked for: a crash; start another. */
void	daemon_exited(struct soak *s, int status);
/* Write the next configuration (a reload then reads it). */
int	daemon_conf_next(struct soak *s);
/* The log's lines of ledger warnings (broken invariants); the log's tail. */
unsigned daemon_log_warnings(const struct soak *s);
void	daemon_log_tail(const struct soak *s, unsigned lines);

/* soak_fleet.c */
int	fleet_init(struct soak *s);
int	fleet_spawn(struct soak *s, int i);
/* The client in slot i exited with status: count it, free the slot. */
void	fleet_exited(struct soak *s, int i, int status);
int	fleet_find(const struct soak *s, pid_t pid);
/* Read what the clients said (READY, SETTLED, BYE) without blocking. */
void	fleet_listen(struct soak *s);
void	fleet_kill(struct soak *s, int i);
void	fleet_refill(struct soak *s);
/*
 * Every client ready; then pause them all and wait for them to settle,
 * or be held out: swapped out, in a call that waits to come back (for
 * room others hold, which paused, they will not free). Those neither
 * settled nor held out in time are stuck: said, and killed.
 */
void	fleet_settle(struct soak *s);
/* What the client in slot i holds, as it last published it: 0, or -1
 * if it was changing it (read again). */
int	fleet_truth(const struct soak *s, int i, uint64_t *charged,
	    uint64_t *driver);
void	fleet_resume(struct soak *s);
/* Tell every client to quit and wait for each to exit. */
void	fleet_quit(struct soak *s);
int	fleet_live(const struct soak *s);

/* soak_stuck.c: what the client in slot i was doing, on stderr. */
void	stuck_say(struct soak *s, int i);

/* soak_chaos.c */
int	chaos_plan(struct soak *s);
void	chaos_free(struct soak *s);
/* Do what is due at chaos time now. */
void	chaos_tick(struct soak *s);
/* Wait for every gpufracctl command in flight. */
void	chaos_drain(struct soak *s);
/* At a quiet point, every client settled: swap a few out by hand, and
 * (after the check) back in; how many are out. */
unsigned chaos_quiet_out(struct soak *s);
void	chaos_quiet_in(struct soak *s);
/* A reaped gpufracctl: whether pid was one. */
int	chaos_ctl_exited(struct soak *s, pid_t pid, int status);

/* soak_restart.c */
/*
 * At a quiet point: SIGKILL the daemon, start it again, and compare each
 * live client's record once it re-registered with its record before the
 * kill (issue 40). 0, or -1 (said, counted as a failed check).
 */
int	restart_check(struct soak *s);

/* soak_check.c */
/* A quiet point (the clients settled) or, with end set, the end (no
 * client left): compare until it holds or time runs out; 0 if it held. */
int	check_point(struct soak *s, int end);

/* soak_honest.c */
/* Follow the daemon's decisions into the work directory; 0, or -1. */
int	honest_follow(struct soak *s);
/* A reaped child: whether it was the follower (which should not end
 * while the daemon runs). */
int	honest_exited(struct soak *s, pid_t pid);
/* After the daemon stopped: its decisions and log against the clients'
 * counts, each difference a failure. */
void	honest_verdict(struct soak *s);

/* soak_report.c */
void	report_print(const struct soak *s, uint64_t wall_ms);

#endif
