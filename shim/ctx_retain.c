/*
 * The program's retains of each device's primary context (ctx_retain.h):
 * one counter a device, changed with atomics.
 */
#include "ctx_retain.h"
#include "shim.h"

static unsigned ctx_retains[SHIM_MAX_DEVICES];

static int
ctx_counted(int dev)
{
	return dev >= 0 && dev < SHIM_MAX_DEVICES;
}

void
ctx_retained(int dev)
{
	if (ctx_counted(dev))
		__atomic_add_fetch(&ctx_retains[dev], 1, __ATOMIC_SEQ_CST);
}

int
ctx_release_may_keep(int dev)
{
	return ctx_counted(dev) &&
	    __atomic_load_n(&ctx_retains[dev], __ATOMIC_SEQ_CST) >= 2;
}

unsigned
ctx_release_begin(int dev)
{
	unsigned v;

	if (!ctx_counted(dev))
		return 0;
	v = __atomic_load_n(&ctx_retains[dev], __ATOMIC_SEQ_CST);
	while (v > 0 && !__atomic_compare_exchange_n(&ctx_retains[dev], &v,
	    v - 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
	return v;
}

void
ctx_release_undo(int dev, unsigned before)
{
	if (ctx_counted(dev) && before > 0)
		__atomic_add_fetch(&ctx_retains[dev], 1, __ATOMIC_SEQ_CST);
}

void
ctx_retain_fork_child(void)
{
	int dev;

	for (dev = 0; dev < SHIM_MAX_DEVICES; dev++)
		__atomic_store_n(&ctx_retains[dev], 0, __ATOMIC_SEQ_CST);
}
