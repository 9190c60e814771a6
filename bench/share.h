/*
 * `make bench-share`: what the sharing benchmark's files share. The same
 * seeded demand traces (share_trace.c) run four ways on one simulated GPU,
 * or on 16 GiB of a real one (-r: share_device.c sizes the daemon's
 * reserve), each against a gpufracd of its own (share_daemon.c) with one
 * process per tenant (share_tenant.c, started by share_proc.c), while the
 * daemon's status and decision log are watched (share_watch.c);
 * share_way.c runs one way, share_report.c prints the table and the JSON
 * line.
 */
#ifndef GF_TOOLS_SHARE_H
#define GF_TOOLS_SHARE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct gf_event;

#define SHARE_TENANTS_MAX	16
#define SHARE_BURSTS_MAX	128
#define SHARE_NOTE_LEN		160
#define SHARE_DEVICE		"16Gi"	/* SIMCUDA_DEVICES */
#define SHARE_DEVICE_BYTES	(16ull << 30)	/* also what -r shares */
#define SHARE_NAME_LEN		64	/* a device's name (GF_NAME_LEN) */
/* Tenants of the preempt way run with primary gid SHARE_GID + index. */
#define SHARE_GID		61000

/* One burst of a tenant's demand; times from the start of the run. */
struct share_burst {
	uint64_t	 start_ms;	/* when it is due */
	uint64_t	 hold_ms;	/* held and worked on once granted */
	uint64_t	 bytes;		/* on top of the tenant's base */
};

/*
 * A tenant's trace: its base (held from start to end, idle between
 * bursts, as a model's weights are) and its bursts, in time order.
 */
struct share_trace {
	uint64_t	 base;
	struct share_burst bursts[SHARE_BURSTS_MAX];
	size_t		 nbursts;
	uint64_t	 end_ms;	/* its last burst's nominal end */
};

/* What the run is asked to do. */
struct share_params {
	unsigned	 tenants;
	uint64_t	 duration_ms;	/* bursts start before this */
	uint64_t	 seed;
	uint64_t	 capacity;	/* the device's bytes */
	int		 quick;		/* -q: a short check, not a measure */
	int		 real;		/* -r: the driver the environment has */
};

/*
 * The device shared: device 0 of the driver, as the daemon sees it. On
 * the simulated driver all of it; on the real one (-r) the daemon keeps
 * back a reserve, so that what its clients may be given is
 * SHARE_DEVICE_BYTES, as on the simulated device.
 */
struct share_device {
	char		 name[SHARE_NAME_LEN];
	char		 uuid[48];	/* "GPU-...", for its [device] section */
	uint64_t	 total;		/* as the driver says */
	uint64_t	 kept;		/* held outside gpufrac before the run */
	uint64_t	 kept_used;	/* of it, by programs without the shim,
					   which the daemons charge as used */
	uint64_t	 reserve;	/* [device] reserve; 0: none written */
	uint64_t	 capacity;	/* shareable, as the first status said */
};

/* The four ways, in the order they run. */
enum { WAY_STATIC, WAY_WAIT, WAY_SWAP, WAY_PREEMPT, WAY_COUNT };

/* What a way measured; NAN or -1: not measured, and note says why. */
struct share_result {
	int		 ran;		/* every tenant finished its trace */
	double		 idle_pct;	/* mean of capacity - allocated */
	int64_t		 oom;		/* failed allocations */
	double		 waited_s;	/* tenants' time in driver calls */
	double		 makespan_s;
	double		 done_pct;	/* of the bursts' work (bytes x ms) */
	int64_t		 swaps;		/* swap-out events */
	int64_t		 swap_bytes;	/* moved out and in */
	int64_t		 swap_ms;	/* the swaps took, as the daemon says */
	int64_t		 preempts, kills;
	char		 note[SHARE_NOTE_LEN];
};

/* One run: where everything lives. */
struct share_run {
	char		 top[PATH_MAX];	/* the build tree: TOP/bench/share */
	char		 dir[PATH_MAX];	/* private temporary directory */
	char		 sock[PATH_MAX];
	char		 state[64];	/* SIMCUDA_STATE */
	pid_t		 daemon;
	struct share_params p;
	struct share_device dev;
	struct share_trace traces[SHARE_TENANTS_MAX];
	struct share_result results[WAY_COUNT];
};

/* share.c */
const char *share_way_name(int way);

/* share_proc.c: tenants (harness.h has the children's bookkeeping). */
/*
 * Run TOP/bench/share_tenant with the shim preloaded, its stdin and
 * stdout pipes (*to, *from), stderr to DIR/tenant-INDEX.err, primary gid
 * gid unless it is (gid_t)-1, GPUFRAC_MEMORY_LIMIT limit unless NULL.
 * Returns its pid or -1.
 */
pid_t	share_tenant_start(const struct share_run *r, unsigned index,
	    gid_t gid, const char *limit, int *to, int *from);

/* share_trace.c */
/* Every tenant's trace, from p->seed alone. */
void	trace_make(const struct share_params *p, struct share_trace *t);
/* Write t as the lines share_tenant reads; 0 or -1. */
int	trace_send(int fd, const struct share_trace *t);
/* A trace's peak and time-weighted mean held, in bytes. */
uint64_t trace_peak(const struct share_trace *t);
double	trace_mean(const struct share_trace *t);
/* The work of all its bursts: bytes x ms. */
double	trace_work(const struct share_trace *t);

/* share_daemon.c: a gpufracd with the configuration of one way. */
/* daemon_start's way for a daemon with no configuration but the log's. */
#define WAY_PROBE	(-1)
/* mkdtemp; 0 or -1 with a note on stderr. */
int	daemon_dir_make(struct share_run *r);
/* Write the way's configuration and start gpufracd; 0 or -1. */
int	daemon_start(struct share_run *r, int way);
/* SIGTERM and reap it; its exit status, or -1. */
int	daemon_stop(struct share_run *r);
/* Forget the simulated device: the next way starts on an empty one. */
void	daemon_state_remove(const struct share_run *r);
/* Remove the directory, its files and the simulator's state. */
void	daemon_teardown(const struct share_run *r);
/* The last lines of the daemon's log, on stderr. */
void	daemon_log_tail(const struct share_run *r);

/* share_device.c */
/*
 * -r: ask a daemon of no configuration what device 0 is and what is held
 * on it outside gpufrac, and size r->dev.reserve so that SHARE_DEVICE_BYTES
 * is left to share. 0, or -1 with one line on stderr (a device too small
 * among them).
 */
int	device_probe(struct share_run *r);

/* share_watch.c: the daemon's view while a way runs. */
struct watch {
	const char	*sock;
	int		 fd;		/* the events, followed */
	uint64_t	 capacity;	/* device 0's, from its status */
	uint64_t	 kept;		/* of it, not shared (share_device's) */
	uint64_t	 kept_used;	/* of that, charged as used */
	char		 name[SHARE_NAME_LEN];	/* device 0's */
	double		 idle_sum;
	size_t		 samples;
	int		 swap_available;
	struct gf_event	*seen;		/* the last events followed */
	size_t		 nseen;
	int64_t		 swaps, swap_bytes, swap_ms, preempts, kills;
	int		 lost;		/* some were not followed nor in the ring */
};
void	watch_init(struct watch *w, const char *sock);
/* One status query: device 0's unallocated memory; 0 or -1. */
int	watch_sample(struct watch *w);
/* Follow the daemon's events on w->fd; 0 or -1 (said on stderr). */
int	watch_follow(struct watch *w);
/* Count the events w->fd has for us now; 0 or -1 (said on stderr). */
int	watch_read(struct watch *w);
/* Count those the daemon has not sent yet, from its ring; 0 or -1. */
int	watch_finish(struct watch *w);
void	watch_free(struct watch *w);

/* share_way.c: run one way of sharing; fills r->results[way]. */
void	way_run(struct share_run *r, int way);

/* share_report.c: the table, the targets and the JSON line. */
void	report_print(const struct share_run *r, double runtime_s);

#endif
