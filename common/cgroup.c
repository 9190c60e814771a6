/*
 * Reading /proc/PID/cgroup: one line per hierarchy, "ID:CONTROLLERS:PATH";
 * cgroup v2's has ID 0 and no controllers.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cgroup.h"

#define CGROUP_FILE_MAX	65536

char *
cgroup_of_pid(uint32_t pid)
{
	char path[64], *buf = NULL, *line, *pick = NULL, *save, *p;
	size_t cap = 0;
	ssize_t n;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	if (pid == 0 || (fp = fopen(path, "re")) == NULL)
		return strdup("");
	n = getdelim(&buf, &cap, '\0', fp);
	fclose(fp);
	if (n <= 0 || n > CGROUP_FILE_MAX) {
		free(buf);
		return strdup("");
	}
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "0::", 3) == 0) {
			pick = line;
			break;
		}
		if (pick == NULL || strstr(line, ":memory:") != NULL)
			pick = line;
	}
	if (pick != NULL && (p = strchr(pick, ':')) != NULL &&
	    (p = strchr(p + 1, ':')) != NULL)
		p = strdup(p + 1);
	else
		p = strdup("");
	free(buf);
	return p;
}

/* mountinfo's octal escapes ("\040" for a space, proc(5)), in place. */
static void
unescape(char *s)
{
	char *d = s;

	for (; *s != '\0'; s++, d++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
			    (s[3] - '0'));
			s += 3;
		} else
			*d = *s;
	}
	*d = '\0';
}

/*
 * One line of mountinfo, "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS
 * [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS" (proc(5)), cut in place:
 * 0 with root and mnt for a cgroup2 file system, else -1.
 */
static int
mount_parse(char *line, char **root, char **mnt)
{
	char *f[5], *save, *tok, *sep;
	int i = 0;

	if ((sep = strstr(line, " - ")) == NULL ||
	    strncmp(sep + 3, "cgroup2 ", 8) != 0)
		return -1;
	*sep = '\0';
	for (tok = strtok_r(line, " ", &save); tok != NULL && i < 5;
	    tok = strtok_r(NULL, " ", &save))
		f[i++] = tok;
	if (i < 5)
		return -1;
	unescape(f[3]);
	unescape(f[4]);
	*root = f[3];
	*mnt = f[4];
	return 0;
}

int
cgroup2_mount(char *mnt, size_t mntlen, char *root, size_t rootlen)
{
	char *line = NULL, *r, *m;
	size_t cap = 0;
	int found = 0;
	FILE *fp;

	if ((fp = fopen("/proc/self/mountinfo", "re")) == NULL)
		return -1;
	while (!found && getline(&line, &cap, fp) > 0) {
		line[strcspn(line, "\n")] = '\0';
		if (mount_parse(line, &r, &m) < 0 || strlen(m) >= mntlen ||
		    strlen(r) >= rootlen)
			continue;
		strcpy(mnt, m);
		strcpy(root, r);
		found = 1;
	}
	free(line);
	fclose(fp);
	if (!found)
		errno = ENOENT;
	return found ? 0 : -1;
}

int
cgroup_dir(const char *path, char *dir, size_t size, size_t *mntlen)
{
	char mnt[PATH_MAX], root[PATH_MAX];
	size_t n;

	if (cgroup2_mount(mnt, sizeof(mnt), root, sizeof(root)) < 0)
		return -1;
	/* The mount shows root's sub-tree: path must lie in it. */
	n = strcmp(root, "/") == 0 ? 0 : strlen(root);
	if (strncmp(path, root, n) != 0 || (path[n] != '/' && path[n] != '\0'))
		return -1;
	if ((size_t)snprintf(dir, size, "%s%s", mnt, path + n) >= size)
		return -1;
	if (mntlen != NULL)
		*mntlen = strlen(mnt);
	return 0;
}

int
cgroup_exists(const char *path)
{
	char dir[PATH_MAX];
	struct stat st;

	if (cgroup_dir(path, dir, sizeof(dir), NULL) < 0)
		return -1;
	if (stat(dir, &st) == 0)
		return S_ISDIR(st.st_mode);
	return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
}

uint64_t
cgroup_identity(const char *path)
{
	char dir[PATH_MAX];
	struct stat st;

	if (cgroup_dir(path, dir, sizeof(dir), NULL) < 0 ||
	    stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	return (uint64_t)st.st_ino;
}
