/*
 * Context ends: cuCtxDestroy, cuDevicePrimaryCtxReset and the last
 * cuDevicePrimaryCtxRelease free every allocation of cuMemAlloc,
 * cuMemAllocPitch and cuMemAllocManaged, and every array, that the
 * context held; not those of cuMemCreate or the stream-ordered pools,
 * which belong to no context (cuda.h, cuCtxDestroy). Their charge goes
 * with them: out of the table, back to the lease or the daemon. Those the
 * copy engine backs (vback.h) are VMM memory, which the driver leaves
 * alone: the shim frees them as the driver would have freed them.
 * A release that leaves its context active, as the program's count of
 * retains says (ctx_retain.h), frees nothing: the context's allocations
 * are neither listed nor taken from the table, which with many of them
 * cost one driver call each.
 */
#include <stdint.h>
#include <stdlib.h>

#include "activity.h"
#include "alloc_table.h"
#include "client.h"
#include "ctx_retain.h"
#include "ctx_table.h"
#include "gpufrac/proto.h"
#include "hooks.h"
#include "hooks_enter.h"
#include "log.h"
#include "real.h"
#include "units.h"
#include "vback.h"

/* One context's end, and what the driver said of it. */
struct ctx_end {
	CUcontext	 ctx;		/* the context that ends */
	CUdevice	 dev;		/* its device, for the primary calls */
	CUresult	(*by_ctx)(CUcontext);
	CUresult	(*by_dev)(CUdevice);
	int		 release;	/* ends only if it was the last use */
	int		 keeps;		/* release: the count says it stays */
	int		 again;		/* keeps no more: list, then release */
	CUresult	 r;
	const uint64_t	*keys;		/* what it held, for the backed ones */
	size_t		 n;
};

/* Pointers only: the other kinds' keys are tagged handles. */
struct ctx_keys {
	CUcontext	 ctx;
	int		 dev;		/* ctx's device, or -1: not known */
	uint64_t	*keys;
	size_t		 n, cap;
};

static int
ctx_collect(uint64_t ptr, const struct alloc_entry *e, void *arg)
{
	struct ctx_keys *k = arg;
	CUcontext c;

	if (e->kind != GF_KIND_MEM && e->kind != GF_KIND_PITCH &&
	    e->kind != GF_KIND_MANAGED)
		return 0;
	/* Another device's is another context's: the driver is not asked. */
	if (k->dev >= 0 && e->dev != k->dev)
		return 0;
	if (real_cu.cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT,
	    ptr) != CUDA_SUCCESS || c != k->ctx)
		return 0;
	return ctx_keys_push(&k->keys, &k->n, &k->cap, ptr);
}

/*
 * The driver call, for client_end_keys (whose free lock makes releases
 * one at a time, as ctx_retain.h needs): 1 if the context is gone.
 */
static int
ctx_end_run(void *arg)
{
	struct ctx_end *c = arg;
	unsigned flags, before = 0;
	int active;
	size_t i;

	if (c->release)
		before = ctx_release_begin(c->dev);
	/* Another thread's release came first: this one may end it. */
	if (c->keeps && before < 2) {
		ctx_release_undo(c->dev, before);
		c->again = 1;
		return 0;
	}
	vback_ctx_ending();
	c->r = c->by_ctx != NULL ? c->by_ctx(c->ctx) : c->by_dev(c->dev);
	if (c->release && c->r != CUDA_SUCCESS)
		ctx_release_undo(c->dev, before);
	if (c->keeps || c->r != CUDA_SUCCESS || (c->release &&
	    (real_cu.cuDevicePrimaryCtxGetState == NULL ||
	    real_cu.cuDevicePrimaryCtxGetState(c->dev, &flags, &active) !=
	    CUDA_SUCCESS || active))) {
		vback_ctx_gone(c->ctx, 0);
		return 0;
	}
	/*
	 * Under the free lock, as any free (client_release_keys): the
	 * address is the driver's again only after the table let go of it.
	 */
	vback_ctx_gone(c->ctx, c->ctx != NULL);
	for (i = 0; i < c->n; i++)
		(void)vback_drop(c->keys[i]);
	return 1;
}

/* The primary context of dev while it is active, else NULL. */
static CUcontext
ctx_primary(CUdevice dev)
{
	unsigned flags;
	int active;
	CUcontext c;

	if (real_cu.cuDevicePrimaryCtxGetState == NULL ||
	    real_cu.cuDevicePrimaryCtxRetain == NULL ||
	    real_cu.cuDevicePrimaryCtxRelease_v2 == NULL ||
	    real_cu.cuDevicePrimaryCtxGetState(dev, &flags, &active) !=
	    CUDA_SUCCESS || !active)
		return NULL;
	/* Active: retained already, so this retain and release are even. */
	if (real_cu.cuDevicePrimaryCtxRetain(&c, dev) != CUDA_SUCCESS)
		return NULL;
	(void)real_cu.cuDevicePrimaryCtxRelease_v2(dev);
	return c;
}

/* End c, giving back what it held; within hook_enter. */
static CUresult
ctx_end(struct ctx_end *c)
{
	struct ctx_keys k = { c->ctx, c->by_dev != NULL ? c->dev : -1, NULL, 0,
	    0 };
	char b[16];
	uint64_t bytes;
	size_t n;

	if (c->keeps) {
		(void)client_end_keys(NULL, 0, ctx_end_run, c, &n);
		if (!c->again)
			return c->r;
		c->keeps = 0;
		k.ctx = c->ctx = ctx_primary(c->dev);
	}
	if (c->ctx == NULL || real_cu.cuPointerGetAttribute == NULL) {
		/* Nothing of it is accounted. */
		(void)client_end_keys(NULL, 0, ctx_end_run, c, &n);
		return c->r;
	}
	/* The driver knows no context of backed memory: the shim does. */
	if (alloc_table_walk(ctx_collect, &k) != 0 ||
	    ctx_array_list(c->ctx, &k.keys, &k.n, &k.cap) != 0 ||
	    vback_ctx_list(c->ctx, &k.keys, &k.n, &k.cap) != 0)
		log_errx("cannot list a context's allocations: out of memory; "
		    "some stay charged");
	c->keys = k.keys;
	c->n = k.n;
	bytes = client_end_keys(k.keys, k.n, ctx_end_run, c, &n);
	free(k.keys);
	if (c->r == CUDA_SUCCESS && n != 0) {
		ctx_array_forget(c->ctx);
		log_info("%s ended: %s in %zu allocations given back",
		    c->by_dev != NULL ? "a primary context" : "a context",
		    size_format(bytes, b, sizeof(b)), n);
	}
	return c->r;
}

static CUresult
ctx_hook(struct ctx_end *c, const char *name)
{
	struct gf_activity *act;

	if (c->by_ctx == NULL && c->by_dev == NULL) {
		hook_leave();
		return real_missing(name);
	}
	act = activity_enter();
	c->keeps = c->release && ctx_release_may_keep(c->dev);
	if (c->by_dev != NULL && !c->keeps)
		c->ctx = ctx_primary(c->dev);
	(void)ctx_end(c);
	activity_leave(act);
	hook_leave();
	return c->r;
}

/*
 * A release inside another hooked call (hook_enter refused it): counted,
 * as every release must be (ctx_retain.h), but not accounted.
 */
static CUresult
ctx_release_inner(CUresult (*fn)(CUdevice), const char *name, CUdevice dev)
{
	unsigned before;
	CUresult r;

	if (fn == NULL)
		return real_missing(name);
	before = ctx_release_begin(dev);
	if ((r = fn(dev)) != CUDA_SUCCESS)
		ctx_release_undo(dev, before);
	return r;
}

#define CTX_BY_CTX(fn)	{ .ctx = ctx, .dev = -1, .by_ctx = (fn) }
#define CTX_BY_DEV(fn, rel)	{ .dev = dev, .by_dev = (fn), .release = (rel) }

CUresult
cuCtxDestroy(CUcontext ctx)
{
	struct ctx_end c = CTX_BY_CTX(NULL);

	if (!hook_enter())
		return REAL_CALL(cuCtxDestroy_v1, ctx);
	c.by_ctx = real_cu.cuCtxDestroy_v1;
	return ctx_hook(&c, "cuCtxDestroy");
}

CUresult
cuCtxDestroy_v2(CUcontext ctx)
{
	struct ctx_end c = CTX_BY_CTX(NULL);

	if (!hook_enter())
		return REAL_CALL(cuCtxDestroy_v2, ctx);
	c.by_ctx = real_cu.cuCtxDestroy_v2;
	return ctx_hook(&c, "cuCtxDestroy_v2");
}

CUresult
cuDevicePrimaryCtxReset(CUdevice dev)
{
	struct ctx_end c = CTX_BY_DEV(NULL, 0);

	if (!hook_enter())
		return REAL_CALL(cuDevicePrimaryCtxReset_v1, dev);
	c.by_dev = real_cu.cuDevicePrimaryCtxReset_v1;
	return ctx_hook(&c, "cuDevicePrimaryCtxReset");
}

CUresult
cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	struct ctx_end c = CTX_BY_DEV(NULL, 0);

	if (!hook_enter())
		return REAL_CALL(cuDevicePrimaryCtxReset_v2, dev);
	c.by_dev = real_cu.cuDevicePrimaryCtxReset_v2;
	return ctx_hook(&c, "cuDevicePrimaryCtxReset_v2");
}

CUresult
cuDevicePrimaryCtxRelease(CUdevice dev)
{
	struct ctx_end c = CTX_BY_DEV(NULL, 1);

	if (!hook_enter())
		return ctx_release_inner(real_cu.cuDevicePrimaryCtxRelease_v1,
		    "cuDevicePrimaryCtxRelease", dev);
	c.by_dev = real_cu.cuDevicePrimaryCtxRelease_v1;
	return ctx_hook(&c, "cuDevicePrimaryCtxRelease");
}

CUresult
cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	struct ctx_end c = CTX_BY_DEV(NULL, 1);

	if (!hook_enter())
		return ctx_release_inner(real_cu.cuDevicePrimaryCtxRelease_v2,
		    "cuDevicePrimaryCtxRelease_v2", dev);
	c.by_dev = real_cu.cuDevicePrimaryCtxRelease_v2;
	return ctx_hook(&c, "cuDevicePrimaryCtxRelease_v2");
}

/*
 * Gated as a context's maker is (hooks_gate.c, GATE_CTX), and counted
 * (ctx_retain.h), inside another hooked call too.
 */
CUresult
cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	struct gf_activity *act;
	CUresult r;

	if (!hook_enter()) {
		if ((r = REAL_CALL(cuDevicePrimaryCtxRetain, pctx, dev)) ==
		    CUDA_SUCCESS)
			ctx_retained(dev);
		return r;
	}
	client_context_coming();
	act = activity_enter();
	r = REAL_CALL(cuDevicePrimaryCtxRetain, pctx, dev);
	activity_leave(act);
	if (r == CUDA_SUCCESS) {
		ctx_retained(dev);
		vback_ctx_made(*pctx);
	}
	hook_leave();
	return r;
}
