/*
 * Processes without connections (bare.c): NVML lists them, the daemon
 * takes them in as unshimmed (daemon/unshimmed.h), and bare_check.c
 * holds it to issue 38's three invariants.
 */
#ifndef GF_FUZZ_BARE_H
#define GF_FUZZ_BARE_H

#include <stddef.h>
#include <stdint.h>

struct arbiter;
struct nvml_proc;
struct procid;
struct fz_bare;

/* bare.c */
void	fz_bare_init(void);
void	fz_bare_free(void);
struct fz_bare *fz_bare_of_pid(uint32_t pid);
struct fz_bare *fz_bare_of_pidfd(int fd);
void	fz_bare_reap(void);
/* FZ_OP_BARE (fuzz_input.h): process idx, kind, device, MiB. */
void	fz_bare_op(unsigned idx, uint8_t kind, uint8_t dev, uint64_t mib);
int	fz_bare_procid(uint32_t pid, uint64_t at_ms, const char *socket,
	    struct procid *p);
uint64_t fz_bare_start_ms(const struct fz_bare *b);
/* What the daemon's look at dev saw (unshimmed_see's list). */
void	fz_bare_seen(size_t dev, const struct nvml_proc *procs, long n);

/* bare_check.c */
/* SIGKILL through b's pidfd: a finding if b was within its limits. */
void	fz_bare_kill_check(const struct arbiter *a, struct fz_bare *b,
	    int pidfd);
/* After an op: what a look saw of them is charged to them, as NVML says. */
void	fz_bare_check(const struct arbiter *a);

#endif
