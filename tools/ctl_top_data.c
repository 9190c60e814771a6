/*
 * gpufracctl top's data: status, ps and events in one look, the clients
 * sorted by the memory they hold.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl_top_data.h"
#include "uuid.h"

/* The most used first; then by pid and device, for a stable order. */
static int
client_by_use(const void *a, const void *b)
{
	const struct gf_client *x = a, *y = b;

	if (x->used != y->used)
		return x->used > y->used ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return memcmp(x->uuid, y->uuid, GF_UUID_LEN);
}

int
top_data_gather(const char *path, struct top_data *d)
{
	memset(d, 0, sizeof(*d));
	d->time_ms = top_data_now_ms();
	if (ctl_query_status(path, &d->st) < 0 ||
	    ctl_query_ps(path, &d->clients, &d->nclients) < 0 ||
	    ctl_query_events(path, &d->events, &d->nevents) < 0)
		return -1;
	if (d->nclients > 1)
		qsort(d->clients, d->nclients, sizeof(*d->clients),
		    client_by_use);
	return 0;
}

void
top_data_free(struct top_data *d)
{
	ctl_status_free(&d->st);
	free(d->clients);
	free(d->events);
	memset(d, 0, sizeof(*d));
}

uint64_t
top_data_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

char *
top_data_device(const struct top_data *d, const uint8_t uuid[GF_UUID_LEN],
    char *buf, size_t size)
{
	size_t i;

	if (uuid_is_zero(uuid)) {
		snprintf(buf, size, "-");
		return buf;
	}
	for (i = 0; i < d->st.ndevices; i++)
		if (memcmp(d->st.devices[i].uuid, uuid, GF_UUID_LEN) == 0) {
			snprintf(buf, size, "%" PRIu32, d->st.devices[i].index);
			return buf;
		}
	return uuid_format(uuid, buf, size);
}
