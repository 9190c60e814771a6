/*
 * The driver's memory limits per cgroup (r615's memory partitioning, the
 * "misc" backend: the driver's own accounting, the nearest limited
 * ancestor's limit): kept in the shared segment per device and cgroup,
 * set and read through NVML (nvml_limits.c), enforced on every charge
 * and shown by cuMemGetInfo. A process is known by the cgroup chain it
 * read at cuInit, by inode, so that a process in a container (its own
 * cgroup namespace, cgroup2 mounted at /sys/fs/cgroup as runtimes do)
 * and the setter on the host name the same cgroup.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "segment.h"

void
limits_chain(uint64_t *cg)
{
	char dir[PATH_MAX], *path, *slash;
	size_t mntlen, n = 0;
	struct stat st;

	memset(cg, 0, STATE_CG_DEPTH * sizeof(*cg));
	if ((path = cgroup_of_pid((uint32_t)getpid())) == NULL)
		return;
	if (*path != '/' || cgroup_dir(path, dir, sizeof(dir), &mntlen) < 0) {
		free(path);
		return;
	}
	free(path);
	/* From the cgroup up to the mount's own root, inclusive. */
	while (n < STATE_CG_DEPTH - 1 && stat(dir, &st) == 0) {
		cg[n++] = (uint64_t)st.st_ino;
		if (strlen(dir) <= mntlen || (slash = strrchr(dir, '/')) ==
		    NULL || (size_t)(slash - dir) < mntlen)
			break;
		*slash = '\0';
	}
}

static int
chain_has(const struct state_proc *sp, uint64_t ino)
{
	int i;

	for (i = 0; i < STATE_CG_DEPTH && sp->cg[i] != 0; i++)
		if (sp->cg[i] == ino)
			return 1;
	return 0;
}

/* The limit on phys of the nearest limited cgroup of sp, or NULL. */
static const struct state_limit *
limit_of(int phys, const struct state_proc *sp)
{
	int i, k;

	for (i = 0; i < STATE_CG_DEPTH && sp->cg[i] != 0; i++)
		for (k = 0; k < STATE_LIMITS; k++)
			if (state_shm->limits[k].ino == sp->cg[i] &&
			    state_shm->limits[k].phys == phys)
				return &state_shm->limits[k];
	return NULL;
}

/* What the processes of cgroup ino's subtree hold on phys, the memory of
 * the dead ones not yet released included. */
static uint64_t
subtree_used(int phys, uint64_t ino)
{
	uint64_t used = 0;
	uint32_t i;

	for (i = 0; i < state_shm->nslots; i++)
		if (chain_has(&state_shm->procs[i], ino))
			used += state_shm->procs[i].used[phys];
	return used;
}

int
limits_fit(int phys, const struct state_proc *sp, uint64_t bytes)
{
	const struct state_limit *l = limit_of(phys, sp);
	uint64_t used;

	if (l == NULL)
		return 1;
	used = subtree_used(phys, l->ino);
	return used <= l->hard && bytes <= l->hard - used;
}

void
state_meminfo_self(int phys, uint64_t *used, uint64_t *total)
{
	const struct state_proc *self;
	const struct state_limit *l;
	uint64_t free, mine;

	state_meminfo(phys, used, total);
	self = __atomic_load_n(&state_self_proc, __ATOMIC_ACQUIRE);
	if (self == NULL || state_lock() < 0)
		return;
	/* Capped to the hard limit, free to the room left under it. */
	if ((l = limit_of(phys, self)) != NULL) {
		free = *used < *total ? *total - *used : 0;
		mine = subtree_used(phys, l->ino);
		if (l->hard < *total)
			*total = l->hard;
		if (mine > l->hard)
			free = 0;
		else if (l->hard - mine < free)
			free = l->hard - mine;
		if (free > *total)
			free = *total;
		*used = *total - free;
	}
	state_unlock();
}

/* The record of cgroup ino on phys, or NULL. */
static struct state_limit *
record_find(int phys, uint64_t ino)
{
	int k;

	for (k = 0; k < STATE_LIMITS; k++)
		if (state_shm->limits[k].ino == ino &&
		    state_shm->limits[k].phys == phys)
			return &state_shm->limits[k];
	return NULL;
}

/* A free record, those of cgroups deleted since they were set freed
 * first if need be; NULL when the table is full. */
static struct state_limit *
record_new(void)
{
	struct state_limit *l;
	struct stat st;
	int k, pass;

	for (pass = 0; pass < 2; pass++)
		for (k = 0; k < STATE_LIMITS; k++) {
			l = &state_shm->limits[k];
			if (pass == 1 && l->ino != 0 && (stat(l->path, &st) <
			    0 || (uint64_t)st.st_ino != l->ino))
				l->ino = 0;
			if (l->ino == 0)
				return l;
		}
	return NULL;
}

/* The inode of the cgroup directory path; -ENOENT when there is none. */
static int
cgroup_ino(const char *path, uint64_t *ino)
{
	struct stat st;

	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return -ENOENT;
	*ino = (uint64_t)st.st_ino;
	return 0;
}

int
limits_set(int phys, const char *path, uint64_t soft, uint64_t hard)
{
	struct state_limit *l;
	uint64_t ino;
	int r;

	if (strlen(path) >= STATE_LIMIT_PATH || soft > hard)
		return -EINVAL;
	if ((r = cgroup_ino(path, &ino)) < 0)
		return r;
	if (state_lock() < 0)
		return -EIO;
	l = record_find(phys, ino);
	if (soft == 0 && hard == UINT64_MAX) {
		if (l != NULL)		/* cleared: as if never limited */
			memset(l, 0, sizeof(*l));
	} else if (l != NULL || (l = record_new()) != NULL) {
		l->ino = ino;
		l->phys = phys;
		l->soft = soft;
		l->hard = hard;
		strcpy(l->path, path);
	} else
		r = -ENOSPC;
	state_unlock();
	return r;
}

int
limits_get(int phys, const char *path, uint64_t *soft, uint64_t *hard,
    uint64_t *used)
{
	const struct state_limit *l;
	uint64_t ino;
	int r;

	if ((r = cgroup_ino(path, &ino)) < 0)
		return r;
	if (state_lock() < 0)
		return -EIO;
	state_reap();
	if ((l = record_find(phys, ino)) == NULL)
		r = -ENOENT;
	else {
		*soft = l->soft;
		*hard = l->hard;
		*used = subtree_used(phys, ino);
	}
	state_unlock();
	return r;
}
