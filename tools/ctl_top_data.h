/*
 * gpufracctl top's data: one look at the daemon (its status, its clients,
 * its recent decisions), gathered with the queries of ctl_query.h. No
 * terminal here: ctl_top_view.h turns a look into text.
 */
#ifndef GF_CTL_TOP_DATA_H
#define GF_CTL_TOP_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "ctl_query.h"

struct top_data {
	struct ctl_status	 st;
	struct gf_client	*clients;	/* one per pid and device, the
						   most used first */
	size_t			 nclients;
	struct gf_event		*events;	/* oldest first */
	size_t			 nevents;
	uint64_t		 time_ms;	/* when it was taken (wall
						   clock, ms since the epoch) */
};

/*
 * Ask the daemon at path for everything top shows, into *d (emptied
 * first). Returns 0, or -1 after the failing query's one line on stderr;
 * the first failure ends the look, so that a daemon gone costs one
 * connection attempt, a stuck one one timeout. *d is to be freed with
 * top_data_free either way.
 */
int	top_data_gather(const char *path, struct top_data *d);
void	top_data_free(struct top_data *d);

/* The wall clock, in ms since the epoch. */
uint64_t top_data_now_ms(void);

/*
 * The index (as status shows it) of device uuid, for short DEVICE cells:
 * "0". "-" for the zero uuid (no device), the uuid itself for a device
 * the status did not list. Returns buf.
 */
char	*top_data_device(const struct top_data *d,
	    const uint8_t uuid[GF_UUID_LEN], char *buf, size_t size);

#endif
