/*
 * The gpufrac wire protocol: what libgpufrac.so, gpufracctl and gpufracd say
 * to each other over the daemon's SOCK_SEQPACKET Unix socket.
 *
 * One message per packet: a fixed header, then exactly one payload struct
 * whose size the type fixes. Fields are fixed-width little-endian integers
 * and fixed-size NUL-terminated strings; the structs below have no implicit
 * padding (checked at compile time). A receiver validates a packet with
 * proto_check() (common/proto.h) before it reads the payload; a packet that
 * fails closes that one connection.
 *
 * Conversation of a CUDA process (the shim), after connect:
 *   HELLO            -> HELLO_OK | ERROR         once per connection
 *   DEVICE_OPEN      -> DEVICE_INFO | ERROR      once per device it uses
 *   RESERVE          -> [WAIT] GRANT | DENY      before each driver allocation
 *   COMMIT                                       after the driver call succeeded
 *   ROLLBACK                                     after it failed
 *   FREE                                         after a successful free
 *   LEASE_RETURN                                 freed memory drawn from a
 *                                                closed lease (activity.h)
 *   LEASE_RESTORE                                a lease held from an earlier
 *                                                connection (re-registration)
 *   SWAP_IN          -> [WAIT] OK | ERROR        before a driver call while
 *                                                swapped out (activity.h);
 *                                                or when a thread waits in
 *                                                the driver where no hook
 *                                                sees it (its reason)
 *   MOVED                                        the copy engine's swap,
 *                                                asked for by MOVE, is done
 * The daemon says unasked (seq 0): DEVICE_INFO (a new limit), and MOVE:
 * the copy engine (swap_engine = copy) asks the shim, which it has marked
 * swapped out (activity.h), to move its memory to host or back; the shim
 * answers MOVED with what it moved, what stayed, and how long it took.
 * COMMIT with reserved == 0 charges an allocation that already exists: the
 * shim re-registers its live allocations this way after a daemon restart,
 * and its leases with LEASE_RESTORE. A RESERVE with GF_RESERVE_LEASE may
 * come back with a lease: the GRANT says its size, the daemon has already
 * put it in the activity page, and allocations that fit it are never
 * sent (include/gpufrac/activity.h).
 * WAIT says the request is queued (the wait resolver): GRANT or DENY follows
 * when it is served or within WAIT's timeout. Other requests of the same
 * connection may be sent and answered meanwhile; replies carry their
 * request's seq. HELLO carries, as SCM_RIGHTS, the client's activity page
 * (include/gpufrac/activity.h): without it the process is never swapped.
 *
 * Queries (gpufracctl): lists are streamed as N records and an END message
 * that carries N.
 *   STATUS_REQ       -> STATUS, DEVICE_STATUS x N, DEVICE_END,
 *                       GROUP_STATUS x M, GROUP_END  (one per group+device)
 *   PS_REQ           -> CLIENT x N, CLIENT_END   (one CLIENT per pid+device)
 *   WALLS_REQ        -> WALL x N, WALL_END       the driver's walls in
 *                                                force, read back from it
 *   ALLOCS_REQ       -> ALLOC x N, ALLOC_END | ERROR
 *   EVENTS_REQ       -> EVENT x N, EVENT_END; with follow set, then EVENT
 *                       as decisions happen, until the peer hangs up
 *   RELOAD_REQ       -> OK | ERROR               (root and admin_group only)
 *   SWAP_REQ         -> OK | ERROR               (root and admin_group only;
 *                                                OK once the swap is done)
 *   GROUP_RULE x N, GROUP_SET -> OK | ERROR      create or change a run-time
 *                                                group (admin only): the N
 *                                                rules sent just before it
 *                                                replace its rules
 *   GROUP_RM         -> OK | ERROR               remove one (admin only)
 *   LIMIT_REQ        -> OK | ERROR               one process's limit (admin
 *                                                only)
 *   DISCONNECT_REQ   -> OK | ERROR               close one process's
 *                                                connections (admin only)
 *
 * Replies echo the request's seq. Identity (pid, uid, gid, cgroup) is taken
 * from the kernel (SO_PEERCRED), never from a message.
 *
 * Versions. hdr.version is GF_PROTO_VERSION, which changes only with a
 * change that is not compatible. A compatible change keeps it: a new
 * message type, or a payload that grows at its end by fields whose zero
 * means what senders without them meant. A receiver takes a type's first,
 * shorter size as well as its current one, and proto_recv() reads the
 * missing fields as zero: a daemon serves the shims of earlier releases
 * that speak its protocol version. A shim or gpufracctl newer than its
 * daemon may send what the daemon cannot read: upgrade the daemon first.
 * (HELLO and CLIENT grew so, by a version string each: their first sizes
 * were 16 and 120 bytes; SWAP_IN grew from nothing by its reason, and a
 * shim sends it so, with no payload, for the reason 0 that is all an
 * older daemon knows; DEVICE_INFO grew from 64 bytes by taken, whose 0
 * says that nothing but the client's own limit bounds it; MOVED grew
 * from 160 bytes by kept and pinned, whose 0s say no host memory is kept;
 * STATUS grew by swap_host_kept; EVENT from 176 bytes by reason_more,
 * where a longer reason goes on; GROUP_STATUS from 104 bytes by
 * swap_engine, whose 0 is the checkpoint engine, the only one before;
 * DEVICE_STATUS from 168 bytes by driver_limits, whose 0 says nothing;
 * GROUP_SET from 88 bytes by owner_uid and owner_gid, which only the flag
 * GF_GROUP_OWNER makes read.)
 * Across protocol versions, three things never change, so that any two
 * ends can tell each other that they cannot talk: the header, the numbers
 * of HELLO and ERROR, and ERROR's payload. A daemon answers a HELLO of a
 * version it does not speak with ERROR GF_ERR_VERSION in its own version,
 * saying which it speaks, and hangs up; proto_check() accepts a HELLO of
 * any version (of which only the header may be read) and an ERROR of any
 * version for that.
 */
#ifndef GPUFRAC_PROTO_H
#define GPUFRAC_PROTO_H

#include <stdint.h>

/* The socket never leaves the host, so both ends share its byte order; the
 * format is defined as little-endian and we only build where that is native. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
    "gpufrac's wire format is little-endian");

#define GF_PROTO_VERSION	1
#define GF_MSG_MAX		256	/* no packet is longer than this */
#define GF_SOCKET_DEFAULT	"/run/gpufrac/gpufrac.sock"

#define GF_UUID_LEN		16
#define GF_NAME_LEN		64	/* device name */
#define GF_GROUP_LEN		32	/* group name */
#define GF_GROUP_DEFAULT	"default"	/* limits per process */
#define GF_ERRMSG_LEN		224
#define GF_VERSION_LEN		16
#define GF_RULE_LEN		232	/* one match rule, "cgroup:/..." */
#define GF_GROUP_RULES_MAX	16	/* rules of one GROUP_SET */

struct gf_hdr {
	uint16_t	version;	/* GF_PROTO_VERSION */
	uint16_t	type;		/* GF_MSG_* */
	uint32_t	len;		/* header + payload, == packet size */
	uint32_t	seq;		/* chosen by the requester, echoed in replies */
	uint32_t	zero;		/* must be 0 */
};

enum {
	/* shim -> daemon */
	GF_MSG_HELLO = 1,
	GF_MSG_DEVICE_OPEN,
	GF_MSG_RESERVE,
	GF_MSG_COMMIT,
	GF_MSG_ROLLBACK,
	GF_MSG_FREE,
	GF_MSG_SWAP_IN,
	GF_MSG_LEASE_RETURN,
	GF_MSG_LEASE_RESTORE,
	GF_MSG_CTX_END,
	GF_MSG_MOVED,
	/* gpufracctl -> daemon */
	GF_MSG_STATUS_REQ = 32,
	GF_MSG_PS_REQ,
	GF_MSG_ALLOCS_REQ,
	GF_MSG_EVENTS_REQ,
	GF_MSG_RELOAD_REQ,
	GF_MSG_SWAP_REQ,
	GF_MSG_GROUP_RULE,
	GF_MSG_GROUP_SET,
	GF_MSG_GROUP_RM,
	GF_MSG_LIMIT_REQ,
	GF_MSG_WALLS_REQ,
	GF_MSG_DISCONNECT_REQ,
	/* daemon -> peer */
	GF_MSG_HELLO_OK = 64,
	GF_MSG_DEVICE_INFO,
	GF_MSG_GRANT,
	GF_MSG_DENY,
	GF_MSG_ERROR,
	GF_MSG_STATUS,
	GF_MSG_DEVICE_STATUS,
	GF_MSG_DEVICE_END,
	GF_MSG_CLIENT,
	GF_MSG_CLIENT_END,
	GF_MSG_ALLOC,
	GF_MSG_ALLOC_END,
	GF_MSG_WAIT,
	GF_MSG_GROUP_STATUS,
	GF_MSG_GROUP_END,
	GF_MSG_EVENT,
	GF_MSG_EVENT_END,
	GF_MSG_OK,
	GF_MSG_MOVE,
	GF_MSG_WALL,
	GF_MSG_WALL_END,
};

#define GF_UNSET		0xffffffffu	/* "not requested" in a u32 field */

/* How a limit is expressed (GPUFRAC_MEMORY_LIMIT, default_limit = ...). */
enum {
	GF_LIMIT_NONE = 0,
	GF_LIMIT_BYTES,		/* value in bytes */
	GF_LIMIT_PERCENT,	/* value in hundredths of a percent: 5000 = 50% */
};

/* What kind of memory an allocation is. */
enum {
	GF_KIND_MEM = 1,	/* cuMemAlloc */
	GF_KIND_PITCH,		/* cuMemAllocPitch */
	GF_KIND_MANAGED,	/* cuMemAllocManaged */
	GF_KIND_ARRAY,		/* cuArrayCreate, cuArray3DCreate,
				   cuMipmappedArrayCreate */
	GF_KIND_VMM,		/* cuMemCreate */
	GF_KIND_POOL,		/* a stream-ordered pool's reserve */
	GF_KIND_CONTEXT,	/* what NVML sees a process hold beyond its
				   allocations: contexts, code (daemon's) */
};

enum {
	GF_RESOLVER_FAIL = 0,
	GF_RESOLVER_WAIT,
	GF_RESOLVER_PREEMPT,
	GF_RESOLVER_SWAP,
};

/* Why a RESERVE was denied. */
enum {
	GF_DENY_LIMIT = 1,	/* beyond the requester's own limit */
	GF_DENY_DEVICE_FULL,	/* within the limit, but the device is full */
	GF_DENY_UNKNOWN_DEVICE,	/* DEVICE_OPEN was not accepted */
};

/* ERROR codes. */
enum {
	GF_ERR_NO_SUCH_PID = 1,
	GF_ERR_UNKNOWN_DEVICE,
	GF_ERR_PERMISSION,
	GF_ERR_STATE,		/* request not valid in this connection's state */
	GF_ERR_CONFIG,		/* a reload found the configuration bad */
	GF_ERR_SWAP,		/* a swap could not be done */
	GF_ERR_GROUP,		/* a group change was refused */
	GF_ERR_NO_SUCH_GROUP,	/* GROUP_RM: no such run-time group */
	GF_ERR_VERSION,		/* HELLO of a protocol version not spoken:
				   the header says the daemon's */
};

/*
 * SWAP_REQ's direction, and MOVE's. MOVE alone may also say GF_SWAP_DROP:
 * give back the pinned host memory kept for the next move out (it is
 * sent only to a shim whose MOVED said it keeps some).
 */
enum {
	GF_SWAP_OUT = 1,
	GF_SWAP_IN,
	GF_SWAP_DROP,
};

/* What happens to a preempted group's processes. */
enum {
	GF_PREEMPT_SWAP = 0,
	GF_PREEMPT_KILL,
	GF_PREEMPT_NONE,
};

/* Decisions the daemon reports as events. */
enum {
	GF_EV_GRANT = 1,
	GF_EV_DENY,
	GF_EV_WAIT,
	GF_EV_WAKE,
	GF_EV_TIMEOUT,
	GF_EV_PREEMPT,
	GF_EV_KILL,
	GF_EV_SWAP_OUT,		/* moved to host memory */
	GF_EV_SWAP_IN,		/* back on the device */
	GF_EV_SWAP_SKIP,	/* a swap that was not done, and why */
	GF_EV_FALLBACK,		/* swap unavailable: wait or kill instead */
	GF_EV_LEND,		/* a grant used another group's unused
				   guarantee */
	GF_EV_RECLAIM,		/* a group takes its lent guarantee back */
	GF_EV_RELEASED,		/* a departed process's memory is back in
				   the driver */
	GF_EV_DRIVER_KEPT,	/* ... or was not, within release_timeout:
				   its charge goes all the same */
	GF_EV_DRIVER_OOM,	/* the driver refused a granted request */
	GF_EV_CTX_END,		/* a context's end gave its memory back */
	GF_EV_CONN_LIMIT,	/* a connection refused or closed for a
				   limit (max_connections_per_uid,
				   output_queue_limit): of no client */
	GF_EV_REFUSED,		/* a client's word refused (a charge past
				   its limits that NVML does not show it
				   holding): its connection closed */
	GF_EV_PAST_LIMIT,	/* ... or believed past its limits, as
				   NVML shows it holding */
	GF_EV_DRIVER_LIMIT,	/* the driver's memory limit of a group's
				   cgroup could not be set or cleared */
	GF_EV_UNSHIMMED,	/* a process NVML shows holding memory,
				   without the shim, first seen */
	GF_EV_UNSHIMMED_KILL,	/* ... killed for passing its limits */
	GF_EV_REGROUPED,	/* a process's uid, gid or cgroup changed:
				   it moved to the group it now matches */
	GF_EV_UNRECORDED,	/* an earlier daemon's record of what a
				   process was granted is not believed:
				   its word weighed by the old rules */
};

#define GF_REASON_LEN		96
#define GF_REASON_MORE_LEN	64	/* an event's reason: 95 + 63 chars */
#define GF_DLIM_REASON_LEN	48	/* why the driver's limits are off */

enum {
	GF_STATE_RUNNING = 0,
	GF_STATE_WAITING,
	GF_STATE_SWAPPED,
	GF_STATE_RELEASING,	/* exited; the driver has not given its
				   memory back yet */
	GF_STATE_UNSHIMMED,	/* holds device memory without the shim:
				   NVML's figure, charged, never swapped */
};

struct gf_hello {
	int32_t		priority;	/* requested priority, or INT32_MIN */
	uint32_t	resolver;	/* GF_RESOLVER_*, or GF_UNSET */
	uint32_t	wait_timeout_ms; /* or GF_UNSET */
	uint32_t	zero;
	char		version[GF_VERSION_LEN];	/* the shim's release,
					   "1.2.3"; "": a shim too old to say */
};

struct gf_hello_ok {
	uint32_t	pid;		/* the pid the daemon sees for this peer */
	uint32_t	zero;
};

struct gf_device_open {
	uint8_t		uuid[GF_UUID_LEN];
	uint32_t	ordinal;	/* the device's index in this process */
	uint32_t	limit_kind;	/* GF_LIMIT_*: what the process asks for */
	uint64_t	limit_value;
};

struct gf_device_info {
	uint8_t		uuid[GF_UUID_LEN];
	uint64_t	limit;		/* this client's effective limit, bytes */
	uint64_t	capacity;	/* the device's shareable bytes */
	uint64_t	used;		/* this client's charge on the device,
					   less its lease's unused part */
	uint64_t	overhead;	/* of it, the "context" charge */
	uint64_t	group_limit;	/* what its group may hold (a default-
					   group client: its own limit) */
	uint64_t	group_used;	/* and holds (its own charge), leases'
					   unused parts aside */
	uint64_t	taken;		/* of min(limit, capacity), what the
					   others hold: its group's other
					   members, other groups, memory
					   gpufrac does not know; leases'
					   unused parts count as free. What
					   it may hold is min(limit, capacity)
					   - taken, whatever it holds itself */
};

/* RESERVE's flags. */
#define GF_RESERVE_LEASE	0x1u	/* of a kind drawn from leases: the
					   daemon may grant one with it */
#define GF_RESERVE_DRIVER_OOM	0x2u	/* the driver refused this request
					   once granted: a collision,
					   whatever the ledger says */

struct gf_reserve {
	uint8_t		uuid[GF_UUID_LEN];
	uint64_t	size;
	uint32_t	kind;		/* GF_KIND_* */
	uint32_t	flags;		/* GF_RESERVE_* */
};

struct gf_grant {
	uint64_t	used;		/* the client's charge after the grant,
					   its lease included */
	uint64_t	limit;
	uint64_t	lease;		/* its lease on the device now */
};

/* LEASE_RETURN and LEASE_RESTORE. */
struct gf_lease {
	uint8_t		uuid[GF_UUID_LEN];
	uint64_t	size;		/* returned; or the lease held */
};

struct gf_deny {
	uint32_t	cuda_error;	/* the CUresult the shim returns */
	uint32_t	reason;		/* GF_DENY_* */
	uint64_t	used;
	uint64_t	limit;
};

struct gf_commit {
	uint8_t		uuid[GF_UUID_LEN];
	uint64_t	ptr;
	uint64_t	reserved;	/* what RESERVE charged; 0 = re-registration */
	uint64_t	size;		/* what the allocation really holds */
	uint32_t	kind;
	uint32_t	zero;
};

struct gf_rollback {
	uint8_t		uuid[GF_UUID_LEN];
	uint64_t	size;		/* the RESERVE being returned */
};

struct gf_free {
	uint64_t	ptr;
};

/*
 * CTX_END: a context of the process ended (cuCtxDestroy, a primary
 * context's reset or last release) and with it count allocations of
 * bytes on the device, whose FREEs (those not drawn from a lease) came
 * just before. Said for the decision log; no reply.
 */
struct gf_ctx_end {
	uint8_t		uuid[GF_UUID_LEN];
	uint64_t	bytes;
	uint32_t	count;
	uint32_t	zero;
};

struct gf_allocs_req {
	uint32_t	pid;
	uint32_t	zero;
};

struct gf_status {
	char		version[GF_VERSION_LEN];	/* daemon version */
	uint32_t	pid;
	uint32_t	nclients;
	uint32_t	ndevices;
	uint32_t	swap_available;	/* 1: host swap works */
	uint64_t	uptime_ms;
	char		swap_reason[GF_REASON_LEN];	/* why not, or "" */
	/* grown (a compatible change): */
	uint32_t	swap_engine;	/* GF_ENGINE_*: [daemon]'s */
	uint32_t	zero;
	uint64_t	swap_host_limit; /* 0: none */
	uint64_t	swap_host_used;	/* held by processes swapped out,
					   and kept (swap_host_kept) */
	uint64_t	swap_host_kept;	/* of which: kept pinned by processes
					   that are in, for their next move
					   out (the copy engine) */
};

struct gf_device_status {
	uint8_t		uuid[GF_UUID_LEN];
	char		name[GF_NAME_LEN];
	uint32_t	index;		/* the driver's ordinal, all devices visible */
	uint32_t	zero;
	uint64_t	total;		/* as the driver reports */
	uint64_t	reserve;	/* kept back by configuration */
	uint64_t	capacity;	/* total - reserve: shareable */
	uint64_t	used;		/* charged to clients, on the device */
	uint64_t	host;		/* swapped out to host memory */
	uint64_t	leased;		/* of used, leased and not allocated */
	uint32_t	nclients;
	uint32_t	zero2;
	uint64_t	lent;		/* of the groups' unused guarantees,
					   what others hold (borrowed) */
	uint64_t	foreign;	/* held by no client (other programs:
					   those without the shim are clients,
					   GF_STATE_UNSHIMMED, where /proc
					   shows who they are) */
	uint64_t	releasing;	/* of used, departed processes' memory
					   the driver has not given back */
	/* grown (a compatible change): the driver's own memory limits per
	   cgroup (r615), which the daemon sets for cgroup groups */
	uint32_t	driver_limits;	/* GF_DLIM_*; 0: not said (older) */
	uint32_t	driver_groups;	/* groups whose limits it holds */
	char		driver_reason[GF_DLIM_REASON_LEN]; /* why off, or "" */
};

enum {
	GF_DLIM_OFF = 1,
	GF_DLIM_ON,
};

struct gf_client {
	uint32_t	pid;
	uint32_t	uid;
	uint32_t	gid;
	uint32_t	state;		/* GF_STATE_* */
	int32_t		priority;	/* its group's */
	uint32_t	record;		/* which process of pid: the same for
					   its records of one listing, another
					   for a departed one's (issue 39) */
	char		group[GF_GROUP_LEN];
	uint8_t		uuid[GF_UUID_LEN];
	uint64_t	used;		/* on the device */
	uint64_t	limit;
	uint64_t	guarantee;
	uint64_t	host;		/* swapped out to host memory */
	uint64_t	idle_ms;	/* since its last driver call; or
					   UINT64_MAX: unknown */
	uint64_t	leased;		/* of used, leased and not allocated */
	char		version[GF_VERSION_LEN];	/* its shim's release
					   (HELLO's), or "" */
};

struct gf_alloc {
	uint8_t		uuid[GF_UUID_LEN];
	uint64_t	ptr;
	uint64_t	size;
	uint64_t	age_ms;
	uint32_t	kind;
	uint32_t	zero;
};

struct gf_end {
	uint32_t	count;		/* records streamed before this */
	uint32_t	zero;
};

#define GF_WAIT_FOREVER		0xfffffffeu	/* a WAIT with no deadline */

struct gf_wait {
	uint32_t	timeout_ms;	/* the longest it will wait, or GF_WAIT_FOREVER */
	uint32_t	zero;
};

/* Why a process asks to come back (SWAP_IN). */
enum {
	GF_SWAPIN_CALL = 0,	/* a hooked driver call waits for it */
	GF_SWAPIN_UNSEEN,	/* a thread waits inside the driver, reached
				   where no hook sees it (libgpufrac.7) */
};

/* How a process is swapped (swap_engine). */
enum {
	GF_ENGINE_CHECKPOINT = 0,	/* the driver's checkpoint API */
	GF_ENGINE_COPY,			/* the shim copies its own memory */
};

#define GF_MOVED_DEVICES	8	/* device ordinals MOVED tells of */
#define GF_MOVED_WHAT_LEN	64

/*
 * MOVE: move this process's memory to host (GF_SWAP_OUT) or back, or give
 * back the host memory kept for moving it (GF_SWAP_DROP).
 */
struct gf_move {
	uint32_t	direction;	/* GF_SWAP_OUT, GF_SWAP_IN, GF_SWAP_DROP */
	uint32_t	id;		/* this move's, MOVED says it back
					   (activity.h: the swapped mark) */
};

/* MOVED: the answer. */
struct gf_moved {
	uint32_t	direction;
	uint32_t	result;		/* CUresult: CUDA_SUCCESS, or the
					   failed call's (nothing moved) */
	uint64_t	moved;		/* bytes copied out (or in) */
	uint64_t	duration_us;
	uint64_t	stayed[GF_MOVED_DEVICES]; /* bytes left on the device,
					   per device ordinal */
	uint32_t	nstayed;	/* allocations left on the device */
	uint32_t	id;		/* the MOVE's it answers */
	char		what[GF_MOVED_WHAT_LEN]; /* what stayed, or the failed
					   call ("cuMemHostAlloc") */
	/* grown (a compatible change): */
	uint64_t	kept;		/* pinned host memory the process
					   holds for moves now: out, its
					   contents; in, kept for the next
					   move out (0: none, as a shim
					   that frees it at once says) */
	uint64_t	pinned;		/* of it, pinned by this move */
};

struct gf_swap_in {
	uint32_t	reason;		/* GF_SWAPIN_* */
	uint32_t	zero;
};

struct gf_swap_req {
	uint32_t	pid;
	uint32_t	direction;	/* GF_SWAP_OUT or GF_SWAP_IN */
};

/* GROUP_RULE: one of the rules of the GROUP_SET that follows. */
struct gf_group_rule {
	char		rule[GF_RULE_LEN];	/* "cgroup:GLOB", "uid:N", ... */
};

/*
 * GROUP_SET: create the run-time group name, or change it. What is unset
 * (kind GF_LIMIT_NONE, GF_UNSET, priority_set 0) keeps its value, or for a
 * new group takes [daemon]'s default. A new group needs rules.
 */
struct gf_group_set {
	char		name[GF_GROUP_LEN];
	uint32_t	nrules;		/* GROUP_RULEs just before; 0: keep */
	uint32_t	limit_kind;	/* GF_LIMIT_*; NONE: unchanged */
	uint64_t	limit_value;
	uint32_t	guarantee_kind;	/* GF_LIMIT_*; NONE: unchanged */
	uint32_t	priority_set;	/* 1: priority is given */
	uint64_t	guarantee_value; /* bytes 0: no guarantee */
	int32_t		priority;
	uint32_t	resolver;	/* GF_RESOLVER_*, or GF_UNSET */
	uint32_t	on_preempt;	/* GF_PREEMPT_*, or GF_UNSET */
	uint32_t	wait_timeout_ms; /* or GF_UNSET */
	uint32_t	flags;		/* GF_GROUP_* to set */
	uint32_t	zero;
	uint32_t	owner_uid;	/* with GF_GROUP_OWNER: the job's user */
	uint32_t	owner_gid;	/* and primary group */
};

/*
 * A transient group lives as long as the cgroups its rules name: the
 * daemon removes it once none of them exists and it has no process (a
 * container whose runtime never ran its poststop hook).
 */
#define GF_GROUP_TRANSIENT	0x1u

/*
 * What a container or job asked for, passed on by its launcher (the OCI
 * hook, the Slurm plugin), as opposed to an administrator's word: the
 * daemon holds the settings to its [jobs] caps; they replace an existing
 * group's whole (what is unset takes [daemon]'s default, not the old
 * value); and a group whose rules are not these rules -- another
 * container's or step's -- is refused, never replaced. A daemon without
 * this flag refuses it ("bad flags"): nothing passes uncapped.
 */
#define GF_GROUP_JOB		0x2u

/*
 * The group's processes that hold device memory without the shim are
 * killed when past its limits (gpufrac.conf's unshimmed = kill). A
 * daemon without this flag refuses it ("bad flags").
 */
#define GF_GROUP_UNSHIMMED_KILL	0x4u

/*
 * owner_uid and owner_gid are given: the user a job's processes run as,
 * as its launcher knows it from what the job cannot write (the OCI
 * container's process user mapped to the host, the Slurm job's uid).
 * The daemon bounds a GF_GROUP_JOB by the [group] that user's processes
 * in the job's cgroup would match without it, and refuses a job without
 * an owner. A daemon without this flag refuses it ("bad flags").
 */
#define GF_GROUP_OWNER		0x8u

/* gf_group_status.runtime of a run-time group that did not fit at start. */
#define GF_GROUP_ASIDE		2u

struct gf_group_rm {
	char		name[GF_GROUP_LEN];
};

/* LIMIT_REQ: pid's limit on one device (index or uuid), or on all. */
struct gf_limit_req {
	uint32_t	pid;
	uint32_t	index;		/* the device's index (status), or
					   GF_UNSET: by uuid, or all */
	uint8_t		uuid[GF_UUID_LEN];	/* all zero: none */
	uint32_t	limit_kind;	/* GF_LIMIT_BYTES or _PERCENT */
	uint32_t	zero;
	uint64_t	limit_value;
};

/*
 * DISCONNECT_REQ: close pid's connections, as a lost one is closed (its
 * process keeps what it was granted, and re-registers it on its next).
 */
struct gf_disconnect_req {
	uint32_t	pid;
	uint32_t	zero;
};

struct gf_events_req {
	uint32_t	follow;		/* 1: keep streaming new events */
	uint32_t	zero;
};

struct gf_group_status {
	char		name[GF_GROUP_LEN];
	uint8_t		uuid[GF_UUID_LEN];
	uint64_t	limit;		/* the group's, on this device */
	uint64_t	guarantee;
	uint64_t	used;		/* by all its processes */
	int32_t		priority;
	uint32_t	resolver;	/* GF_RESOLVER_* */
	uint32_t	on_preempt;	/* GF_PREEMPT_* */
	uint32_t	nclients;
	uint32_t	runtime;	/* 1: made at run time (GROUP_SET);
					   GF_GROUP_ASIDE: saved, set aside
					   at start (no device, not in
					   force) */
	uint32_t	zero;
	uint64_t	borrowed;	/* of the device's lent memory, what
					   this group holds */
	/* grown (a compatible change): */
	uint32_t	swap_engine;	/* GF_ENGINE_*: its processes' */
	uint32_t	zero2;
};

struct gf_event {
	uint64_t	time_ms;	/* wall clock, ms since the epoch */
	uint32_t	pid;
	uint32_t	kind;		/* GF_EV_* */
	char		group[GF_GROUP_LEN];
	uint8_t		uuid[GF_UUID_LEN];
	uint64_t	bytes;
	char		reason[GF_REASON_LEN];	/* one line, for humans */
	uint32_t	duration_ms;	/* of a swap; else 0 */
	uint32_t	zero;
	/* grown (a compatible change): */
	char		reason_more[GF_REASON_MORE_LEN]; /* the rest of a reason
					   longer than reason holds; "" */
};

struct gf_error {
	uint32_t	code;		/* GF_ERR_* */
	char		msg[GF_ERRMSG_LEN];	/* one line, NUL-terminated */
	uint32_t	zero;
};

#define GF_WALL_DIR_LEN		160	/* a cgroup directory, its end kept */

/*
 * WALL: one of the driver's memory limits per cgroup (r615) that the
 * daemon set or found journalled, as the driver reads it back now.
 */
struct gf_wall {
	uint8_t		uuid[GF_UUID_LEN];	/* the device */
	uint64_t	soft;		/* as the driver says them */
	uint64_t	hard;
	uint64_t	used;		/* what the cgroup holds there */
	uint32_t	read;		/* 1: read back; 0: the driver would
					   not say (the fields above 0) */
	uint32_t	zero;
	char		group[GF_GROUP_LEN];	/* whose; "(journal)": found
					   in the journal, no group's yet */
	char		dir[GF_WALL_DIR_LEN];	/* "..." then its end when
					   longer */
};

/* One received or outgoing packet. */
struct gf_msg {
	struct gf_hdr	hdr;
	union {
		struct gf_hello		hello;
		struct gf_hello_ok	hello_ok;
		struct gf_device_open	device_open;
		struct gf_device_info	device_info;
		struct gf_reserve	reserve;
		struct gf_grant		grant;
		struct gf_lease		lease;
		struct gf_deny		deny;
		struct gf_commit	commit;
		struct gf_rollback	rollback;
		struct gf_free		free;
		struct gf_ctx_end	ctx_end;
		struct gf_allocs_req	allocs_req;
		struct gf_status	status;
		struct gf_device_status	device_status;
		struct gf_client	client;
		struct gf_alloc		alloc;
		struct gf_end		end;
		struct gf_error		error;
		struct gf_wait		wait;
		struct gf_events_req	events_req;
		struct gf_swap_in	swap_in;
		struct gf_swap_req	swap_req;
		struct gf_move		move;
		struct gf_moved		moved;
		struct gf_group_rule	group_rule;
		struct gf_group_set	group_set;
		struct gf_group_rm	group_rm;
		struct gf_limit_req	limit_req;
		struct gf_disconnect_req disconnect_req;
		struct gf_group_status	group_status;
		struct gf_event		event;
		struct gf_wall		wall;
		uint8_t			raw[GF_MSG_MAX - sizeof(struct gf_hdr)];
	} u;
};

_Static_assert(sizeof(struct gf_hdr) == 16, "gf_hdr layout");
_Static_assert(sizeof(struct gf_hello) == 32, "gf_hello layout");
_Static_assert(sizeof(struct gf_device_open) == 32, "gf_device_open layout");
_Static_assert(sizeof(struct gf_device_info) == 72, "gf_device_info layout");
_Static_assert(sizeof(struct gf_reserve) == 32, "gf_reserve layout");
_Static_assert(sizeof(struct gf_grant) == 24, "gf_grant layout");
_Static_assert(sizeof(struct gf_lease) == 24, "gf_lease layout");
_Static_assert(sizeof(struct gf_deny) == 24, "gf_deny layout");
_Static_assert(sizeof(struct gf_commit) == 48, "gf_commit layout");
_Static_assert(sizeof(struct gf_rollback) == 24, "gf_rollback layout");
_Static_assert(sizeof(struct gf_ctx_end) == 32, "gf_ctx_end layout");
_Static_assert(sizeof(struct gf_status) == 168, "gf_status layout");
_Static_assert(sizeof(struct gf_move) == 8, "gf_move layout");
_Static_assert(sizeof(struct gf_moved) == 176, "gf_moved layout");
_Static_assert(sizeof(struct gf_device_status) == 224, "gf_device_status layout");
_Static_assert(sizeof(struct gf_client) == 136, "gf_client layout");
_Static_assert(sizeof(struct gf_group_status) == 112, "gf_group_status layout");
_Static_assert(sizeof(struct gf_event) == 240, "gf_event layout");
_Static_assert(sizeof(struct gf_swap_in) == 8, "gf_swap_in layout");
_Static_assert(sizeof(struct gf_swap_req) == 8, "gf_swap_req layout");
_Static_assert(sizeof(struct gf_group_rule) == GF_RULE_LEN, "gf_group_rule layout");
_Static_assert(sizeof(struct gf_group_set) == 96, "gf_group_set layout");
_Static_assert(sizeof(struct gf_group_rm) == GF_GROUP_LEN, "gf_group_rm layout");
_Static_assert(sizeof(struct gf_limit_req) == 40, "gf_limit_req layout");
_Static_assert(sizeof(struct gf_disconnect_req) == 8, "gf_disconnect_req layout");
_Static_assert(sizeof(struct gf_alloc) == 48, "gf_alloc layout");
_Static_assert(sizeof(struct gf_error) == 232, "gf_error layout");
_Static_assert(sizeof(struct gf_wall) == 240, "gf_wall layout");
_Static_assert(sizeof(struct gf_msg) == GF_MSG_MAX, "gf_msg layout");

#endif
