/*
 * The machine under the daemon, simulated through the linker's --wrap
 * seams (mk/fuzz.mk names them): only the daemon's objects call these
 * names, so everything else in them stays real.
 *
 *   clock_gettime   CLOCK_MONOTONIC(_COARSE) reads a clock the input moves
 *                   (FZ_OP_TICK): timers fire when it says, the same way
 *                   on every run
 *   pidfd_signal    the simulated processes are signalled (by their
 *                   pid: the fake ones have no pidfd), never a real one:
 *                   any other pid is a finding
 *   devices_*       the GPUs of the input's device set, and a checkpoint
 *                   API that does what each process's FZ_CKPT_* mode says
 *   nvml_*          NVML's per-process bytes, as FZ_OP_NVML set them, and
 *                   the device's, their sum
 *   procid_read,    the processes without connections (bare.c): who
 *   pidfd_start_ms  they are, a pidfd of each life, when it started
 *   unshimmed_see   what each look saw of them (bare_check.c's order)
 *   log_errx        the ledger's lines about a broken invariant are
 *                   findings; the rest is quiet unless FUZZ_LOG is set
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>

#include "../daemon/ckpt.h"
#include "../daemon/devices.h"
#include "../daemon/nvml.h"
#include "../daemon/procid.h"
#include "../daemon/unshimmed.h"
#include "bare.h"
#include "fuzz.h"

int	__real_clock_gettime(clockid_t, struct timespec *);
int	__wrap_clock_gettime(clockid_t, struct timespec *);
int	__real_pidfd_signal(int, uint32_t, int);
int	__wrap_pidfd_signal(int, uint32_t, int);
int	__wrap_devices_discover(const char *, struct device_desc **);
void	__wrap_devices_checkpoint_api(struct ckpt_api *);
int	__wrap_nvml_open(const char *, const uint8_t (*)[GF_UUID_LEN], size_t);
int	__wrap_nvml_ready(void);
long	__wrap_nvml_procs(size_t, struct nvml_proc **);
int	__wrap_nvml_used(size_t, uint64_t *);
void	__wrap_nvml_close(void);
int	__wrap_procid_read(uint32_t, uint64_t, const char *, struct procid *);
void	__wrap_log_errx(const char *, ...)
	    __attribute__((format(printf, 1, 2)));
uint64_t __wrap_jitter_ms(uint64_t);
uint64_t __real_pidfd_start_ms(uint32_t);
uint64_t __wrap_pidfd_start_ms(uint32_t);
void	__real_unshimmed_see(struct arbiter *, size_t,
	    const struct nvml_proc *, long, uint64_t);
void	__wrap_unshimmed_see(struct arbiter *, size_t,
	    const struct nvml_proc *, long, uint64_t);

#define GiB	(1ull << 30)

static uint64_t now_ms;		/* 0: the real clock (atomic) */
static int active;		/* the world is up: kill is ours */
static int discovered;		/* the GPUs came from devsets */
static int nvml_up;
static int verbose = -1;	/* FUZZ_LOG is set */

/* ---- the clock ---------------------------------------------------------- */

/* The daemon's random waits (jitter.h) at their mean: an input replays. */
uint64_t
__wrap_jitter_ms(uint64_t ms)
{
	return ms;
}

void
fz_clock_start(void)
{
	__atomic_store_n(&now_ms, FZ_CLOCK_START, __ATOMIC_RELEASE);
}

void
fz_clock_stop(void)
{
	__atomic_store_n(&now_ms, 0, __ATOMIC_RELEASE);
}

void
fz_clock_advance(uint64_t ms)
{
	__atomic_add_fetch(&now_ms, ms, __ATOMIC_ACQ_REL);
}

uint64_t
fz_clock_now(void)
{
	return __atomic_load_n(&now_ms, __ATOMIC_ACQUIRE);
}

/* The checkpoint thread reads it too: a job's duration is 0 ms. */
int
__wrap_clock_gettime(clockid_t id, struct timespec *ts)
{
	uint64_t ms = fz_clock_now();

	if (ms == 0 || (id != CLOCK_MONOTONIC && id != CLOCK_MONOTONIC_COARSE))
		return __real_clock_gettime(id, ts);
	ts->tv_sec = (time_t)(ms / 1000);
	ts->tv_nsec = (long)(ms % 1000) * 1000000;
	return 0;
}

void
fz_fakes_active(int on)
{
	active = on;
	discovered = 0;
}

/* Whether the daemon found its GPUs here since fz_fakes_active. */
int
fz_fakes_used(void)
{
	return discovered;
}

/* ---- signals ------------------------------------------------------------ */

/*
 * Preemption: SIGTERM is noted by nobody (the input decides when the
 * process exits), SIGKILL makes it exit at the harness's next look.
 */
int
__wrap_pidfd_signal(int pidfd, uint32_t pid, int sig)
{
	struct fz_proc *p;
	struct fz_bare *b;

	if (!active)
		return __real_pidfd_signal(pidfd, pid, sig);
	if (fz_bare_of_pid(pid) != NULL) {
		/* Through a pidfd of a life that ended: nobody. */
		if ((b = fz_bare_of_pidfd(pidfd)) == NULL || b->pid != pid) {
			errno = ESRCH;
			return -1;
		}
		if (sig == SIGKILL) {
			fz_bare_kill_check(&fz.a, b, pidfd);
			b->killed = 1;
		}
		return 0;
	}
	if (pid == 0 || (p = fz_proc_of_pid(pid)) == NULL)
		fz_fail("the daemon sends signal %d to pid %d, which is no "
		    "client's", sig, (int)pid);
	if (!fz_proc_alive(p)) {
		errno = ESRCH;
		return -1;
	}
	if (sig == SIGKILL)
		p->killed = 1;
	return 0;
}

/* ---- the GPUs ----------------------------------------------------------- */

static const uint64_t devsets[4][FZ_MAXDEV] = {
	{ 16 * GiB, 8 * GiB, 0 },
	{ 4 * GiB, 0, 0 },
	{ 1 * GiB, 2 * GiB, 24 * GiB },
	{ 0, 0, 0 },
};

int
__wrap_devices_discover(const char *lib, struct device_desc **devs)
{
	const uint64_t *set = devsets[fz.devset & 3];
	int i, n = 0;

	(void)lib;
	discovered = 1;
	while (n < FZ_MAXDEV && set[n] != 0)
		n++;
	*devs = NULL;
	if (n == 0)
		return 0;
	if ((*devs = calloc((size_t)n, sizeof(**devs))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		memset((*devs)[i].uuid, FZ_UUID_BYTE(i), GF_UUID_LEN);
		snprintf((*devs)[i].name, sizeof((*devs)[i].name),
		    "Fuzz GPU %d", i);
		(*devs)[i].index = (uint32_t)i;
		(*devs)[i].total = set[i];
	}
	return n;
}

/* ---- the checkpoint API (called on the checkpoint thread) ------------- */

static CUresult
ckpt_step(int pid, uint32_t fails, CUresult err, CUprocessState to)
{
	struct fz_proc *p = fz_proc_of_pid((uint32_t)pid);

	if (p == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (__atomic_load_n(&p->ckpt, __ATOMIC_ACQUIRE) & fails)
		return err;
	__atomic_store_n(&p->ckpt_state, (uint32_t)to, __ATOMIC_RELEASE);
	return CUDA_SUCCESS;
}

static CUresult
fake_lock(int pid, CUcheckpointLockArgs *args)
{
	(void)args;
	return ckpt_step(pid, FZ_CKPT_LOCK_FAILS, CUDA_ERROR_NOT_READY,
	    CU_PROCESS_STATE_LOCKED);
}

static CUresult
fake_checkpoint(int pid, CUcheckpointCheckpointArgs *args)
{
	(void)args;
	return ckpt_step(pid, FZ_CKPT_CHECKPOINT_FAILS,
	    CUDA_ERROR_ILLEGAL_STATE, CU_PROCESS_STATE_CHECKPOINTED);
}

static CUresult
fake_restore(int pid, CUcheckpointRestoreArgs *args)
{
	(void)args;
	return ckpt_step(pid, FZ_CKPT_RESTORE_FAILS, CUDA_ERROR_OUT_OF_MEMORY,
	    CU_PROCESS_STATE_LOCKED);
}

static CUresult
fake_unlock(int pid, CUcheckpointUnlockArgs *args)
{
	(void)args;
	return ckpt_step(pid, FZ_CKPT_UNLOCK_FAILS, CUDA_ERROR_ILLEGAL_STATE,
	    CU_PROCESS_STATE_RUNNING);
}

static CUresult
fake_get_state(int pid, CUprocessState *st)
{
	struct fz_proc *p = fz_proc_of_pid((uint32_t)pid);

	if (p == NULL || (__atomic_load_n(&p->ckpt, __ATOMIC_ACQUIRE) &
	    FZ_CKPT_STATE_FAILS))
		return CUDA_ERROR_INVALID_VALUE;
	*st = (CUprocessState)__atomic_load_n(&p->ckpt_state,
	    __ATOMIC_ACQUIRE);
	return CUDA_SUCCESS;
}

void
__wrap_devices_checkpoint_api(struct ckpt_api *api)
{
	memset(api, 0, sizeof(*api));
	if (!fz.ckpt)
		return;
	api->lock = fake_lock;
	api->checkpoint = fake_checkpoint;
	api->restore = fake_restore;
	api->unlock = fake_unlock;
	api->get_state = fake_get_state;
}

/* ---- NVML --------------------------------------------------------------- */

int
__wrap_nvml_open(const char *lib, const uint8_t (*uuids)[GF_UUID_LEN],
    size_t n)
{
	(void)lib;
	(void)uuids;
	(void)n;
	nvml_up = fz.nvml;
	return nvml_up ? 0 : -1;
}

int
__wrap_nvml_ready(void)
{
	return nvml_up;
}

long
__wrap_nvml_procs(size_t dev, struct nvml_proc **procs)
{
	long n = 0;
	size_t i;

	*procs = NULL;
	if (!nvml_up || dev >= FZ_MAXDEV)
		return -1;
	if ((*procs = calloc(FZ_NPROCS + FZ_NBARE, sizeof(**procs))) == NULL)
		return -1;
	for (i = 0; i < FZ_NPROCS; i++)
		if (fz.procs[i].nvml[dev] > 0) {
			(*procs)[n].pid = fz.procs[i].pid;
			(*procs)[n++].bytes = fz.procs[i].nvml[dev];
		}
	for (i = 0; i < FZ_NBARE; i++)
		if (fz.bare[i].nvml[dev] > 0) {
			(*procs)[n].pid = fz.bare[i].pid;
			(*procs)[n++].bytes = fz.bare[i].nvml[dev];
		}
	if (n == 0) {
		free(*procs);
		*procs = NULL;
	}
	return n;
}

/* What the device holds: what the processes hold, no one else. */
int
__wrap_nvml_used(size_t dev, uint64_t *used)
{
	size_t i;

	if (!nvml_up || dev >= FZ_MAXDEV)
		return -1;
	*used = 0;
	for (i = 0; i < FZ_NPROCS; i++)
		*used += fz.procs[i].nvml[dev];
	for (i = 0; i < FZ_NBARE; i++)
		*used += fz.bare[i].nvml[dev];
	return 0;
}

/*
 * Who a process NVML lists is: the ones without connections are
 * bare.c's; the slots' processes all have connections or none, and a
 * pid of theirs may be a real process's here, never to be taken in:
 * every one is gone.
 */
int
__wrap_procid_read(uint32_t pid, uint64_t at_ms, const char *socket,
    struct procid *p)
{
	return fz_bare_procid(pid, at_ms, socket, p);
}

uint64_t
__wrap_pidfd_start_ms(uint32_t pid)
{
	const struct fz_bare *b = fz_bare_of_pid(pid);

	if (!active || b == NULL)
		return __real_pidfd_start_ms(pid);
	return fz_bare_start_ms(b);
}

/* The look's list, as the daemon takes it in (once it has its groups). */
void
__wrap_unshimmed_see(struct arbiter *a, size_t dev,
    const struct nvml_proc *procs, long n, uint64_t at_ms)
{
	if (active && a->groups.conf != NULL)
		fz_bare_seen(dev, procs, n);
	__real_unshimmed_see(a, dev, procs, n, at_ms);
}

void
__wrap_nvml_close(void)
{
	nvml_up = 0;
}

/* ---- the log ------------------------------------------------------------ */

/* What ledger.c and resolve.c say only when their invariants broke. */
static const char *const broken[] = {
	"would go below zero",
	"a waiter that fits cannot be charged",
};

/*
 * Whether line holds word. Not strstr: libFuzzer watches that, and would
 * take these words for tokens worth trying.
 */
static int
contains(const char *line, const char *word)
{
	size_t i, n = strlen(word);

	for (; *line != '\0'; line++) {
		for (i = 0; i < n && line[i] == word[i]; i++)
			;
		if (i == n)
			return 1;
	}
	return 0;
}

void
__wrap_log_errx(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	size_t i;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	for (i = 0; i < sizeof(broken) / sizeof(broken[0]); i++)
		if (contains(line, broken[i]))
			fz_fail("the daemon says an invariant broke: %s", line);
	if (verbose < 0)
		verbose = getenv("FUZZ_LOG") != NULL;
	if (verbose)
		fprintf(stderr, "gpufracd: %s\n", line);
}
