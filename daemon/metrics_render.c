/*
 * The ledger's figures as gauges: the daemon, each device, each group on
 * each device, each process on each device it opened. Each figure comes
 * from where dispatch.c's STATUS and PS answers take it.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "activity.h"
#include "arbiter.h"
#include "driver.h"
#include "lease.h"
#include "metrics_render.h"
#include "metrics_render_counts.h"
#include "metrics_text.h"
#include "names.h"
#include "swap.h"
#include "uuid.h"

#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

/* One scrape: the text, and what is worked out once for all rows. */
struct render {
	const struct arbiter *a;
	const struct ledger *l;
	struct metrics_text t;
	uint64_t	*borrowed;	/* [dev * ngroups + group] */
	char		(*uuid)[UUID_STR_LEN];	/* per device */
	char		(*index)[16];
};

/* --- devices: {uuid, index} ------------------------------------------- */

typedef uint64_t device_fn(const struct render *, size_t);

/* The unused part of every lease on d (STATUS's "leased"). */
static uint64_t
dev_leased(const struct render *r, size_t d)
{
	return leases_unused(r->l, SIZE_MAX, d);
}

/* The groups' guarantees on d, as gpufracctl adds them up. */
static uint64_t
dev_guaranteed(const struct render *r, size_t d)
{
	uint64_t sum = 0, g;
	size_t i;

	for (i = 0; i < r->l->ngroups; i++) {
		g = r->l->groups[i].share[d].guarantee;
		sum = g > UINT64_MAX - sum ? UINT64_MAX : sum + g;
	}
	return sum;
}

static uint64_t
dev_lent(const struct render *r, size_t d)
{
	return ledger_lent(r->l, d);
}

static uint64_t
dev_releasing(const struct render *r, size_t d)
{
	return driver_releasing(r->l, d);
}

static uint64_t
dev_clients(const struct render *r, size_t d)
{
	return r->l->devices[d].nclients;
}

/* A ledger_device's own figure: its offset, and no get. */
#define DEV_FIELD(f)	offsetof(struct ledger_device, f), NULL
#define DEV_GET(fn)	0, fn

static const struct {
	const char	*name;
	const char	*help;
	size_t		 off;
	device_fn	*get;
} device_gauges[] = {
	{ "gpufrac_device_total_bytes",
	  "Device memory, as the driver reports it.", DEV_FIELD(total) },
	{ "gpufrac_device_reserve_bytes",
	  "Device memory kept back from sharing (reserve).",
	  DEV_FIELD(reserve) },
	{ "gpufrac_device_capacity_bytes",
	  "Shareable device memory: total less reserve.",
	  DEV_FIELD(capacity) },
	{ "gpufrac_device_used_bytes",
	  "Device memory charged to processes, leases included.",
	  DEV_FIELD(used) },
	{ "gpufrac_device_leased_bytes",
	  "Of the used bytes, leased to processes and not allocated yet.",
	  DEV_GET(dev_leased) },
	{ "gpufrac_device_host_bytes",
	  "Processes' device memory swapped out to host memory.",
	  DEV_FIELD(host) },
	{ "gpufrac_device_guaranteed_bytes",
	  "The groups' guarantees on the device, added up.",
	  DEV_GET(dev_guaranteed) },
	{ "gpufrac_device_lent_bytes",
	  "Unused guaranteed memory lent to other groups.", DEV_GET(dev_lent) },
	{ "gpufrac_device_foreign_bytes",
	  "Device memory held by no process gpufrac knows (NVML).",
	  DEV_FIELD(foreign) },
	{ "gpufrac_device_releasing_bytes",
	  "Of the used bytes, departed processes' memory the driver has "
	  "not given back yet.", DEV_GET(dev_releasing) },
	{ "gpufrac_device_clients",
	  "Processes that opened the device.", DEV_GET(dev_clients) },
};

static uint64_t
device_gauge(const struct render *r, size_t i, size_t d)
{
	if (device_gauges[i].get != NULL)
		return device_gauges[i].get(r, d);
	return *(const uint64_t *)(const void *)((const char *)
	    &r->l->devices[d] + device_gauges[i].off);
}

static void
render_devices(struct render *r)
{
	struct metrics_label lb[3];
	size_t i, d;

	for (i = 0; i < NITEMS(device_gauges); i++) {
		metrics_text_family(&r->t, device_gauges[i].name, "gauge",
		    device_gauges[i].help);
		for (d = 0; d < r->l->ndevices; d++) {
			lb[0] = (struct metrics_label){ "uuid", r->uuid[d] };
			lb[1] = (struct metrics_label){ "index", r->index[d] };
			metrics_text_u64(&r->t, device_gauges[i].name, lb, 2,
			    device_gauge(r, i, d));
		}
	}
	metrics_text_family(&r->t, "gpufrac_device_info", "gauge",
	    "Each device, with its name: always 1.");
	for (d = 0; d < r->l->ndevices; d++) {
		lb[0] = (struct metrics_label){ "uuid", r->uuid[d] };
		lb[1] = (struct metrics_label){ "index", r->index[d] };
		lb[2] = (struct metrics_label){ "name", r->l->devices[d].name };
		metrics_text_u64(&r->t, "gpufrac_device_info", lb, 3, 1);
	}
}

/* --- groups: {group, uuid} ---------------------------------------------- */

typedef uint64_t group_fn(const struct render *, size_t, size_t);

static uint64_t
grp_borrowed(const struct render *r, size_t g, size_t d)
{
	return r->borrowed[d * r->l->ngroups + g];
}

static uint64_t
grp_clients(const struct render *r, size_t g, size_t d)
{
	return r->l->groups[g].share[d].nclients;
}

/* Of the group's used bytes, its processes' without the shim. */
static uint64_t
grp_unshimmed(const struct render *r, size_t g, size_t d)
{
	const struct ledger_client *lc;
	uint64_t n = 0;

	TAILQ_FOREACH(lc, &r->l->clients, entry)
		if (lc->group == g && lc->state == GF_STATE_UNSHIMMED)
			n += lc->usage[d].used;
	return n;
}

/* A ledger_share's own figure: its offset, and no get. */
#define GRP_FIELD(f)	offsetof(struct ledger_share, f), NULL
#define GRP_GET(fn)	0, fn

static const struct {
	const char	*name;
	const char	*help;
	size_t		 off;
	group_fn	*get;
} group_gauges[] = {
	{ "gpufrac_group_limit_bytes", "The group's limit on the device "
	  "(group default: each process's).", GRP_FIELD(limit) },
	{ "gpufrac_group_guarantee_bytes",
	  "Memory guaranteed to the group on the device.",
	  GRP_FIELD(guarantee) },
	{ "gpufrac_group_used_bytes",
	  "Device memory charged to the group's processes.", GRP_FIELD(used) },
	{ "gpufrac_group_host_bytes",
	  "The group's memory swapped out to host memory.", GRP_FIELD(host) },
	{ "gpufrac_group_borrowed_bytes",
	  "Other groups' unused guarantees the group holds.",
	  GRP_GET(grp_borrowed) },
	{ "gpufrac_group_clients",
	  "The group's processes that opened the device.",
	  GRP_GET(grp_clients) },
	{ "gpufrac_group_unshimmed_bytes",
	  "Of the group's used bytes, those of its processes without the "
	  "shim (NVML's figure).", GRP_GET(grp_unshimmed) },
};

static uint64_t
group_gauge(const struct render *r, size_t i, size_t g, size_t d)
{
	if (group_gauges[i].get != NULL)
		return group_gauges[i].get(r, g, d);
	return *(const uint64_t *)(const void *)((const char *)
	    &r->l->groups[g].share[d] + group_gauges[i].off);
}

static void
render_groups(struct render *r)
{
	struct metrics_label lb[2];
	size_t i, g, d;

	for (i = 0; i < NITEMS(group_gauges); i++) {
		metrics_text_family(&r->t, group_gauges[i].name, "gauge",
		    group_gauges[i].help);
		for (g = 0; g < r->l->ngroups; g++)
			for (d = 0; d < r->l->ndevices; d++) {
				lb[0] = (struct metrics_label){ "group",
				    r->l->groups[g].pol.name };
				lb[1] = (struct metrics_label){ "uuid",
				    r->uuid[d] };
				metrics_text_u64(&r->t, group_gauges[i].name,
				    lb, 2, group_gauge(r, i, g, d));
			}
	}
}

/* --- processes: {pid, group, uuid} -------------------------------------- */

typedef uint64_t client_fn(const struct ledger_client *, size_t);

static uint64_t
cl_used(const struct ledger_client *lc, size_t d)
{
	return lc->usage[d].used;
}

static uint64_t
cl_leased(const struct ledger_client *lc, size_t d)
{
	return lease_unused(lc, d);
}

static uint64_t
cl_limit(const struct ledger_client *lc, size_t d)
{
	return lc->usage[d].limit;
}

static uint64_t
cl_host(const struct ledger_client *lc, size_t d)
{
	return lc->usage[d].host;
}

static const struct {
	const char	*name;
	const char	*help;
	client_fn	*get;
} client_gauges[] = {
	{ "gpufrac_process_used_bytes", "Device memory charged to the "
	  "process, its lease included (gpufracctl ps USED).", cl_used },
	{ "gpufrac_process_leased_bytes",
	  "Of the used bytes, leased and not allocated yet.", cl_leased },
	{ "gpufrac_process_limit_bytes",
	  "The process's limit on the device.", cl_limit },
	{ "gpufrac_process_host_bytes",
	  "The process's memory swapped out to host memory.", cl_host },
};

static void
render_client_devices(struct render *r)
{
	const struct ledger_client *lc;
	struct metrics_label lb[3];
	char pid[16];
	size_t i, d;

	for (i = 0; i < NITEMS(client_gauges); i++) {
		metrics_text_family(&r->t, client_gauges[i].name, "gauge",
		    client_gauges[i].help);
		TAILQ_FOREACH(lc, &r->l->clients, entry) {
			snprintf(pid, sizeof(pid), "%" PRIu32, lc->pid);
			lb[0] = (struct metrics_label){ "pid", pid };
			lb[1] = (struct metrics_label){ "group",
			    r->l->groups[lc->group].pol.name };
			for (d = 0; d < r->l->ndevices; d++) {
				if (!lc->usage[d].opened)
					continue;
				lb[2] = (struct metrics_label){ "uuid",
				    r->uuid[d] };
				metrics_text_u64(&r->t, client_gauges[i].name,
				    lb, 3, client_gauges[i].get(lc, d));
			}
		}
	}
}

static const uint32_t states[] = {
	GF_STATE_RUNNING, GF_STATE_WAITING, GF_STATE_SWAPPED,
	GF_STATE_RELEASING, GF_STATE_UNSHIMMED,
};

/* Per process, whatever it opened: its state (1 for the one it is in). */
static void
render_client_states(struct render *r)
{
	const struct ledger_client *lc;
	struct metrics_label lb[3];
	uint64_t idle;
	char pid[16];
	size_t i;

	metrics_text_family(&r->t, "gpufrac_process_state", "gauge",
	    "1 for the state the process is in (running, waiting, swapped, "
	    "releasing, unshimmed).");
	TAILQ_FOREACH(lc, &r->l->clients, entry) {
		snprintf(pid, sizeof(pid), "%" PRIu32, lc->pid);
		lb[0] = (struct metrics_label){ "pid", pid };
		lb[1] = (struct metrics_label){ "group",
		    r->l->groups[lc->group].pol.name };
		for (i = 0; i < NITEMS(states); i++) {
			lb[2] = (struct metrics_label){ "state",
			    name_state(states[i]) };
			metrics_text_u64(&r->t, "gpufrac_process_state", lb, 3,
			    lc->state == states[i]);
		}
	}
	metrics_text_family(&r->t, "gpufrac_process_idle_seconds", "gauge",
	    "Time since the process's last driver call (where known).");
	TAILQ_FOREACH(lc, &r->l->clients, entry) {
		if ((idle = activity_idle_ms(lc)) == UINT64_MAX)
			continue;
		snprintf(pid, sizeof(pid), "%" PRIu32, lc->pid);
		lb[0] = (struct metrics_label){ "pid", pid };
		lb[1] = (struct metrics_label){ "group",
		    r->l->groups[lc->group].pol.name };
		metrics_text_ms(&r->t, "gpufrac_process_idle_seconds", lb, 2,
		    idle);
	}
}

/* --- the daemon --------------------------------------------------------- */

static void
render_processes_by_state(struct render *r)
{
	const struct ledger_client *lc;
	struct metrics_label lb;
	uint64_t n;
	size_t i;

	metrics_text_family(&r->t, "gpufrac_processes", "gauge",
	    "Processes known to the daemon, by state.");
	for (i = 0; i < NITEMS(states); i++) {
		n = 0;
		TAILQ_FOREACH(lc, &r->l->clients, entry)
			n += lc->state == states[i];
		lb = (struct metrics_label){ "state", name_state(states[i]) };
		metrics_text_u64(&r->t, "gpufrac_processes", &lb, 1, n);
	}
}

static void
render_daemon(struct render *r)
{
	const struct arbiter *a = r->a;
	struct metrics_label lb = { "version", GPUFRAC_VERSION };

	metrics_text_family(&r->t, "gpufrac_build_info", "gauge",
	    "The daemon's version: always 1.");
	metrics_text_u64(&r->t, "gpufrac_build_info", &lb, 1, 1);
	metrics_text_family(&r->t, "gpufrac_start_time_seconds", "gauge",
	    "When the daemon started, in seconds since the epoch.");
	metrics_text_ms(&r->t, "gpufrac_start_time_seconds", NULL, 0,
	    a->metrics.start_wall_ms);
	metrics_text_family(&r->t, "gpufrac_swap_available", "gauge",
	    "1 if host swap is available (the driver's checkpoint API).");
	metrics_text_u64(&r->t, "gpufrac_swap_available", NULL, 0,
	    a->swap.available != 0);
	metrics_text_family(&r->t, "gpufrac_connections", "gauge",
	    "Control socket connections open now.");
	metrics_text_u64(&r->t, "gpufrac_connections", NULL, 0,
	    a->control.nconns);
	render_processes_by_state(r);
}

/* The per-device strings and the borrowed table: 0, or -1 (ENOMEM). */
static int
render_prepare(struct render *r)
{
	const struct ledger *l = r->l;
	size_t d, nd = l->ndevices ? l->ndevices : 1;

	r->uuid = calloc(nd, sizeof(*r->uuid));
	r->index = calloc(nd, sizeof(*r->index));
	r->borrowed = calloc(nd * (l->ngroups ? l->ngroups : 1),
	    sizeof(*r->borrowed));
	if (r->uuid == NULL || r->index == NULL || r->borrowed == NULL)
		return -1;
	for (d = 0; d < l->ndevices; d++) {
		uuid_format(l->devices[d].uuid, r->uuid[d], sizeof(r->uuid[d]));
		snprintf(r->index[d], sizeof(r->index[d]), "%" PRIu32,
		    l->devices[d].index);
		ledger_borrowed(l, d, &r->borrowed[d * l->ngroups]);
	}
	return 0;
}

char *
metrics_render(const struct arbiter *a, size_t *len)
{
	struct metrics_counts counts;
	struct render r;
	char *text = NULL;

	memset(&r, 0, sizeof(r));
	r.a = a;
	r.l = &a->ledger;
	counts = a->metrics.counts;
	counts.connections = a->control.accepted;
	counts.protocol_errors = a->control.errors;
	counts.conns_refused = a->control.refused;
	counts.conns_dropped = a->control.dropped;
	counts.outq_bytes = a->control.outq_total;
	counts.moved_ignored = a->swap.moved_ignored;
	metrics_text_init(&r.t);
	if (render_prepare(&r) == 0) {
		render_daemon(&r);
		render_devices(&r);
		render_groups(&r);
		render_client_devices(&r);
		render_client_states(&r);
		metrics_render_counts(&r.t, &counts);
		text = metrics_text_take(&r.t, len);
	}
	metrics_text_free(&r.t);
	free(r.uuid);
	free(r.index);
	free(r.borrowed);
	return text;
}
