/*
 * A job step's Slurm shards (gres/shard) as GPU memory: how many shards
 * each of the node's GPUs has, read from the node's gres.conf as slurmd
 * reads it, and what part of a GPU a step's shards are. No Slurm and no
 * daemon here; errors come back as one line in err.
 */
#ifndef GF_SLURM_SHARDS_H
#define GF_SLURM_SHARDS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* gres.conf when plugstack.conf names none and slurmd's SLURM_CONF is not set. */
#define SHARDS_GRES_CONF	"/etc/slurm/gres.conf"
/* GPUs with shards on one node, at most. */
#define SHARDS_GPUS_MAX		64

/* The node's shards, per GPU, in the order gres.conf names them. */
struct shards_node {
	uint64_t	count[SHARDS_GPUS_MAX];
	size_t		ngpus;
};

/*
 * Read the lines of gres.conf (fp, named path in errors) that apply to the
 * node host: Name=shard lines give each GPU of their File its share of
 * Count (Count spread evenly over the files, as Slurm does); a Name=shard
 * line without File spreads its Count over the node's GPUs, those of the
 * Name=gpu lines' File, or where there is none (AutoDetect) over gpus_seen.
 * NodeName= is a Slurm host list ("gpu[01-04,07],login"). Returns 0 (sn
 * empty when the node has no shards), or -1 with err as "PATH:LINE: ...".
 */
int	shards_gres_parse(FILE *fp, const char *path, const char *host,
	    size_t gpus_seen, struct shards_node *sn, char *err,
	    size_t errlen);

/* The same, from the file at path; a node without shards is an error. */
int	shards_gres_read(const char *path, const char *host, size_t gpus_seen,
	    struct shards_node *sn, char *err, size_t errlen);

/*
 * N, the shards of one GPU: where the node's GPUs have different counts,
 * the largest (Slurm does not tell the step which GPU its shards are
 * on, by its gres.conf order). 0 when the node has none.
 */
uint64_t shards_per_gpu(const struct shards_node *sn);

/*
 * The part of each of ngpus GPUs that k shards spread evenly over them are,
 * with n shards a GPU: k / (ngpus * n), in hundredths of a percent (the
 * daemon's GF_LIMIT_PERCENT), rounded down but at least 1, at most 10000;
 * 0 when k or n is 0 or above UINT32_MAX.
 */
uint32_t shards_share(uint64_t k, size_t ngpus, uint64_t n);

/* Slurm's host list (a NodeName= value) names host: 1, else 0. */
int	shards_host_match(const char *list, const char *host);

#endif
