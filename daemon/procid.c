/*
 * A process's identity read from /proc with its pidfd held: uid and gid
 * (status), start time, cgroup, and from its maps and environ why it
 * has no shim (only said, never believed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "gpufrac/proto.h"
#include "pidfd.h"
#include "procid.h"

#define PROCID_ENV_MAX	(1 << 20)	/* an environment read no further */

/* The effective ids of /proc/PID/status ("Uid:\treal\teffective..."). */
static int
ids_read(uint32_t pid, uint32_t *uid, uint32_t *gid)
{
	char path[64], line[256];
	unsigned r, e;
	int got = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	if ((fp = fopen(path, "re")) == NULL)
		return -1;
	while (got != 3 && fgets(line, sizeof(line), fp) != NULL) {
		if (sscanf(line, "Uid: %u %u", &r, &e) == 2) {
			*uid = e;
			got |= 1;
		} else if (sscanf(line, "Gid: %u %u", &r, &e) == 2) {
			*gid = e;
			got |= 2;
		}
	}
	fclose(fp);
	return got == 3 ? 0 : -1;
}

/*
 * Whether /proc/PID/maps shows a file named libgpufrac.so loaded: 1 or
 * 0; -1 when it cannot be read (another uid's, the daemon not root).
 * Only an event's reason: what a process maps is its own to choose.
 */
static int
maps_read(uint32_t pid)
{
	char path[64], line[4096];
	int seen = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	if ((fp = fopen(path, "re")) == NULL)
		return -1;
	while (!seen && fgets(line, sizeof(line), fp) != NULL)
		seen = strstr(line, "/libgpufrac.so") != NULL;
	fclose(fp);
	return seen;
}

/* pid's environment (NUL-separated, *len bytes, malloc'd), or NULL. */
static char *
environ_read(uint32_t pid, size_t *len)
{
	char path[64], *buf = NULL, *more;
	size_t cap = 0, n;
	FILE *fp;

	*len = 0;
	snprintf(path, sizeof(path), "/proc/%u/environ", pid);
	if ((fp = fopen(path, "re")) == NULL)
		return NULL;
	do {
		if (*len == cap) {
			cap = cap ? cap * 2 : 16384;
			if (cap > PROCID_ENV_MAX ||
			    (more = realloc(buf, cap + 1)) == NULL)
				break;
			buf = more;
		}
		n = fread(buf + *len, 1, cap - *len, fp);
		*len += n;
	} while (n > 0);
	fclose(fp);
	if (buf != NULL)
		buf[*len] = '\0';
	return buf;
}

/* The value of name in env[0..len), or NULL. */
static const char *
env_get(const char *env, size_t len, const char *name)
{
	size_t nl = strlen(name);
	const char *p;

	for (p = env; p < env + len; p += strlen(p) + 1)
		if (strncmp(p, name, nl) == 0 && p[nl] == '=')
			return p + nl + 1;
	return NULL;
}

/* Why a process whose maps show the shim (or not) goes without it. */
static void
why_read(uint32_t pid, int maps, const char *socket, struct procid *p)
{
	const char *v, *sock;
	size_t len;
	char *env;

	p->why = PROCID_UNKNOWN;
	if (maps < 0)
		return;
	if (!maps) {
		p->why = PROCID_NO_SHIM;
		return;
	}
	if ((env = environ_read(pid, &len)) == NULL)
		return;
	/* As shim/env.c reads them. */
	v = env_get(env, len, "GPUFRAC_DISABLE");
	sock = env_get(env, len, "GPUFRAC_SOCKET");
	if (sock == NULL || *sock == '\0')
		sock = GF_SOCKET_DEFAULT;
	if (v != NULL && *v != '\0' && strcmp(v, "0") != 0)
		p->why = PROCID_DISABLED;
	else if (strcmp(sock, socket) != 0) {
		p->why = PROCID_OTHER_SOCKET;
		snprintf(p->socket, sizeof(p->socket), "%s", sock);
	} else
		p->why = PROCID_NOT_CONNECTED;
	free(env);
}

int
procid_read(uint32_t pid, uint64_t at_ms, const char *socket,
    struct procid *p)
{
	int exited, maps;

	memset(p, 0, sizeof(*p));
	if ((p->pidfd = pidfd_by_pid(pid, at_ms, &exited)) < 0)
		return -1;
	/*
	 * NVML's list says who holds memory (issue 38): whatever its maps
	 * show (a renamed libcuda, a hard link, a memfd, a static build),
	 * the process is taken for what it is.
	 */
	if (ids_read(pid, &p->uid, &p->gid) < 0 ||
	    (p->start_ms = pidfd_start_ms(pid)) == 0)
		goto out_close;
	maps = maps_read(pid);
	why_read(pid, maps, socket, p);
	if ((p->cgroup = cgroup_of_pid(pid)) == NULL)
		goto out_close;
	/* Read with the pidfd held: still alive, it was this process. */
	if (pidfd_exited(p->pidfd)) {
		free(p->cgroup);
		goto out_close;
	}
	return 0;

out_close:
	close(p->pidfd);
	p->pidfd = -1;
	return -1;
}

/*
 * The effective ids, cheaply where the kernel allows: /proc/PID belongs
 * to them while the process is dumpable (task_dump_owner, fs/proc/base.c);
 * to root otherwise (a process that changed its ids, one that is root's),
 * and then /proc/PID/status says.
 */
static int
ids_look(uint32_t pid, uint32_t *uid, uint32_t *gid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%u", pid);
	if (stat(path, &st) < 0)
		return -1;
	if (st.st_uid == 0)
		return ids_read(pid, uid, gid);
	*uid = st.st_uid;
	*gid = st.st_gid;
	return 0;
}

int
procid_reread(int pidfd, uint32_t pid, uint32_t *uid, uint32_t *gid,
    char **cgroup)
{
	if (pidfd < 0 || ids_look(pid, uid, gid) < 0 ||
	    (*cgroup = cgroup_of_pid(pid)) == NULL)
		return -1;
	if (**cgroup == '\0' || pidfd_exited(pidfd)) {
		free(*cgroup);
		*cgroup = NULL;
		return -1;
	}
	return 0;
}

const char *
procid_why(const struct procid *p, char *buf, size_t size)
{
	switch (p->why) {
	case PROCID_NO_SHIM:
		return "no shim loaded";
	case PROCID_DISABLED:
		return "shim disabled (GPUFRAC_DISABLE)";
	case PROCID_OTHER_SOCKET:
		snprintf(buf, size, "another socket '%s'", p->socket);
		return buf;
	case PROCID_NOT_CONNECTED:
		return "shim loaded, not connected";
	default:
		return "no shim seen (its maps cannot be read)";
	}
}
