/*
 * The admin rule: uid 0, or a member of admin_group, asked of the kernel
 * when an admin command arrives.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "admin.h"
#include "log.h"

#define STATUS_MAX	65536
#define PEER_GROUPS_MAX	65536	/* NGROUPS_MAX on Linux */

int
admin_status_has_gid(const char *status, gid_t gid)
{
	const char *p = status;
	unsigned long long v;
	char *end;

	while (p != NULL && strncmp(p, "Groups:", 7) != 0)
		if ((p = strchr(p, '\n')) != NULL)
			p++;
	if (p == NULL)
		return 0;
	for (p += 7; *p != '\n' && *p != '\0'; p = end) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!isdigit((unsigned char)*p))
			return 0;
		errno = 0;
		v = strtoull(p, &end, 10);
		if (errno != 0)
			return 0;
		if (v == (unsigned long long)gid)
			return 1;
	}
	return 0;
}

/* The peer's supplementary groups from the socket: 1, 0, or -1 (no way). */
static int
peer_groups_has(int fd, gid_t gid)
{
	socklen_t len = 64 * sizeof(gid_t);
	gid_t *groups = NULL, *p;
	size_t i;
	int r = -1, saved;

	for (;;) {
		if ((p = realloc(groups, len)) == NULL)
			break;
		groups = p;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups,
		    &len) == 0) {
			r = 0;
			for (i = 0; i < len / sizeof(gid_t); i++)
				if (groups[i] == gid)
					r = 1;
			break;
		}
		if (errno != ERANGE || len > PEER_GROUPS_MAX * sizeof(gid_t))
			break;
	}
	saved = errno;
	free(groups);
	errno = saved;
	return r;
}

/* The same from /proc/PID/status: 1 or 0. */
static int
proc_groups_has(uint32_t pid, gid_t gid)
{
	char path[64], *buf = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *fp;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	if (pid == 0 || (fp = fopen(path, "re")) == NULL)
		return 0;
	n = getdelim(&buf, &cap, '\0', fp);
	fclose(fp);
	if (n > 0 && n <= STATUS_MAX)
		r = admin_status_has_gid(buf, gid);
	free(buf);
	return r;
}

/* Root, or a member of admin_group: 1 or 0. */
static int
admin_member(const struct config *conf, int fd, uint32_t pid, uint32_t uid,
    uint32_t gid)
{
	int r;

	if (uid == 0)
		return 1;
	if (!conf->admin_gid_valid)
		return 0;
	if (gid == (uint32_t)conf->admin_gid)
		return 1;
	if ((r = peer_groups_has(fd, conf->admin_gid)) >= 0)
		return r;
	log_debug("no SO_PEERGROUPS (%s): reading the groups of pid %u",
	    strerror(errno), pid);
	return proc_groups_has(pid, conf->admin_gid);
}

/* Whether pid lives in the daemon's pid namespace (a doubt: no). */
static int
same_pid_ns(uint32_t pid)
{
	struct stat ours, theirs;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/ns/pid", pid);
	if (pid == 0 || stat("/proc/self/ns/pid", &ours) < 0 ||
	    stat(path, &theirs) < 0)
		return 0;
	return ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino;
}

int
admin_allowed(const struct config *conf, int fd, uint32_t pid, uint32_t uid,
    uint32_t gid)
{
	if (!admin_member(conf, fd, pid, uid, gid))
		return ADMIN_DENIED;
	return same_pid_ns(pid) ? ADMIN_ALLOWED : ADMIN_FOREIGN;
}

void
admin_denied_msg(const struct config *conf, const char *cmd, int verdict,
    char *msg, size_t msglen)
{
	if (verdict == ADMIN_FOREIGN)
		snprintf(msg, msglen, "%s: permission denied (not from the "
		    "daemon's pid namespace: a container's root is not the "
		    "machine's)", cmd);
	else if (conf->admin_group[0] != '\0')
		snprintf(msg, msglen, "%s: permission denied (root or members "
		    "of group '%s' only)", cmd, conf->admin_group);
	else
		snprintf(msg, msglen, "%s: permission denied (root only)",
		    cmd);
}
