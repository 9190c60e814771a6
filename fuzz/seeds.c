/*
 * The fuzzer's seed corpus: seeds DIR writes one input per scenario into
 * DIR (make fuzz-seeds: fuzz/corpus), each a conversation the daemon is
 * built for, in the format of fuzz_input.h, for the fuzzer to mutate
 * from. The files are committed; run it again after a change of the
 * format or the protocol, and commit what changed.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../daemon/overhead.h"
#include "fuzz_input.h"
#include "gpufrac/activity.h"
#include "proto.h"

#define MiB		(1ull << 20)
#define GiB		(1ull << 30)
#define PTR(n)		(0x7f0000000000ull + (uint64_t)(n) * GiB)
/* An 8-byte word of the activity page, for FZ_OP_PAGE. */
#define WORD(field)	(offsetof(struct gf_activity, field) / 8)

/* The slots (fuzz_input.h). */
enum { A, B, C, D, A2, SELF, ADMIN, CTL };

struct seed {
	uint8_t		 buf[8192];
	size_t		 n;
	const char	*dir;
	int		 defer;		/* the next op leaves the daemon alone */
};

static void
put(struct seed *s, const void *p, size_t n)
{
	if (s->n + n > sizeof(s->buf)) {
		fprintf(stderr, "seeds: a seed too long\n");
		exit(1);
	}
	memcpy(s->buf + s->n, p, n);
	s->n += n;
}

static void
put8(struct seed *s, unsigned v)
{
	uint8_t b = (uint8_t)v;

	put(s, &b, 1);
}

static void
begin(struct seed *s, unsigned conf, unsigned devs, unsigned flags)
{
	s->n = 0;
	put8(s, conf | flags | devs << 4);
}

static void
finish(struct seed *s, const char *name)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", s->dir, name);
	if ((fp = fopen(path, "wb")) == NULL ||
	    fwrite(s->buf, 1, s->n, fp) != s->n || fclose(fp) != 0) {
		fprintf(stderr, "seeds: cannot write '%s': %s\n", path,
		    strerror(errno));
		exit(1);
	}
}

/* An op without operands, and one with one operand byte. */
static void
op0(struct seed *s, unsigned opcode, unsigned slot)
{
	put8(s, FZ_OPBYTE(opcode, slot) | (s->defer ? FZ_DEFER : 0));
	s->defer = 0;
}

static void
op(struct seed *s, unsigned opcode, unsigned slot, unsigned arg)
{
	op0(s, opcode, slot);
	put8(s, arg);
}

static void
msg(struct seed *s, unsigned slot, uint16_t type, unsigned seq,
    const void *payload)
{
	ssize_t size = proto_payload_size(type);

	op0(s, FZ_OP_MSG, slot);
	put8(s, type);
	put8(s, seq);
	put(s, payload, size > 0 ? (size_t)size : 0);
}

/* SWAP_IN, in its full form: why the process asks (GF_SWAPIN_*). */
static void
swap_in(struct seed *s, unsigned slot, unsigned seq, uint32_t reason)
{
	struct gf_swap_in q;

	memset(&q, 0, sizeof(q));
	q.reason = reason;
	msg(s, slot, GF_MSG_SWAP_IN, seq, &q);
}

static void
page(struct seed *s, unsigned slot, size_t word, uint64_t v)
{
	op(s, FZ_OP_PAGE, slot, (unsigned)word);
	put(s, &v, sizeof(v));
}

static void
hello(struct seed *s, unsigned slot, int with_page)
{
	struct gf_hello h;

	memset(&h, 0, sizeof(h));
	h.priority = INT32_MIN;
	h.resolver = GF_UNSET;
	h.wait_timeout_ms = GF_UNSET;
	proto_strlcpy(h.version, "fuzz", sizeof(h.version));
	if (with_page) {
		op(s, FZ_OP_MSGFD, slot, 1);
		put8(s, GF_MSG_HELLO);
		put8(s, 1);
		put(s, &h, sizeof(h));
	} else
		msg(s, slot, GF_MSG_HELLO, 1, &h);
}

static void
open_dev(struct seed *s, unsigned slot, int dev, uint32_t kind,
    uint64_t value)
{
	struct gf_device_open o;

	memset(&o, 0, sizeof(o));
	memset(o.uuid, FZ_UUID_BYTE(dev), GF_UUID_LEN);
	o.ordinal = (uint32_t)dev;
	o.limit_kind = kind;
	o.limit_value = value;
	msg(s, slot, GF_MSG_DEVICE_OPEN, 2, &o);
}

static void
reserve(struct seed *s, unsigned slot, int dev, uint64_t size,
    uint32_t flags, unsigned seq)
{
	struct gf_reserve r;

	memset(&r, 0, sizeof(r));
	memset(r.uuid, FZ_UUID_BYTE(dev), GF_UUID_LEN);
	r.size = size;
	r.kind = GF_KIND_MEM;
	r.flags = flags;
	msg(s, slot, GF_MSG_RESERVE, seq, &r);
}

static void
commit(struct seed *s, unsigned slot, int dev, uint64_t ptr,
    uint64_t reserved, uint64_t size, uint32_t kind)
{
	struct gf_commit c;

	memset(&c, 0, sizeof(c));
	memset(c.uuid, FZ_UUID_BYTE(dev), GF_UUID_LEN);
	c.ptr = ptr;
	c.reserved = reserved;
	c.size = size;
	c.kind = kind;
	msg(s, slot, GF_MSG_COMMIT, 0, &c);
}

/* RESERVE and COMMIT of an allocation of size at ptr. */
static void
alloc(struct seed *s, unsigned slot, int dev, uint64_t ptr, uint64_t size)
{
	reserve(s, slot, dev, size, 0, 3);
	commit(s, slot, dev, ptr, size, size, GF_KIND_MEM);
}

static void
rollback(struct seed *s, unsigned slot, int dev, uint64_t size)
{
	struct gf_rollback r;

	memset(&r, 0, sizeof(r));
	memset(r.uuid, FZ_UUID_BYTE(dev), GF_UUID_LEN);
	r.size = size;
	msg(s, slot, GF_MSG_ROLLBACK, 0, &r);
}

static void
free_ptr(struct seed *s, unsigned slot, uint64_t ptr)
{
	struct gf_free f = { ptr };

	msg(s, slot, GF_MSG_FREE, 0, &f);
}

static void
lease_msg(struct seed *s, unsigned slot, uint16_t type, int dev,
    uint64_t size)
{
	struct gf_lease l;

	memset(&l, 0, sizeof(l));
	memset(l.uuid, FZ_UUID_BYTE(dev), GF_UUID_LEN);
	l.size = size;
	msg(s, slot, type, 0, &l);
}

static void
query(struct seed *s, unsigned slot, uint16_t type, uint32_t a, uint32_t b)
{
	uint32_t payload[2] = { a, b };

	msg(s, slot, type, 9, payload);
}

static void
group_set(struct seed *s, const char *name, const char *rule,
    uint64_t limit, uint32_t resolver, uint32_t flags)
{
	struct gf_group_rule r;
	struct gf_group_set g;

	memset(&g, 0, sizeof(g));
	proto_strlcpy(g.name, name, sizeof(g.name));
	if (rule != NULL) {
		memset(&r, 0, sizeof(r));
		proto_strlcpy(r.rule, rule, sizeof(r.rule));
		msg(s, ADMIN, GF_MSG_GROUP_RULE, 10, &r);
		g.nrules = 1;
	}
	g.limit_kind = limit ? GF_LIMIT_BYTES : GF_LIMIT_NONE;
	g.limit_value = limit;
	g.guarantee_kind = GF_LIMIT_NONE;
	g.resolver = resolver;
	g.on_preempt = GF_UNSET;
	g.wait_timeout_ms = GF_UNSET;
	g.flags = flags;
	msg(s, ADMIN, GF_MSG_GROUP_SET, 11, &g);
}

static void
tick(struct seed *s, unsigned step)
{
	op(s, FZ_OP_TICK, 0, step);
}

/* A client with a device open: HELLO (with its page) and DEVICE_OPEN. */
static void
client(struct seed *s, unsigned slot, int dev)
{
	hello(s, slot, 1);
	open_dev(s, slot, dev, GF_LIMIT_NONE, 0);
}

/* The shim's whole conversation, and the queries about it. */
static void
seed_basic(struct seed *s)
{
	begin(s, 0, 0, 0);
	client(s, A, 0);
	reserve(s, A, 0, GiB, GF_RESERVE_LEASE, 3);
	commit(s, A, 0, PTR(1), GiB, GiB, GF_KIND_MEM);
	reserve(s, A, 0, 256 * MiB, 0, 4);
	rollback(s, A, 0, 256 * MiB);
	query(s, CTL, GF_MSG_STATUS_REQ, 0, 0);
	query(s, CTL, GF_MSG_PS_REQ, 0, 0);
	query(s, CTL, GF_MSG_ALLOCS_REQ, FZ_PID(1), 0);
	client(s, B, 0);
	alloc(s, B, 0, PTR(2), 14 * GiB);
	reserve(s, A, 0, 2 * GiB, 0, 5);
	free_ptr(s, A, PTR(1));
	lease_msg(s, A, GF_MSG_LEASE_RETURN, 0, 4 * MiB);
	op0(s, FZ_OP_EXIT, A);
	finish(s, "basic");
}

/* The wait resolver: woken by a free, then a deadline. */
static void
seed_wait(struct seed *s)
{
	begin(s, 1, 1, 0);
	client(s, SELF, 0);
	alloc(s, SELF, 0, PTR(1), 3 * GiB);
	client(s, B, 0);
	alloc(s, B, 0, PTR(2), GiB);
	reserve(s, B, 0, GiB, 0, 5);
	free_ptr(s, SELF, PTR(1));
	commit(s, B, 0, PTR(3), GiB, GiB, GF_KIND_MEM);
	free_ptr(s, B, PTR(3));
	alloc(s, SELF, 0, PTR(4), 3 * GiB);
	reserve(s, B, 0, GiB, 0, 6);
	tick(s, 3);
	query(s, ADMIN, GF_MSG_EVENTS_REQ, 0, 0);
	finish(s, "wait");
}

/* Preemption: SIGTERM, SIGKILL after kill_grace, the memory comes back. */
static void
seed_preempt(struct seed *s)
{
	begin(s, 1, 1, 0);
	client(s, D, 0);
	alloc(s, D, 0, PTR(1), 3 * GiB);
	client(s, A, 0);
	reserve(s, A, 0, 2 * GiB, 0, 7);
	tick(s, 5);
	commit(s, A, 0, PTR(2), 2 * GiB, 2 * GiB, GF_KIND_MEM);
	query(s, CTL, GF_MSG_PS_REQ, 0, 0);
	finish(s, "preempt");
}

/*
 * The swap resolver: an idle process out to host memory, and back when it
 * asks; then a preemption that swaps (variant 2's groups).
 */
static void
seed_swap(struct seed *s)
{
	begin(s, 2, 1, FZ_WORLD_CKPT);
	client(s, A, 0);
	alloc(s, A, 0, PTR(1), GiB);
	client(s, B, 0);
	alloc(s, B, 0, PTR(1), GiB);
	tick(s, 3);
	client(s, CTL, 0);
	reserve(s, CTL, 0, 2 * GiB, 0, 8);
	commit(s, CTL, 0, PTR(2), 2 * GiB, 2 * GiB, GF_KIND_MEM);
	swap_in(s, A, 12, GF_SWAPIN_CALL);
	free_ptr(s, CTL, PTR(2));
	tick(s, 3);
	query(s, ADMIN, GF_MSG_STATUS_REQ, 0, 0);
	client(s, C, 0);
	reserve(s, C, 0, 2 * GiB, 0, 9);
	tick(s, 3);
	swap_in(s, A, 13, GF_SWAPIN_UNSEEN);
	op0(s, FZ_OP_EXIT, C);
	tick(s, 3);
	finish(s, "swap");
}

/* An administrator swaps a process by hand; the driver refuses a lock. */
static void
seed_swap_admin(struct seed *s)
{
	begin(s, 0, 0, FZ_WORLD_CKPT);
	client(s, A, 0);
	alloc(s, A, 0, PTR(1), GiB);
	query(s, ADMIN, GF_MSG_SWAP_REQ, FZ_PID(1), GF_SWAP_OUT);
	alloc(s, A, 0, PTR(2), GiB);
	query(s, ADMIN, GF_MSG_SWAP_REQ, FZ_PID(1), GF_SWAP_IN);
	op(s, FZ_OP_CKPT, A, FZ_CKPT_LOCK_FAILS);
	query(s, ADMIN, GF_MSG_SWAP_REQ, FZ_PID(1), GF_SWAP_OUT);
	op(s, FZ_OP_CKPT, B, 3 << 4);	/* left checkpointed */
	client(s, B, 1);
	swap_in(s, B, 12, GF_SWAPIN_CALL);
	query(s, CTL, GF_MSG_SWAP_REQ, FZ_PID(2), GF_SWAP_OUT);
	finish(s, "swap-admin");
}

/* Run-time groups, limits, reloads, the decision log followed. */
static void
seed_admin(struct seed *s)
{
	struct gf_limit_req lr;
	struct gf_group_rm rm;

	begin(s, 0, 0, 0);
	query(s, CTL, GF_MSG_EVENTS_REQ, 1, 0);
	query(s, ADMIN, GF_MSG_RELOAD_REQ, 0, 0);
	group_set(s, "jobb", "cgroup:/fuzz.slice/job-b.scope", GiB,
	    GF_RESOLVER_WAIT, 0);
	client(s, B, 0);
	reserve(s, B, 0, 2 * GiB, 0, 3);
	alloc(s, B, 0, PTR(1), 512 * MiB);
	memset(&lr, 0, sizeof(lr));
	lr.pid = FZ_PID(2);
	lr.index = GF_UNSET;
	lr.limit_kind = GF_LIMIT_BYTES;
	lr.limit_value = 768 * MiB;
	msg(s, ADMIN, GF_MSG_LIMIT_REQ, 13, &lr);
	msg(s, CTL, GF_MSG_LIMIT_REQ, 13, &lr);
	group_set(s, "jobb", NULL, 0, GF_RESOLVER_FAIL, 0);
	memset(&rm, 0, sizeof(rm));
	proto_strlcpy(rm.name, "jobb", sizeof(rm.name));
	msg(s, ADMIN, GF_MSG_GROUP_RM, 14, &rm);
	op(s, FZ_OP_HUP, 0, 1);
	op(s, FZ_OP_HUP, 0, 4);
	op(s, FZ_OP_HUP, 0, 5);
	query(s, CTL, GF_MSG_RELOAD_REQ, 0, 0);
	finish(s, "admin");
}

/* Leases: granted, drawn from in the page, returned, idle, restored. */
static void
seed_lease(struct seed *s)
{
	begin(s, 0, 0, 0);
	client(s, A, 0);
	reserve(s, A, 0, MiB, GF_RESERVE_LEASE, 3);
	commit(s, A, 0, PTR(1), MiB, MiB, GF_KIND_MEM);
	page(s, A, WORD(lease[0].avail), MiB);
	page(s, A, WORD(lease[0].draws), 5);
	reserve(s, A, 0, 2 * MiB, GF_RESERVE_LEASE, 4);
	commit(s, A, 0, PTR(2), 2 * MiB, 2 * MiB, GF_KIND_MEM);
	page(s, A, WORD(lease[0].avail), GF_LEASE_CLOSED | MiB);
	lease_msg(s, A, GF_MSG_LEASE_RETURN, 0, 3 * MiB);
	tick(s, 3);
	tick(s, 3);
	query(s, CTL, GF_MSG_STATUS_REQ, 0, 0);
	lease_msg(s, A, GF_MSG_LEASE_RESTORE, 0, 8 * MiB);
	lease_msg(s, A, GF_MSG_LEASE_RESTORE, 0, 8 * MiB);
	finish(s, "lease");
}

/* A process whose connection closed re-registers what it holds. */
static void
seed_reregister(struct seed *s)
{
	begin(s, 0, 0, 0);
	client(s, SELF, 0);
	reserve(s, SELF, 0, 64 * MiB, GF_RESERVE_LEASE, 3);
	commit(s, SELF, 0, PTR(1), 64 * MiB, 64 * MiB, GF_KIND_MEM);
	op0(s, FZ_OP_CLOSE, SELF);
	query(s, CTL, GF_MSG_PS_REQ, 0, 0);
	client(s, SELF, 0);
	commit(s, SELF, 0, PTR(1), 0, 64 * MiB, GF_KIND_MEM);
	lease_msg(s, SELF, GF_MSG_LEASE_RESTORE, 0, 4 * MiB);
	op0(s, FZ_OP_EXIT, SELF);
	finish(s, "reregister");
}

/* Malformed, unknown and out-of-order packets: each closes its own. */
static void
seed_garbage(struct seed *s)
{
	struct gf_hdr h = { GF_PROTO_VERSION, GF_MSG_STATUS_REQ, 16, 5, 0 };
	uint8_t big[300];

	begin(s, 0, 0, 0);
	op(s, FZ_OP_RAW, A, 8);
	put8(s, 0);
	put(s, &h, 8);
	h.version = 9;
	op(s, FZ_OP_RAW, B, sizeof(h));
	put8(s, 0);
	put(s, &h, sizeof(h));
	h.version = GF_PROTO_VERSION;
	h.len = 17;
	op(s, FZ_OP_RAW, C, sizeof(h));
	put8(s, 0);
	put(s, &h, sizeof(h));
	memset(big, 0, sizeof(big));
	op(s, FZ_OP_RAW, D, sizeof(big) & 0xff);
	put8(s, sizeof(big) >> 8);
	put(s, big, sizeof(big));
	reserve(s, CTL, 0, GiB, 0, 3);
	hello(s, A2, 0);
	hello(s, A2, 0);
	msg(s, B, GF_MSG_HELLO_OK, 1, (uint32_t[]){ 0, 0 });
	msg(s, C, 99, 1, NULL);
	op(s, FZ_OP_MSGLEN, D, GF_PROTO_VERSION);
	put8(s, GF_MSG_HELLO);
	put8(s, 1);
	put8(s, 16);
	put(s, big, 16);
	op(s, FZ_OP_MSGLEN, C, GF_PROTO_VERSION + 1);
	put8(s, GF_MSG_HELLO);
	put8(s, 2);
	put8(s, 40);
	put(s, big, 40);
	op(s, FZ_OP_MSGFD, SELF, 0);
	put8(s, GF_MSG_STATUS_REQ);
	put8(s, 2);
	op(s, FZ_OP_RAW, CTL, 0);
	put8(s, 0);
	query(s, CTL, GF_MSG_STATUS_REQ, 0, 0);
	finish(s, "garbage");
}

/* Context memory measured with NVML, and a client that forges it. */
static void
seed_nvml(struct seed *s)
{
	begin(s, 0, 0, FZ_WORLD_NVML);
	op(s, FZ_OP_NVML, A, 0);
	put(s, (uint32_t[]){ 300 }, 4);
	client(s, A, 0);
	alloc(s, A, 0, PTR(1), GiB);
	tick(s, 3);
	op(s, FZ_OP_NVML, A, 0);
	put(s, (uint32_t[]){ 1124 }, 4);
	tick(s, 3);
	query(s, CTL, GF_MSG_ALLOCS_REQ, FZ_PID(1), 0);
	commit(s, A, 0, OVERHEAD_KEY(0), 0, MiB, GF_KIND_CONTEXT);
	finish(s, "nvml");
}

/*
 * A process without a connection (FZ_OP_BARE): which of them (0: uid
 * 2000, default group; 1 and 2: uids 2001 and 2002, group cap of
 * variants 1 and 3; 3: root), what happens (kind), on which device, MiB.
 */
static void
bare(struct seed *s, unsigned which, unsigned kind, unsigned dev,
    uint32_t mib)
{
	op(s, FZ_OP_BARE, which, kind);
	put8(s, dev);
	put(s, &mib, sizeof(mib));
}

/*
 * Group cap (1 GiB, unshimmed = kill): two processes without the shim
 * within it together, past the daemon's first seconds' grace; the
 * second grows past the group's limit (it, the newest, goes, not the
 * first); the first then grows past it alone, and goes too.
 */
static void
seed_bare_kill(struct seed *s)
{
	begin(s, 1, 0, FZ_WORLD_NVML);
	bare(s, 1, 0, 0, 400);
	tick(s, 3);
	bare(s, 2, 0x10, 0, 400);
	tick(s, 4);
	tick(s, 4);
	tick(s, 4);
	bare(s, 2, 0x10, 0, 800);
	tick(s, 3);
	tick(s, 3);
	bare(s, 1, 0, 0, 1200);
	tick(s, 3);
	tick(s, 3);
	finish(s, "bare-kill");
}

/*
 * Lives of processes without the shim (variant 2: unshimmed = kill in
 * the daemon, root's in group batch): each reason procid gives, growth,
 * shrinking, an exit whose memory NVML lists a while, a pid reused at
 * once, and a shimmed client beside them.
 */
static void
seed_bare_lives(struct seed *s)
{
	begin(s, 2, 0, FZ_WORLD_NVML);
	client(s, A, 0);
	alloc(s, A, 0, PTR(1), GiB);
	bare(s, 0, 0x20, 0, 300);
	bare(s, 3, 0x30, 1, 200);
	tick(s, 3);
	bare(s, 0, 0x20, 1, 100);
	bare(s, 0, 0x20, 0, 50);
	tick(s, 4);
	bare(s, 0, 3, 0, 0);
	tick(s, 3);
	bare(s, 0, 0, 0, 0);
	tick(s, 3);
	bare(s, 1, 0x40, 0, 100);
	tick(s, 3);
	bare(s, 1, 0x12, 0, 200);
	tick(s, 3);
	bare(s, 3, 1, 0, 0);
	tick(s, 5);
	finish(s, "bare-lives");
}

/* A guarantee lent to a borrower, taken back when its owner asks. */
static void
seed_lend(struct seed *s)
{
	begin(s, 1, 0, 0);
	client(s, B, 0);
	alloc(s, B, 0, PTR(1), 7 * GiB);
	client(s, SELF, 0);
	alloc(s, SELF, 0, PTR(2), 8 * GiB);
	query(s, CTL, GF_MSG_STATUS_REQ, 0, 0);
	client(s, A, 0);
	reserve(s, A, 0, 3 * GiB, 0, 5);
	tick(s, 5);
	op0(s, FZ_OP_EXIT, B);
	commit(s, A, 0, PTR(3), 3 * GiB, 3 * GiB, GF_KIND_MEM);
	finish(s, "lend");
}

/* A group's shared limit: the second request waits for the first's free. */
static void
seed_group_limit(struct seed *s)
{
	begin(s, 3, 0, 0);
	client(s, A, 0);
	alloc(s, A, 0, PTR(1), 2 * GiB);
	client(s, B, 0);
	reserve(s, B, 0, 2 * GiB, 0, 4);
	free_ptr(s, A, PTR(1));
	client(s, CTL, 0);
	reserve(s, CTL, 0, 2 * MiB, 0, 5);
	finish(s, "group-limit");
}

/* A peer that does not read: the daemon queues its replies. */
static void
seed_slow(struct seed *s)
{
	begin(s, 0, 0, 0);
	op0(s, FZ_OP_SLOW, CTL);
	query(s, CTL, GF_MSG_EVENTS_REQ, 1, 0);
	query(s, CTL, GF_MSG_STATUS_REQ, 0, 0);
	op(s, FZ_OP_BURST, CTL, 255);
	client(s, A, 0);
	alloc(s, A, 0, PTR(1), GiB);
	op0(s, FZ_OP_DRAIN, CTL);
	put8(s, FZ_OPBYTE(FZ_OP_MSG, A) | FZ_DEFER);
	put8(s, GF_MSG_STATUS_REQ);
	put8(s, 6);
	op(s, FZ_OP_BURST, A, 100);
	finish(s, "slow");
}

/*
 * Peers gone before the daemon's answer reaches them: a waiter granted
 * and a follower told of the grant in the round their hang-ups arrive.
 */
static void
seed_gone(struct seed *s)
{
	begin(s, 1, 1, 0);
	query(s, CTL, GF_MSG_EVENTS_REQ, 1, 0);
	client(s, SELF, 0);
	alloc(s, SELF, 0, PTR(1), 3 * GiB);
	client(s, B, 0);
	alloc(s, B, 0, PTR(2), GiB);
	reserve(s, B, 0, GiB, 0, 5);
	s->defer = 1;
	free_ptr(s, SELF, PTR(1));
	s->defer = 1;
	op0(s, FZ_OP_CLOSE, B);
	s->defer = 1;
	op0(s, FZ_OP_CLOSE, CTL);
	tick(s, 0);
	query(s, ADMIN, GF_MSG_PS_REQ, 0, 0);
	finish(s, "gone");
}

/*
 * The two kinds no other seed sends: a context's end gives its memory
 * back (CTX_END), and MOVEDs no move waits for, one giving back kept
 * host memory (GF_SWAP_DROP).
 */
static void
seed_ctx_moved(struct seed *s)
{
	struct gf_ctx_end e;
	struct gf_moved m;

	begin(s, 0, 0, FZ_WORLD_CKPT);
	client(s, A, 0);
	alloc(s, A, 0, PTR(1), GiB);
	alloc(s, A, 0, PTR(2), 64 * MiB);
	memset(&e, 0, sizeof(e));
	memset(e.uuid, FZ_UUID_BYTE(0), GF_UUID_LEN);
	e.bytes = 64 * MiB;
	e.count = 1;
	msg(s, A, GF_MSG_CTX_END, 0, &e);
	memset(&m, 0, sizeof(m));
	m.direction = GF_SWAP_OUT;
	m.id = 1;
	m.moved = GiB;
	m.kept = GiB;
	msg(s, A, GF_MSG_MOVED, 0, &m);
	m.direction = GF_SWAP_DROP;
	m.kept = 0;
	msg(s, A, GF_MSG_MOVED, 0, &m);
	query(s, CTL, GF_MSG_PS_REQ, 0, 0);
	finish(s, "ctx-moved");
}

/* A swap-in the driver refuses, tried again a second later. */
static void
seed_swap_retry(struct seed *s)
{
	begin(s, 0, 1, FZ_WORLD_CKPT);
	client(s, A, 0);
	alloc(s, A, 0, PTR(1), GiB);
	query(s, ADMIN, GF_MSG_SWAP_REQ, FZ_PID(1), GF_SWAP_OUT);
	op(s, FZ_OP_CKPT, A, FZ_CKPT_RESTORE_FAILS);
	swap_in(s, A, 12, GF_SWAPIN_UNSEEN);
	tick(s, 3);
	op(s, FZ_OP_CKPT, A, 0);
	tick(s, 3);
	query(s, CTL, GF_MSG_PS_REQ, 0, 0);
	finish(s, "swap-retry");
}

/* No GPU at all; then three, one of them all reserved (variant 7). */
static void
seed_devices(struct seed *s)
{
	begin(s, 0, 3, 0);
	client(s, A, 0);
	reserve(s, A, 0, MiB, 0, 3);
	query(s, CTL, GF_MSG_STATUS_REQ, 0, 0);
	finish(s, "no-devices");
	begin(s, 2, 2, FZ_WORLD_CKPT | FZ_WORLD_NVML);
	op(s, FZ_OP_HUP, 0, 7);
	client(s, C, 0);
	reserve(s, C, 0, MiB, 0, 3);
	open_dev(s, C, 2, GF_LIMIT_PERCENT, 9000);
	alloc(s, C, 2, PTR(1), 20 * GiB);
	query(s, CTL, GF_MSG_STATUS_REQ, 0, 0);
	finish(s, "three-devices");
}

/* A transient run-time group goes when its cgroup does. */
static void
seed_reap(struct seed *s)
{
	begin(s, 0, 0, 0);
	group_set(s, "gone", "cgroup:/fuzz.slice/gone.scope", GiB,
	    GF_UNSET, GF_GROUP_TRANSIENT);
	tick(s, 4);
	tick(s, 4);
	query(s, CTL, GF_MSG_STATUS_REQ, 0, 0);
	finish(s, "reap");
}

int
main(int argc, char *argv[])
{
	static struct seed s;

	if (argc != 2) {
		fprintf(stderr, "usage: seeds directory\n");
		return 2;
	}
	s.dir = argv[1];
	seed_basic(&s);
	seed_wait(&s);
	seed_preempt(&s);
	seed_swap(&s);
	seed_swap_admin(&s);
	seed_admin(&s);
	seed_lease(&s);
	seed_reregister(&s);
	seed_garbage(&s);
	seed_nvml(&s);
	seed_bare_kill(&s);
	seed_bare_lives(&s);
	seed_lend(&s);
	seed_group_limit(&s);
	seed_slow(&s);
	seed_devices(&s);
	seed_reap(&s);
	seed_gone(&s);
	seed_swap_retry(&s);
	seed_ctx_moved(&s);
	return 0;
}
