/*
 * The fixture of the daemon/config*.c tests (test_daemon_config*.c): a
 * configuration loaded with its errors captured, and text written to a
 * temporary file to load. Paths are from the top of the tree (FIX: the
 * fixture files). Include after cmocka.h.
 */
#ifndef GF_TEST_CONFIG_FIXTURE_H
#define GF_TEST_CONFIG_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../daemon/config.h"

#define FIX	"tests/unit/fixtures/"

/* What config_load reported. */
struct errs {
	int	n;
	char	first[1024];
};

static inline void
capture(const char *line, void *arg)
{
	struct errs *e = arg;

	if (e->n++ == 0)
		snprintf(e->first, sizeof(e->first), "%s", line);
}

static inline int
load(struct config *c, const char *path, int optional, struct errs *e)
{
	memset(e, 0, sizeof(*e));
	config_init(c);
	return config_load(c, path, optional, capture, e);
}

/* Write text to a fresh temporary file; its name goes in path. */
static inline void
temp_conf(char *path, size_t size, const char *text)
{
	FILE *fp;
	int fd;

	snprintf(path, size, "/tmp/gpufrac-test-conf.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	fp = fdopen(fd, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

#endif
