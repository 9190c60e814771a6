/*
 * Events. Since work completes when it is issued, recording an event
 * completes it at once; the time of recording is what cuEventElapsedTime
 * measures.
 */
#include <stdlib.h>
#include <time.h>

#include "ptrmap.h"
#include "sim.h"

struct CUevent_st {
	struct sim_handle h;
	unsigned	flags;
	int		recorded;
	struct timespec	when;
};

static struct ptrmap events;	/* live handles */

/* The lock is held. */
CUresult
event_check(CUevent e)
{
	return handle_live(&events, e) ? CUDA_SUCCESS :
	    CUDA_ERROR_INVALID_HANDLE;
}

static CUresult
event_lookup(CUevent e)
{
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	r = event_check(e);
	sim_unlock();
	return r;
}

CUresult
cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
	SIM_GATE();
	struct CUctx_st *ctx;
	struct CUevent_st *e;
	CUresult r = ctx_current(&ctx);

	if (r != CUDA_SUCCESS)
		return r;
	if (phEvent == NULL || (Flags & ~(unsigned)(CU_EVENT_BLOCKING_SYNC |
	    CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS)) != 0 ||
	    ((Flags & CU_EVENT_INTERPROCESS) &&
	    !(Flags & CU_EVENT_DISABLE_TIMING)))
		return CUDA_ERROR_INVALID_VALUE;
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->h.ctx = ctx;
	e->flags = Flags;
	if ((r = handle_add(&events, e)) != CUDA_SUCCESS)
		return r;
	*phEvent = e;
	return CUDA_SUCCESS;
}

CUresult
cuEventDestroy(CUevent hEvent)
{
	SIM_GATE();
	return handle_destroy(&events, hEvent);
}

CUresult
cuEventDestroy_v2(CUevent hEvent)
{
	SIM_GATE();
	return handle_destroy(&events, hEvent);
}

static CUresult
event_record(CUevent hEvent, CUstream hStream)
{
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	if ((r = event_check(hEvent)) == CUDA_SUCCESS &&
	    (r = stream_check(hStream)) == CUDA_SUCCESS) {
		clock_gettime(CLOCK_MONOTONIC, &hEvent->when);
		hEvent->recorded = 1;
	}
	sim_unlock();
	return r;
}

CUresult
cuEventRecord(CUevent hEvent, CUstream hStream)
{
	SIM_GATE();
	return event_record(hEvent, hStream);
}

CUresult
cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
	SIM_GATE();
	return event_record(hEvent, stream_ptsz(hStream));
}

/* Recorded or not, an event never has work pending. */
CUresult
cuEventQuery(CUevent hEvent)
{
	SIM_GATE();
	return event_lookup(hEvent);
}

/* A synchronisation: memory pools release what they cache (pool.c). */
CUresult
cuEventSynchronize(CUevent hEvent)
{
	SIM_GATE();
	CUresult r = event_lookup(hEvent);

	if (r == CUDA_SUCCESS)
		pool_sync();
	return r;
}

static CUresult
event_elapsed(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	CUresult r = sim_ready_out(pMilliseconds);

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	if ((r = event_check(hStart)) == CUDA_SUCCESS &&
	    (r = event_check(hEnd)) == CUDA_SUCCESS) {
		if (!hStart->recorded || !hEnd->recorded ||
		    ((hStart->flags | hEnd->flags) & CU_EVENT_DISABLE_TIMING))
			r = CUDA_ERROR_INVALID_HANDLE;
		else
			*pMilliseconds = (float)((hEnd->when.tv_sec -
			    hStart->when.tv_sec) * 1e3 + (hEnd->when.tv_nsec -
			    hStart->when.tv_nsec) / 1e6);
	}
	sim_unlock();
	return r;
}

CUresult
cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	SIM_GATE();
	return event_elapsed(pMilliseconds, hStart, hEnd);
}

CUresult
cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	SIM_GATE();
	return event_elapsed(pMilliseconds, hStart, hEnd);
}

/* The lock is held. */
void
event_release_ctx(struct CUctx_st *ctx)
{
	handle_release_ctx(&events, ctx);
}

void
event_forget(void)
{
	handle_forget(&events);
}
