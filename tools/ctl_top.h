/*
 * gpufracctl top: the daemon's devices, groups, processes and latest
 * decisions, looked at again every interval; on a terminal a screen of its
 * own (ctl_top_screen.h), elsewhere plain tables one look after another.
 */
#ifndef GF_CTL_TOP_H
#define GF_CTL_TOP_H

#define CTL_TOP_SYNOPSIS	"[-b] [-d interval] [-n count]"

/*
 * Run top against the daemon at path, with its words (options) in argv.
 * Returns gpufracctl's exit status: 0 after q, Ctrl-C, or count looks of
 * which the last was answered; 1 when that last one was not; 2 on a usage
 * error (said).
 */
int	ctl_top(const char *path, int argc, char *argv[]);

#endif
