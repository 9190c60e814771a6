/*
 * gpufracctl's human output: aligned tables with IEC sizes and short ages,
 * one per query.
 */
#include <inttypes.h>
#include <string.h>

#include "ctl_print.h"
#include "ctl_table.h"
#include "units.h"
#include "uuid.h"

#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

const char *
ctl_state_name(uint32_t state)
{
	static const char *const names[] = {
		[GF_STATE_RUNNING] = "running",
		[GF_STATE_WAITING] = "waiting",
		[GF_STATE_SWAPPED] = "swapped",
	};

	return state < NITEMS(names) ? names[state] : "unknown";
}

const char *
ctl_kind_name(uint32_t kind)
{
	static const char *const names[] = {
		[GF_KIND_MEM] = "mem",
		[GF_KIND_PITCH] = "pitch",
		[GF_KIND_MANAGED] = "managed",
	};

	return kind < NITEMS(names) && names[kind] ? names[kind] : "unknown";
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

/* An age or an uptime, short: "250ms", "1.2s", "3m4s", "2h5m", "3d4h". */
static char *
duration_format(uint64_t ms, char *buf, size_t size)
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
ctl_print_status(FILE *fp, const struct ctl_status *st)
{
	static const struct ctl_column cols[] = {
		{ "INDEX", 1 }, { "UUID", 0 }, { "NAME", 0 }, { "TOTAL", 1 },
		{ "RESERVE", 1 }, { "SHAREABLE", 1 }, { "USED", 1 },
		{ "CLIENTS", 1 }, { "SWAP", 0 },
	};
	const struct gf_status *d = &st->daemon;
	char version[GF_VERSION_LEN], up[32];
	struct ctl_table t;
	size_t i;

	fprintf(fp, "gpufracd %s, pid %" PRIu32 ", up %s, %" PRIu32
	    " client%s\n\n",
	    ctl_printable(d->version, sizeof(d->version), version,
	    sizeof(version)), d->pid, duration_format(d->uptime_ms, up,
	    sizeof(up)), d->nclients, d->nclients == 1 ? "" : "s");
	ctl_table_init(&t, cols, NITEMS(cols));
	for (i = 0; i < st->ndevices; i++) {
		const struct gf_device_status *dev = &st->devices[i];
		char index[16], uuid[UUID_STR_LEN], name[GF_NAME_LEN];
		char total[32], reserve[32], capacity[32], used[32];
		char clients[16];
		const char *row[] = { index, uuid, name, total, reserve,
		    capacity, used, clients, dev->swap_support ? "yes" : "no" };

		snprintf(index, sizeof(index), "%" PRIu32, dev->index);
		uuid_format(dev->uuid, uuid, sizeof(uuid));
		ctl_printable(dev->name, sizeof(dev->name), name,
		    sizeof(name));
		size_format(dev->total, total, sizeof(total));
		size_format(dev->reserve, reserve, sizeof(reserve));
		size_format(dev->capacity, capacity, sizeof(capacity));
		size_format(dev->used, used, sizeof(used));
		snprintf(clients, sizeof(clients), "%" PRIu32, dev->nclients);
		ctl_table_add(&t, row, NITEMS(row));
	}
	ctl_table_print(&t, fp);
	ctl_table_free(&t);
}

void
ctl_print_ps(FILE *fp, const struct gf_client *clients, size_t n)
{
	static const struct ctl_column cols[] = {
		{ "PID", 1 }, { "UID", 1 }, { "GROUP", 0 }, { "DEVICE", 0 },
		{ "USED", 1 }, { "LIMIT", 1 }, { "GUARANTEE", 1 },
		{ "STATE", 0 },
	};
	struct ctl_table t;
	size_t i;

	ctl_table_init(&t, cols, NITEMS(cols));
	for (i = 0; i < n; i++) {
		const struct gf_client *c = &clients[i];
		char pid[16], uid[16], group[GF_GROUP_LEN];
		char uuid[UUID_STR_LEN], used[32], limit[32], guarantee[32];
		const char *row[] = { pid, uid, group, uuid, used, limit,
		    guarantee, ctl_state_name(c->state) };

		snprintf(pid, sizeof(pid), "%" PRIu32, c->pid);
		snprintf(uid, sizeof(uid), "%" PRIu32, c->uid);
		ctl_printable(c->group, sizeof(c->group), group,
		    sizeof(group));
		if (group[0] == '\0')
			strcpy(group, "-");
		if (uuid_is_zero(c->uuid)) {
			/* no device opened yet: nothing is charged */
			strcpy(uuid, "-");
			strcpy(used, "-");
			strcpy(limit, "-");
			strcpy(guarantee, "-");
		} else {
			uuid_format(c->uuid, uuid, sizeof(uuid));
			size_format(c->used, used, sizeof(used));
			size_format(c->limit, limit, sizeof(limit));
			size_format(c->guarantee, guarantee,
			    sizeof(guarantee));
		}
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
		const char *row[] = { ptr, size, ctl_kind_name(a->kind), uuid,
		    age };

		snprintf(ptr, sizeof(ptr), "0x%" PRIx64, a->ptr);
		size_format(a->size, size, sizeof(size));
		if (uuid_is_zero(a->uuid))
			strcpy(uuid, "-");
		else
			uuid_format(a->uuid, uuid, sizeof(uuid));
		duration_format(a->age_ms, age, sizeof(age));
		ctl_table_add(&t, row, NITEMS(row));
	}
	ctl_table_print(&t, fp);
	ctl_table_free(&t);
}
