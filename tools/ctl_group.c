/*
 * group set|rm and limit: their words into the requests of common/ctlreq,
 * the daemon's answer out as one line.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_group.h"
#include "ctlreq.h"
#include "log.h"
#include "sock.h"
#include "units.h"
#include "uuid.h"

enum { EXIT_OK = 0, EXIT_NO = 1, EXIT_USAGE = 2 };

#define GROUP_SET_USAGE	"gpufracctl group set name --match rule... | " \
	"--cgroup path [--limit size] [--guarantee size] [--priority n] " \
	"[--resolver r] [--on-preempt a] [--wait-timeout d] " \
	"[--unshimmed count|kill]"
#define GROUP_RM_USAGE	"gpufracctl group rm name"
#define LIMIT_USAGE	"gpufracctl limit pid size [--device uuid|index]"
#define DISCONNECT_USAGE "gpufracctl disconnect pid"

static int
usage_says(const char *synopsis)
{
	log_errx("usage: %s", synopsis);
	return EXIT_USAGE;
}

/* The daemon's refusal as it says it; a failure to ask, with cmd. */
static int
refused(const char *cmd, int rc, const char *err)
{
	if (rc != CTLREQ_UNREACHABLE)
		log_errx("%s", err);
	else
		log_errx("%s: %s", cmd, err);
	return EXIT_NO;
}

/* "--on-preempt" -> "on_preempt": the key of a [group] section. */
static const char *
option_key(const char *opt, char *buf, size_t size)
{
	size_t i;

	snprintf(buf, size, "%s", opt + 2);
	for (i = 0; buf[i] != '\0'; i++)
		if (buf[i] == '-')
			buf[i] = '_';
	return buf;
}

/*
 * The options after the name: --match takes one or more words up to the
 * next option; the others one value, as "--key value" or "--key=value".
 */
static int
group_options(struct ctlreq_group *g, int argc, char *argv[])
{
	char key[32], err[SOCK_ERR_LEN], *eq;
	const char *value;
	int i;

	for (i = 0; i < argc; i++) {
		if (strncmp(argv[i], "--", 2) != 0 || argv[i][2] == '\0') {
			log_errx("group set: unexpected '%s'", argv[i]);
			return usage_says(GROUP_SET_USAGE);
		}
		if ((eq = strchr(argv[i], '=')) != NULL)
			*eq++ = '\0';
		option_key(argv[i], key, sizeof(key));
		if (eq == NULL && (i + 1 == argc ||
		    strncmp(argv[i + 1], "--", 2) == 0)) {
			log_errx("group set: '%s' needs a value", argv[i]);
			return usage_says(GROUP_SET_USAGE);
		}
		do {
			value = eq != NULL ? eq : argv[++i];
			eq = NULL;
			if (ctlreq_group_option(g, key, value, err,
			    sizeof(err)) < 0) {
				log_errx("group set: %s", err);
				return EXIT_USAGE;
			}
		} while (strcmp(key, "match") == 0 && i + 1 < argc &&
		    strncmp(argv[i + 1], "--", 2) != 0);
	}
	return EXIT_OK;
}

static int
group_set(const char *path, int json, int argc, char *argv[])
{
	struct ctlreq_group g;
	char err[SOCK_ERR_LEN];
	int rc;

	if (argc < 1 || strncmp(argv[0], "--", 2) == 0)
		return usage_says(GROUP_SET_USAGE);
	if (ctlreq_group_init(&g, argv[0], err, sizeof(err)) < 0) {
		log_errx("group set: %s", err);
		return EXIT_USAGE;
	}
	if ((rc = group_options(&g, argc - 1, argv + 1)) != EXIT_OK)
		return rc;
	if ((rc = ctlreq_group_set(path, &g, err, sizeof(err))) < 0)
		return refused("group set", rc, err);
	if (json)
		printf("{\"group\":\"%s\",\"set\":true}\n", g.set.name);
	return EXIT_OK;
}

static int
group_rm(const char *path, int json, int argc, char *argv[])
{
	char err[SOCK_ERR_LEN];
	int rc;

	if (argc != 1)
		return usage_says(GROUP_RM_USAGE);
	if ((rc = ctlreq_group_rm(path, argv[0], err, sizeof(err))) < 0)
		return refused("group rm", rc, err);
	if (json)
		printf("{\"group\":\"%s\",\"removed\":true}\n", argv[0]);
	return EXIT_OK;
}

int
ctl_group(const char *path, int json, int argc, char *argv[])
{
	if (argc >= 1 && strcmp(argv[0], "set") == 0)
		return group_set(path, json, argc - 1, argv + 1);
	if (argc >= 1 && strcmp(argv[0], "rm") == 0)
		return group_rm(path, json, argc - 1, argv + 1);
	log_errx("group: expected 'set' or 'rm'");
	log_errx("usage: %s", GROUP_SET_USAGE);
	return usage_says(GROUP_RM_USAGE);
}

/* --device: a uuid ("GPU-...") or the index status shows. */
static int
device_parse(const char *s, struct gf_limit_req *r)
{
	uint64_t v;

	if (strncmp(s, "GPU-", 4) == 0)
		return uuid_parse(s, r->uuid);
	if (decimal_parse(s, GF_UNSET - 1, &v) < 0)
		return -1;
	r->index = (uint32_t)v;
	return 0;
}

int
ctl_pid_parse(const char *s, uint32_t *pid)
{
	uint64_t v;

	if (decimal_parse(s, INT32_MAX, &v) < 0 || v == 0)
		return -1;
	*pid = (uint32_t)v;
	return 0;
}

int
ctl_limit(const char *path, int json, int argc, char *argv[])
{
	struct gf_limit_req r;
	char err[SOCK_ERR_LEN];
	int rc;

	memset(&r, 0, sizeof(r));
	r.index = GF_UNSET;
	if (argc != 2 && !(argc == 4 && strcmp(argv[2], "--device") == 0))
		return usage_says(LIMIT_USAGE);
	if (ctl_pid_parse(argv[0], &r.pid) < 0) {
		log_errx("limit: bad pid '%s'", argv[0]);
		return EXIT_USAGE;
	}
	if ((rc = limit_parse(argv[1], &r.limit_kind, &r.limit_value)) ==
	    LIMIT_ZERO) {
		log_errx("limit: bad size '%s' (a limit must be positive)",
		    argv[1]);
		return EXIT_USAGE;
	}
	if (rc < 0) {
		log_errx("limit: bad size '%s' (expected a size such as 8Gi "
		    "or a share such as 50%%)", argv[1]);
		return EXIT_USAGE;
	}
	if (argc == 4 && device_parse(argv[3], &r) < 0) {
		log_errx("limit: bad device '%s' (expected GPU-uuid or an "
		    "index)", argv[3]);
		return EXIT_USAGE;
	}
	if ((rc = ctlreq_limit(path, &r, err, sizeof(err))) < 0)
		return refused("limit", rc, err);
	if (json)
		printf("{\"pid\":%" PRIu32 ",\"limit\":\"%s\"}\n", r.pid,
		    argv[1]);
	return EXIT_OK;
}

int
ctl_disconnect(const char *path, int json, int argc, char *argv[])
{
	char err[SOCK_ERR_LEN];
	uint32_t pid;
	int rc;

	if (argc != 1)
		return usage_says(DISCONNECT_USAGE);
	if (ctl_pid_parse(argv[0], &pid) < 0) {
		log_errx("disconnect: bad pid '%s'", argv[0]);
		return EXIT_USAGE;
	}
	if ((rc = ctlreq_disconnect(path, pid, err, sizeof(err))) < 0)
		return refused("disconnect", rc, err);
	if (json)
		printf("{\"pid\":%" PRIu32 ",\"disconnected\":true}\n", pid);
	return EXIT_OK;
}
