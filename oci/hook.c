/*
 * gpufrac-oci-hook: an OCI runtime hook. At createRuntime it gives a
 * container annotated gpufrac.io/memory a run-time group in gpufracd,
 * matched by the container's cgroup; at poststop it removes the group.
 * The runtime writes the container's state to stdin, whose status says the
 * stage when the arguments do not; a failure at createRuntime exits
 * non-zero so that the runtime does not start a container without the
 * quota it asked for.
 *
 * A container id too long for a group name, or with other characters,
 * gives a derived name with a hash of the whole id (group.c): SHA-256,
 * so that no one finds a second id for a name by trying, taken from
 * nettle (Debian's nettle-dev; libnettle8 is on every system that has
 * GnuTLS) rather than written here: a well-kept, reviewed implementation
 * for one digest per container, where speed does not matter.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "ctlreq.h"
#include "group.h"
#include "log.h"
#include "owner.h"
#include "sock.h"
#include "state.h"
#include "units.h"

enum {
	EXIT_OK = 0,
	EXIT_NO = 1,		/* no group: refused, unreachable, bad input */
	EXIT_USAGE = 2,
};

#define ERR_LEN		1024

static int	stage_create(const char *, const struct oci_state *);
static int	stage_poststop(const char *, const struct oci_state *);

/*
 * The hook's stages. prestart, deprecated by the runtime spec, is called
 * where createRuntime is (after the container's namespaces and cgroup are
 * made, before its program runs), by runtimes older than createRuntime.
 */
static const struct stage {
	const char	*name;
	int		(*run)(const char *, const struct oci_state *);
} stages[] = {
	{ "createRuntime",	stage_create },
	{ "prestart",		stage_create },
	{ "poststop",		stage_poststop },
};

#define NSTAGES	(sizeof(stages) / sizeof(stages[0]))
#define TIMEOUT_MAX_MS	600000	/* -t: longer is no deadline at all */

/*
 * The stage of a hook given none, by the status in the container's state
 * (runtime-spec, "State"): runc says "creating" at createRuntime (and
 * prestart), crun 1.8 "created"; both say "stopped" at poststop. A hook
 * configuration often names the hook's path and no arguments (podman's
 * hooks.d, a runtime's config.json written by hand).
 */
static const struct {
	const char	*status;
	const char	*stage;
} statuses[] = {
	{ "creating",	"createRuntime" },
	{ "created",	"createRuntime" },
	{ "stopped",	"poststop" },
};

#define NSTATUSES	(sizeof(statuses) / sizeof(statuses[0]))

/* Reads exactly like the SYNOPSIS of gpufrac-oci-hook(8). */
static void
usage(FILE *fp)
{
	fputs("usage: gpufrac-oci-hook [-s socket] [-t timeout] "
	    "[createRuntime | poststop]\n", fp);
}

static int
stage_create(const char *path, const struct oci_state *st)
{
	struct ctlreq_group g;
	char err[ERR_LEN], why[SOCK_ERR_LEN], *cg = NULL, *self = NULL;
	int rc = EXIT_NO;

	if (oci_group_build(st, &g, err, sizeof(err)) < 0)
		goto out;
	if (st->bundle == NULL) {
		snprintf(err, sizeof(err), "container '%s': its state gives "
		    "no bundle, where its user is said", st->id);
		goto out;
	}
	if (oci_owner_read(st->bundle, &g.set.owner_uid, &g.set.owner_gid,
	    why, sizeof(why)) < 0) {
		snprintf(err, sizeof(err), "container '%s': %s", st->id, why);
		goto out;
	}
	g.set.flags |= GF_GROUP_OWNER;
	if (st->pid == 0) {
		snprintf(err, sizeof(err), "container '%s': its state gives "
		    "no pid", st->id);
		goto out;
	}
	if ((cg = cgroup_of_pid(st->pid)) == NULL ||
	    (self = cgroup_of_pid((uint32_t)getpid())) == NULL) {
		snprintf(err, sizeof(err), "out of memory");
		goto out;
	}
	if (*cg == '\0') {
		snprintf(err, sizeof(err), "container '%s': cannot read the "
		    "cgroup of its process %u", st->id, st->pid);
		goto out;
	}
	if (oci_group_cgroup(&g, st->id, cg, self, err, sizeof(err)) < 0)
		goto out;
	if (ctlreq_group_set(path, &g, why, sizeof(why)) < 0) {
		snprintf(err, sizeof(err), "cannot create group '%s' for "
		    "container '%s': %s", g.set.name, st->id, why);
		goto out;
	}
	rc = EXIT_OK;

out:
	if (rc != EXIT_OK)
		log_errx("%s", err);
	free(cg);
	free(self);
	return rc;
}

/*
 * A group already gone (never made, since createRuntime refused the
 * container, or removed by hand) leaves nothing to do: said, not failed.
 * Any other failure leaves the group in the daemon and exits 1, which the
 * runtime spec has runtimes log as a warning (crun 1.8 says nothing).
 */
static int
stage_poststop(const char *path, const struct oci_state *st)
{
	char name[GF_GROUP_LEN], why[SOCK_ERR_LEN];
	int rc;

	oci_group_name(st->id, name);
	if ((rc = ctlreq_group_rm(path, name, why, sizeof(why))) == 0)
		return EXIT_OK;
	if (rc == CTLREQ_NO_GROUP) {
		log_warnx("group '%s' of container '%s' was already gone",
		    name, st->id);
		return EXIT_OK;
	}
	log_errx("cannot remove group '%s' of container '%s': %s", name,
	    st->id, why);
	return EXIT_NO;
}

static const struct stage *
stage_find(const char *name)
{
	size_t i;

	for (i = 0; i < NSTAGES; i++)
		if (strcmp(stages[i].name, name) == 0)
			return &stages[i];
	return NULL;
}

/* The stage the state's status says, or NULL with the reason said. */
static const struct stage *
stage_of_status(const struct oci_state *st)
{
	size_t i;

	if (st->status == NULL) {
		log_errx("container '%s': no stage given, and its state has "
		    "no status", st->id);
		return NULL;
	}
	for (i = 0; i < NSTATUSES; i++)
		if (strcmp(statuses[i].status, st->status) == 0)
			return stage_find(statuses[i].stage);
	log_errx("container '%s': no stage given, and its status '%s' "
	    "names none (expected creating, created or stopped)", st->id,
	    st->status);
	return NULL;
}

int
main(int argc, char *argv[])
{
	const struct stage *stage = NULL;
	const char *path = NULL;
	struct oci_state st;
	uint64_t ms;
	char err[ERR_LEN];
	int ch, rc;

	log_init("gpufrac-oci-hook", LOG_LVL_WARN, 0);
	opterr = 0;
	while ((ch = getopt(argc, argv, "+:hs:t:")) != -1) {
		switch (ch) {
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 's':
			path = optarg;
			break;
		case 't':
			/* Connect and reply together: a runtime waits on us. */
			if (duration_parse(optarg, &ms) < 0 || ms == 0 ||
			    ms > TIMEOUT_MAX_MS) {
				log_errx("bad timeout '%s' (a duration from 1ms "
				    "to 10min)", optarg);
				usage(stderr);
				return EXIT_USAGE;
			}
			ctlreq_timeout_set((int)ms);
			break;
		case ':':
			log_errx("option '-%c' needs an argument", optopt);
			usage(stderr);
			return EXIT_USAGE;
		default:
			log_errx("unknown option '-%c'", optopt);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (argc - optind > 1) {
		log_errx("too many arguments");
		usage(stderr);
		return EXIT_USAGE;
	}
	/* A stage given wins over the state's status. */
	if (optind < argc && (stage = stage_find(argv[optind])) == NULL) {
		log_errx("unknown stage '%s'", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (path == NULL)
		path = sock_default_path();
	if (oci_state_read(stdin, &st, err, sizeof(err)) < 0) {
		log_errx("%s", err);
		return EXIT_NO;
	}
	if (stage == NULL && (stage = stage_of_status(&st)) == NULL)
		rc = EXIT_NO;
	else
		rc = oci_group_wanted(&st) ? stage->run(path, &st) : EXIT_OK;
	oci_state_free(&st);
	return rc;
}
