/*
 * The gpufracd fuzzer's world: one arbiter (daemon/arbiter.h), started
 * afresh for every input, and the simulated processes that talk to it
 * over real connections. What the harness files share:
 *
 *   harness.c     LLVMFuzzerTestOneInput: the world up, the input's ops,
 *                 the event loop driven round by round, the world down
 *   peers.c       the processes and their connections: identities,
 *                 activity pages, sending, reading and checking replies
 *   fakes.c       the machine under the daemon (linker --wrap seams): the
 *                 clock, kill(2), the GPUs, the checkpoint API, NVML, and
 *                 the ledger's log lines about broken invariants
 *   configs.c     the scratch directory and the configuration variants
 *   invariants.c  what must hold after every op (ledger.h's invariants)
 *
 * Nothing here changes the daemon: it runs as gpufracd would, in one
 * process with its event loop, on a simulated machine.
 */
#ifndef GF_FUZZ_H
#define GF_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "../daemon/arbiter.h"
#include "fuzz_input.h"
#include "gpufrac/activity.h"

#define FZ_NPROCS	6
#define FZ_MAXDEV	3	/* the most GPUs a device set has */
#define FZ_CLOCK_START	1000000	/* ms on the simulated monotonic clock */
#define FZ_PKT_MAX	512	/* the longest packet a peer sends */

/* One simulated process. */
struct fz_proc {
	uint32_t	 pid;
	int		 self;		/* the fuzzer's own pid: it lives on
					   when its connections close */
	int		 memfd;		/* its activity page, or -1 */
	struct gf_activity *page;	/* mapped, or NULL */
	uint32_t	 ckpt;		/* FZ_CKPT_* failures (atomic: the
					   checkpoint thread reads it) */
	uint32_t	 ckpt_state;	/* CUprocessState, as the fake driver
					   keeps it (atomic) */
	uint64_t	 nvml[FZ_MAXDEV];	/* bytes NVML shows */
	uint64_t	 nvml_max[FZ_MAXDEV];	/* and the most it showed */
	int		 killed;	/* SIGKILL: it exits at the next look */
};

/* A process without a connection (bare.c), life after life. */
#define FZ_NLAYERS	8
struct fz_bare_layer {
	uint64_t	 ms;		/* the look that saw it come */
	uint64_t	 bytes;
};
struct fz_bare_layers {
	struct fz_bare_layer v[FZ_NLAYERS];	/* oldest first */
	size_t		 n;
};
struct fz_bare {
	uint32_t	 pid;
	uint32_t	 uid;
	uint32_t	 gid;
	const char	*cgroup;
	int		 alive;
	int		 killed;	/* SIGKILL: it exits at the next look */
	int		 life_r;	/* its pidfd's stand-in, dup'd out */
	int		 life_w;	/* closed as it exits */
	uint64_t	 ino;		/* life_r's inode: names the life */
	uint64_t	 start_ms;	/* since boot: pidfd_start_ms */
	int		 why;		/* PROCID_*, as procid_read says */
	uint64_t	 nvml[FZ_MAXDEV];	/* bytes NVML lists */
	uint64_t	 seen[FZ_MAXDEV];	/* the last look's */
	uint64_t	 seen_ino;	/* the life that look saw */
	struct fz_bare_layers layers[FZ_MAXDEV];	/* as looks saw
							   them come */
};

/* One connection slot: a process, who the kernel says it is, our end. */
struct fz_slot {
	struct fz_proc	*proc;
	int		 real_creds;	/* keep SO_PEERCRED as it is */
	uint32_t	 uid;
	uint32_t	 gid;
	const char	*cgroup;	/* /proc/PID/cgroup's path */
	int		 fd;		/* our end; -1: not connected */
	int		 dfd;		/* the daemon's end (its conn's fd) */
	int		 sent;		/* packets sent since the daemon's last
					   round */
	int		 slow;		/* replies are read only when asked */
	uint8_t		 seqs[32];	/* seqs below 256 sent on it */
	uint32_t	 bigseq[8];	/* larger seqs sent (raw packets) */
	size_t		 nbigseq;
	uint8_t		 last[FZ_PKT_MAX];	/* the last packet, for BURST */
	size_t		 lastlen;
	uint64_t	 excess[FZ_MAXDEV];	/* fz.excess, of this
						   connection's client */
	uint32_t	 move_id;	/* the last MOVE read on it */
	uint32_t	 move_dir;
};

struct fz_world {
	struct arbiter	 a;
	struct fz_proc	 procs[FZ_NPROCS];
	struct fz_slot	 slots[FZ_NSLOTS];
	struct fz_bare	 bare[FZ_NBARE];
	int		 devset;	/* FZ_WORLD_DEVS */
	int		 nvml;		/* NVML present */
	int		 ckpt;		/* checkpoint API present */
	const char	*input_name;	/* the replay's file, for messages */
	int		 trace;		/* FUZZ_TRACE: ops and replies on
					   stderr */
	/*
	 * What the input made the daemon charge whatever the limits
	 * (invariants.c: fz_note_sent), per device, saturating; and why a
	 * device, or a client, may hold more than its capacity, or limit,
	 * by any amount in this input (a reload, a limit lowered), or NULL.
	 */
	uint64_t	 excess[FZ_MAXDEV];
	const char	*recapacitied;
	const char	*relimited;
};

extern struct fz_world fz;

/* A finding: say what, name the input, abort (a crash to the fuzzer). */
void	fz_fail(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

/* configs.c */
void	fz_scratch_init(void);
void	fz_scratch_remove(void);
const char *fz_variant_path(unsigned variant);
unsigned fz_nvariants(void);
const char *fz_state_path(void);
int	fz_bogus_fd(void);

/* fakes.c */
void	fz_clock_start(void);
void	fz_clock_stop(void);
void	fz_clock_advance(uint64_t ms);
uint64_t fz_clock_now(void);
void	fz_fakes_active(int on);
int	fz_fakes_used(void);

/* peers.c */
void	fz_peers_init(void);
void	fz_peers_free(void);
struct fz_proc *fz_proc_of_pid(uint32_t pid);
int	fz_proc_alive(const struct fz_proc *p);
int	fz_slot_send(struct fz_slot *s, const void *pkt, size_t len,
	    int passfd);
int	fz_proc_page(struct fz_proc *p);
void	fz_slot_close(struct fz_slot *s);
void	fz_proc_exit(struct fz_proc *p);
/* One reply waiting on s, checked, into m (if not NULL): 1, 0 none yet,
 * -1 the daemon hung up (the slot closed). */
int	fz_slot_recv(struct fz_slot *s, struct gf_msg *m);
int	fz_drain(struct fz_slot *s);
void	fz_drain_all(void);
int	fz_daemon_busy(void);
void	fz_reap_killed(void);

/* harness.c */
int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void	fz_round(void);
void	fz_settle(void);

/* liars.c: FUZZ_TARGET=liar */
int	fz_liar_one(const uint8_t *data, size_t size);
void	fz_world_up(uint8_t w, const char *conf_path);
void	fz_world_down(void);
const char *fz_liar_variant_path(void);

/* invariants.c */
void	fz_check(const struct arbiter *a);
void	fz_check_empty(const struct arbiter *a);
void	fz_note_sent(struct fz_slot *s, const void *pkt, size_t len);

#endif
