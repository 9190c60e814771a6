/*
 * What the plugin is told: its arguments in plugstack.conf (the
 * administrator's word) and the options of srun, sbatch and salloc (the
 * user's). An option is checked where it is given, so that a bad value
 * fails srun or sbatch before anything is queued, and again on the node,
 * whose plugstack.conf is the one that counts.
 */
#ifndef GF_SLURM_OPTS_H
#define GF_SLURM_OPTS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <slurm/spank.h>

#define OPTS_VALUE_LEN	64	/* an option's value, with its NUL */

/* The shim's path when plugstack.conf names none: make install's. */
#ifndef GPUFRAC_LIBDIR
#define GPUFRAC_LIBDIR		"/usr/local/lib"
#endif
#define OPTS_SHIM_DEFAULT	GPUFRAC_LIBDIR "/libgpufrac.so"

#define OPTS_TIMEOUT_MAX_MS	600000	/* timeout=: at most 10 minutes */

/*
 * plugstack.conf: socket=PATH shim=PATH cgroup=DIR max_priority=N
 * timeout=DURATION shards=on|off gres_conf=PATH node=NAME (timeout: the
 * daemon's connect and reply together, for
 * ctlreq_timeout_set; CTLREQ_TIMEOUT_MS when not given)
 */
struct opts_conf {
	char	socket[PATH_MAX];	/* the daemon's */
	char	shim[PATH_MAX];		/* preloaded into the tasks */
	char	cgroup[PATH_MAX];	/* step cgroups here; "": default */
	int	max_priority_set;
	int32_t	max_priority;		/* the highest --gpu-priority */
	int	shards_off;		/* shards are not memory */
	char	gres_conf[PATH_MAX];	/* the node's; "": slurmd's */
	char	node[256];		/* slurmd's -N; "": the host's */
};

/* The user's --gpu-mem, --gpu-priority, --gpu-resolver, --gpu-unshimmed;
   "" if not given. */
struct opts_req {
	char	mem[OPTS_VALUE_LEN];
	char	priority[OPTS_VALUE_LEN];
	char	resolver[OPTS_VALUE_LEN];
	char	unshimmed[OPTS_VALUE_LEN];
};

/* Read the plugin's arguments. Returns 0, or -1 with err naming one. */
int	opts_args(int ac, char **av, char *err, size_t errlen);

/*
 * Register the user's options; in slurm_spank_init, in every context
 * where they are given or read. Returns 0, or -1 with err set.
 */
int	opts_register(spank_t sp, char *err, size_t errlen);

/* The arguments and options read so far; valid for the process's life. */
const struct opts_conf	*opts_conf(void);
const struct opts_req	*opts_req(void);

#endif
