/*
 * Contexts: creation and destruction, the per-thread stack of current
 * contexts, the reference-counted primary context of each device, and the
 * device memory each context takes (SIMCUDA_CONTEXT_BYTES).
 */
#include <stdlib.h>

#include "sim.h"

#define CTX_STACK_MAX	64
#define CTX_API_VERSION	3020	/* what cuCtxGetApiVersion says since 3.2 */

static struct CUctx_st *ctx_list;	/* never freed: handles stay unique */
static struct CUctx_st *primary[SIM_MAX_DEVICES];	/* by ordinal */
static unsigned long long ctx_last_id;

static _Thread_local struct CUctx_st *ctx_stack[CTX_STACK_MAX];
static _Thread_local int ctx_depth;

/* A live handle (a primary context always is); the lock is held. */
static int
ctx_valid(CUcontext ctx)
{
	struct CUctx_st *c;

	for (c = ctx_list; c != NULL; c = c->next)
		if (c == ctx)
			return !c->destroyed;
	return 0;
}

int
ctx_live(CUcontext ctx)
{
	return ctx_valid(ctx);
}

/* A context handle given by the caller: CUDA_ERROR_INVALID_CONTEXT unless
 * live. Takes the lock itself. */
static CUresult
ctx_check(CUcontext ctx)
{
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	r = ctx_valid(ctx) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
	sim_unlock();
	return r;
}

static struct CUctx_st *
ctx_new(CUdevice dev, unsigned flags, int is_primary)
{
	struct CUctx_st *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->ordinal = dev;
	c->phys = device_phys(dev);
	c->flags = flags;
	c->primary = is_primary;
	c->id = ++ctx_last_id;
	c->next = ctx_list;
	ctx_list = c;
	return c;
}

/*
 * Say, for ctx_current's lock-free read, whether c may be used as it is:
 * active, not destroyed, and retained if primary. The lock is held; call
 * after any of those changes. The real driver answers cuCtxGetDevice from
 * thread-local state without a process-wide lock, and so does this.
 */
static void
ctx_publish(struct CUctx_st *c)
{
	__atomic_store_n(&c->usable, c->active && !c->destroyed &&
	    (!c->primary || c->refcount > 0), __ATOMIC_RELEASE);
}

/* Take the context's own device memory; -1 if it does not fit. */
static int
ctx_activate(struct CUctx_st *c)
{
	uint64_t bytes = sim_context_bytes();

	if (bytes != 0 && state_charge(c->phys, bytes) < 0)
		return -1;
	c->active = 1;
	ctx_publish(c);
	return 0;
}

/* What a context owns goes with it. */
static void
ctx_deactivate(struct CUctx_st *c)
{
	uint64_t bytes = sim_context_bytes();

	if (!c->active)
		return;
	alloc_release_ctx(c);
	stream_release_ctx(c);
	event_release_ctx(c);
	array_release_ctx(c);
	if (bytes != 0)
		state_uncharge(c->phys, bytes);
	c->active = 0;
	ctx_publish(c);
}

/* CU_CTX_SCHED_* is a value, not a set of bits. */
static int
ctx_flags_ok(unsigned flags)
{
	unsigned sched = flags & CU_CTX_SCHED_MASK;

	return (flags & ~(unsigned)CU_CTX_FLAGS_MASK) == 0 &&
	    (sched == 0 || sched == 1 || sched == 2 || sched == 4);
}

CUresult
ctx_current(struct CUctx_st **out)
{
	struct CUctx_st *c;
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	if (ctx_depth == 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	c = ctx_stack[ctx_depth - 1];
	*out = c;
	if (__atomic_load_n(&c->usable, __ATOMIC_ACQUIRE))
		return CUDA_SUCCESS;
	sim_lock();
	if (c->destroyed)
		r = CUDA_ERROR_CONTEXT_IS_DESTROYED;
	else if (c->primary && c->refcount == 0)
		r = CUDA_ERROR_INVALID_CONTEXT;
	else if (!c->active && ctx_activate(c) < 0)
		r = CUDA_ERROR_OUT_OF_MEMORY;	/* a reset primary comes back */
	sim_unlock();
	return r;
}

static CUresult
ctx_push(struct CUctx_st *c)
{
	if (ctx_depth == CTX_STACK_MAX)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ctx_stack[ctx_depth++] = c;
	return CUDA_SUCCESS;
}

static CUresult
ctx_create(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	struct CUctx_st *c;
	CUresult r = sim_ready_out(pctx);

	if (r != CUDA_SUCCESS)
		return r;
	if (!ctx_flags_ok(flags))
		return CUDA_ERROR_INVALID_VALUE;
	if (device_phys(dev) < 0)
		return CUDA_ERROR_INVALID_DEVICE;
	sim_lock();
	if ((c = ctx_new(dev, flags, 0)) == NULL)
		r = CUDA_ERROR_OUT_OF_MEMORY;
	else if (ctx_activate(c) < 0) {
		c->destroyed = 1;	/* stays listed: the list owns it */
		ctx_publish(c);
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else if ((r = ctx_push(c)) != CUDA_SUCCESS) {
		ctx_deactivate(c);
		c->destroyed = 1;
		ctx_publish(c);
	}
	sim_unlock();
	if (r == CUDA_SUCCESS)
		*pctx = c;
	return r;
}

CUresult
cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	SIM_GATE();
	return ctx_create(pctx, flags, dev);
}

CUresult
cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	SIM_GATE();
	return ctx_create(pctx, flags, dev);
}

/* Execution affinity needs MPS or green contexts: not simulated. */
CUresult
cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray,
    int numParams, unsigned int flags, CUdevice dev)
{
	SIM_GATE();
	if (numParams < 0 || (numParams > 0 && paramsArray == NULL))
		return CUDA_ERROR_INVALID_VALUE;
	if (numParams > 0)
		return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
	return ctx_create(pctx, flags, dev);
}

CUresult
cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
    unsigned int flags, CUdevice dev)
{
	SIM_GATE();
	if (ctxCreateParams != NULL) {
		if (ctxCreateParams->numExecAffinityParams > 0)
			return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
		if (ctxCreateParams->cigParams != NULL)
			return CUDA_ERROR_NOT_SUPPORTED;
	}
	return ctx_create(pctx, flags, dev);
}

static CUresult
ctx_destroy(CUcontext ctx)
{
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	hold_ctx_end_wait();
	sim_lock();
	if (ctx == NULL || !ctx_valid(ctx) || ctx->primary)
		r = CUDA_ERROR_INVALID_CONTEXT;
	else {
		ctx_deactivate(ctx);
		ctx->destroyed = 1;
		ctx_publish(ctx);
	}
	sim_unlock();
	/* Popped here; other threads find it destroyed. */
	if (r == CUDA_SUCCESS && ctx_depth > 0 && ctx_stack[ctx_depth - 1] == ctx)
		ctx_depth--;
	return r;
}

CUresult
cuCtxDestroy(CUcontext ctx)
{
	SIM_GATE();
	return ctx_destroy(ctx);
}

CUresult
cuCtxDestroy_v2(CUcontext ctx)
{
	SIM_GATE();
	return ctx_destroy(ctx);
}

static CUresult
ctx_push_current(CUcontext ctx)
{
	CUresult r = ctx_check(ctx);

	return r == CUDA_SUCCESS ? ctx_push(ctx) : r;
}

CUresult
cuCtxPushCurrent(CUcontext ctx)
{
	SIM_GATE();
	return ctx_push_current(ctx);
}

CUresult
cuCtxPushCurrent_v2(CUcontext ctx)
{
	SIM_GATE();
	return ctx_push_current(ctx);
}

static CUresult
ctx_pop_current(CUcontext *pctx)
{
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	if (ctx_depth == 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	ctx_depth--;
	if (pctx != NULL)
		*pctx = ctx_stack[ctx_depth];
	return CUDA_SUCCESS;
}

CUresult
cuCtxPopCurrent(CUcontext *pctx)
{
	SIM_GATE();
	return ctx_pop_current(pctx);
}

CUresult
cuCtxPopCurrent_v2(CUcontext *pctx)
{
	SIM_GATE();
	return ctx_pop_current(pctx);
}

CUresult
cuCtxGetCurrent(CUcontext *pctx)
{
	SIM_GATE();
	CUresult r = sim_ready_out(pctx);

	if (r == CUDA_SUCCESS)
		*pctx = ctx_depth > 0 ? ctx_stack[ctx_depth - 1] : NULL;
	return r;
}

/* Replaces the top of the stack; NULL pops it. */
CUresult
cuCtxSetCurrent(CUcontext ctx)
{
	SIM_GATE();
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	if (ctx == NULL) {
		if (ctx_depth > 0)
			ctx_depth--;
		return CUDA_SUCCESS;
	}
	if ((r = ctx_check(ctx)) != CUDA_SUCCESS)
		return r;
	if (ctx_depth == 0)
		return ctx_push(ctx);
	ctx_stack[ctx_depth - 1] = ctx;
	return CUDA_SUCCESS;
}

/*
 * The prologue of a context query: ctx, or the current context when ctx
 * is NULL, then CUDA_ERROR_INVALID_VALUE when out is NULL.
 */
static CUresult
ctx_query(CUcontext ctx, const void *out, struct CUctx_st **c)
{
	CUresult r;

	if (ctx == NULL)
		r = ctx_current(c);
	else {
		r = ctx_check(ctx);
		*c = ctx;
	}
	if (r != CUDA_SUCCESS)
		return r;
	return out != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult
cuCtxGetDevice(CUdevice *device)
{
	SIM_GATE();
	struct CUctx_st *c;
	CUresult r = ctx_query(NULL, device, &c);

	if (r == CUDA_SUCCESS)
		*device = c->ordinal;
	return r;
}

/*
 * Work runs when it is issued, so there is nothing to wait for but the
 * context's streams under SIMCUDA_ASYNC (async.c); memory pools release
 * what they cache (pool.c).
 */
CUresult
cuCtxSynchronize(void)
{
	SIM_GATE();
	struct CUctx_st *c;
	CUresult r = ctx_current(&c);

	if (r == CUDA_SUCCESS)
		r = async_sync_ctx(c);
	if (r == CUDA_SUCCESS)
		pool_sync();
	return r;
}

CUresult
cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
	SIM_GATE();
	struct CUctx_st *c;
	CUresult r = ctx_query(ctx, version, &c);

	if (r == CUDA_SUCCESS)
		*version = CTX_API_VERSION;
	return r;
}

CUresult
cuCtxGetFlags(unsigned int *flags)
{
	SIM_GATE();
	struct CUctx_st *c;
	CUresult r = ctx_query(NULL, flags, &c);

	if (r == CUDA_SUCCESS)
		*flags = c->flags;
	return r;
}

CUresult
cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)
{
	SIM_GATE();
	struct CUctx_st *c;
	CUresult r = ctx_query(ctx, ctxId, &c);

	if (r == CUDA_SUCCESS)
		*ctxId = c->id;
	return r;
}

/* Lower numbers are higher priorities, as on the real devices. */
CUresult
cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
	SIM_GATE();
	struct CUctx_st *c;
	CUresult r = ctx_current(&c);

	if (r != CUDA_SUCCESS)
		return r;
	if (leastPriority != NULL)
		*leastPriority = 0;
	if (greatestPriority != NULL)
		*greatestPriority = -5;
	return CUDA_SUCCESS;
}

/* The primary context of dev, made on first use; NULL if out of memory. */
static struct CUctx_st *
primary_get(CUdevice dev)
{
	if (primary[dev] == NULL)
		primary[dev] = ctx_new(dev, 0, 1);
	return primary[dev];
}

CUresult
cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	SIM_GATE();
	struct CUctx_st *c;
	CUresult r = sim_ready_out(pctx);

	if (r != CUDA_SUCCESS)
		return r;
	if (device_phys(dev) < 0)
		return CUDA_ERROR_INVALID_DEVICE;
	sim_lock();
	if ((c = primary_get(dev)) == NULL ||
	    (!c->active && ctx_activate(c) < 0))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	else {
		c->refcount++;
		ctx_publish(c);
		*pctx = c;
	}
	sim_unlock();
	return r;
}

/* The last release resets the context: its memory goes. */
static CUresult
primary_release(CUdevice dev)
{
	struct CUctx_st *c;
	CUresult r = device_check(dev);

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	c = primary[dev];
	if (c == NULL || c->refcount == 0)
		r = CUDA_ERROR_INVALID_CONTEXT;
	else if (--c->refcount == 0)
		ctx_deactivate(c);
	else
		ctx_publish(c);
	sim_unlock();
	return r;
}

CUresult
cuDevicePrimaryCtxRelease(CUdevice dev)
{
	SIM_GATE();
	return primary_release(dev);
}

CUresult
cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	SIM_GATE();
	return primary_release(dev);
}

/* Frees everything but keeps the retains; next use re-creates it. */
static CUresult
primary_reset(CUdevice dev)
{
	CUresult r = device_check(dev);

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	if (primary[dev] != NULL) {
		ctx_deactivate(primary[dev]);
		primary[dev]->flags = 0;
	}
	sim_unlock();
	return CUDA_SUCCESS;
}

CUresult
cuDevicePrimaryCtxReset(CUdevice dev)
{
	SIM_GATE();
	return primary_reset(dev);
}

CUresult
cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	SIM_GATE();
	return primary_reset(dev);
}

/* v1 refuses while the context is active; v2 (CUDA 11.0) does not. */
static CUresult
primary_set_flags(CUdevice dev, unsigned int flags, int while_active)
{
	struct CUctx_st *c;
	CUresult r = device_check(dev);

	if (r != CUDA_SUCCESS)
		return r;
	if (!ctx_flags_ok(flags))
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if ((c = primary_get(dev)) == NULL)
		r = CUDA_ERROR_OUT_OF_MEMORY;
	else if (c->active && !while_active)
		r = CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE;
	else
		c->flags = flags;
	sim_unlock();
	return r;
}

CUresult
cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
	SIM_GATE();
	return primary_set_flags(dev, flags, 0);
}

CUresult
cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
	SIM_GATE();
	return primary_set_flags(dev, flags, 1);
}

CUresult
cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
	SIM_GATE();
	CUresult r = device_check(dev);

	if (r != CUDA_SUCCESS)
		return r;
	if (flags == NULL || active == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	*flags = primary[dev] != NULL ? primary[dev]->flags : 0;
	*active = primary[dev] != NULL && primary[dev]->active;
	sim_unlock();
	return CUDA_SUCCESS;
}

/*
 * In a forked child: the parent's contexts are not ours. Their memory is
 * dropped by alloc_forget(); the one thread left starts with no context.
 */
void
ctx_forget(void)
{
	struct CUctx_st *c, *next;
	int d;

	for (c = ctx_list; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
	ctx_list = NULL;
	for (d = 0; d < SIM_MAX_DEVICES; d++)
		primary[d] = NULL;
	ctx_depth = 0;
}
