/*
 * The cgroup that tells a job step's tasks apart by the kernel alone: one
 * made for the step in a cgroup2 file system (the tasks are moved in before
 * they exec, and it is emptied and removed when the step ends), or the one
 * Slurm's own cgroup plugin already gave the step. Errors come back as one
 * line in err, for the caller to say where its users look.
 */
#ifndef GF_SLURM_STEPCG_H
#define GF_SLURM_STEPCG_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How long the end of a step waits for what is left in its cgroup to die. */
#define STEPCG_DRAIN_MS	5000

struct stepcg {
	char	dir[PATH_MAX];	/* in the file system; "": not ours */
	char	path[PATH_MAX];	/* as /proc/PID/cgroup names it */
	int	owned;		/* made here: tasks moved in, removed */
};

/*
 * Slurm's own cgroup for the step: self is this process's cgroup (as
 * cgroup_of_pid() reads it) and lies in ".../job_JOB/step_STEP". Sets
 * cg->path to that cgroup and returns 1; returns 0 when self is elsewhere.
 */
int	stepcg_slurm(struct stepcg *cg, const char *self, uint32_t job,
	    const char *step);

/*
 * Make the cgroup name in parent, a directory (made if missing) in the
 * cgroup2 file system that cgroup2_mount() finds, or with parent "" in
 * "gpufrac" at its top. A cgroup left by an earlier step of the same name
 * is reused. Returns 0 or -1 with err set.
 */
int	stepcg_create(struct stepcg *cg, const char *parent, const char *name,
	    char *err, size_t errlen);

/* Move pid into the cgroup made by stepcg_create. Returns 0 or -1. */
int	stepcg_enter(const struct stepcg *cg, pid_t pid, char *err,
	    size_t errlen);

/*
 * The step is over: kill whatever is still in the cgroup made by
 * stepcg_create, wait up to STEPCG_DRAIN_MS for it to empty, remove it.
 * Does nothing for Slurm's own. Returns 0 or -1 with err set.
 */
int	stepcg_remove(struct stepcg *cg, char *err, size_t errlen);

#endif
