/*
 * gpufracctl's JSON output: every query's result as one line (an event
 * list as one line per event), with string escaping that yields valid JSON
 * whatever bytes the daemon sent.
 */
#include <inttypes.h>
#include <string.h>

#include "ctl_json.h"
#include "names.h"
#include "proto.h"
#include "ctl_print.h"
#include "uuid.h"

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0. */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		if (s[0] == 0xe0)
			lo = 0xa0;	/* overlong */
		if (s[0] == 0xed)
			hi = 0x9f;	/* surrogates */
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		if (s[0] == 0xf0)
			lo = 0x90;	/* overlong */
		if (s[0] == 0xf4)
			hi = 0x8f;	/* beyond U+10FFFF */
	} else
		return 0;
	if (len > n || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

void
ctl_json_string(FILE *fp, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strnlen(str, len), i = 0, k;

	fputc('"', fp);
	while (i < n) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\') {
			fputc('\\', fp);
			fputc(c, fp);
		} else if (c == '\n')
			fputs("\\n", fp);
		else if (c == '\t')
			fputs("\\t", fp);
		else if (c < 0x20)
			fprintf(fp, "\\u%04x", c);
		else if (c < 0x80)
			fputc(c, fp);
		else if ((k = utf8_len(s + i, n - i)) > 0) {
			fwrite(s + i, 1, k, fp);
			i += k;
			continue;
		} else
			fputs("\\ufffd", fp);
		i++;
	}
	fputc('"', fp);
}

static void
json_uuid(FILE *fp, const uint8_t uuid[GF_UUID_LEN])
{
	char s[UUID_STR_LEN];

	if (uuid_is_zero(uuid))
		fputs("null", fp);
	else
		fprintf(fp, "\"%s\"", uuid_format(uuid, s, sizeof(s)));
}

/* The driver's walls on the device uuid, as the daemon read them back. */
static void
json_walls(FILE *fp, const struct ctl_status *st,
    const uint8_t uuid[GF_UUID_LEN])
{
	const char *sep = "";
	size_t i;

	fputs(",\"walls\":[", fp);
	for (i = 0; i < st->nwalls; i++) {
		const struct gf_wall *w = &st->walls[i];

		if (memcmp(w->uuid, uuid, GF_UUID_LEN) != 0)
			continue;
		fprintf(fp, "%s{\"cgroup\":", sep);
		ctl_json_string(fp, w->dir, sizeof(w->dir));
		fputs(",\"group\":", fp);
		ctl_json_string(fp, w->group, sizeof(w->group));
		fprintf(fp, ",\"read\":%s,\"hard_bytes\":%" PRIu64
		    ",\"soft_bytes\":%" PRIu64 ",\"used_bytes\":%" PRIu64 "}",
		    w->read ? "true" : "false", w->hard, w->soft, w->used);
		sep = ",";
	}
	fputc(']', fp);
}

static void
json_device(FILE *fp, const struct ctl_status *st,
    const struct gf_device_status *dev)
{
	fprintf(fp, "{\"index\":%" PRIu32 ",\"uuid\":", dev->index);
	json_uuid(fp, dev->uuid);
	fputs(",\"name\":", fp);
	ctl_json_string(fp, dev->name, sizeof(dev->name));
	fprintf(fp, ",\"total_bytes\":%" PRIu64 ",\"reserve_bytes\":%"
	    PRIu64 ",\"capacity_bytes\":%" PRIu64 ",\"used_bytes\":%"
	    PRIu64 ",\"leased_bytes\":%" PRIu64 ",\"host_bytes\":%" PRIu64
	    ",\"clients\":%" PRIu32 ",\"swap\":%s", dev->total, dev->reserve,
	    dev->capacity, dev->used, dev->leased, dev->host, dev->nclients,
	    st->daemon.swap_available ? "true" : "false");
	fprintf(fp, ",\"guaranteed_bytes\":%" PRIu64 ",\"free_bytes\":%"
	    PRIu64 ",\"lent_bytes\":%" PRIu64 ",\"foreign_bytes\":%" PRIu64
	    ",\"releasing_bytes\":%" PRIu64,
	    ctl_status_guaranteed(st, dev->uuid), ctl_device_free(dev),
	    dev->lent, dev->foreign, dev->releasing);
	/* A daemon too old to say (0) says they are not available. */
	fprintf(fp, ",\"driver_limits\":{\"available\":%s,\"groups\":%"
	    PRIu32 ",\"reason\":", dev->driver_limits == GF_DLIM_ON ?
	    "true" : "false", dev->driver_groups);
	ctl_json_string(fp, dev->driver_reason, sizeof(dev->driver_reason));
	json_walls(fp, st, dev->uuid);
	fputs("}}", fp);
}

static void
json_group(FILE *fp, const struct gf_group_status *g)
{
	fputs("{\"name\":", fp);
	ctl_json_string(fp, g->name, sizeof(g->name));
	fputs(",\"device\":", fp);
	json_uuid(fp, g->uuid);
	fprintf(fp, ",\"limit_bytes\":%" PRIu64 ",\"guarantee_bytes\":%"
	    PRIu64 ",\"used_bytes\":%" PRIu64 ",\"priority\":%" PRId32
	    ",\"resolver\":\"%s\",\"on_preempt\":\"%s\",\"swap_engine\":"
	    "\"%s\",\"clients\":%"
	    PRIu32 ",\"runtime\":%s,\"borrowed_bytes\":%" PRIu64
	    ",\"set_aside\":%s}",
	    g->limit, g->guarantee, g->used, g->priority,
	    name_resolver(g->resolver), name_on_preempt(g->on_preempt),
	    g->swap_engine == GF_ENGINE_COPY ? "copy" : "checkpoint",
	    g->nclients, g->runtime ? "true" : "false", g->borrowed,
	    g->runtime == GF_GROUP_ASIDE ? "true" : "false");
}

void
ctl_json_status(FILE *fp, const struct ctl_status *st)
{
	const struct gf_status *d = &st->daemon;
	size_t i;

	fputs("{\"daemon\":{\"version\":", fp);
	ctl_json_string(fp, d->version, sizeof(d->version));
	fprintf(fp, ",\"pid\":%" PRIu32 ",\"uptime_ms\":%" PRIu64
	    ",\"clients\":%" PRIu32 "},\"swap\":{\"available\":%s,"
	    "\"engine\":\"%s\",\"host_limit_bytes\":%" PRIu64
	    ",\"host_bytes\":%" PRIu64 ",\"host_kept_bytes\":%" PRIu64
	    ",\"reason\":", d->pid, d->uptime_ms,
	    d->nclients, d->swap_available ? "true" : "false",
	    d->swap_engine == GF_ENGINE_COPY ? "copy" : "checkpoint",
	    d->swap_host_limit, d->swap_host_used, d->swap_host_kept);
	ctl_json_string(fp, d->swap_reason, sizeof(d->swap_reason));
	fputs("},\"devices\":[", fp);
	for (i = 0; i < st->ndevices; i++) {
		if (i > 0)
			fputc(',', fp);
		json_device(fp, st, &st->devices[i]);
	}
	fputs("],\"groups\":[", fp);
	for (i = 0; i < st->ngroups; i++) {
		if (i > 0)
			fputc(',', fp);
		json_group(fp, &st->groups[i]);
	}
	fputs("]}\n", fp);
}

/*
 * The records of one process, clients[0..n): its state is the most
 * severe of them (a process waiting on one device is waiting).
 */
static void
json_client(FILE *fp, const struct gf_client *clients, size_t n)
{
	const struct gf_client *c = &clients[0];
	uint32_t state = c->state;
	size_t i, ndev = 0;

	for (i = 1; i < n; i++)
		if (clients[i].state > state)
			state = clients[i].state;
	fprintf(fp, "{\"pid\":%" PRIu32 ",\"uid\":%" PRIu32 ",\"group\":",
	    c->pid, c->uid);
	ctl_json_string(fp, c->group, sizeof(c->group));
	fprintf(fp, ",\"priority\":%" PRId32 ",\"state\":\"%s\","
	    "\"idle_ms\":", c->priority, name_state(state));
	if (c->idle_ms == UINT64_MAX)
		fputs("null", fp);
	else
		fprintf(fp, "%" PRIu64, c->idle_ms);
	/* its libgpufrac's release; null: one too old to say */
	fputs(",\"version\":", fp);
	if (c->version[0] == '\0')
		fputs("null", fp);
	else
		ctl_json_string(fp, c->version, sizeof(c->version));
	fputs(",\"devices\":[", fp);
	for (i = 0; i < n; i++) {
		c = &clients[i];
		if (uuid_is_zero(c->uuid))
			continue;	/* no device opened yet */
		fprintf(fp, "%s{\"uuid\":", ndev++ ? "," : "");
		json_uuid(fp, c->uuid);
		fprintf(fp, ",\"used_bytes\":%" PRIu64 ",\"leased_bytes\":%"
		    PRIu64 ",\"host_bytes\":%" PRIu64 ",\"limit_bytes\":%"
		    PRIu64 ",\"guarantee_bytes\":%" PRIu64 "}", c->used,
		    c->leased, c->host, c->limit, c->guarantee);
	}
	fputs("]}", fp);
}

void
ctl_json_ps(FILE *fp, const struct gf_client *clients, size_t n)
{
	size_t i, j;

	fputs("{\"clients\":[", fp);
	for (i = 0; i < n; i = j) {
		/* One process's rows: a pid is not a process (issue 39). */
		for (j = i + 1; j < n && clients[j].pid == clients[i].pid &&
		    clients[j].record == clients[i].record; j++)
			;
		if (i > 0)
			fputc(',', fp);
		json_client(fp, &clients[i], j - i);
	}
	fputs("]}\n", fp);
}

void
ctl_json_allocs(FILE *fp, uint32_t pid, const struct gf_alloc *allocs,
    size_t n)
{
	size_t i;

	fprintf(fp, "{\"pid\":%" PRIu32 ",\"allocations\":[", pid);
	for (i = 0; i < n; i++) {
		const struct gf_alloc *a = &allocs[i];

		fprintf(fp, "%s{\"ptr\":\"0x%" PRIx64 "\",\"size\":%" PRIu64
		    ",\"kind\":\"%s\",\"device\":", i ? "," : "", a->ptr,
		    a->size, name_kind(a->kind));
		json_uuid(fp, a->uuid);
		fprintf(fp, ",\"age_ms\":%" PRIu64 "}", a->age_ms);
	}
	fputs("]}\n", fp);
}

void
ctl_json_event(FILE *fp, const struct gf_event *ev)
{
	char reason[PROTO_REASON_MAX];

	fprintf(fp, "{\"time_ms\":%" PRIu64 ",\"event\":\"%s\",\"pid\":%"
	    PRIu32 ",\"group\":", ev->time_ms, name_event(ev->kind),
	    ev->pid);
	ctl_json_string(fp, ev->group, sizeof(ev->group));
	fputs(",\"device\":", fp);
	json_uuid(fp, ev->uuid);
	fprintf(fp, ",\"bytes\":%" PRIu64 ",\"duration_ms\":%" PRIu32
	    ",\"reason\":", ev->bytes, ev->duration_ms);
	proto_event_reason(ev, reason);
	ctl_json_string(fp, reason, sizeof(reason));
	fputs("}\n", fp);
}

void
ctl_json_reload(FILE *fp)
{
	fputs("{\"reloaded\":true}\n", fp);
}

void
ctl_json_swap(FILE *fp, uint32_t pid, int out)
{
	fprintf(fp, "{\"pid\":%" PRIu32 ",\"swapped\":\"%s\"}\n", pid,
	    out ? "out" : "in");
}
