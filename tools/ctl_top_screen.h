/*
 * gpufracctl top's screen: the terminal under ncurses, what it shows of a
 * look (ctl_top_view.h) and the keys read from it. While it is up, what
 * gpufracctl says on stderr (a query that failed) is caught instead of
 * scribbled over the screen, and shown in its place.
 */
#ifndef GF_CTL_TOP_SCREEN_H
#define GF_CTL_TOP_SCREEN_H

#include <stdint.h>

#include "ctl_top_data.h"
#include "ctl_top_view.h"

/* The line said last on stderr: a failed query's, less "gpufracctl: ". */
#define TOP_SAID_LEN	512

struct top_screen {
	void		*scr;		/* ncurses' SCREEN */
	const char	*path;		/* the daemon's socket, for the title */
	uint64_t	 interval_ms;
	int		 keys;		/* stdin is a terminal to read keys */
	int		 said_fd;	/* where stderr goes meanwhile */
	int		 stderr_fd;	/* stderr itself, put back at close */
	char		 said[TOP_SAID_LEN];
	uint64_t	 seen_ms;	/* when the daemon last answered, or 0 */
	struct top_text	 text;
};

/* What top_screen_key read. */
enum {
	TOP_KEY_NONE = 0,	/* the time passed, or a signal came */
	TOP_KEY_QUIT,		/* q */
	TOP_KEY_NOW,		/* space: look again now */
	TOP_KEY_RESIZE,		/* the terminal changed size: draw again */
};

/*
 * Take over the terminal on stdout. Returns 0, or -1 after one line on
 * stderr when the terminal cannot be driven (the caller prints plain
 * tables instead).
 */
int	top_screen_open(struct top_screen *s, const char *path,
	    uint64_t interval_ms);
/* Give the terminal back as it was; stderr too. */
void	top_screen_close(struct top_screen *s);
/* Show d, or (d NULL) that the daemon did not answer, and why. */
void	top_screen_draw(struct top_screen *s, const struct top_data *d);
/* Wait at most ms for a key; TOP_KEY_*. */
int	top_screen_key(struct top_screen *s, int64_t ms);

#endif
