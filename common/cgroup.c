/*
 * Reading /proc/PID/cgroup: one line per hierarchy, "ID:CONTROLLERS:PATH";
 * cgroup v2's has ID 0 and no controllers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
