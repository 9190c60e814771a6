/*
 * The liar target (FUZZ_TARGET=liar, issue 32): peers that speak the
 * protocol well and lie in it -- COMMITs of what they never reserved,
 * re-registrations of what they never held, leases returned and restored
 * that were never lent, CTX_ENDs, MOVEDs unasked or false, activity pages
 * that say anything -- beside one honest peer, on a 4 GiB device in the
 * configuration fz_liar_variant_path names (configs.c). Every op is a
 * well-formed message: what is fuzzed is its figures. Beyond fz_check's
 * invariants, after every op:
 *  - an honest peer's grants are unchanged by any liar: each request it
 *    makes within its group's guarantee is granted at once;
 *  - no tally passes what the machine has: a device's charges (on it, and
 *    swapped out) its memory; the host's (swapped out and kept) twice
 *    the devices' memory (what is out, and as much kept for moves).
 * The liars hold nothing NVML would show; the honest peer holds what it
 * allocated.
 *
 * Input: a world byte (bit 0: NVML is there), then ops, each a byte,
 * (op << 2) | liar (slots 1 to 3, the liars' group; 3 reads as 1), then
 * its operands. A figure is a byte: below LIAR_NVALS one of vals[], else
 * the 8 bytes that follow. Operands missing at the end read as zeros.
 */
#include <stdio.h>
#include <string.h>

#include "../daemon/swap.h"
#include "fuzz.h"
#include "proto.h"

#define MiB		(1ull << 20)
#define GiB		(1ull << 30)
#define LIAR_DEVSET	1		/* fakes.c: one GPU of 4 GiB */
#define HONEST_SLOT	0
#define HONEST_GUARANTEE (1 * GiB)	/* the variant's 25% */
#define HONEST_MAX	8		/* allocations it holds at most */
#define HONEST_PTR	0x7e0000000000ull

/* Figures worth lying with. */
static const uint64_t vals[] = {
	0, 1, 4096, MiB, 64 * MiB, 256 * MiB, 1 * GiB, 3 * GiB, 4 * GiB,
	4 * GiB + 1, 1ull << 62, 1ull << 63, UINT64_MAX, UINT64_MAX - 4095,
	0x7f0000000000ull, 1ull << 60,
};
#define LIAR_NVALS	(sizeof(vals) / sizeof(vals[0]))

enum {
	LO_HELLO, LO_RESERVE, LO_COMMIT, LO_FREE, LO_ROLLBACK,
	LO_LEASE_RETURN, LO_LEASE_RESTORE, LO_CTX_END, LO_MOVED, LO_SWAP_IN,
	LO_PAGE, LO_TICK, LO_CLOSE, LO_EXIT, LO_HONEST, LO_REREG,
	LO_NOPS
};

struct cur {
	const uint8_t	*p;
	size_t		 n, off;
};

/* The honest peer: what it holds, and where. */
static struct {
	uint64_t	 size[HONEST_MAX];
	uint64_t	 ptr[HONEST_MAX];
	size_t		 n;
	uint64_t	 held;
	unsigned	 step;
	uint32_t	 seq;
} honest;

static uint8_t
get8(struct cur *c)
{
	return c->off < c->n ? c->p[c->off++] : 0;
}

static uint64_t
get64(struct cur *c)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v |= (uint64_t)get8(c) << (8 * i);
	return v;
}

static uint64_t
val(struct cur *c)
{
	uint8_t b = get8(c);

	return b < LIAR_NVALS ? vals[b] : get64(c);
}

static const uint8_t *
uuid0(void)
{
	return fz.a.ledger.devices[0].uuid;
}

/* Send type with payload on s (connecting it first); its seq. */
static uint32_t
say(struct fz_slot *s, uint16_t type, const void *payload, int passfd)
{
	static uint32_t seq;
	struct gf_msg m;
	ssize_t len;

	seq = seq % 200 + 1;
	if ((len = proto_pack(&m, type, seq, payload)) < 0)
		fz_fail("cannot pack %s", proto_type_name(type));
	if (fz.trace)
		fprintf(stderr, "  slot %d -> %s seq %u: %016llx %016llx "
		    "%016llx %016llx\n", (int)(s - fz.slots),
		    proto_type_name(type), seq,
		    (unsigned long long)m.u.commit.ptr,
		    (unsigned long long)m.u.commit.reserved,
		    (unsigned long long)m.u.commit.size,
		    (unsigned long long)*(const uint64_t *)(const void *)
		    m.u.raw);
	(void)fz_slot_send(s, &m, (size_t)len, passfd);
	return seq;
}

/* HELLO, and the device opened with the limit asked for (kind, value). */
static void
introduce(struct fz_slot *s, int passfd, uint32_t kind, uint64_t value)
{
	struct gf_device_open o;
	struct gf_hello h;

	memset(&h, 0, sizeof(h));
	h.priority = INT32_MIN;
	h.resolver = GF_UNSET;
	h.wait_timeout_ms = GF_UNSET;
	(void)say(s, GF_MSG_HELLO, &h, passfd);
	memset(&o, 0, sizeof(o));
	memcpy(o.uuid, uuid0(), GF_UUID_LEN);
	o.limit_kind = kind;
	o.limit_value = value;
	(void)say(s, GF_MSG_DEVICE_OPEN, &o, -1);
}

/*
 * The reply to seq on the honest slot (its replies are read here, not by
 * fz_drain_all: it is "slow"), what the daemon told it unasked aside.
 */
static struct gf_msg
honest_reply(uint32_t seq, const char *what)
{
	struct fz_slot *h = &fz.slots[HONEST_SLOT];
	struct gf_msg m;

	fz_settle();
	for (;;) {
		switch (fz_slot_recv(h, &m)) {
		case 1:
			if (m.hdr.seq == seq)
				return m;
			continue;
		case 0:
			fz_fail("the honest peer's %s was not answered", what);
		default:
			fz_fail("the daemon hung up on the honest peer's %s",
			    what);
		}
	}
}

static void
honest_connect(void)
{
	struct fz_slot *h = &fz.slots[HONEST_SLOT];
	struct gf_device_open o;
	struct gf_hello hello;
	struct gf_msg m;
	uint32_t seq;

	h->slow = 1;
	memset(&hello, 0, sizeof(hello));
	hello.priority = INT32_MIN;
	hello.resolver = GF_UNSET;
	hello.wait_timeout_ms = GF_UNSET;
	seq = say(h, GF_MSG_HELLO, &hello, -1);
	if ((m = honest_reply(seq, "HELLO")).hdr.type != GF_MSG_HELLO_OK)
		fz_fail("the honest peer's HELLO was answered %s",
		    proto_type_name(m.hdr.type));
	memset(&o, 0, sizeof(o));
	memcpy(o.uuid, uuid0(), GF_UUID_LEN);
	seq = say(h, GF_MSG_DEVICE_OPEN, &o, -1);
	if ((m = honest_reply(seq, "DEVICE_OPEN")).hdr.type !=
	    GF_MSG_DEVICE_INFO)
		fz_fail("the honest peer's DEVICE_OPEN was answered %s",
		    proto_type_name(m.hdr.type));
}

/* What NVML shows of the honest peer: what it allocated. */
static void
honest_nvml(void)
{
	if (fz.nvml)
		fz.slots[HONEST_SLOT].proc->nvml[0] = honest.held;
}

static void
honest_free_oldest(void)
{
	struct fz_slot *h = &fz.slots[HONEST_SLOT];
	struct gf_free f;

	memset(&f, 0, sizeof(f));
	f.ptr = honest.ptr[0];
	(void)say(h, GF_MSG_FREE, &f, -1);
	honest.held -= honest.size[0];
	honest.n--;
	memmove(honest.size, honest.size + 1, honest.n * sizeof(uint64_t));
	memmove(honest.ptr, honest.ptr + 1, honest.n * sizeof(uint64_t));
	honest_nvml();
	fz_settle();
}

/*
 * One step of the honest peer: an allocation within its guarantee, which
 * must be granted at once whatever the liars did, else its oldest freed.
 */
static void
honest_step(void)
{
	static const uint64_t sizes[] = { 256 * MiB, 128 * MiB, 512 * MiB,
	    64 * MiB };
	struct fz_slot *h = &fz.slots[HONEST_SLOT];
	uint64_t size = sizes[honest.step++ % 4];
	struct gf_reserve r;
	struct gf_commit cm;
	struct gf_msg m;
	uint32_t seq;

	if (h->fd < 0)
		honest_connect();
	if (honest.held + size > HONEST_GUARANTEE || honest.n == HONEST_MAX) {
		honest_free_oldest();
		return;
	}
	memset(&r, 0, sizeof(r));
	memcpy(r.uuid, uuid0(), GF_UUID_LEN);
	r.size = size;
	r.kind = GF_KIND_MEM;
	seq = say(h, GF_MSG_RESERVE, &r, -1);
	m = honest_reply(seq, "RESERVE");
	if (m.hdr.type != GF_MSG_GRANT)
		fz_fail("an honest RESERVE of %llu bytes within its "
		    "guarantee (holding %llu) was answered %s: a liar took "
		    "it", (unsigned long long)size,
		    (unsigned long long)honest.held,
		    proto_type_name(m.hdr.type));
	memset(&cm, 0, sizeof(cm));
	memcpy(cm.uuid, uuid0(), GF_UUID_LEN);
	cm.ptr = HONEST_PTR + (uint64_t)honest.step * GiB;
	cm.reserved = size;
	cm.size = size;
	cm.kind = GF_KIND_MEM;
	(void)say(h, GF_MSG_COMMIT, &cm, -1);
	honest.size[honest.n] = size;
	honest.ptr[honest.n++] = cm.ptr;
	honest.held += size;
	honest_nvml();
	fz_settle();
}

/* No tally passes what the machine has. */
static void
liar_check(void)
{
	const struct ledger *l = &fz.a.ledger;
	uint64_t whole = 0, host;
	size_t d;

	for (d = 0; d < l->ndevices; d++) {
		const struct ledger_device *dv = &l->devices[d];

		if (dv->used > dv->total || dv->host > dv->total ||
		    dv->used + dv->host < dv->used)
			fz_fail("device %zu counts %llu used and %llu on host "
			    "of its %llu", d, (unsigned long long)dv->used,
			    (unsigned long long)dv->host,
			    (unsigned long long)dv->total);
		whole += dv->total;
	}
	if ((host = swap_host_used(&fz.a)) > 2 * whole)
		fz_fail("the host counts %llu bytes swapped out and kept, of "
		    "devices of %llu", (unsigned long long)host,
		    (unsigned long long)whole);
}

static void
lie_commit(struct fz_slot *s, struct cur *c)
{
	struct gf_commit cm;

	memset(&cm, 0, sizeof(cm));
	memcpy(cm.uuid, uuid0(), GF_UUID_LEN);
	cm.ptr = val(c);
	cm.reserved = val(c);
	cm.size = val(c);
	cm.kind = get8(c) % 8;
	(void)say(s, GF_MSG_COMMIT, &cm, -1);
}

/* What a shim re-registering with a new daemon says, made up. */
static void
lie_rereg(struct fz_slot *s, struct cur *c)
{
	struct gf_commit cm;
	struct gf_lease q;
	unsigned i, n = get8(c) % 4;

	fz_slot_close(s);
	introduce(s, get8(c) & 1 ? fz_proc_page(s->proc) : -1, GF_LIMIT_NONE,
	    0);
	for (i = 0; i <= n; i++) {
		memset(&cm, 0, sizeof(cm));
		memcpy(cm.uuid, uuid0(), GF_UUID_LEN);
		cm.ptr = 0x7f0000000000ull + i * GiB;
		cm.size = val(c);
		cm.kind = GF_KIND_MEM;
		(void)say(s, GF_MSG_COMMIT, &cm, -1);
	}
	memset(&q, 0, sizeof(q));
	memcpy(q.uuid, uuid0(), GF_UUID_LEN);
	q.size = val(c);
	(void)say(s, GF_MSG_LEASE_RESTORE, &q, -1);
}

static void
lie_moved(struct fz_slot *s, struct cur *c)
{
	struct gf_moved mv;
	uint8_t how = get8(c);

	memset(&mv, 0, sizeof(mv));
	/* Answering what was asked, or not. */
	mv.direction = how & 1 ? s->move_dir : get8(c) % 4;
	mv.id = how & 2 ? s->move_id : (uint32_t)val(c);
	mv.result = how & 4 ? 0 : get8(c);
	mv.moved = val(c);
	mv.duration_us = val(c);
	mv.stayed[0] = val(c);
	mv.stayed[get8(c) % GF_MOVED_DEVICES] = val(c);
	mv.nstayed = (uint32_t)val(c);
	mv.kept = val(c);
	mv.pinned = val(c);
	(void)say(s, GF_MSG_MOVED, &mv, -1);
}

static void
lie_lease(struct fz_slot *s, uint16_t type, uint64_t size)
{
	struct gf_lease q;

	memset(&q, 0, sizeof(q));
	memcpy(q.uuid, uuid0(), GF_UUID_LEN);
	q.size = size;
	(void)say(s, type, &q, -1);
}

static void
lie_page(struct fz_slot *s, struct cur *c)
{
	size_t words = sizeof(struct gf_activity) / sizeof(uint64_t);
	size_t off = get8(c) % words;
	uint64_t v = val(c);

	(void)fz_proc_page(s->proc);
	__atomic_store_n((uint64_t *)(void *)s->proc->page + off, v,
	    __ATOMIC_SEQ_CST);
}

static void
lie_tick(struct cur *c)
{
	static const uint64_t ms[] = { 1, 100, 250, 1000, 2500, 6000 };
	uint64_t left = ms[get8(c) % 6];

	while (left > 0) {
		uint64_t step = left < 250 ? left : 250;

		fz_clock_advance(step);
		left -= step;
		fz_settle();
	}
}

/* One liar's op (or the honest peer's step). */
static void
liar_op(struct cur *c)
{
	uint8_t b = get8(c);
	struct fz_slot *s = &fz.slots[(b & 3) == 3 ? 1 : (b & 3) + 1];
	struct gf_rollback rb;
	struct gf_reserve r;
	struct gf_ctx_end e;
	struct gf_free f;
	int op = (b >> 2) % LO_NOPS;

	/* A liar is a client first: its lies are in what follows HELLO. */
	if (s->fd < 0 && op != LO_HELLO && op != LO_REREG && op != LO_TICK &&
	    op != LO_HONEST)
		introduce(s, fz_proc_page(s->proc), GF_LIMIT_NONE, 0);
	switch (op) {
	case LO_HELLO:
		fz_slot_close(s);
		introduce(s, get8(c) & 1 ? fz_proc_page(s->proc) : -1,
		    get8(c) % 3, val(c));
		break;
	case LO_RESERVE:
		memset(&r, 0, sizeof(r));
		memcpy(r.uuid, uuid0(), GF_UUID_LEN);
		r.size = val(c);
		r.kind = GF_KIND_MEM;
		r.flags = get8(c) & GF_RESERVE_LEASE;
		(void)say(s, GF_MSG_RESERVE, &r, -1);
		break;
	case LO_COMMIT:
		lie_commit(s, c);
		break;
	case LO_FREE:
		memset(&f, 0, sizeof(f));
		/* Its own, or the honest peer's. */
		f.ptr = get8(c) & 1 && honest.n > 0 ? honest.ptr[0] : val(c);
		(void)say(s, GF_MSG_FREE, &f, -1);
		break;
	case LO_ROLLBACK:
		memset(&rb, 0, sizeof(rb));
		memcpy(rb.uuid, uuid0(), GF_UUID_LEN);
		rb.size = val(c);
		(void)say(s, GF_MSG_ROLLBACK, &rb, -1);
		break;
	case LO_LEASE_RETURN:
		lie_lease(s, GF_MSG_LEASE_RETURN, val(c));
		break;
	case LO_LEASE_RESTORE:
		lie_lease(s, GF_MSG_LEASE_RESTORE, val(c));
		break;
	case LO_CTX_END:
		memset(&e, 0, sizeof(e));
		memcpy(e.uuid, uuid0(), GF_UUID_LEN);
		e.bytes = val(c);
		e.count = (uint32_t)val(c);
		(void)say(s, GF_MSG_CTX_END, &e, -1);
		break;
	case LO_MOVED:
		lie_moved(s, c);
		break;
	case LO_SWAP_IN:
		(void)say(s, GF_MSG_SWAP_IN, NULL, -1);
		break;
	case LO_PAGE:
		lie_page(s, c);
		break;
	case LO_TICK:
		lie_tick(c);
		break;
	case LO_CLOSE:
		fz_slot_close(s);
		break;
	case LO_EXIT:
		fz_proc_exit(s->proc);
		break;
	case LO_HONEST:
		honest_step();
		break;
	default:
		lie_rereg(s, c);
		break;
	}
}

int
fz_liar_one(const uint8_t *data, size_t size)
{
	struct cur c = { data, size, 0 };
	uint8_t w = get8(&c);

	memset(&honest, 0, sizeof(honest));
	fz_world_up((uint8_t)((LIAR_DEVSET << 4) | (w & 1 ? FZ_WORLD_NVML :
	    0)), fz_liar_variant_path());
	honest_step();
	while (c.off < c.n) {
		liar_op(&c);
		fz_settle();
		fz_check(&fz.a);
		liar_check();
	}
	/* Whatever the liars did, the honest peer still gets its due. */
	honest_step();
	honest_step();
	liar_check();
	fz_world_down();
	return 0;
}
