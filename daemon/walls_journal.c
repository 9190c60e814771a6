/*
 * The driver's walls journalled (walls_journal.h): one line a wall,
 * "UUID DIR", after a comment; written whole through statefile.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "statefile.h"
#include "uuid.h"
#include "walls_journal.h"

int
walls_journal_save(const char *path, const struct walls_entry *e, size_t n,
    char *err, size_t errlen)
{
	char uuid[UUID_STR_LEN];
	struct statefile sf;
	size_t i;

	if (statefile_begin(&sf, path, err, errlen) < 0)
		return -1;
	fprintf(sf.fp, "# gpufrac: the driver's memory limits gpufracd may "
	    "have set, by device and cgroup.\n# Cleared at its next start "
	    "where no group wants them. Written by gpufracd.\n");
	for (i = 0; i < n; i++) {
		/* A directory is one line: a newline in it cannot be read
		 * back, and the wall is not set (memlimits.c). */
		if (strchr(e[i].dir, '\n') != NULL)
			continue;
		fprintf(sf.fp, "%s %s\n", uuid_format(e[i].uuid, uuid,
		    sizeof(uuid)), e[i].dir);
	}
	return statefile_commit(&sf, err, errlen);
}

void
walls_journal_free(struct walls_entry *e, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free((char *)e[i].dir);
	free(e);
}

/* Whether fp, open on path, is the daemon's own to believe. */
static int
journal_owned(FILE *fp, const char *path)
{
	struct stat st;

	if (fstat(fileno(fp), &st) < 0) {
		log_warn("cannot read '%s'", path);
		return 0;
	}
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		log_warnx("'%s' is not gpufracd's own (owner %u, mode %04o): "
		    "its walls are not cleared", path, (unsigned)st.st_uid,
		    (unsigned)(st.st_mode & 07777));
		return 0;
	}
	return 1;
}

/* One line into *e: 1 added, 0 skipped (logged), -1 ENOMEM. */
static int
journal_line(char *line, const char *path, unsigned lineno,
    struct walls_entry *e)
{
	char *sp, *nl;

	if ((nl = strchr(line, '\n')) != NULL)
		*nl = '\0';
	if (line[0] == '#' || line[0] == '\0')
		return 0;
	if ((sp = strchr(line, ' ')) == NULL || sp[1] != '/') {
		log_warnx("%s:%u: bad line: '%s'", path, lineno, line);
		return 0;
	}
	*sp = '\0';
	if (uuid_parse(line, e->uuid) < 0) {
		log_warnx("%s:%u: bad device UUID: '%s'", path, lineno, line);
		return 0;
	}
	if ((e->dir = strdup(sp + 1)) == NULL)
		return -1;
	return 1;
}

int
walls_journal_load(const char *path, struct walls_entry **e, size_t *n)
{
	struct walls_entry *more;
	size_t room = 0, len = 0;
	char *line = NULL;
	unsigned lineno = 0;
	FILE *fp;
	int r;

	*e = NULL;
	*n = 0;
	if ((fp = fopen(path, "re")) == NULL) {
		if (errno != ENOENT)
			log_warn("cannot read '%s'", path);
		return 0;
	}
	if (!journal_owned(fp, path))
		goto out_close;
	while (getline(&line, &len, fp) >= 0) {
		lineno++;
		if (*n == room) {
			room = room ? room * 2 : 8;
			if ((more = reallocarray(*e, room, sizeof(**e))) ==
			    NULL)
				goto out_nomem;
			*e = more;
		}
		if ((r = journal_line(line, path, lineno, &(*e)[*n])) < 0)
			goto out_nomem;
		*n += (size_t)r;
	}
out_close:
	free(line);
	fclose(fp);
	return 0;

out_nomem:
	free(line);
	fclose(fp);
	walls_journal_free(*e, *n);
	*e = NULL;
	*n = 0;
	return -1;
}
