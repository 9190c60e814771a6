/*
 * The daemon's state files: where, and written whole then renamed
 * (statefile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto.h"
#include "statefile.h"

int
statefile_path(const struct config *conf, const char *name, char *buf,
    size_t size)
{
	char dir[sizeof(conf->socket)];
	int n;

	if (conf->state_dir[0] != '\0')
		n = snprintf(buf, size, "%s/%s", conf->state_dir, name);
	else {
		proto_strlcpy(dir, conf->socket, sizeof(dir));
		n = snprintf(buf, size, "%s/%s", dirname(dir), name);
	}
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* Make path's directory entries durable: a rename survives a crash. */
static void
dir_sync(const char *path)
{
	char dir[PATH_MAX];
	int fd;

	proto_strlcpy(dir, path, sizeof(dir));
	if ((fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	(void)fsync(fd);
	close(fd);
}

int
statefile_begin(struct statefile *sf, const char *path, char *err,
    size_t errlen)
{
	int fd;

	proto_strlcpy(sf->path, path, sizeof(sf->path));
	snprintf(sf->tmp, sizeof(sf->tmp), "%s.XXXXXX", path);
	if ((fd = mkostemp(sf->tmp, O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "cannot write '%s': %s", path,
		    strerror(errno));
		return -1;
	}
	if ((sf->fp = fdopen(fd, "w")) == NULL) {
		snprintf(err, errlen, "cannot write '%s': %s", path,
		    strerror(errno));
		close(fd);
		unlink(sf->tmp);
		return -1;
	}
	return 0;
}

int
statefile_commit(struct statefile *sf, char *err, size_t errlen)
{
	if (fflush(sf->fp) != 0 || fsync(fileno(sf->fp)) < 0 ||
	    ferror(sf->fp)) {
		fclose(sf->fp);
		goto out_unlink;
	}
	if (fclose(sf->fp) != 0 || rename(sf->tmp, sf->path) < 0)
		goto out_unlink;
	dir_sync(sf->path);
	return 0;

out_unlink:
	snprintf(err, errlen, "cannot write '%s': %s", sf->path,
	    strerror(errno));
	unlink(sf->tmp);
	return -1;
}

void
statefile_abandon(struct statefile *sf)
{
	fclose(sf->fp);
	unlink(sf->tmp);
}
