/*
 * The checks, exact to the byte, at a quiet point (every client settled,
 * no call in progress, or held out: waiting to be swapped back in, and
 * compared only if it waits between its calls) and at the end (every
 * client gone). For each live client and device, with the daemon's
 * figures from ps and allocs:
 *   used + host - leased - context == what the client counts as charged
 *     (its allocations by gpufrac's rules: nothing lost, nothing twice);
 *   used + host - leased == what the client counts the driver holding
 *     (its allocations in granules, chunks and pages, and its contexts;
 *     out on the host, to the rounding of its last second, row_compare);
 *   used - leased == what the driver (NVML) says the process holds;
 *   and it is not waiting: a settled client asks nothing.
 * For each device: used - leased == the driver's used memory, and host is
 * the sum of the clients' host bytes; nobody but live clients in ps. At
 * the end: no client, nothing used, leased or out on the host, and the
 * driver's devices empty. "leased" is the unused part of leases, which
 * the daemon charges and the driver does not hold (ledger.h, DESIGN.md).
 * And gpufracctl's own status --json and ps --json say the same, and the
 * daemon is not swapping processes out and in over and over.
 *
 * The daemon hears of frees and lease returns asynchronously and
 * measures contexts once a second: a comparison is repeated until it
 * holds or its time is up, and only then is it a failure.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "log.h"
#include "soak_json.h"
#include "soak_look.h"

#define POINT_MS	15000	/* contexts are measured every second */
#define END_MS		30000	/* exits are noticed, charges returned */
#define RETRY_US	50000
#define CHURN_SWAPS	50	/* more in LOOK_SWAPS_MS: out and in again */
#define SWAPPED_SLACK	(1u << 20)	/* see row_compare */
#define MAX_WHY		12

struct verdict {
	uint64_t	lost;		/* sum of |ledger - client's count| */
	uint64_t	vs_driver;	/* sum of |ledger - driver|, devices */
	unsigned	bad;
	char		why[MAX_WHY][240];
	unsigned	clients, swapped;
	uint64_t	used, leased, host, driver;
};

static void
bad(struct verdict *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
bad(struct verdict *v, const char *fmt, ...)
{
	va_list ap;

	if (v->bad < MAX_WHY) {
		va_start(ap, fmt);
		vsnprintf(v->why[v->bad], sizeof(v->why[0]), fmt, ap);
		va_end(ap);
	}
	v->bad++;
}

static uint64_t
diff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* A device the client does not use: the daemon charges it nothing. */
static void
unused_device(struct verdict *v, pid_t pid, int ord,
    const struct gf_client *row)
{
	if (row != NULL && (row->used != 0 || row->host != 0)) {
		bad(v, "pid %d device %d: charged %" PRIu64 " (host %" PRIu64
		    ") on a device it never used", (int)pid, ord, row->used,
		    row->host);
		v->lost += row->used + row->host;
	}
}

/*
 * One process's row on device ord against its own count and the driver.
 * Out on the host, its "context" record (its contexts and the granules
 * its allocations were rounded up to) is as last measured, up to a
 * second before it went out: NVML sees nothing of a checkpointed
 * process. It may be off then by the rounding of what was allocated and
 * freed meanwhile, within SWAPPED_SLACK, not by a context.
 */
static void
row_compare(struct verdict *v, const struct gf_client *row, uint64_t ctx,
    uint64_t charged, uint64_t held, uint64_t nv, int ord)
{
	uint64_t hold = row->used + row->host - row->leased;
	uint64_t alloc = hold - ctx, on_dev = row->used - row->leased;
	const char *state = row->state == GF_STATE_SWAPPED ? "swapped" :
	    "running";

	if (alloc != charged) {
		bad(v, "pid %u device %d (%s): gpufracd charges its "
		    "allocations %" PRIu64 " (used %" PRIu64 " host %" PRIu64
		    " leased %" PRIu64 " context %" PRIu64 "), it counts %"
		    PRIu64, row->pid, ord, state, alloc, row->used, row->host,
		    row->leased, ctx, charged);
		v->lost += diff(alloc, charged);
	}
	if (row->state == GF_STATE_SWAPPED ? diff(hold, held) > SWAPPED_SLACK :
	    hold != held)
		bad(v, "pid %u device %d (%s): gpufracd charges %" PRIu64
		    " with its context, it counts the driver holding %" PRIu64
		    ", the driver says %" PRIu64, row->pid, ord, state, hold,
		    held, nv);
	if (nv != on_dev)
		bad(v, "pid %u device %d (%s): the driver says it holds %"
		    PRIu64 ", gpufracd charges %" PRIu64 " on the device",
		    row->pid, ord, state, nv, on_dev);
}

static void
client_device(struct soak *s, const struct look *l, int i, int ord,
    struct verdict *v)
{
	pid_t pid = s->clients[i].pid;
	const struct gf_client *row = look_client(l, pid, ord);
	uint64_t charged_all[SOAK_MAX_DEV], held_all[SOAK_MAX_DEV];
	uint64_t ctx = l->context[i][ord], charged, held;

	if (!(s->clients[i].devmask & (1u << ord))) {
		unused_device(v, pid, ord, row);
		return;
	}
	/* Held out in the middle of one of its calls: no count to hold to. */
	if (s->clients[i].held_out &&
	    __atomic_load_n(&s->slots[i].call, __ATOMIC_RELAXED) != 0)
		return;
	if (fleet_truth(s, i, charged_all, held_all) < 0) {
		bad(v, "pid %d: its count was changing", (int)pid);
		return;
	}
	charged = charged_all[ord];
	held = held_all[ord];
	if (row == NULL) {
		bad(v, "pid %d device %d: not in gpufracctl ps, and holds "
		    "%" PRIu64 " (charged %" PRIu64 ")", (int)pid, ord, held,
		    charged);
		v->lost += charged;
		return;
	}
	if (row->state == GF_STATE_WAITING)
		bad(v, "pid %d: waiting, though it asks nothing", (int)pid);
	row_compare(v, row, ctx, charged, held, look_driver_proc(l, pid,
	    ord), ord);
}

/* Rows of processes that are no live client. */
static void
strangers(const struct soak *s, const struct look *l, struct verdict *v)
{
	size_t r;

	for (r = 0; r < l->nps; r++)
		if (fleet_find(s, (pid_t)l->ps[r].pid) < 0) {
			bad(v, "pid %u: in gpufracctl ps (used %" PRIu64
			    " host %" PRIu64 "), but no live client",
			    l->ps[r].pid, l->ps[r].used, l->ps[r].host);
			v->lost += l->ps[r].used + l->ps[r].host;
		}
}

static void
devices(const struct look *l, struct verdict *v, int end)
{
	const struct gf_device_status *d;
	uint64_t host, on_dev;
	size_t r;
	int ord;

	for (ord = 0; ord < SOAK_NDEV; ord++) {
		d = look_device(l, ord);
		for (r = 0, host = 0; r < l->nps; r++)
			if (memcmp(l->ps[r].uuid, d->uuid, GF_UUID_LEN) == 0)
				host += l->ps[r].host;
		on_dev = d->used - d->leased;
		v->used += d->used;
		v->leased += d->leased;
		v->host += d->host;
		v->driver += l->drv_used[ord];
		if (on_dev != l->drv_used[ord]) {
			bad(v, "device %d: gpufracd charges %" PRIu64 " (used %"
			    PRIu64 " leased %" PRIu64 "), the driver holds %"
			    PRIu64, ord, on_dev, d->used, d->leased,
			    l->drv_used[ord]);
			v->vs_driver += diff(on_dev, l->drv_used[ord]);
		}
		if (host != d->host)
			bad(v, "device %d: host %" PRIu64 ", its clients' add "
			    "up to %" PRIu64, ord, d->host, host);
		if (end && (d->used != 0 || d->host != 0 || d->leased != 0)) {
			bad(v, "device %d: with no client left, used %" PRIu64
			    " leased %" PRIu64 " host %" PRIu64, ord, d->used,
			    d->leased, d->host);
			v->lost += d->used + d->host;
		}
	}
}

static void
compare(struct soak *s, const struct look *l, struct verdict *v, int end)
{
	size_t r;
	int i, ord;

	for (i = 0; i < SOAK_MAX_SLOTS; i++) {
		if (s->clients[i].pid <= 0)
			continue;
		v->clients++;
		for (ord = 0; ord < SOAK_NDEV; ord++)
			client_device(s, l, i, ord, v);
	}
	for (r = 0; r < l->nps; r++)	/* rows of one pid are together */
		v->swapped += l->ps[r].state == GF_STATE_SWAPPED &&
		    (r == 0 || l->ps[r - 1].pid != l->ps[r].pid);
	strangers(s, l, v);
	devices(l, v, end);
	/* Nothing moves while the clients stand still, but for swaps in. */
	if (l->recent_swaps > CHURN_SWAPS)
		bad(v, "%u swaps in %d ms with the clients standing still, "
		    "the last of pid %u: %s", l->recent_swaps, LOOK_SWAPS_MS,
		    l->swap_pid, l->swap_reason);
	if (end && l->st.daemon.nclients != 0)
		bad(v, "gpufracd counts %u clients with none left",
		    l->st.daemon.nclients);
}

static void
record(struct soak *s, const struct verdict *v, unsigned attempts, int ok)
{
	struct soak_point *p;

	if (v->lost > s->n.lost_bytes)
		s->n.lost_bytes = v->lost;
	if (v->vs_driver > s->n.ledger_vs_driver)
		s->n.ledger_vs_driver = v->vs_driver;
	s->last_swapped = v->swapped;
	if (s->npoints == SOAK_MAX_POINTS) {
		s->points_dropped++;
		return;
	}
	p = &s->points[s->npoints++];
	p->at_ms = s->point_at_ms;
	p->what = s->point_what;
	p->clients = v->clients;
	p->swapped = v->swapped;
	p->used = v->used;
	p->leased = v->leased;
	p->host = v->host;
	p->driver = v->driver;
	p->lost = v->lost;
	p->vs_driver = v->vs_driver;
	p->attempts = attempts;
	p->ok = ok;
}

static void
say_failure(struct soak *s, const struct verdict *v, int end)
{
	unsigned k;

	s->n.check_failures++;
	soak_fail(s, "%s: %u mismatch(es) after %d ms:", end ? "the end" :
	    "quiet point", v->bad, end ? END_MS : POINT_MS);
	for (k = 0; k < v->bad && k < MAX_WHY; k++)
		fprintf(stderr, "soak:   %s\n", v->why[k]);
}

int
check_point(struct soak *s, int end)
{
	uint64_t deadline = soak_now_ms() + (end ? END_MS : POINT_MS);
	unsigned attempts = 0;
	char why[200];
	struct verdict v;
	struct look l;
	int ok;

	for (;;) {
		soak_reap(s);
		fleet_listen(s);
		attempts++;
		memset(&v, 0, sizeof(v));
		if ((ok = look_take(s, &l)) == 0)
			compare(s, &l, &v, end);
		else
			bad(&v, "gpufracd or the driver could not be asked");
		/* And what gpufracctl prints says the same. */
		if (ok == 0 && v.bad == 0 && json_agrees(s, &l, why,
		    sizeof(why)) < 0)
			bad(&v, "%s", why);
		look_free(&l);
		if (ok == 0 && v.bad == 0)
			break;
		if (soak_now_ms() >= deadline) {
			say_failure(s, &v, end);
			record(s, &v, attempts, 0);
			return -1;
		}
		harness_sleep_us(RETRY_US);
	}
	record(s, &v, attempts, 1);
	return 0;
}
