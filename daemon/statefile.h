/*
 * The daemon's files in state_dir (run-time groups, the driver's walls):
 * where they are, and how one is written: whole, to a temporary file made
 * durable, then renamed into place, so that a crash leaves the old file
 * or the new one, never half of one.
 */
#ifndef GF_DAEMON_STATEFILE_H
#define GF_DAEMON_STATEFILE_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#include "config.h"

/*
 * The path of the state file name of conf: in state_dir, else in the
 * directory of conf's socket; into buf. 0, or -1 when it does not fit.
 */
int	statefile_path(const struct config *conf, const char *name, char *buf,
	    size_t size);

/* A file being written in place of path. */
struct statefile {
	FILE		*fp;		/* write here */
	char		 path[PATH_MAX];
	char		 tmp[PATH_MAX];
};

/*
 * Start writing path (mode 0600, the daemon's own): 0, or -1 with one
 * line in err. Then statefile_commit, or statefile_abandon.
 */
int	statefile_begin(struct statefile *sf, const char *path, char *err,
	    size_t errlen);
/* Put what was written in place: 0, or -1 with one line in err (path
 * unchanged). Either way sf is done. */
int	statefile_commit(struct statefile *sf, char *err, size_t errlen);
void	statefile_abandon(struct statefile *sf);

#endif
