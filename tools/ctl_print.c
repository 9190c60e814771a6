/*
 * gpufracctl's human output: aligned tables with IEC sizes and short ages,
 * one per query.
 */
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "ctl_print.h"
#include "ctl_table.h"
#include "names.h"
#include "proto.h"
#include "units.h"
#include "uuid.h"

#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

uint64_t
ctl_status_guaranteed(const struct ctl_status *st,
    const uint8_t uuid[GF_UUID_LEN])
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < st->ngroups; i++) {
		const struct gf_group_status *g = &st->groups[i];

		if (memcmp(g->uuid, uuid, GF_UUID_LEN) != 0)
			continue;
		/* saturate: a daemon's nonsense must not wrap around */
		sum = g->guarantee > UINT64_MAX - sum ? UINT64_MAX :
		    sum + g->guarantee;
	}
	return sum;
}

uint64_t
ctl_free_bytes(uint64_t limit, uint64_t used)
{
	return used < limit ? limit - used : 0;
}

uint64_t
ctl_device_free(const struct gf_device_status *dev)
{
	return ctl_free_bytes(dev->capacity, dev->used > UINT64_MAX -
	    dev->foreign ? UINT64_MAX : dev->used + dev->foreign);
}

char *
ctl_printable(const char *s, size_t len, char *buf, size_t size)
{
	size_t i;

	if (size == 0)
		return buf;
	for (i = 0; i < len && i + 1 < size && s[i] != '\0'; i++) {
		unsigned char c = (unsigned char)s[i];

		buf[i] = c < 0x20 || c == 0x7f ? '?' : s[i];
	}
	buf[i] = '\0';
	return buf;
}

size_t
ctl_text_width(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

char *
ctl_duration_format(uint64_t ms, char *buf, size_t size)
{
	unsigned long long s = ms / 1000;

	if (ms < 1000)
		snprintf(buf, size, "%llums", (unsigned long long)ms);
	else if (s < 60)
		snprintf(buf, size, "%llu.%llus", s,
		    (unsigned long long)(ms % 1000 / 100));
	else if (s < 3600)
		snprintf(buf, size, "%llum%llus", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, size, "%lluh%llum", s / 3600, s % 3600 / 60);
	else
		snprintf(buf, size, "%llud%lluh", s / 86400, s % 86400 / 3600);
	return buf;
}

void
ctl_client_idle_version(const struct gf_client *c, char *idle,
    size_t idlelen, char *version, size_t versionlen)
{
	if (c->idle_ms == UINT64_MAX)
		snprintf(idle, idlelen, "-");
	else
		ctl_duration_format(c->idle_ms, idle, idlelen);
	ctl_printable(c->version, sizeof(c->version), version, versionlen);
	if (version[0] == '\0')
		snprintf(version, versionlen, "-");
}

static void
status_devices(FILE *fp, const struct ctl_status *st)
{
	static const struct ctl_column cols[] = {
		{ "INDEX", 1 }, { "UUID", 0 }, { "TOTAL", 1 },
		{ "RESERVE", 1 }, { "CAPACITY", 1 }, { "GUARANTEED", 1 },
		{ "USED", 1 }, { "LEASED", 1 }, { "RELEASING", 1 },
		{ "FOREIGN", 1 }, { "FREE", 1 }, { "HOST", 1 },
		{ "LENT", 1 }, { "CLIENTS", 1 }, { "NAME", 0 },
	};
	struct ctl_table t;
	size_t i;

	ctl_table_init(&t, cols, NITEMS(cols));
	for (i = 0; i < st->ndevices; i++) {
		const struct gf_device_status *dev = &st->devices[i];
		char index[16], uuid[UUID_STR_LEN], name[GF_NAME_LEN];
		char total[32], reserve[32], capacity[32], guaranteed[32];
		char used[32], leased[32], avail[32], host[32], clients[16];
		char lent[32], releasing[32], foreign[32];
		const char *row[] = { index, uuid, total, reserve, capacity,
		    guaranteed, used, leased, releasing, foreign, avail, host,
		    lent, clients, name };

		snprintf(index, sizeof(index), "%" PRIu32, dev->index);
		uuid_format(dev->uuid, uuid, sizeof(uuid));
		ctl_printable(dev->name, sizeof(dev->name), name,
		    sizeof(name));
		size_format(dev->total, total, sizeof(total));
		size_format(dev->reserve, reserve, sizeof(reserve));
		size_format(dev->capacity, capacity, sizeof(capacity));
		size_format(ctl_status_guaranteed(st, dev->uuid), guaranteed,
		    sizeof(guaranteed));
		size_format(dev->used, used, sizeof(used));
		size_format(dev->leased, leased, sizeof(leased));
		size_format(dev->releasing, releasing, sizeof(releasing));
		size_format(dev->foreign, foreign, sizeof(foreign));
		size_format(ctl_device_free(dev), avail, sizeof(avail));
		size_format(dev->host, host, sizeof(host));
		size_format(dev->lent, lent, sizeof(lent));
		snprintf(clients, sizeof(clients), "%" PRIu32, dev->nclients);
		ctl_table_add(&t, row, NITEMS(row));
	}
	ctl_table_print(&t, fp);
	ctl_table_free(&t);
}

static void
status_groups(FILE *fp, const struct ctl_status *st)
{
	static const struct ctl_column cols[] = {
		{ "GROUP", 0 }, { "DEVICE", 0 }, { "LIMIT", 1 },
		{ "GUARANTEE", 1 }, { "USED", 1 }, { "FREE", 1 },
		{ "BORROWED", 1 }, { "PRIORITY", 1 }, { "RESOLVER", 0 },
		{ "SWAP", 0 }, { "CLIENTS", 1 }, { "FROM", 0 },
	};
	struct ctl_table t;
	size_t i;

	ctl_table_init(&t, cols, NITEMS(cols));
	for (i = 0; i < st->ngroups; i++) {
		const struct gf_group_status *g = &st->groups[i];
		char name[GF_GROUP_LEN], uuid[UUID_STR_LEN], limit[32];
		char guarantee[32], used[32], avail[32], priority[16];
		char clients[16], borrowed[32];
		const char *row[] = { name, uuid, limit, guarantee, used,
		    avail, borrowed, priority, name_resolver(g->resolver),
		    g->swap_engine == GF_ENGINE_COPY ? "copy" : "checkpoint",
		    clients, g->runtime == GF_GROUP_ASIDE ? "set aside" :
		    g->runtime ? "run-time" : "config" };

		ctl_printable(g->name, sizeof(g->name), name, sizeof(name));
		if (name[0] == '\0')
			strcpy(name, "-");
		if (uuid_is_zero(g->uuid))
			strcpy(uuid, "-");
		else
			uuid_format(g->uuid, uuid, sizeof(uuid));
		size_format(g->limit, limit, sizeof(limit));
		size_format(g->guarantee, guarantee, sizeof(guarantee));
		size_format(g->used, used, sizeof(used));
		size_format(g->borrowed, borrowed, sizeof(borrowed));
		size_format(ctl_free_bytes(g->limit, g->used), avail,
		    sizeof(avail));
		snprintf(priority, sizeof(priority), "%" PRId32, g->priority);
		snprintf(clients, sizeof(clients), "%" PRIu32, g->nclients);
		ctl_table_add(&t, row, NITEMS(row));
	}
	ctl_table_print(&t, fp);
	ctl_table_free(&t);
}

void
ctl_print_daemon(FILE *fp, const struct ctl_status *st)
{
	const struct gf_status *d = &st->daemon;
	char version[GF_VERSION_LEN], up[32], reason[GF_REASON_LEN];
	char used[32], limit[32];

	fprintf(fp, "gpufracd %s, pid %" PRIu32 ", up %s, %" PRIu32
	    " client%s\n",
	    ctl_printable(d->version, sizeof(d->version), version,
	    sizeof(version)), d->pid, ctl_duration_format(d->uptime_ms, up,
	    sizeof(up)), d->nclients, d->nclients == 1 ? "" : "s");
	if (d->swap_available) {
		fprintf(fp, "host swap: available, engine %s, %s",
		    d->swap_engine == GF_ENGINE_COPY ? "copy" : "checkpoint",
		    size_format(d->swap_host_used, used, sizeof(used)));
		if (d->swap_host_limit != 0)
			fprintf(fp, " of %s", size_format(d->swap_host_limit,
			    limit, sizeof(limit)));
		fputs(" on host", fp);
		if (d->swap_host_kept != 0)
			fprintf(fp, " (%s of it kept pinned for the next swap-out)",
			    size_format(d->swap_host_kept, used, sizeof(used)));
		fputc('\n', fp);
	}
	else
		fprintf(fp, "host swap: unavailable: %s\n",
		    ctl_printable(d->swap_reason, sizeof(d->swap_reason), reason,
		    sizeof(reason)));
}

/* The driver's walls on the device uuid, one line each, as the daemon
 * read them back from it (issue 38 E). */
static void
status_walls(FILE *fp, const struct ctl_status *st,
    const uint8_t uuid[GF_UUID_LEN])
{
	char dir[GF_WALL_DIR_LEN], group[GF_GROUP_LEN], hard[16], soft[16],
	    used[16];
	size_t i;

	for (i = 0; i < st->nwalls; i++) {
		const struct gf_wall *w = &st->walls[i];

		if (memcmp(w->uuid, uuid, GF_UUID_LEN) != 0)
			continue;
		fprintf(fp, "  wall of group '%s' on '%s': ", ctl_printable(
		    w->group, sizeof(w->group), group, sizeof(group)),
		    ctl_printable(w->dir, sizeof(w->dir), dir, sizeof(dir)));
		if (!w->read)
			fputs("the driver does not say\n", fp);
		else
			fprintf(fp, "hard %s, soft %s, used %s\n",
			    size_format(w->hard, hard, sizeof(hard)),
			    size_format(w->soft, soft, sizeof(soft)),
			    size_format(w->used, used, sizeof(used)));
	}
}

/* Each device's own limits per cgroup (driver r615), as the daemon says:
 * one too old to say, nothing. */
static void
status_driver_limits(FILE *fp, const struct ctl_status *st)
{
	char reason[GF_DLIM_REASON_LEN];
	size_t i;

	for (i = 0; i < st->ndevices; i++) {
		const struct gf_device_status *dev = &st->devices[i];

		if (dev->driver_limits == GF_DLIM_ON) {
			fprintf(fp, "device %" PRIu32 ": driver limits: on (%"
			    PRIu32 " group%s)\n", dev->index,
			    dev->driver_groups,
			    dev->driver_groups == 1 ? "" : "s");
			status_walls(fp, st, dev->uuid);
		} else if (dev->driver_limits == GF_DLIM_OFF)
			fprintf(fp, "device %" PRIu32 ": driver limits: off: "
			    "%s\n", dev->index, ctl_printable(dev->driver_reason,
			    sizeof(dev->driver_reason), reason, sizeof(reason)));
	}
}

void
ctl_print_status(FILE *fp, const struct ctl_status *st)
{
	ctl_print_daemon(fp, st);
	status_driver_limits(fp, st);
	fputc('\n', fp);
	status_devices(fp, st);
	fputc('\n', fp);
	status_groups(fp, st);
}

void
ctl_print_ps(FILE *fp, const struct gf_client *clients, size_t n)
{
	static const struct ctl_column cols[] = {
		{ "PID", 1 }, { "UID", 1 }, { "GROUP", 0 },
		{ "PRIORITY", 1 }, { "DEVICE", 0 }, { "USED", 1 },
		{ "LEASED", 1 }, { "LIMIT", 1 }, { "GUARANTEE", 1 }, { "HOST", 1 },
		{ "IDLE", 1 }, { "STATE", 0 }, { "VERSION", 0 },
	};
	struct ctl_table t;
	size_t i;

	ctl_table_init(&t, cols, NITEMS(cols));
	for (i = 0; i < n; i++) {
		const struct gf_client *c = &clients[i];
		char pid[16], uid[16], group[GF_GROUP_LEN], priority[16];
		char uuid[UUID_STR_LEN], used[32], limit[32], guarantee[32];
		char host[32], idle[32], leased[32], version[GF_VERSION_LEN];
		const char *row[] = { pid, uid, group, priority, uuid, used,
		    leased, limit, guarantee, host, idle,
		    name_state(c->state), version };

		snprintf(pid, sizeof(pid), "%" PRIu32, c->pid);
		snprintf(uid, sizeof(uid), "%" PRIu32, c->uid);
		snprintf(priority, sizeof(priority), "%" PRId32, c->priority);
		ctl_printable(c->group, sizeof(c->group), group,
		    sizeof(group));
		if (group[0] == '\0')
			strcpy(group, "-");
		if (uuid_is_zero(c->uuid)) {
			/* no device opened yet: nothing is charged */
			strcpy(uuid, "-");
			strcpy(used, "-");
			strcpy(leased, "-");
			strcpy(limit, "-");
			strcpy(guarantee, "-");
			strcpy(host, "-");
		} else {
			uuid_format(c->uuid, uuid, sizeof(uuid));
			size_format(c->used, used, sizeof(used));
			size_format(c->leased, leased, sizeof(leased));
			size_format(c->limit, limit, sizeof(limit));
			size_format(c->guarantee, guarantee,
			    sizeof(guarantee));
			size_format(c->host, host, sizeof(host));
		}
		ctl_client_idle_version(c, idle, sizeof(idle), version,
		    sizeof(version));
		ctl_table_add(&t, row, NITEMS(row));
	}
	ctl_table_print(&t, fp);
	ctl_table_free(&t);
}

void
ctl_print_allocs(FILE *fp, const struct gf_alloc *allocs, size_t n)
{
	static const struct ctl_column cols[] = {
		{ "PTR", 0 }, { "SIZE", 1 }, { "KIND", 0 }, { "DEVICE", 0 },
		{ "AGE", 1 },
	};
	struct ctl_table t;
	size_t i;

	ctl_table_init(&t, cols, NITEMS(cols));
	for (i = 0; i < n; i++) {
		const struct gf_alloc *a = &allocs[i];
		char ptr[24], size[32], uuid[UUID_STR_LEN], age[32];
		const char *row[] = { ptr, size, name_kind(a->kind), uuid,
		    age };

		snprintf(ptr, sizeof(ptr), "0x%" PRIx64, a->ptr);
		size_format(a->size, size, sizeof(size));
		if (uuid_is_zero(a->uuid))
			strcpy(uuid, "-");
		else
			uuid_format(a->uuid, uuid, sizeof(uuid));
		ctl_duration_format(a->age_ms, age, sizeof(age));
		ctl_table_add(&t, row, NITEMS(row));
	}
	ctl_table_print(&t, fp);
	ctl_table_free(&t);
}

/* Local time of day with milliseconds: "14:03:27.512". */
static char *
clock_format(uint64_t ms, char *buf, size_t size)
{
	time_t sec = (time_t)(ms / 1000);
	struct tm tm;

	if (localtime_r(&sec, &tm) == NULL) {
		snprintf(buf, size, "-");
		return buf;
	}
	snprintf(buf, size, "%02d:%02d:%02d.%03u", tm.tm_hour, tm.tm_min,
	    tm.tm_sec, (unsigned)(ms % 1000));
	return buf;
}

void
ctl_print_events_init(struct ctl_table *t, int follow)
{
	static const struct ctl_column cols[] = {
		{ "TIME", 0 }, { "EVENT", 0 }, { "PID", 1 }, { "GROUP", 0 },
		{ "DEVICE", 0 }, { "SIZE", 1 }, { "REASON", 0 },
	};
	/* "14:03:27.512", "swap-skip", a pid_max pid, a short name, a uuid,
	 * "1023.9MiB" */
	static const size_t widths[] = { 12, 9, 7, 12, UUID_STR_LEN - 1, 9 };
	size_t i;

	tzset();
	ctl_table_init(t, cols, NITEMS(cols));
	if (follow)
		for (i = 0; i < NITEMS(widths); i++)
			ctl_table_widen(t, i, widths[i]);
}

void
ctl_print_event(struct ctl_table *t, const struct gf_event *ev)
{
	char when[32], pid[16], group[GF_GROUP_LEN], uuid[UUID_STR_LEN];
	char size[32], reason[PROTO_REASON_MAX], whole[PROTO_REASON_MAX];
	const char *row[] = { when, name_event(ev->kind), pid, group,
	    uuid, size, reason };

	clock_format(ev->time_ms, when, sizeof(when));
	snprintf(pid, sizeof(pid), "%" PRIu32, ev->pid);
	ctl_printable(ev->group, sizeof(ev->group), group, sizeof(group));
	if (group[0] == '\0')
		strcpy(group, "-");
	if (uuid_is_zero(ev->uuid))
		strcpy(uuid, "-");
	else
		uuid_format(ev->uuid, uuid, sizeof(uuid));
	size_format(ev->bytes, size, sizeof(size));
	proto_event_reason(ev, whole);
	ctl_printable(whole, sizeof(whole), reason, sizeof(reason));
	if (reason[0] == '\0')
		strcpy(reason, "-");
	ctl_table_add(t, row, NITEMS(row));
}

void
ctl_print_events(FILE *fp, const struct gf_event *events, size_t n)
{
	struct ctl_table t;
	size_t i;

	ctl_print_events_init(&t, 0);
	for (i = 0; i < n; i++)
		ctl_print_event(&t, &events[i]);
	ctl_table_flush(&t, fp);
	ctl_table_free(&t);
}
