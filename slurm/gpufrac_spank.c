/*
 * The Slurm SPANK plugin: srun, sbatch or salloc --gpu-mem gives a job
 * step's tasks on each node a GPU memory quota. In slurmstepd, as root and
 * before any task starts, the step gets a cgroup and a run-time group in
 * gpufracd that matches it; each task is moved into the cgroup before it
 * execs, with libgpufrac.so preloaded; when the step ends both go. Where
 * the callbacks run and as whom: the comment at the top of <slurm/spank.h>.
 */
#include <errno.h>
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
#include "sock.h"
#include "stepcg.h"

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
	struct stepcg	cg;
} step;

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
 * The run-time group: the step's cgroup and what the user asked for,
 * flagged GF_GROUP_JOB so that the daemon holds it to its [jobs] caps.
 * Nothing lets the tasks raise it themselves (client_may_raise is the
 * daemon's configuration, never set here): GPUFRAC_MEMORY_LIMIT in a
 * task can only lower its own share.
 */
static int
group_register(char *err, size_t errlen)
{
	const struct opts_req *r = opts_req();
	char e[SOCK_ERR_LEN];
	struct ctlreq_group g;

	if (ctlreq_group_init(&g, step.group, err, errlen) < 0)
		return -1;
	g.set.flags |= GF_GROUP_JOB;
	if (ctlreq_group_option(&g, "limit", r->mem, err, errlen) < 0 ||
	    (r->priority[0] != '\0' && ctlreq_group_option(&g, "priority",
	    r->priority, err, errlen) < 0) ||
	    (r->resolver[0] != '\0' && ctlreq_group_option(&g, "resolver",
	    r->resolver, err, errlen) < 0) ||
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
	char err[ERR_LEN], e[ERR_LEN];
	uint32_t job, id;
	spank_err_t rc;

	snprintf(step.label, sizeof(step.label), "?");
	if ((rc = spank_get_item(sp, S_JOB_ID, &job)) != ESPANK_SUCCESS ||
	    (rc = spank_get_item(sp, S_JOB_STEPID, &id)) != ESPANK_SUCCESS)
		return step_fail("cannot tell the job step: %s",
		    spank_strerror(rc));
	/* the extern step launches no task of the job's */
	if (id == SLURM_EXTERN_CONT)
		return 0;
	step_name(id, step.name, sizeof(step.name));
	snprintf(step.label, sizeof(step.label), "%u.%s", job, step.name);
	snprintf(step.group, sizeof(step.group), "slurm-%s", step.label);
	if (cgroup_place(job, err, sizeof(err)) < 0)
		return step_fail("%s", err);
	if (group_register(err, sizeof(err)) < 0) {
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
	    step.label, opts_req()->mem, step.group, step.cg.path);
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
	const struct opts_req *r = opts_req();

	(void)ac;
	(void)av;
	if (r->mem[0] == '\0') {
		if (r->priority[0] == '\0' && r->resolver[0] == '\0')
			return 0;
		slurm_error("gpufrac: --gpu-priority and --gpu-resolver need "
		    "--gpu-mem");
		return -1;
	}
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
