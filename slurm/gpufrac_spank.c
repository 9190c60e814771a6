/*
 * The Slurm SPANK plugin: srun, sbatch or salloc --gpu-mem gives a job
 * step's tasks on each node a GPU memory quota. In slurmstepd, as root and
 * before any task starts, the step gets a cgroup and a run-time group in
 * gpufracd that matches it; each task is moved into the cgroup before it
 * execs, with libgpufrac.so preloaded; when the step ends both go. Where
 * the callbacks run and as whom: the comment at the top of <slurm/spank.h>.
 * A step given shards of a GPU (gres/shard) gets their part of its memory
 * the same way, with --gpu-mem or without.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "cgroup.h"
#include "ctlreq.h"
#include "opts.h"
#include "shards.h"
#include "sock.h"
#include "stepcg.h"
#include "units.h"

/* Slurm finds these by name; everything else stays hidden. */
#define SPANK_EXPORT	__attribute__((visibility("default")))
#pragma GCC visibility push(default)
SPANK_PLUGIN(gpufrac, 1)
#pragma GCC visibility pop

/* LD_PRELOAD as the user set it, at most. */
#define PRELOAD_MAX	4096
/* One line about a step: ours around the daemon's or the kernel's. */
#define ERR_LEN		(2 * SOCK_ERR_LEN)

/* The step this slurmstepd runs, once it has a quota. */
static struct {
	int		active;
	int		failed;		/* set-up failed: no task runs */
	char		why[ERR_LEN];	/* and why */
	pid_t		pid;		/* the slurmstepd that set it up */
	char		name[12];	/* "0", "batch", "interactive" */
	char		label[24];	/* "JOB.STEP" */
	char		group[GF_GROUP_LEN];
	uint32_t	limit_kind;	/* GF_LIMIT_*, sent to the daemon */
	uint64_t	limit_value;
	char		what[192];	/* the limit, for slurmd's log */
	struct stepcg	cg;
} step;

/* The step's shards on this node, as Slurm told its tasks. */
struct step_shards {
	uint64_t	k;		/* SLURM_SHARDS_ON_NODE */
	size_t		gpus;		/* in CUDA_VISIBLE_DEVICES */
	uint64_t	n;		/* shards of one GPU (gres.conf) */
	uint32_t	share;		/* of each GPU, in 0.01% */
};

/* How Slurm names a step in its own cgroups, and so do we. */
static void
step_name(uint32_t id, char *buf, size_t size)
{
	if (id == SLURM_BATCH_SCRIPT)
		snprintf(buf, size, "batch");
	else if (id == SLURM_INTERACTIVE_STEP)
		snprintf(buf, size, "interactive");
	else
		snprintf(buf, size, "%u", id);
}

/*
 * The step's cgroup: the one Slurm's cgroup plugin made for it where
 * slurmstepd already lives in one (proctrack/cgroup, task/cgroup), else
 * ours, into which the tasks are moved.
 */
static int
cgroup_place(uint32_t job, char *err, size_t errlen)
{
	char name[64], *self;
	int found;

	if ((self = cgroup_of_pid((uint32_t)getpid())) == NULL) {
		snprintf(err, errlen, "cannot read /proc/%ld/cgroup: %s",
		    (long)getpid(), strerror(ENOMEM));
		return -1;
	}
	found = stepcg_slurm(&step.cg, self, job, step.name);
	free(self);
	if (found)
		return 0;
	snprintf(name, sizeof(name), "job_%u_step_%s", job, step.name);
	return stepcg_create(&step.cg, opts_conf()->cgroup, name, err,
	    errlen);
}

/*
 * The step's shards from the environment slurmstepd made for its tasks
 * (gres/shard sets both, over what srun passed on): 1 with k and gpus
 * set, 0 when it has none or plugstack.conf says shards=off, -1 with err.
 */
static int
shards_given(spank_t sp, struct step_shards *sh, char *err, size_t errlen)
{
	char v[256];
	const char *p;

	memset(sh, 0, sizeof(*sh));
	if (opts_conf()->shards_off || spank_getenv(sp,
	    "SLURM_SHARDS_ON_NODE", v, sizeof(v)) != ESPANK_SUCCESS)
		return 0;
	if (decimal_parse(v, UINT32_MAX, &sh->k) < 0) {
		snprintf(err, errlen, "bad SLURM_SHARDS_ON_NODE '%s'", v);
		return -1;
	}
	if (sh->k == 0)
		return 0;
	/* Slurm says which GPUs, not how many shards on each */
	sh->gpus = 1;
	if (spank_getenv(sp, "CUDA_VISIBLE_DEVICES", v, sizeof(v)) ==
	    ESPANK_SUCCESS)
		for (p = v; (p = strchr(p, ',')) != NULL; p++)
			sh->gpus++;
	return 1;
}

/*
 * The node's name as slurmd takes it, into buf: plugstack.conf's node=
 * (for a slurmd started with -N), else the host's name up to its first
 * '.'. Never the job's SLURMD_NODENAME: at this point that is whatever
 * the user exported (issue 39: a name with more shards per GPU).
 */
static int
node_name(char *buf, size_t size, char *err, size_t errlen)
{
	if (opts_conf()->node[0] != '\0') {
		snprintf(buf, size, "%s", opts_conf()->node);
		return 0;
	}
	if (gethostname(buf, size) < 0) {
		snprintf(err, errlen, "cannot tell the node's name: %s",
		    strerror(errno));
		return -1;
	}
	buf[size - 1] = '\0';
	buf[strcspn(buf, ".")] = '\0';
	return 0;
}

/*
 * N, from the node's gres.conf: plugstack.conf's gres_conf=, else the one
 * beside slurmd's slurm.conf (slurmstepd has slurmd's SLURM_CONF, not the
 * job's), else SHARDS_GRES_CONF. The node is slurmd's name for it.
 */
static int
shards_per_gpu_read(size_t gpus_seen, uint64_t *n, char *err,
    size_t errlen)
{
	char path[PATH_MAX], node[256], *slash;
	const char *conf = getenv("SLURM_CONF");
	struct shards_node sn;

	if (opts_conf()->gres_conf[0] != '\0')
		snprintf(path, sizeof(path), "%s", opts_conf()->gres_conf);
	else if (conf != NULL && conf[0] == '/' && strlen(conf) <
	    sizeof(path) - sizeof("gres.conf")) {
		snprintf(path, sizeof(path), "%s", conf);
		slash = strrchr(path, '/');
		strcpy(slash + 1, "gres.conf");
	} else
		snprintf(path, sizeof(path), "%s", SHARDS_GRES_CONF);
	if (node_name(node, sizeof(node), err, errlen) < 0)
		return -1;
	if (shards_gres_read(path, node, gpus_seen, &sn, err, errlen) < 0)
		return -1;
	*n = shards_per_gpu(&sn);
	return 0;
}

/*
 * The step's limit: --gpu-mem, its shards' part of each GPU, or the
 * smaller of the two. A size against a share is compared on the daemon's
 * devices: where the size is between the share of the smallest and of the
 * largest, the smaller (the share of the smallest) holds on all of them.
 */
static int
limit_compose(const char *mem, const struct step_shards *sh,
    const struct ctlreq_devices *dev, char *err, size_t errlen)
{
	struct ctlreq_group g;
	uint64_t lo, hi;

	step.limit_kind = GF_LIMIT_PERCENT;
	step.limit_value = sh->share;
	if (mem[0] == '\0')
		return 0;
	if (ctlreq_group_init(&g, "check", err, errlen) < 0 ||
	    ctlreq_group_option(&g, "limit", mem, err, errlen) < 0)
		return -1;
	if (sh->share == 0 || (g.set.limit_kind == GF_LIMIT_PERCENT &&
	    g.set.limit_value < sh->share)) {
		step.limit_kind = g.set.limit_kind;
		step.limit_value = g.set.limit_value;
		return 0;
	}
	if (g.set.limit_kind != GF_LIMIT_BYTES)
		return 0;
	lo = limit_resolve(GF_LIMIT_PERCENT, sh->share, dev->capacity_min);
	hi = limit_resolve(GF_LIMIT_PERCENT, sh->share, dev->capacity_max);
	if (g.set.limit_value >= hi && dev->n > 0)
		return 0;
	step.limit_kind = GF_LIMIT_BYTES;
	step.limit_value = g.set.limit_value < lo || dev->n == 0 ?
	    g.set.limit_value : lo;
	return 0;
}

/*
 * What the step gets: its limit and its group's name, which carries its
 * shards ("slurm-JOB.STEP-shardsKofN") where they fit in it.
 */
static int
step_limit(const struct step_shards *given, char *err,
    size_t errlen)
{
	const char *mem = opts_req()->mem;
	struct step_shards sh = *given;
	struct ctlreq_devices dev;
	char e[SOCK_ERR_LEN];
	int n;

	memset(&dev, 0, sizeof(dev));
	snprintf(step.group, sizeof(step.group), "slurm-%s", step.label);
	snprintf(step.what, sizeof(step.what), "%s", mem);
	if (sh.k == 0)
		return limit_compose(mem, &sh, &dev, err, errlen);
	if (ctlreq_devices(opts_conf()->socket, &dev, e, sizeof(e)) < 0) {
		snprintf(err, errlen, "cannot ask for the GPUs: %s", e);
		return -1;
	}
	if (shards_per_gpu_read(dev.n, &sh.n, err, errlen) < 0)
		return -1;
	sh.share = shards_share(sh.k, sh.gpus, sh.n);
	if (limit_compose(mem, &sh, &dev, err, errlen) < 0)
		return -1;
	n = snprintf(step.group, sizeof(step.group), "slurm-%s-shards%"
	    PRIu64 "of%" PRIu64, step.label, sh.k, sh.n);
	if (n < 0 || (size_t)n >= sizeof(step.group))
		snprintf(step.group, sizeof(step.group), "slurm-%s",
		    step.label);
	snprintf(step.what, sizeof(step.what), "%s%s%" PRIu64 " of %" PRIu64
	    " shards on %zu GPU%s (%u.%02u%% of each)", mem, mem[0] ?
	    " and " : "", sh.k, sh.n, sh.gpus, sh.gpus > 1 ? "s" : "",
	    sh.share / 100, sh.share % 100);
	return 0;
}

/*
 * The run-time group: the step's cgroup and what the user asked for,
 * flagged GF_GROUP_JOB so that the daemon holds it to its [jobs] caps and
 * to the [group] of the job's user (GF_GROUP_OWNER).
 * Nothing lets the tasks raise it themselves (client_may_raise is the
 * daemon's configuration, never set here): GPUFRAC_MEMORY_LIMIT in a
 * task can only lower its own share.
 */
static int
group_register(spank_t sp, char *err, size_t errlen)
{
	const struct opts_req *r = opts_req();
	char e[SOCK_ERR_LEN];
	struct ctlreq_group g;
	spank_err_t rc;
	uid_t uid;
	gid_t gid;

	if (ctlreq_group_init(&g, step.group, err, errlen) < 0)
		return -1;
	g.set.flags |= GF_GROUP_JOB;
	/* the job's owner, from its credential: what its group is bound by */
	if ((rc = spank_get_item(sp, S_JOB_UID, &uid)) != ESPANK_SUCCESS ||
	    (rc = spank_get_item(sp, S_JOB_GID, &gid)) != ESPANK_SUCCESS) {
		snprintf(err, errlen, "cannot tell the job's user: %s",
		    spank_strerror(rc));
		return -1;
	}
	g.set.flags |= GF_GROUP_OWNER;
	g.set.owner_uid = (uint32_t)uid;
	g.set.owner_gid = (uint32_t)gid;
	g.set.limit_kind = step.limit_kind;
	g.set.limit_value = step.limit_value;
	if ((r->priority[0] != '\0' && ctlreq_group_option(&g, "priority",
	    r->priority, err, errlen) < 0) ||
	    (r->resolver[0] != '\0' && ctlreq_group_option(&g, "resolver",
	    r->resolver, err, errlen) < 0) ||
	    (r->unshimmed[0] != '\0' && ctlreq_group_option(&g, "unshimmed",
	    r->unshimmed, err, errlen) < 0) ||
	    ctlreq_group_cgroup(&g, step.cg.path, err, errlen) < 0)
		return -1;
	if (ctlreq_group_set(opts_conf()->socket, &g, e, sizeof(e)) < 0) {
		snprintf(err, errlen, "cannot set group '%s': %s", step.group,
		    e);
		return -1;
	}
	return 0;
}

/* list (LD_PRELOAD's, separated by spaces or colons) holds path. */
static int
preload_has(const char *list, const char *path)
{
	size_t n = strlen(path);
	const char *p;

	for (p = list; *p != '\0'; p += strcspn(p, " :")) {
		p += strspn(p, " :");
		if (strncmp(p, path, n) == 0 && (p[n] == '\0' ||
		    p[n] == ' ' || p[n] == ':'))
			return 1;
	}
	return 0;
}

/* The tasks' environment: the shim after what they preload, the socket. */
static int
env_set(spank_t sp, char *err, size_t errlen)
{
	const struct opts_conf *c = opts_conf();
	char old[PRELOAD_MAX], val[PRELOAD_MAX + PATH_MAX + 1];
	spank_err_t rc;

	if (access(c->shim, R_OK) < 0) {
		snprintf(err, errlen, "cannot read the shim '%s' (shim= in "
		    "plugstack.conf): %s", c->shim, strerror(errno));
		return -1;
	}
	rc = spank_getenv(sp, "LD_PRELOAD", old, sizeof(old));
	if (rc == ESPANK_ENV_NOEXIST)
		old[0] = '\0';
	else if (rc != ESPANK_SUCCESS) {
		snprintf(err, errlen, "cannot read the tasks' LD_PRELOAD: %s",
		    spank_strerror(rc));
		return -1;
	}
	if (preload_has(old, c->shim))
		snprintf(val, sizeof(val), "%s", old);
	else
		snprintf(val, sizeof(val), "%s%s%s", old,
		    old[strspn(old, " :")] != '\0' ? " " : "", c->shim);
	if ((rc = spank_setenv(sp, "LD_PRELOAD", val, 1)) != ESPANK_SUCCESS ||
	    (rc = spank_setenv(sp, "GPUFRAC_SOCKET", c->socket, 1)) !=
	    ESPANK_SUCCESS) {
		snprintf(err, errlen, "cannot set the tasks' environment: %s",
		    spank_strerror(rc));
		return -1;
	}
	return 0;
}

/* Undo what step_start did; errors go to slurmd's log. */
static int
step_end(void)
{
	char err[ERR_LEN];
	int rc = 0, r;

	/* first the processes, so that none outlives its group */
	if (stepcg_remove(&step.cg, err, sizeof(err)) < 0) {
		slurm_error("gpufrac: step %s: %s", step.label, err);
		rc = -1;
	}
	r = ctlreq_group_rm(opts_conf()->socket, step.group, err, sizeof(err));
	if (r == CTLREQ_NO_GROUP)	/* transient: it went with its cgroup */
		slurm_verbose("gpufrac: step %s: group '%s' already gone",
		    step.label, step.group);
	else if (r < 0) {
		slurm_error("gpufrac: step %s: cannot remove group '%s': %s",
		    step.label, step.group, err);
		rc = -1;
	}
	step.active = 0;
	return rc;
}

/*
 * The set-up failed: say why in slurmd's log now, and again to the user
 * from each task, which must not run without its quota. (A failed
 * init_post_opt would stop the step before its tasks, but srun 22.05 then
 * says only "Plugin initialization failed" and exits 0.)
 */
static int __attribute__((format(printf, 1, 2)))
step_fail(const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(step.why, sizeof(step.why), "gpufrac: step %s: ",
	    step.label);
	va_start(ap, fmt);
	vsnprintf(step.why + n, sizeof(step.why) - (size_t)n, fmt, ap);
	va_end(ap);
	step.failed = 1;
	slurm_error("%s", step.why);
	return 0;
}

/* In slurmstepd, as root, before the tasks are forked. */
static int
step_start(spank_t sp)
{
	const struct opts_req *r = opts_req();
	char err[ERR_LEN], e[ERR_LEN];
	struct step_shards sh;
	uint32_t job, id;
	spank_err_t rc;
	int shards;

	snprintf(step.label, sizeof(step.label), "?");
	shards = shards_given(sp, &sh, err, sizeof(err));
	if (shards == 0 && r->mem[0] == '\0' && r->priority[0] == '\0' &&
	    r->resolver[0] == '\0' && r->unshimmed[0] == '\0')
		return 0;	/* left alone */
	if ((rc = spank_get_item(sp, S_JOB_ID, &job)) != ESPANK_SUCCESS ||
	    (rc = spank_get_item(sp, S_JOB_STEPID, &id)) != ESPANK_SUCCESS)
		return step_fail("cannot tell the job step: %s",
		    spank_strerror(rc));
	/* the extern step launches no task of the job's */
	if (id == SLURM_EXTERN_CONT)
		return 0;
	step_name(id, step.name, sizeof(step.name));
	snprintf(step.label, sizeof(step.label), "%u.%s", job, step.name);
	/* Shards carry memory as --gpu-mem does: either is enough. */
	if (shards == 0 && r->mem[0] == '\0')
		return step_fail("--gpu-priority, --gpu-resolver and "
		    "--gpu-unshimmed need --gpu-mem or shards "
		    "(--gres=shard:K)");
	if (shards < 0 || step_limit(&sh, err, sizeof(err)) < 0)
		return step_fail("%s", err);
	if (cgroup_place(job, err, sizeof(err)) < 0)
		return step_fail("%s", err);
	if (group_register(sp, err, sizeof(err)) < 0) {
		if (stepcg_remove(&step.cg, e, sizeof(e)) < 0)
			slurm_error("gpufrac: step %s: %s", step.label, e);
		return step_fail("%s", err);
	}
	step.active = 1;
	step.pid = getpid();
	if (env_set(sp, err, sizeof(err)) < 0) {
		step_end();
		return step_fail("%s", err);
	}
	slurm_info("gpufrac: step %s: GPU memory %s, group '%s', cgroup '%s'",
	    step.label, step.what, step.group, step.cg.path);
	return 0;
}

SPANK_EXPORT int
slurm_spank_init(spank_t sp, int ac, char **av)
{
	char err[ERR_LEN];

	switch (spank_context()) {
	case S_CTX_LOCAL:
	case S_CTX_REMOTE:
	case S_CTX_ALLOCATOR:
		break;
	default:
		return 0;
	}
	if (opts_args(ac, av, err, sizeof(err)) < 0) {
		slurm_error("gpufrac: plugstack.conf: %s", err);
		return -1;
	}
	if (opts_register(sp, err, sizeof(err)) < 0) {
		slurm_error("gpufrac: %s", err);
		return -1;
	}
	return 0;
}

/* Options are known: in srun and sbatch a check, in slurmstepd the set-up. */
SPANK_EXPORT int
slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	/*
	 * --gpu-priority or --gpu-resolver without --gpu-mem is checked in
	 * slurmstepd (step_start), where the step's shards are known: shards
	 * carry the memory as well. A step with neither is left alone.
	 */
	if (spank_remote(sp) != 1)
		return 0;
	return step_start(sp);
}

/* In each task, as root, before it becomes the user and execs. */
SPANK_EXPORT int
slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
	char err[ERR_LEN];

	(void)sp;
	(void)ac;
	(void)av;
	if (step.failed) {
		slurm_error("%s", step.why);
		return -1;
	}
	if (!step.active || !step.cg.owned)
		return 0;
	if (stepcg_enter(&step.cg, getpid(), err, sizeof(err)) < 0) {
		slurm_error("gpufrac: step %s: %s", step.label, err);
		return -1;
	}
	return 0;
}

/* In slurmstepd once every task has ended. */
SPANK_EXPORT int
slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (spank_remote(sp) != 1 || !step.active || step.pid != getpid())
		return 0;
	return step_end();
}
