/*
 * The checkpoint API (cuCheckpointProcess*, CUDA 12.8, driver 570): one
 * process locks another by pid, releases its device memory, takes it
 * back and unlocks it. Device memory is the target's own host memory, so
 * Checkpoint copies nothing; it returns the capacity to the machine,
 * taking the time the real driver would at SIMCUDA_CKPT_GBPS (bus.c). The shared
 * state (ckstate.c) holds each process's checkpoint state.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "sim.h"
#include "units.h"

static int absent;	/* SIMCUDA_NO_CHECKPOINT=1: a driver before 570 */

__attribute__((constructor)) static void
checkpoint_setup(void)
{
	const char *s = getenv("SIMCUDA_NO_CHECKPOINT");

	absent = s != NULL && strcmp(s, "1") == 0;
}

int
checkpoint_hidden(const char *symbol)
{
	return absent && strncmp(symbol, "cuCheckpoint", 12) == 0;
}

/* Reserved fields "must be zero(ed)": CUDA_ERROR_INVALID_VALUE if not. */
static int
zeroed(const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n-- > 0)
		if (*c++ != 0)
			return 0;
	return 1;
}

/* The prologue of a checkpoint call: the API exists, cuInit was called. */
static CUresult
checkpoint_ready(void)
{
	if (absent)
		return CUDA_ERROR_NOT_SUPPORTED;
	return sim_ready();
}

/*
 * The restore thread, which a CPU checkpointer (CRIU) must leave
 * running: the simulator has none, so the target's main thread (its pid).
 */
CUresult
cuCheckpointProcessGetRestoreThreadId(int pid, int *tid)
{
	CUresult r = checkpoint_ready();

	if (r != CUDA_SUCCESS)
		return r;
	if (tid == NULL || !state_ck_known(pid))
		return CUDA_ERROR_INVALID_VALUE;
	*tid = pid;
	return CUDA_SUCCESS;
}

CUresult
cuCheckpointProcessGetState(int pid, CUprocessState *state)
{
	CUresult r = checkpoint_ready();

	if (r != CUDA_SUCCESS)
		return r;
	if (state == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	return state_ck_state(pid, state);
}

/* args are optional throughout; NULL means all zero. */
CUresult
cuCheckpointProcessLock(int pid, CUcheckpointLockArgs *args)
{
	CUresult r = checkpoint_ready();

	if (r != CUDA_SUCCESS)
		return r;
	if (args != NULL && (args->reserved0 != 0 ||
	    !zeroed(args->reserved1, sizeof(args->reserved1))))
		return CUDA_ERROR_INVALID_VALUE;
	return state_ck_lock(pid, args != NULL ? args->timeoutMs : 0);
}

/* The memory goes back to the device when the copy is done. */
CUresult
cuCheckpointProcessCheckpoint(int pid, CUcheckpointCheckpointArgs *args)
{
	CUresult r = checkpoint_ready();
	struct timespec start;
	uint64_t bytes;

	if (r != CUDA_SUCCESS)
		return r;
	if (args != NULL && !zeroed(args, sizeof(*args)))
		return CUDA_ERROR_INVALID_VALUE;
	if (bus_ckpt_rate != 0) {
		bus_start(&start);
		if ((r = state_ck_held(pid, &bytes)) != CUDA_SUCCESS)
			return r;
		bus_move(&start, bytes, bus_ckpt_rate);
	}
	return state_ck_checkpoint(pid);
}

/*
 * The memory is charged before the copy, the call returns after it.
 * Remapping onto other GPUs (gpuPairs) is not simulated.
 */
CUresult
cuCheckpointProcessRestore(int pid, CUcheckpointRestoreArgs *args)
{
	CUresult r = checkpoint_ready();
	struct timespec start;
	uint64_t bytes = 0;

	if (r != CUDA_SUCCESS)
		return r;
	if (args != NULL) {
		if (!zeroed(args->reserved, sizeof(args->reserved)) ||
		    args->reserved1 != 0 ||
		    (args->gpuPairs == NULL) != (args->gpuPairsCount == 0))
			return CUDA_ERROR_INVALID_VALUE;
		if (args->gpuPairsCount != 0)
			return CUDA_ERROR_NOT_SUPPORTED;
	}
	bus_start(&start);
	if ((r = state_ck_restore(pid, &bytes)) != CUDA_SUCCESS)
		return r;
	bus_move(&start, bytes, bus_ckpt_in_rate);
	return CUDA_SUCCESS;
}

CUresult
cuCheckpointProcessUnlock(int pid, CUcheckpointUnlockArgs *args)
{
	CUresult r = checkpoint_ready();

	if (r != CUDA_SUCCESS)
		return r;
	if (args != NULL && !zeroed(args, sizeof(*args)))
		return CUDA_ERROR_INVALID_VALUE;
	return state_ck_unlock(pid);
}
