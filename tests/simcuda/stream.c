/*
 * Streams: handles with their flags and priority. Work issued on a stream
 * has completed when the call returns, so a stream is always idle and host
 * callbacks run at once, on the calling thread; but with SIMCUDA_ASYNC,
 * copies on a stream the program made run later (async.c).
 */
#include <stdlib.h>

#include "ptrmap.h"
#include "sim.h"

struct CUstream_st {
	struct sim_handle h;
	unsigned	flags;
	int		priority;
};

static struct ptrmap streams;	/* live handles */

/* The lock is held. */
CUresult
stream_check(CUstream s)
{
	if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
		return CUDA_SUCCESS;
	return handle_live(&streams, s) ? CUDA_SUCCESS :
	    CUDA_ERROR_INVALID_HANDLE;
}

CUstream
stream_ptsz(CUstream s)
{
	return s != NULL ? s : CU_STREAM_PER_THREAD;
}

/* A stream given by the caller, or CUDA_ERROR_INVALID_HANDLE. */
static CUresult
stream_lookup(CUstream s, struct CUstream_st **out)
{
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	r = stream_check(s);
	sim_unlock();
	*out = s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD ? NULL : s;
	return r;
}

static CUresult
stream_create(CUstream *phStream, unsigned int Flags, int priority)
{
	struct CUctx_st *ctx;
	struct CUstream_st *s;
	CUresult r = ctx_current(&ctx);

	if (r != CUDA_SUCCESS)
		return r;
	if (phStream == NULL || (Flags != CU_STREAM_DEFAULT &&
	    Flags != CU_STREAM_NON_BLOCKING))
		return CUDA_ERROR_INVALID_VALUE;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	s->h.ctx = ctx;
	s->flags = Flags;
	/* Clamped to the range cuCtxGetStreamPriorityRange gives, [-5, 0]. */
	s->priority = priority > 0 ? 0 : priority < -5 ? -5 : priority;
	if ((r = handle_add(&streams, s)) != CUDA_SUCCESS)
		return r;
	*phStream = s;
	return CUDA_SUCCESS;
}

CUresult
cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	SIM_GATE();
	return stream_create(phStream, Flags, 0);
}

CUresult
cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags,
    int priority)
{
	SIM_GATE();
	return stream_create(phStream, flags, priority);
}

CUresult
cuStreamDestroy(CUstream hStream)
{
	SIM_GATE();
	return handle_destroy(&streams, hStream);
}

CUresult
cuStreamDestroy_v2(CUstream hStream)
{
	SIM_GATE();
	return handle_destroy(&streams, hStream);
}

static CUresult
stream_idle(CUstream hStream)
{
	struct CUstream_st *s;
	CUresult r = stream_lookup(hStream, &s);

	if (r == CUDA_SUCCESS && async_busy(hStream))
		r = CUDA_ERROR_NOT_READY;
	return r;
}

/* A synchronisation: memory pools release what they cache (pool.c). */
static CUresult
stream_sync(CUstream hStream)
{
	struct CUstream_st *s;
	CUresult r = stream_lookup(hStream, &s);

	if (r == CUDA_SUCCESS)
		r = async_sync(hStream);
	if (r == CUDA_SUCCESS)
		pool_sync();
	return r;
}

CUresult
cuStreamSynchronize(CUstream hStream)
{
	SIM_GATE();
	return stream_sync(hStream);
}

CUresult
cuStreamSynchronize_ptsz(CUstream hStream)
{
	SIM_GATE();
	return stream_sync(stream_ptsz(hStream));
}

CUresult
cuStreamQuery(CUstream hStream)
{
	SIM_GATE();
	return stream_idle(hStream);
}

CUresult
cuStreamQuery_ptsz(CUstream hStream)
{
	SIM_GATE();
	return stream_idle(stream_ptsz(hStream));
}

/* An event has completed when recorded, so there is nothing to wait for. */
static CUresult
stream_wait_event(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	if (Flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if ((r = stream_check(hStream)) == CUDA_SUCCESS)
		r = event_check(hEvent);
	sim_unlock();
	return r;
}

CUresult
cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	SIM_GATE();
	return stream_wait_event(hStream, hEvent, Flags);
}

CUresult
cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	SIM_GATE();
	return stream_wait_event(stream_ptsz(hStream), hEvent, Flags);
}

static CUresult
stream_get_flags(CUstream hStream, unsigned int *flags)
{
	struct CUstream_st *s;
	CUresult r = stream_lookup(hStream, &s);

	if (r != CUDA_SUCCESS)
		return r;
	if (flags == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = s != NULL ? s->flags : CU_STREAM_DEFAULT;
	return CUDA_SUCCESS;
}

CUresult
cuStreamGetFlags(CUstream hStream, unsigned int *flags)
{
	SIM_GATE();
	return stream_get_flags(hStream, flags);
}

CUresult
cuStreamGetFlags_ptsz(CUstream hStream, unsigned int *flags)
{
	SIM_GATE();
	return stream_get_flags(stream_ptsz(hStream), flags);
}

static CUresult
stream_get_priority(CUstream hStream, int *priority)
{
	struct CUstream_st *s;
	CUresult r = stream_lookup(hStream, &s);

	if (r != CUDA_SUCCESS)
		return r;
	if (priority == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*priority = s != NULL ? s->priority : 0;
	return CUDA_SUCCESS;
}

CUresult
cuStreamGetPriority(CUstream hStream, int *priority)
{
	SIM_GATE();
	return stream_get_priority(hStream, priority);
}

CUresult
cuStreamGetPriority_ptsz(CUstream hStream, int *priority)
{
	SIM_GATE();
	return stream_get_priority(stream_ptsz(hStream), priority);
}

/* Called without the lock: a callback may call the driver. */
static CUresult
stream_add_callback(CUstream hStream, CUstreamCallback callback,
    void *userData, unsigned int flags)
{
	struct CUstream_st *s;
	CUresult r = stream_lookup(hStream, &s);

	if (r != CUDA_SUCCESS)
		return r;
	if (callback == NULL || flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	callback(hStream, CUDA_SUCCESS, userData);
	return CUDA_SUCCESS;
}

CUresult
cuStreamAddCallback(CUstream hStream, CUstreamCallback callback,
    void *userData, unsigned int flags)
{
	SIM_GATE();
	return stream_add_callback(hStream, callback, userData, flags);
}

CUresult
cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback,
    void *userData, unsigned int flags)
{
	SIM_GATE();
	return stream_add_callback(stream_ptsz(hStream), callback, userData,
	    flags);
}

static CUresult
launch_host_func(CUstream hStream, CUhostFn fn, void *userData)
{
	struct CUstream_st *s;
	CUresult r = stream_lookup(hStream, &s);

	if (r != CUDA_SUCCESS)
		return r;
	if (fn == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	fn(userData);
	return CUDA_SUCCESS;
}

CUresult
cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
	SIM_GATE();
	return launch_host_func(hStream, fn, userData);
}

CUresult
cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
	SIM_GATE();
	return launch_host_func(stream_ptsz(hStream), fn, userData);
}

/* The lock is held. */
void
stream_release_ctx(struct CUctx_st *ctx)
{
	handle_release_ctx(&streams, ctx);
}

void
stream_forget(void)
{
	handle_forget(&streams);
}
