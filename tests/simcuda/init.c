/*
 * Driver initialisation: cuInit, cuDriverGetVersion, the process-local lock,
 * and the reset of process-local state in a forked child.
 */
#include <pthread.h>
#include <stdlib.h>

#include "log.h"
#include "sim.h"
#include "units.h"

static pthread_mutex_t sim_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t sim_once = PTHREAD_ONCE_INIT;
static int initialised;			/* read without the lock: atomics */
static CUresult init_error;		/* a failed cuInit fails for good */
static int forked_after_init;		/* fork()ed once the driver was up */
static int table_broken;
static uint64_t context_bytes;

void
sim_lock(void)
{
	pthread_mutex_lock(&sim_mutex);
}

void
sim_unlock(void)
{
	pthread_mutex_unlock(&sim_mutex);
}

CUresult
sim_ready(void)
{
	return __atomic_load_n(&initialised, __ATOMIC_ACQUIRE) ?
	    CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

CUresult
sim_ready_out(const void *out)
{
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	return out != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

uint64_t
sim_context_bytes(void)
{
	return context_bytes;
}

/*
 * Fork: no thread may hold the lock across fork(), and the child holds
 * nothing of its parent's (contexts, allocations, streams), as a process
 * that has not called cuInit. A child forked after its parent's cuInit (or
 * its parent's child, and so on) may never use the driver: the real one
 * (since CUDA 8) answers its cuInit with CUDA_ERROR_NOT_INITIALIZED, and so
 * every call that needs initialisation after it (triton-lang/triton PR
 * 10443, pycuda issue 137). A child forked before it is a fresh process.
 */
static void
fork_prepare(void)
{
	sim_lock();
	async_fork_prepare();
	memfree_fork_prepare();
}

static void
fork_parent(void)
{
	memfree_fork_parent();
	async_fork_parent();
	sim_unlock();
}

static void
fork_child(void)
{
	memfree_fork_child();
	async_fork_child();
	sim_unlock();
	ctx_forget();
	alloc_forget();
	stream_forget();
	event_forget();
	array_forget();
	vmm_forget();
	pool_forget();
	graph_forget();
	state_forget();
	forked_after_init = forked_after_init || initialised;
	__atomic_store_n(&initialised, 0, __ATOMIC_RELEASE);
	init_error = CUDA_SUCCESS;
}

static void
sim_setup(void)
{
	log_init("simcuda", LOG_LVL_WARN, 0);
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	if (procaddr_table_check() < 0) {
		log_errx("cuGetProcAddress table is not sorted");
		table_broken = 1;
	}
}

static void
context_bytes_parse(void)
{
	const char *s = getenv("SIMCUDA_CONTEXT_BYTES");

	context_bytes = 0;
	if (s != NULL && size_parse(s, &context_bytes) < 0) {
		log_warnx("bad SIMCUDA_CONTEXT_BYTES '%s': using 0", s);
		context_bytes = 0;
	}
}

CUresult
cuInit(unsigned int Flags)
{
	CUresult r;

	if (Flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_once(&sim_once, sim_setup);
	if (table_broken)
		return CUDA_ERROR_UNKNOWN;
	if (forked_after_init)
		return CUDA_ERROR_NOT_INITIALIZED;
	sim_lock();
	if (!initialised && init_error == CUDA_SUCCESS) {
		context_bytes_parse();
		bus_rate_parse();
		async_parse();
		init_error = device_init();
		if (init_error == CUDA_SUCCESS) {
			state_join();
			__atomic_store_n(&initialised, 1, __ATOMIC_RELEASE);
		}
	}
	r = initialised ? CUDA_SUCCESS : init_error;
	sim_unlock();
	if (r == CUDA_SUCCESS)
		helper_start();
	return r;
}

CUresult
cuDriverGetVersion(int *driverVersion)
{
	if (driverVersion == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*driverVersion = SIM_DRIVER_VERSION;
	return CUDA_SUCCESS;
}
