/*
 * The fuzzer's scratch directory (socket, run-time groups' state file,
 * the configuration variants) and the variants themselves: the first four
 * are what an input may start with (FZ_WORLD_CONF) and fit every device
 * set; the others are only reloaded into, and some of them are refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

/*
 * The groups' rules name the slots' identities (peers.c): A's cgroup, B's
 * uid, C's container and pod, the gid of C and D, root (the fuzzer's own
 * process), the unprivileged gpufracctl's uid.
 */
static const char *const variants[] = {
	/* 0: the built-in defaults, every request its own limit, fail */
	"",
	/* 1: groups of every resolver, lending, short waits */
	"default_resolver = wait\n"
	"wait_timeout = 2s\n"
	"[group train]\n"
	"match = cgroup:/fuzz.slice/job-a.scope\n"
	"limit = 60%\nguarantee = 25%\npriority = 10\n"
	"resolver = preempt\non_preempt = kill\nkill_grace = 1s\n"
	"[group infer]\n"
	"match = uid:1001\n"
	"limit = 50%\npriority = 5\nresolver = wait\nwait_timeout = 500ms\n"
	"on_preempt = swap\n"
	"[group batch]\n"
	"match = gid:200 container:3f2a9c\n"
	"priority = 0\nresolver = fail\non_preempt = kill\n"
	/* bare.c's processes without connections, uids 2001 and 2002 */
	"[group cap]\nmatch = uid:2001 uid:2002\nlimit = 1Gi\n"
	"unshimmed = kill\n",
	/* 2: host swap first; clients may raise their limits */
	"default_resolver = swap\ndefault_limit = 75%\n"
	"client_may_raise = yes\nswap_min_idle = 100ms\nwait_timeout = 0\n"
	"unshimmed = kill\n"
	"[device 0]\nreserve = 256Mi\n"
	"[group train]\n"
	"match = cgroup:/fuzz.slice/job-*\n"
	"guarantee = 20%\npriority = 0\nresolver = swap\non_preempt = swap\n"
	"[group batch]\n"
	"match = gid:200 uid:0\n"
	"priority = 1\nresolver = preempt\non_preempt = swap\n"
	"client_may_raise = yes\n",
	/* 3: shared byte limits, nothing lent */
	"lend_guarantees = no\ndefault_limit = 2Gi\n"
	"default_resolver = wait\nwait_timeout = 30s\n"
	"[group shared]\n"
	"match = cgroup:/fuzz.slice/* uid:1002 pod:1b2c3d4e-5f60-4a7b-8c9d-"
	"0e1f2a3b4c5d\n"
	"limit = 3Gi\nguarantee = 512Mi\npriority = 2\nresolver = wait\n"
	"on_preempt = none\n"
	"[group ctl]\nmatch = uid:1007\nlimit = 1Mi\n"
	"[group cap]\nmatch = uid:2001 uid:2002\nlimit = 1Gi\n"
	"unshimmed = kill\n",
	/* 4: guarantees no device here holds (refused where there is one) */
	"[group big]\nmatch = uid:1000\nlimit = 200Gi\nguarantee = 100Gi\n",
	/* 5: not a configuration at all (refused) */
	"no_such_key = 1\n",
	/* 6: variant 1's groups, priorities turned round, by-uuid reserve */
	"default_resolver = preempt\nwait_timeout = 1s\n"
	"[device GPU-a1a1a1a1-a1a1-a1a1-a1a1-a1a1a1a1a1a1]\nreserve = 1Gi\n"
	"[group train]\n"
	"match = cgroup:/fuzz.slice/job-a.scope\n"
	"limit = 30%\npriority = 0\nresolver = wait\non_preempt = swap\n"
	"[group infer]\n"
	"match = uid:1001 uid:1003\n"
	"limit = 90%\nguarantee = 10%\npriority = 20\nresolver = preempt\n"
	"on_preempt = kill\nkill_grace = 200ms\n",
	/* 7: a device whose reserve is all of it */
	"[device GPU-a0a0a0a0-a0a0-a0a0-a0a0-a0a0a0a0a0a0]\nreserve = 1Gi\n"
	"[group train]\nmatch = cgroup:/fuzz.slice/job-a.scope\n"
	"resolver = swap\n",
};

#define NVARIANTS	(sizeof(variants) / sizeof(variants[0]))

/*
 * The liar target's (liars.c), apart from the variants above (whose
 * numbers the corpus's inputs name): on a 4 GiB device, an honest group
 * (slot 0's uid) guaranteed and limited to a quarter, which no one
 * borrows, and the liars (slots 1 to 3) sharing the rest, swapped by the
 * copy engine, which takes their word on what they moved.
 */
static const char liar_variant[] =
	"lend_guarantees = no\ndefault_resolver = fail\n"
	"swap_engine = copy\nswap_min_idle = 100ms\nswap_host_limit = 1Gi\n"
	"swap_move_timeout = 2s\nswap_keep = 5s\n"
	"[group honest]\nmatch = uid:1000\n"
	"limit = 25%\nguarantee = 25%\nresolver = fail\non_preempt = none\n"
	"[group liars]\nmatch = uid:1001 uid:1002 uid:1003\n"
	"limit = 75%\npriority = 5\nresolver = swap\non_preempt = swap\n";

static char scratch[64];
static char paths[NVARIANTS + 1][96];
static char state_path[96];
static int bogus = -1;

void
fz_scratch_remove(void)
{
	char path[128];
	size_t i;

	for (i = 0; i <= NVARIANTS; i++)
		unlink(paths[i]);
	unlink(state_path);
	snprintf(path, sizeof(path), "%s.bad", state_path);
	unlink(path);
	snprintf(path, sizeof(path), "%s/gf.sock", scratch);
	unlink(path);
	if (bogus >= 0)
		close(bogus);
	bogus = -1;
	if (scratch[0] != '\0')
		rmdir(scratch);
	scratch[0] = '\0';
}

/* What each variant starts with: where the daemon's files go, and who
 * administers it (root, else our own group, so that slot 6 may). */
static void
variant_write(size_t i)
{
	const char *text = i < NVARIANTS ? variants[i] : liar_variant;
	const struct group *gr = getuid() == 0 ? NULL : getgrgid(getgid());
	FILE *fp;

	snprintf(paths[i], sizeof(paths[i]), "%s/variant%zu.conf", scratch, i);
	if ((fp = fopen(paths[i], "w")) == NULL)
		fz_fail("cannot write '%s': %s", paths[i], strerror(errno));
	fprintf(fp, "[daemon]\nsocket = %s/gf.sock\nstate_dir = %s\n"
	    "log_level = %s\n", scratch, scratch,
	    getenv("FUZZ_LOG") ? "debug" : "error");
	if (gr != NULL)
		fprintf(fp, "admin_group = %s\n", gr->gr_name);
	/* [daemon]'s keys first: the variant may open other sections. */
	fputs(text, fp);
	if (fclose(fp) != 0)
		fz_fail("cannot write '%s': %s", paths[i], strerror(errno));
}

/* Once per process: tmpfs if there is one, the run-time groups' fsync is
 * then no disk write. */
void
fz_scratch_init(void)
{
	const char *tmp = getenv("TMPDIR");
	size_t i;

	if (access("/dev/shm", W_OK) == 0)
		tmp = "/dev/shm";
	else if (tmp == NULL)
		tmp = "/tmp";
	snprintf(scratch, sizeof(scratch), "%s/gpufrac-fuzz.XXXXXX", tmp);
	if (mkdtemp(scratch) == NULL)
		fz_fail("cannot make '%s': %s", scratch, strerror(errno));
	snprintf(state_path, sizeof(state_path), "%s/%s", scratch,
	    RTGROUPS_FILE);
	if ((bogus = open(scratch, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		fz_fail("cannot open '%s': %s", scratch, strerror(errno));
	atexit(fz_scratch_remove);
	for (i = 0; i <= NVARIANTS; i++)
		variant_write(i);
}

const char *
fz_liar_variant_path(void)
{
	return paths[NVARIANTS];
}

const char *
fz_variant_path(unsigned variant)
{
	return paths[variant % NVARIANTS];
}

unsigned
fz_nvariants(void)
{
	return NVARIANTS;
}

const char *
fz_state_path(void)
{
	return state_path;
}

/* A descriptor that is no activity page (a directory), for SCM_RIGHTS. */
int
fz_bogus_fd(void)
{
	return bogus;
}
