/*
 * The journal of the driver's walls (issue 38 E): every wall the daemon
 * may have set, by device UUID and cgroup directory, in a file of its own
 * in state_dir, written before a wall is set and after one is cleared, so
 * that a daemon killed with walls in force finds them at its next start
 * and clears those no group wants any more.
 */
#ifndef GF_DAEMON_WALLS_JOURNAL_H
#define GF_DAEMON_WALLS_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "gpufrac/proto.h"

struct walls_entry {
	uint8_t		 uuid[GF_UUID_LEN];
	const char	*dir;		/* a cgroup's directory, full path */
};

/*
 * Write the n entries of e to path, whole: 0, or -1 with one line in err
 * (path as it was).
 */
int	walls_journal_save(const char *path, const struct walls_entry *e,
	    size_t n, char *err, size_t errlen);

/*
 * The entries journalled in path, into *e (*n of them; free with
 * walls_journal_free). No file: none. A file that is not the daemon's own
 * (its owner, or writable by others) is not believed: none, logged. A
 * line that cannot be read is logged and skipped. 0, or -1 (ENOMEM).
 */
int	walls_journal_load(const char *path, struct walls_entry **e,
	    size_t *n);
void	walls_journal_free(struct walls_entry *e, size_t n);

#endif
