/*
 * The fuzz target: for each input, a daemon started afresh on a simulated
 * machine (fakes.c) with a configuration variant (configs.c), then the
 * input's ops (fuzz_input.h) played against it through real connections
 * (peers.c), the daemon's own event loop run round by round after each
 * until it has nothing left to do, the invariants checked (invariants.c);
 * at the end every process exits, the ledger must be empty, and the
 * daemon stops and frees everything (LeakSanitizer sees what it leaks).
 *
 * Built twice: with libFuzzer (make fuzz), and with the replay driver
 * (replay.c) that make check runs over fuzz/corpus and fuzz/regress.
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../daemon/event.h"
#include "bare.h"
#include "fuzz.h"
#include "log.h"
#include "proto.h"

#define SETTLE_ROUNDS	64	/* a daemon busier than this is stuck */
#define CKPT_SPINS	1000000	/* a checkpoint job longer is stuck */
#define TICK_STEP_MS	250	/* time passes in steps no longer... */
#define TICK_STEPS_MAX	16	/* ...unless that would take more */

struct fz_world fz;

struct cursor {
	const uint8_t	*p;
	size_t		 n;
	size_t		 off;
};

void
fz_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s%s\n", fz.input_name ? " in " : "",
	    fz.input_name ? fz.input_name : "");
	fz_scratch_remove();
	abort();
}

/* Operands past the end of the input read as zero bytes. */
static uint8_t
get8(struct cursor *c)
{
	return c->off < c->n ? c->p[c->off++] : 0;
}

static void
getn(struct cursor *c, void *dst, size_t len)
{
	size_t have = c->n - c->off < len ? c->n - c->off : len;

	memcpy(dst, c->p + c->off, have);
	memset((uint8_t *)dst + have, 0, len - have);
	c->off += have;
}

static uint64_t
getle(struct cursor *c, size_t bytes)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < bytes; i++)
		v |= (uint64_t)get8(c) << (8 * i);
	return v;
}

static void
stop_round(struct event_loop *loop, void *arg)
{
	(void)arg;
	event_stop(loop);
}

/*
 * One round of the daemon's event loop: what is readable or writable
 * now, then the timers due, then back to us (a timer due now, added
 * last, stops the loop).
 */
void
fz_round(void)
{
	if (event_timer_add(fz.a.loop, 0, stop_round, NULL) < 0)
		fz_fail("no memory for a timer");
	if (event_run(fz.a.loop) < 0)
		fz_fail("the event loop failed: %s", strerror(errno));
}

/* The checkpoint thread's jobs end in microseconds: wait for them. */
static void
ckpt_wait(void)
{
	unsigned n = 0;

	while (ckpt_busy(&fz.a.swap.engine) > 0) {
		if (++n > CKPT_SPINS)
			fz_fail("a checkpoint job never ends");
		sched_yield();
		fz_round();
	}
}

/*
 * Run the daemon until it is idle: two rounds at least (a timer due now,
 * armed in the first, fires in the second), then as long as it has more
 * to do at once, a checkpoint job runs or a killed process is to exit.
 */
void
fz_settle(void)
{
	int i;

	for (i = 0; i < SETTLE_ROUNDS; i++) {
		fz_round();
		ckpt_wait();
		fz_reap_killed();
		fz_bare_reap();
		fz_drain_all();
		if (i > 0 && !fz_daemon_busy())
			return;
	}
}

/*
 * FZ_OP_MSG and FZ_OP_MSGLEN: a header of the right length over the
 * input's payload, of the version spoken (FZ_OP_MSG) or any.
 */
static void
op_msg(struct fz_slot *s, struct cursor *c, int passfd, int anylen)
{
	union {
		struct gf_msg	m;
		uint8_t		buf[FZ_PKT_MAX];
	} u;
	uint8_t version = anylen ? get8(c) : GF_PROTO_VERSION;
	uint8_t type = get8(c), seq = get8(c);
	ssize_t size = proto_payload_size(type);

	if (anylen)
		size = get8(c);
	else if (size < 0)
		size = 0;
	memset(&u, 0, sizeof(u));
	getn(c, u.m.u.raw, (size_t)size);
	u.m.hdr.version = version;
	u.m.hdr.type = type;
	u.m.hdr.len = (uint32_t)(sizeof(u.m.hdr) + (size_t)size);
	u.m.hdr.seq = seq;
	if (fz.trace)
		fprintf(stderr, "  slot %d -> %s seq %u, %zd bytes%s\n",
		    (int)(s - fz.slots), proto_type_name(type), seq, size,
		    passfd >= 0 ? ", a descriptor" : "");
	(void)fz_slot_send(s, &u, u.m.hdr.len, passfd);
}

static void
op_raw(struct fz_slot *s, struct cursor *c)
{
	uint8_t buf[FZ_PKT_MAX];
	size_t len = (size_t)getle(c, 2) % (FZ_PKT_MAX + 1);

	getn(c, buf, len);
	(void)fz_slot_send(s, buf, len, -1);
}

/* Time passes in steps, so that timers fire in their order. */
static void
op_tick(struct cursor *c)
{
	static const uint64_t ticks[FZ_NTICKS] = FZ_TICKS;
	uint64_t ms = ticks[get8(c) % FZ_NTICKS], step = TICK_STEP_MS;

	if (ms / step > TICK_STEPS_MAX)
		step = ms / TICK_STEPS_MAX;
	while (ms > 0) {
		step = step < ms ? step : ms;
		fz_clock_advance(step);
		ms -= step;
		fz_settle();
	}
}

/* The operator edits the configuration file and sends SIGHUP. */
static void
op_hup(struct cursor *c)
{
	fz.recapacitied = fz.relimited = "a reload";
	fz.a.conf_path = fz_variant_path(get8(c) % fz_nvariants());
	(void)arbiter_reload(&fz.a, NULL, NULL, 0);
}

static void
op_page(struct fz_slot *s, struct cursor *c)
{
	size_t words = sizeof(struct gf_activity) / sizeof(uint64_t);
	size_t off = get8(c) % words;
	uint64_t v = getle(c, 8);

	(void)fz_proc_page(s->proc);
	__atomic_store_n((uint64_t *)(void *)s->proc->page + off, v,
	    __ATOMIC_SEQ_CST);
}

/*
 * What NVML says s's process holds: charged whatever the limits, to each
 * of its clients (a device may then hold more than its capacity).
 */
static void
op_nvml(struct fz_slot *s, struct cursor *c)
{
	struct fz_proc *p = s->proc;
	size_t dev = get8(c) % FZ_MAXDEV;

	p->nvml[dev] = getle(c, 4) << 20;
	if (p->nvml[dev] > p->nvml_max[dev])
		p->nvml_max[dev] = p->nvml[dev];
	if (p->nvml[dev] > 0)
		fz.recapacitied = "context memory measured";
}

/* A process without a connection (bare.c), charged whatever the limits. */
static void
op_bare(unsigned idx, struct cursor *c)
{
	uint8_t kind = get8(c), dev = get8(c);
	uint64_t mib = getle(c, 4);

	fz_bare_op(idx, kind, dev, mib);
	if (mib > 0)
		fz.recapacitied = "memory without the shim measured";
}

static void
op_ckpt(struct fz_slot *s, struct cursor *c)
{
	uint8_t mode = get8(c);
	unsigned state = FZ_CKPT_SET_STATE(mode);

	__atomic_store_n(&s->proc->ckpt, mode & FZ_CKPT_FAILS,
	    __ATOMIC_RELEASE);
	if (state != 0)
		__atomic_store_n(&s->proc->ckpt_state, (state - 1) & 3,
		    __ATOMIC_RELEASE);
}

static void
op_burst(struct fz_slot *s, struct cursor *c)
{
	uint8_t pkt[FZ_PKT_MAX];
	size_t len = s->lastlen;
	unsigned n = get8(c);

	memcpy(pkt, s->last, len);
	while (len > 0 && n-- > 0)
		if (fz_slot_send(s, pkt, len, -1) < 0)
			break;
}

/* One op; 1 when the daemon is to be left alone after it. */
static int
op_run(struct cursor *c)
{
	uint8_t b = get8(c);
	struct fz_slot *s = &fz.slots[FZ_SLOT(b)];
	int fd;

	if (fz.trace)
		fprintf(stderr, "op %u slot %u%s at %zu\n", FZ_OP(b),
		    FZ_SLOT(b), b & FZ_DEFER ? " (deferred)" : "", c->off - 1);
	switch (FZ_OP(b)) {
	case FZ_OP_MSGLEN:
		op_msg(s, c, -1, 1);
		break;
	case FZ_OP_RAW:
		op_raw(s, c);
		break;
	case FZ_OP_CLOSE:
		fz_slot_close(s);
		break;
	case FZ_OP_EXIT:
		fz_proc_exit(s->proc);
		break;
	case FZ_OP_TICK:
		op_tick(c);
		break;
	case FZ_OP_HUP:
		op_hup(c);
		break;
	case FZ_OP_PAGE:
		op_page(s, c);
		break;
	case FZ_OP_NVML:
		op_nvml(s, c);
		break;
	case FZ_OP_CKPT:
		op_ckpt(s, c);
		break;
	case FZ_OP_DRAIN:
		(void)fz_drain(s);
		break;
	case FZ_OP_SLOW:
		s->slow = !s->slow;
		break;
	case FZ_OP_BURST:
		op_burst(s, c);
		break;
	case FZ_OP_MSGFD:
		fd = get8(c) & 1 ? fz_proc_page(s->proc) : fz_bogus_fd();
		op_msg(s, c, fd, 0);
		break;
	case FZ_OP_BARE:
		op_bare(FZ_SLOT(b), c);
		break;
	default:
		op_msg(s, c, -1, 0);
		break;
	}
	return (b & FZ_DEFER) != 0;
}

static void
report_fail(const char *line, void *arg)
{
	(void)arg;
	fz_fail("configuration variant: %s", line);
}

/*
 * The daemon as gpufracd's main() starts it, on this input's machine,
 * with conf_path (NULL: the world byte's variant).
 */
void
fz_world_up(uint8_t w, const char *conf_path)
{
	struct config conf;

	memset(&fz.a, 0, sizeof(fz.a));
	fz.recapacitied = fz.relimited = NULL;
	memset(fz.excess, 0, sizeof(fz.excess));
	fz.devset = FZ_WORLD_DEVS(w);
	fz.nvml = (w & FZ_WORLD_NVML) != 0;
	fz.ckpt = (w & FZ_WORLD_CKPT) != 0;
	fz_peers_init();
	fz_bare_init();
	/* No run-time groups left by the previous input. */
	if (unlink(fz_state_path()) < 0 && errno != ENOENT)
		fz_fail("cannot remove '%s': %s", fz_state_path(),
		    strerror(errno));
	fz_clock_start();
	fz_fakes_active(1);
	if ((fz.a.loop = event_loop_new()) == NULL)
		fz_fail("cannot make an event loop: %s", strerror(errno));
	fz.a.conf_path = conf_path != NULL ? conf_path :
	    fz_variant_path(FZ_WORLD_CONF(w));
	config_init(&conf);
	(void)arbiter_read_config(&conf, fz.a.conf_path, 0, NULL,
	    report_fail, NULL);
	if (arbiter_start(&fz.a, &conf, "libcuda.so.1") < 0)
		fz_fail("the daemon does not start with '%s'",
		    fz.a.conf_path);
	/* Link-time optimisation, say, could bind calls past the seams. */
	if (!fz_fakes_used() || event_now_ms() != fz_clock_now())
		fz_fail("the daemon does not run on the simulated machine: "
		    "are its objects linked with mk/fuzz.mk's --wrap?");
}

/* Every process exits; then nothing may be left charged. */
void
fz_world_down(void)
{
	size_t i;

	fz_bare_free();
	for (i = 0; i < FZ_NPROCS; i++)
		fz_proc_exit(&fz.procs[i]);
	fz_settle();
	fz_check(&fz.a);
	fz_check_empty(&fz.a);
	arbiter_stop(&fz.a);
	event_loop_free(fz.a.loop);
	fz_peers_free();
	fz_fakes_active(0);
	fz_clock_stop();
}

static int
fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (d == NULL)
		fz_fail("cannot list /proc/self/fd: %s", strerror(errno));
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

/*
 * The fast target (FUZZ_TARGET=decoder; make fuzz runs both): the wire
 * decoder and the message handlers, without the per-input start of a
 * daemon. One daemon (world 0) stays up for the whole run; each input is
 * one new connection of the fuzzer's own process (a socketpair adopted
 * as the listener would: no connect, no accept), whose packets, each a
 * little-endian 16-bit length and that many bytes, go through
 * proto_decode and the control layer's packet call as control.c hands
 * them on; then it closes, its charge returned at once (no pidfd: not
 * kept for the exit of a process that never ends), and the invariants
 * are checked.
 */
static int
decoder_one(const uint8_t *data, size_t size)
{
	static int up;
	struct cursor cur = { data, size, 0 };
	struct gf_msg m;
	const char *bad;
	char why[160];
	struct conn *c;
	size_t len;
	int sv[2];

	if (!up) {
		fz_world_up(0, NULL);
		up = 1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0, sv) < 0)
		fz_fail("socketpair: %s", strerror(errno));
	if ((c = control_adopt(&fz.a.control, sv[0])) == NULL)
		fz_fail("the daemon does not adopt a connection");
	if (c->pidfd >= 0) {
		event_set(fz.a.loop, c->pidfd, 0, NULL, NULL);
		close(c->pidfd);
		c->pidfd = -1;
	}
	while (cur.off < cur.n) {
		len = (size_t)getle(&cur, 2);
		if (len > cur.n - cur.off)
			len = cur.n - cur.off;
		if (proto_decode(&m, cur.p + cur.off, len, &bad) < 0) {
			control_close(c, bad);
			c = NULL;
			break;
		}
		cur.off += len;
		if (fz.a.control_ops.packet(fz.a.control_ops.arg, c, &m, why,
		    sizeof(why)) < 0) {
			control_close(c, why);
			c = NULL;
			break;
		}
		if (c->close_timer > 0)
			break;
	}
	if (c != NULL)
		control_close(c, NULL);
	close(sv[1]);
	fz_round();
	fz_check(&fz.a);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cursor c = { data, size, 0 };
	static const char *target;
	int fds;

	if (target == NULL) {
		log_init("gpufracd", LOG_LVL_ERROR, 0);
		fz_scratch_init();
		fz.trace = getenv("FUZZ_TRACE") != NULL;
		target = getenv("FUZZ_TARGET") != NULL ?
		    getenv("FUZZ_TARGET") : "stateful";
	}
	if (strcmp(target, "decoder") == 0)
		return decoder_one(data, size);
	if (size == 0)
		return 0;
	fds = fd_count();
	if (strcmp(target, "liar") == 0)
		(void)fz_liar_one(data, size);
	else {
		fz_world_up(get8(&c), NULL);
		while (c.off < c.n)
			if (!op_run(&c)) {
				fz_settle();
				fz_check(&fz.a);
				fz_bare_check(&fz.a);
			}
		fz_world_down();
	}
	if (fd_count() != fds)
		fz_fail("%d descriptors more after the input than before",
		    fd_count() - fds);
	return 0;
}
