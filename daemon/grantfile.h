/*
 * What the daemon granted each client, in a file in state_dir that a
 * daemon killed leaves to the next one (issue 40): mapped, so that
 * recording a grant is a few stores into memory, not a system call
 * (state_dir is tmpfs by default: nothing is synced).
 *
 * The file: a header (magic, layout version, the slots' size and
 * number, the daemon's last sign of life and the boot it counts from,
 * the devices by UUID), then
 * fixed-size slots, one a process: per device its grants, its lease
 * and its context record (out to host, NVML shows nothing of it). A
 * slot carries a generation, odd while it is being written (a seqlock's:
 * a slot whose writer was killed half-way stays odd), and a checksum
 * over the rest, so that a slot torn, or changed by anyone else, is told
 * from a whole one. Slots are reused through a free list; the file grows
 * by doubling. Owned by root (the daemon), mode 0600.
 */
#ifndef GF_DAEMON_GRANTFILE_H
#define GF_DAEMON_GRANTFILE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "gpufrac/proto.h"

#define GRANTS_FILE		"grants"	/* in state_dir */
#define GRANTFILE_VERSION	3	/* 2: the context per device;
					   3: the boot */

/* A record's flags. */
#define GRANT_OUT	0x1	/* out to host */
#define GRANT_BY_COPY	0x2	/* sent out by the copy engine (out, or
				   asked to move out): its page says
				   where its memory is */
#define GRANT_WORD	0x4	/* its word past its grants weighed by
				   an earlier daemon's rules (granted.h) */
#define GRANT_NOTHING	0x8	/* granted nothing: judged to hold
				   memory without the shim, or its word
				   refused */

/* In a context's figure: the daemon knew it (0 bytes then is a figure). */
#define GRANT_CONTEXT_KNOWN	(1ull << 63)

/* One process's record, its devices as the daemon numbers them. */
struct grant_rec {
	uint32_t	 pid;
	uint64_t	 start_ms;	/* its start (pidfd_start_ms) */
	uint32_t	 flags;		/* GRANT_* */
	uint64_t	*granted;	/* per device: all it was granted
					   but its context record */
	uint64_t	*lease;		/* of which its lease, per device */
	uint64_t	*context;	/* per device: its context record |
					   GRANT_CONTEXT_KNOWN, or 0 */
	uint32_t	 slot;		/* where it is in the file */
};

/* The file, mapped. */
struct grantfile {
	int		 fd;		/* -1: none (nothing is recorded) */
	uint8_t		*map;
	size_t		 size;
	size_t		 ndevices;
	uint32_t	 nslots;
	uint32_t	*free;		/* slots free, a stack */
	uint32_t	 nfree;
	char		 path[PATH_MAX];
};

/* Why a record was not read, and whose it seemed to be. */
struct grant_lost {
	uint32_t	 pid;		/* as the slot says: maybe wrong */
	const char	*why;		/* static */
};

/* What grantfile_open read of the previous file. */
struct grant_read {
	struct grant_rec *recs;		/* whole records (malloc'd, theirs:
					   grant_read_free) */
	size_t		 nrecs;
	struct grant_lost *lost;	/* torn or changed slots, or two of
					   one process */
	size_t		 nlost;
	int		 left;		/* an earlier daemon left a file */
	int		 whole;		/* a file of this layout was read:
					   a process without a record never
					   asked its writer for anything */
	uint64_t	 alive_ms;	/* its writer's last sign of life (ms
					   since boot): a process started
					   after it had no daemon to ask */
	char		 why[160];	/* else why not, one line */
};

/*
 * Read the file at path into *rd (the devices the daemon does not have
 * dropped from the records; uuids: its ndevices devices, in its order;
 * a file of another boot than boot, pidfd_boot_id's, not believed: its
 * times and pids are another machine's), then put a new one in its
 * place for these devices, holding the whole records (each
 * rd->recs[i].slot says where): 0, or -1 with one line in err (then gf
 * records nothing; *rd is filled either way).
 */
int	grantfile_open(struct grantfile *gf, const char *path,
	    const uint8_t boot[GF_UUID_LEN],
	    const uint8_t (*uuids)[GF_UUID_LEN], size_t ndevices,
	    struct grant_read *rd, char *err, size_t errlen);
void	grant_read_free(struct grant_read *rd);

/*
 * A slot for a new record: its number, or UINT32_MAX when none can be
 * had (no file, no memory or room to grow: logged).
 */
uint32_t grantfile_slot(struct grantfile *gf);
/* Write r into slot (seqlock order: generation odd, fields, even). */
void	grantfile_put(struct grantfile *gf, uint32_t slot,
	    const struct grant_rec *r);
/* Say the daemon is alive at boot_ms (ms since boot): a process that
 * starts later, with no daemon, had none to ask. */
void	grantfile_alive(struct grantfile *gf, uint64_t boot_ms);
/* Empty slot and give it back to the free list. */
void	grantfile_release(struct grantfile *gf, uint32_t slot);

/* Unmap and close; the file stays for the next daemon. */
void	grantfile_close(struct grantfile *gf);

#endif
