/*
 * Streams: handles with their flags and priority. Work issued on a stream
 * has completed when the call returns, so a stream is always idle and host
 * callbacks run at once, on the calling thread.
 */
#include <stdlib.h>

#include "ptrmap.h"
#include "sim.h"

struct CUstream_st {
	struct CUctx_st	*ctx;
	unsigned	flags;
	int		priority;
};

static struct ptrmap streams;	/* live handles */

#define KEY(s)	((uint64_t)(uintptr_t)(s))

/* The lock is held. */
CUresult
stream_check(CUstream s)
{
	if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
		return CUDA_SUCCESS;
	return ptrmap_get(&streams, KEY(s)) != NULL ? CUDA_SUCCESS :
	    CUDA_ERROR_INVALID_HANDLE;
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
	s->ctx = ctx;
	s->flags = Flags;
	/* Clamped to the range cuCtxGetStreamPriorityRange gives, [-5, 0]. */
	s->priority = priority > 0 ? 0 : priority < -5 ? -5 : priority;
	sim_lock();
	if (ptrmap_put(&streams, KEY(s), s) < 0)
		r = CUDA_ERROR_OUT_OF_MEMORY;
	sim_unlock();
	if (r != CUDA_SUCCESS) {
		free(s);
		return r;
	}
	*phStream = s;
	return CUDA_SUCCESS;
}

CUresult
cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	return stream_create(phStream, Flags, 0);
}

CUresult
cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags,
    int priority)
{
	return stream_create(phStream, flags, priority);
}

static CUresult
stream_destroy(CUstream hStream)
{
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	if (hStream == NULL || ptrmap_get(&streams, KEY(hStream)) == NULL)
		r = CUDA_ERROR_INVALID_HANDLE;
	else
		free(ptrmap_del(&streams, KEY(hStream)));
	sim_unlock();
	return r;
}

CUresult
cuStreamDestroy(CUstream hStream)
{
	return stream_destroy(hStream);
}

CUresult
cuStreamDestroy_v2(CUstream hStream)
{
	return stream_destroy(hStream);
}

static CUresult
stream_idle(CUstream hStream)
{
	struct CUstream_st *s;

	return stream_lookup(hStream, &s);
}

CUresult
cuStreamSynchronize(CUstream hStream)
{
	return stream_idle(hStream);
}

CUresult
cuStreamSynchronize_ptsz(CUstream hStream)
{
	return stream_idle(hStream != NULL ? hStream : CU_STREAM_PER_THREAD);
}

CUresult
cuStreamQuery(CUstream hStream)
{
	return stream_idle(hStream);
}

CUresult
cuStreamQuery_ptsz(CUstream hStream)
{
	return stream_idle(hStream != NULL ? hStream : CU_STREAM_PER_THREAD);
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
	return stream_wait_event(hStream, hEvent, Flags);
}

CUresult
cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	return stream_wait_event(hStream != NULL ? hStream :
	    CU_STREAM_PER_THREAD, hEvent, Flags);
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
	return stream_get_flags(hStream, flags);
}

CUresult
cuStreamGetFlags_ptsz(CUstream hStream, unsigned int *flags)
{
	return stream_get_flags(hStream != NULL ? hStream :
	    CU_STREAM_PER_THREAD, flags);
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
	return stream_get_priority(hStream, priority);
}

CUresult
cuStreamGetPriority_ptsz(CUstream hStream, int *priority)
{
	return stream_get_priority(hStream != NULL ? hStream :
	    CU_STREAM_PER_THREAD, priority);
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
	return stream_add_callback(hStream, callback, userData, flags);
}

CUresult
cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback,
    void *userData, unsigned int flags)
{
	return stream_add_callback(hStream != NULL ? hStream :
	    CU_STREAM_PER_THREAD, callback, userData, flags);
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
	return launch_host_func(hStream, fn, userData);
}

CUresult
cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
	return launch_host_func(hStream != NULL ? hStream :
	    CU_STREAM_PER_THREAD, fn, userData);
}

/* The lock is held. */
void
stream_release_ctx(struct CUctx_st *ctx)
{
	struct CUstream_st *s;
	size_t pos = 0;

	/* A delete moves entries about: walk again from the start. */
	while ((s = ptrmap_next(&streams, &pos, NULL)) != NULL)
		if (s->ctx == ctx) {
			free(ptrmap_del(&streams, KEY(s)));
			pos = 0;
		}
}

void
stream_forget(void)
{
	struct CUstream_st *s;
	size_t pos = 0;

	while ((s = ptrmap_next(&streams, &pos, NULL)) != NULL)
		free(s);
	ptrmap_free(&streams);
}
