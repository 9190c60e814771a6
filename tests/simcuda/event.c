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
	struct CUctx_st	*ctx;
	unsigned	flags;
	int		recorded;
	struct timespec	when;
};

static struct ptrmap events;	/* live handles */

#define KEY(e)	((uint64_t)(uintptr_t)(e))

/* The lock is held. */
CUresult
event_check(CUevent e)
{
	return e != NULL && ptrmap_get(&events, KEY(e)) != NULL ?
	    CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
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
	e->ctx = ctx;
	e->flags = Flags;
	sim_lock();
	if (ptrmap_put(&events, KEY(e), e) < 0)
		r = CUDA_ERROR_OUT_OF_MEMORY;
	sim_unlock();
	if (r != CUDA_SUCCESS) {
		free(e);
		return r;
	}
	*phEvent = e;
	return CUDA_SUCCESS;
}

static CUresult
event_destroy(CUevent hEvent)
{
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	if ((r = event_check(hEvent)) == CUDA_SUCCESS)
		free(ptrmap_del(&events, KEY(hEvent)));
	sim_unlock();
	return r;
}

CUresult
cuEventDestroy(CUevent hEvent)
{
	return event_destroy(hEvent);
}

CUresult
cuEventDestroy_v2(CUevent hEvent)
{
	return event_destroy(hEvent);
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
	return event_record(hEvent, hStream);
}

CUresult
cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
	return event_record(hEvent, hStream != NULL ? hStream :
	    CU_STREAM_PER_THREAD);
}

/* Recorded or not, an event never has work pending. */
CUresult
cuEventQuery(CUevent hEvent)
{
	return event_lookup(hEvent);
}

CUresult
cuEventSynchronize(CUevent hEvent)
{
	return event_lookup(hEvent);
}

static CUresult
event_elapsed(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	if (pMilliseconds == NULL)
		return CUDA_ERROR_INVALID_VALUE;
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
	return event_elapsed(pMilliseconds, hStart, hEnd);
}

CUresult
cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	return event_elapsed(pMilliseconds, hStart, hEnd);
}

/* The lock is held. */
void
event_release_ctx(struct CUctx_st *ctx)
{
	struct CUevent_st *e;
	size_t pos = 0;

	/* A delete moves entries about: walk again from the start. */
	while ((e = ptrmap_next(&events, &pos, NULL)) != NULL)
		if (e->ctx == ctx) {
			free(ptrmap_del(&events, KEY(e)));
			pos = 0;
		}
}

void
event_forget(void)
{
	struct CUevent_st *e;
	size_t pos = 0;

	while ((e = ptrmap_next(&events, &pos, NULL)) != NULL)
		free(e);
	ptrmap_free(&events);
}
