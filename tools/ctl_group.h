/*
 * gpufracctl's commands that change the daemon's groups, limits and
 * clients at run time: `group set`, `group rm`, `limit` and `disconnect`.
 * Each parses its own words (argv after the command's name) and returns gpufracctl's exit status:
 * 0 done, 1 the daemon refused or is not reachable (one line said), 2 a
 * usage error (said).
 */
#ifndef GF_CTL_GROUP_H
#define GF_CTL_GROUP_H

#include <stdint.h>

/* A pid: a positive decimal number that fits a pid_t. 0, or -1. */
int	ctl_pid_parse(const char *s, uint32_t *pid);

int	ctl_group(const char *path, int json, int argc, char *argv[]);
int	ctl_limit(const char *path, int json, int argc, char *argv[]);
int	ctl_disconnect(const char *path, int json, int argc, char *argv[]);

#endif
