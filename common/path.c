/*
 * File-system paths: making the directory that is to hold a file.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "path.h"

int
path_dir_make(const char *path)
{
	char dir[PATH_MAX], *p;

	if ((size_t)snprintf(dir, sizeof(dir), "%s", path) >= sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((p = strrchr(dir, '/')) == NULL || p == dir)
		return 0;
	*p = '\0';
	for (p = dir + 1; ; p++) {
		struct stat st;
		char save = *p;

		if (save != '/' && save != '\0')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) == 0)
			(void)chmod(dir, 0755);	/* whatever the umask */
		else if (errno != EEXIST &&
		    (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)))
			return -1;
		*p = save;
		if (save == '\0')
			return 0;
	}
}
