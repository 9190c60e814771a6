/*
 * `make bench`: what the benchmark's files share. The run, its temporary
 * directory, daemon and results (bench.c); timing and percentiles
 * (bench_stats.c); processes (bench_proc.c); the wire protocol spoken by
 * hand (bench_wire.c); one file per measurement.
 */
#ifndef GF_TOOLS_BENCH_H
#define GF_TOOLS_BENCH_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <cuda.h>

#include "gpufrac/proto.h"

#define BENCH_SIZE	4096		/* the fast path's allocation */
#define BENCH_NOTE_LEN	160

/* One run: where everything lives and what it talks to. */
struct bench {
	char		 top[PATH_MAX];	/* the build tree: TOP/bench/bench */
	char		 dir[PATH_MAX];	/* private temporary directory */
	char		 sock[PATH_MAX]; /* the daemon's socket in dir */
	char		 state[64];	/* SIMCUDA_STATE */
	pid_t		 daemon;	/* gpufracd, or 0 */
	/* BENCH_BASELINE: another build tree whose gpufracd is measured
	   beside this one's, on base_sock (the round trip), or "" */
	char		 base_top[PATH_MAX];
	char		 base_sock[PATH_MAX];
	pid_t		 base_daemon;
	uint8_t		 uuid[GF_UUID_LEN]; /* the simulated device 0 */
	int		 clients;	/* busy client processes */
};

/* A measurement's outcome: NAN where it could not be taken, and why. */
struct results {
	double		 bare_ns, shim_ns, fastpath_added_ns;
	/* the same with fastpath_threads threads, per pair and CPU in use */
	double		 bare_ns_mt, shim_ns_mt, fastpath_added_ns_mt;
	int		 fastpath_threads;
	/* instructions per pair (callgrind), one thread and several */
	double		 bare_ir, shim_ir, fastpath_added_ir;
	double		 bare_ir_mt, shim_ir_mt, fastpath_added_ir_mt;
	double		 rt_idle_p50_us, rt_idle_p99_us; /* no load */
	double		 rt_p50_us, rt_p99_us, echo_p50_us, echo_p99_us;
	size_t		 rt_samples, echo_samples;
	double		 base_p50_us, base_p99_us; /* BENCH_BASELINE's */
	size_t		 base_samples;
	double		 rt_load_rps, echo_load_rps; /* the load's pace */
	double		 wake_p50_us, wake_p99_us;
	size_t		 wake_samples;
	double		 table_ns_1k, table_ns_100k, table_ns_1m;
	double		 table_ns_100k_mt;
	int		 table_threads;
	double		 rss_kib_0, rss_kib_1000;
	int		 rss_clients;	/* connected when measured */
	double		 runtime_s;
	char		 fastpath_note[BENCH_NOTE_LEN];
	char		 count_note[BENCH_NOTE_LEN];
	char		 rt_note[BENCH_NOTE_LEN];
	char		 echo_note[BENCH_NOTE_LEN];
	char		 base_note[BENCH_NOTE_LEN];
	char		 wake_note[BENCH_NOTE_LEN];
	char		 rss_note[BENCH_NOTE_LEN];
};

/* bench_stats.c */
/* The p-quantile (0 < p <= 1, nearest rank) of v; sorts v. NAN if n is 0. */
double	stats_quantile(double *v, size_t n, double p);
double	stats_median(double *v, size_t n);

/* bench_proc.c: workers (harness.h has the children's bookkeeping). */
/*
 * Run this program again as a worker ("bench -W ARGS..."), with the shim
 * preloaded if preload; its stdin and stdout are pipes, *to and *from the
 * other ends; its stderr goes to DIR/NAME.err. Returns its pid or -1.
 */
pid_t	proc_worker(const struct bench *b, int preload, const char *name,
	    char *const args[], int *to, int *from);
/* The same, run by the program wrap[0] with its arguments wrap[1...]. */
pid_t	proc_worker_wrapped(const struct bench *b, int preload,
	    const char *name, char *const wrap[], char *const args[], int *to,
	    int *from);
/* Read or write exactly n bytes, at most ms to wait (read); 0 or -1. */
int	proc_read(int fd, void *buf, size_t n, int ms);
int	proc_write(int fd, const void *buf, size_t n);
/* VmRSS of pid in KiB, or -1. */
long	proc_rss_kib(pid_t pid);

/* bench_wire.c: the protocol, one request at a time. */
/* Connect, with a 10 s receive timeout; fd, or -1 with errno set. */
int	wire_connect(const char *path);
/* Send, then receive the reply that echoes seq into *reply; 0 or -1. */
int	wire_call(int fd, uint16_t type, uint32_t seq, const void *payload,
	    struct gf_msg *reply);
/* Connect, HELLO, DEVICE_OPEN uuid: a client as the shim is. fd or -1. */
int	wire_client(const char *path, const uint8_t uuid[GF_UUID_LEN]);
/* RESERVE size (GRANT expected); 0 or -1. */
int	wire_reserve(int fd, uint32_t seq, const uint8_t uuid[GF_UUID_LEN],
	    uint64_t size);
int	wire_rollback(int fd, uint32_t seq, const uint8_t uuid[GF_UUID_LEN],
	    uint64_t size);
/* STATUS: device 0's UUID and the number of clients; 0 or -1. */
int	wire_status(const char *path, uint8_t uuid[GF_UUID_LEN],
	    uint32_t *nclients);
/* PS: pid's state (GF_STATE_*), or -1 if it is not a client. */
int	wire_client_state(const char *path, uint32_t pid);

/* bench_cuda.c: what a worker needs of the driver, found as numba does. */
struct cuda_api {
	CUresult (*alloc)(CUdeviceptr *ptr, size_t size);
	CUresult (*free)(CUdeviceptr ptr);
	CUresult (*set_current)(CUcontext ctx);
	CUcontext ctx;			/* device 0's primary context */
};
/* dlopen libcuda.so.1, cuInit, make device 0's context current; 0 or -1. */
int	cuda_open(struct cuda_api *api);
/* Make it current on another thread too; 0 or -1. */
int	cuda_thread(const struct cuda_api *api);

/*
 * bench_fastpath.c: alloc+free pairs of BENCH_SIZE bytes on threads that
 * start together, each with device 0's context current.
 */
#define FP_THREADS	4		/* the fast path "at once" */
#define FP_THREADS_MAX	16
struct fp_pool;
/* cuda_open, and a warm-up (through the shim: the lease); 0 or -1. */
int	fp_open(struct cuda_api *api);
/*
 * nthreads threads (1: the caller's own), each doing pairs / nthreads
 * pairs a round; around, if not NULL, is called on each just before and
 * just after its pairs.
 */
int	fp_pool_start(struct fp_pool **pool, const struct cuda_api *api,
	    long pairs, int nthreads, void (*around)(void));
/* One round; the CUresult of the first failure, or 0. */
CUresult fp_pool_run(struct fp_pool *pool);
void	fp_pool_stop(struct fp_pool *pool);

/* What a worker answers each command with, on its stdout. */
struct worker_reply {
	int32_t		 status;	/* a CUresult, or -1 */
	uint32_t	 zero;
	uint64_t	 ns;		/* a time or a duration */
};

/* The measurements: each fills its part of *r. */
void	fastpath_measure(const struct bench *b, struct results *r);
void	count_measure(const struct bench *b, struct results *r);
void	roundtrip_measure(const struct bench *b, struct results *r);
void	wake_measure(const struct bench *b, struct results *r);
void	table_measure(struct results *r);
void	rss_measure(const struct bench *b, struct results *r);

/* The worker side of those that run in processes of their own. */
int	fastpath_worker(int argc, char *argv[]);
int	count_worker(int argc, char *argv[]);
/*
 * A callgrind output file's total instructions, and those spent inside
 * the driver's cuMemAlloc_v2 and cuMemFree_v2; 0, or -1 if unreadable.
 */
int	callgrind_read(const char *path, double *total, double *driver);
int	wake_worker(int argc, char *argv[]);

/* bench_daemon.c: the run's directory, configuration and gpufracd. */
/* mkdtemp, the configuration; 0 or -1 with a note on stderr. */
int	daemon_setup(struct bench *b);
/*
 * Start gpufracd and wait until it answers STATUS (b->uuid); 0 or -1.
 * The baseline's too, where b->base_top is set (if it cannot start: said,
 * and base_top emptied).
 */
int	daemon_start(struct bench *b);
/* SIGTERM and reap them; this one's exit status, or -1. */
int	daemon_stop(struct bench *b);
/* Remove the directory, its files and the simulator's state. */
void	daemon_teardown(const struct bench *b);
/* The last lines of the daemon's log, on stderr. */
void	daemon_log_tail(const struct bench *b);

/* bench_echo.c: a bare SEQPACKET echo server on path; its pid or -1. */
pid_t	echo_start(const char *path);

/* bench_report.c: the table and the JSON line. */
void	report_print(const struct bench *b, const struct results *r);

#endif
