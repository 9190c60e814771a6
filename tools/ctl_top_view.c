/*
 * gpufracctl top's text: the tables of one look, each rendered with
 * ctl_table.c as the other commands' are, and cut into lines.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl_print.h"
#include "ctl_table.h"
#include "ctl_top_view.h"
#include "log.h"
#include "names.h"
#include "units.h"
#include "uuid.h"

#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

/* Cells of a bar: "[#####...............]  25%". */
#define BAR_WIDTH	20
#define BAR_LEN		(BAR_WIDTH + 16)

static void
text_add(struct top_text *t, const char *line, size_t len, int head)
{
	char *copy;

	if (t->n == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 64;
		struct top_line *p = reallocarray(t->lines, ncap,
		    sizeof(*p));

		if (p == NULL)
			fatalx("out of memory");
		t->lines = p;
		t->cap = ncap;
	}
	if ((copy = strndup(line, len)) == NULL)
		fatalx("out of memory");
	t->lines[t->n].text = copy;
	t->lines[t->n].head = head;
	t->n++;
}

/* What print wrote, as lines; the first is a header row if head is set. */
static void
text_capture(struct top_text *t, void (*print)(FILE *, const void *),
    const void *arg, int head)
{
	char *buf = NULL, *p, *nl;
	size_t size = 0;
	FILE *fp;

	if ((fp = open_memstream(&buf, &size)) == NULL)
		fatalx("out of memory");
	print(fp, arg);
	if (fclose(fp) != 0)
		fatalx("out of memory");
	for (p = buf; *p != '\0'; p = nl + 1) {
		if ((nl = strchr(p, '\n')) == NULL)
			nl = p + strlen(p);
		text_add(t, p, (size_t)(nl - p), head && p == buf);
		if (*nl == '\0')
			break;
	}
	free(buf);
}

static void
print_table(FILE *fp, const void *arg)
{
	ctl_table_print(arg, fp);
}

static void
print_daemon(FILE *fp, const void *arg)
{
	ctl_print_daemon(fp, arg);
}

/* A table's lines, then a blank one; the table is freed. */
static void
text_table(struct top_text *t, struct ctl_table *tab)
{
	text_capture(t, print_table, tab, 1);
	ctl_table_free(tab);
	text_add(t, "", 0, 0);
}

/* used of total as a bar and a percentage; an unknown total, no bar. */
static char *
bar_format(uint64_t used, uint64_t total, char *buf, size_t size)
{
	char bar[BAR_WIDTH + 1];
	double share;
	size_t fill;

	if (total == 0) {
		memset(bar, '.', BAR_WIDTH);
		bar[BAR_WIDTH] = '\0';
		snprintf(buf, size, "[%s]    -", bar);
		return buf;
	}
	share = (double)used / (double)total;
	fill = share >= 1 ? BAR_WIDTH : (size_t)(share * BAR_WIDTH);
	if (fill == 0 && used > 0)
		fill = 1;		/* any use shows */
	memset(bar, '#', fill);
	memset(bar + fill, '.', BAR_WIDTH - fill);
	bar[BAR_WIDTH] = '\0';
	snprintf(buf, size, "[%s] %3.0f%%", bar, share > 9.99 ? 999 :
	    share * 100);
	return buf;
}

static void
devices_table(struct top_text *t, const struct top_data *d)
{
	static const struct ctl_column cols[] = {
		{ "INDEX", 1 }, { "NAME", 0 }, { "USE", 0 }, { "USED", 1 },
		{ "CAPACITY", 1 }, { "FREE", 1 }, { "LEASED", 1 },
		{ "HOST", 1 }, { "LENT", 1 }, { "CLIENTS", 1 }, { "UUID", 0 },
	};
	struct ctl_table tab;
	size_t i;

	ctl_table_init(&tab, cols, NITEMS(cols));
	for (i = 0; i < d->st.ndevices; i++) {
		const struct gf_device_status *dev = &d->st.devices[i];
		char index[16], name[GF_NAME_LEN], bar[BAR_LEN], used[32];
		char capacity[32], avail[32], leased[32], host[32], lent[32];
		char clients[16], uuid[UUID_STR_LEN];
		const char *row[] = { index, name, bar, used, capacity,
		    avail, leased, host, lent, clients, uuid };

		snprintf(index, sizeof(index), "%" PRIu32, dev->index);
		ctl_printable(dev->name, sizeof(dev->name), name,
		    sizeof(name));
		bar_format(dev->used, dev->capacity, bar, sizeof(bar));
		size_format(dev->used, used, sizeof(used));
		size_format(dev->capacity, capacity, sizeof(capacity));
		size_format(ctl_device_free(dev), avail,
		    sizeof(avail));
		size_format(dev->leased, leased, sizeof(leased));
		size_format(dev->host, host, sizeof(host));
		size_format(dev->lent, lent, sizeof(lent));
		snprintf(clients, sizeof(clients), "%" PRIu32, dev->nclients);
		uuid_format(dev->uuid, uuid, sizeof(uuid));
		ctl_table_add(&tab, row, NITEMS(row));
	}
	text_table(t, &tab);
}

static void
groups_table(struct top_text *t, const struct top_data *d)
{
	static const struct ctl_column cols[] = {
		{ "GROUP", 0 }, { "DEVICE", 1 }, { "USE", 0 }, { "USED", 1 },
		{ "LIMIT", 1 }, { "GUARANTEE", 1 }, { "BORROWED", 1 },
		{ "PRIORITY", 1 }, { "RESOLVER", 0 }, { "CLIENTS", 1 },
	};
	struct ctl_table tab;
	size_t i;

	ctl_table_init(&tab, cols, NITEMS(cols));
	for (i = 0; i < d->st.ngroups; i++) {
		const struct gf_group_status *g = &d->st.groups[i];
		char name[GF_GROUP_LEN], dev[UUID_STR_LEN], bar[BAR_LEN];
		char used[32], limit[32], guarantee[32], borrowed[32];
		char priority[16], clients[16];
		const char *row[] = { name, dev, bar, used, limit, guarantee,
		    borrowed, priority, name_resolver(g->resolver), clients };

		ctl_printable(g->name, sizeof(g->name), name, sizeof(name));
		top_data_device(d, g->uuid, dev, sizeof(dev));
		bar_format(g->used, g->limit, bar, sizeof(bar));
		size_format(g->used, used, sizeof(used));
		size_format(g->limit, limit, sizeof(limit));
		size_format(g->guarantee, guarantee, sizeof(guarantee));
		size_format(g->borrowed, borrowed, sizeof(borrowed));
		snprintf(priority, sizeof(priority), "%" PRId32, g->priority);
		snprintf(clients, sizeof(clients), "%" PRIu32, g->nclients);
		ctl_table_add(&tab, row, NITEMS(row));
	}
	text_table(t, &tab);
}

/* One process row's figures on its device; "-" without a device. */
static void
client_figures(const struct gf_client *c, char *bar, char *used,
    char *limit, char *leased, char *host)
{
	if (uuid_is_zero(c->uuid)) {
		bar_format(0, 0, bar, BAR_LEN);
		strcpy(used, "-");
		strcpy(limit, "-");
		strcpy(leased, "-");
		strcpy(host, "-");
		return;
	}
	bar_format(c->used, c->limit, bar, BAR_LEN);
	size_format(c->used, used, 32);
	size_format(c->limit, limit, 32);
	size_format(c->leased, leased, 32);
	size_format(c->host, host, 32);
}

static void
processes_table(struct top_text *t, const struct top_data *d)
{
	static const struct ctl_column cols[] = {
		{ "PID", 1 }, { "UID", 1 }, { "GROUP", 0 }, { "DEVICE", 1 },
		{ "USE", 0 }, { "USED", 1 }, { "LIMIT", 1 }, { "LEASED", 1 },
		{ "HOST", 1 }, { "IDLE", 1 }, { "STATE", 0 },
		{ "VERSION", 0 },
	};
	struct ctl_table tab;
	size_t i;

	ctl_table_init(&tab, cols, NITEMS(cols));
	for (i = 0; i < d->nclients; i++) {
		const struct gf_client *c = &d->clients[i];
		char pid[16], uid[16], group[GF_GROUP_LEN], dev[UUID_STR_LEN];
		char bar[BAR_LEN], used[32], limit[32], leased[32], host[32];
		char idle[32], version[GF_VERSION_LEN];
		const char *row[] = { pid, uid, group, dev, bar, used, limit,
		    leased, host, idle, name_state(c->state), version };

		snprintf(pid, sizeof(pid), "%" PRIu32, c->pid);
		snprintf(uid, sizeof(uid), "%" PRIu32, c->uid);
		ctl_printable(c->group, sizeof(c->group), group,
		    sizeof(group));
		top_data_device(d, c->uuid, dev, sizeof(dev));
		client_figures(c, bar, used, limit, leased, host);
		ctl_client_idle_version(c, idle, sizeof(idle), version,
		    sizeof(version));
		ctl_table_add(&tab, row, NITEMS(row));
	}
	text_table(t, &tab);
}

/* The latest n of the events, oldest first, as `gpufracctl events`. */
static void
events_table(struct top_text *t, const struct top_data *d, size_t n)
{
	struct ctl_table tab;
	size_t i;

	if (n > d->nevents)
		n = d->nevents;
	ctl_print_events_init(&tab, 0);
	for (i = d->nevents - n; i < d->nevents; i++)
		ctl_print_event(&tab, &d->events[i]);
	text_capture(t, print_table, &tab, 1);
	ctl_table_free(&tab);
}

/* Lines every section but the events takes: its rows, header, blank. */
static size_t
lines_before_events(const struct top_data *d)
{
	return 3 + (d->st.ndevices + 2) + (d->st.ngroups + 2) +
	    (d->nclients + 2);
}

void
top_view_render(struct top_text *t, const struct top_data *d, size_t rows)
{
	size_t fixed = lines_before_events(d), nevents = TOP_VIEW_EVENTS;

	top_text_free(t);
	if (rows > 0)	/* the events' header row is one of them */
		nevents = rows > fixed + 1 ? rows - fixed - 1 : 0;
	text_capture(t, print_daemon, &d->st, 0);
	text_add(t, "", 0, 0);
	devices_table(t, d);
	groups_table(t, d);
	processes_table(t, d);
	events_table(t, d, nevents);
}

char *
top_view_clock(uint64_t ms, char *buf, size_t size)
{
	time_t sec = (time_t)(ms / 1000);
	struct tm tm;

	if (localtime_r(&sec, &tm) == NULL ||
	    strftime(buf, size, "%H:%M:%S", &tm) == 0)
		snprintf(buf, size, "-");
	return buf;
}

void
top_view_print(FILE *fp, const struct top_text *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		fprintf(fp, "%s\n", t->lines[i].text);
}

void
top_text_free(struct top_text *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->lines[i].text);
	free(t->lines);
	memset(t, 0, sizeof(*t));
}
