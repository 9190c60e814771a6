/*
 * gpufracctl top's text: one look at the daemon (ctl_top_data.h) as the
 * lines a person reads, the same on the screen and in plain output: the
 * daemon, its devices, groups and processes with bars of their use, and
 * its latest decisions.
 */
#ifndef GF_CTL_TOP_VIEW_H
#define GF_CTL_TOP_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ctl_top_data.h"

/* Events shown without a screen to fill: the latest ones. */
#define TOP_VIEW_EVENTS	10

struct top_line {
	char		*text;		/* owned; no newline */
	int		 head;		/* a table's header row */
};

struct top_text {
	struct top_line	*lines;
	size_t		 n;
	size_t		 cap;
};

/*
 * Render d into t (emptied first). rows > 0: the room on the screen, of
 * which the latest events take what the other sections leave; 0: no
 * limit, TOP_VIEW_EVENTS events. Exits when memory runs out.
 */
void	top_view_render(struct top_text *t, const struct top_data *d,
	    size_t rows);
/* The local time of ms (wall clock, ms since the epoch): "14:03:27". */
char	*top_view_clock(uint64_t ms, char *buf, size_t size);
/* Print every line of t. */
void	top_view_print(FILE *fp, const struct top_text *t);
void	top_text_free(struct top_text *t);

#endif
