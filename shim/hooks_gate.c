/*
 * The gated pass-throughs: every driver call that uses the device (launch,
 * copy, set, synchronise, IPC) waits until a swapped-out process is back on
 * the device, then goes to the driver unchanged. Generated from hooks_list.h.
 */
#include "activity.h"
#include "client.h"
#include "hooks.h"
#include "hooks_enter.h"
#include "pool.h"
#include "real.h"
#include "vback.h"

#define GATE_ARGS(...)	__VA_ARGS__
#define GATE_FIRST(a, ...)	a

/*
 * No lock, allocation or system call beyond activity_enter's: these are on
 * every launch and copy. The IPC ones also note memory the checkpoint API
 * cannot move (flag), so that the daemon never swaps the process out.
 */
#define GATE_BODY(symbol, real, flag, params, args, before, made)	\
CUresult								\
symbol params								\
{									\
	struct gf_activity *act;					\
	CUresult res;							\
									\
	if (!hook_enter())						\
		return REAL_CALL(real, GATE_ARGS args);			\
	before;								\
	act = activity_enter();						\
	res = REAL_CALL(real, GATE_ARGS args);				\
	activity_leave(act);						\
	if ((flag) == GATE_SYNC_FLAG && res == CUDA_SUCCESS)		\
		pool_synced();						\
	else if ((flag) == GATE_CTX_FLAG && res == CUDA_SUCCESS)	\
		made;							\
	else if ((flag) != 0 && res == CUDA_SUCCESS)			\
		activity_flag(flag);					\
	hook_leave();							\
	return res;							\
}
#define GATE_REAL(symbol, real, flag, params, args)			\
	GATE_BODY(symbol, real, flag, params, args, (void)0, (void)0)
#define GATE_ABI(name, version, ptds, symbol, flag, params, args)	\
	GATE_REAL(symbol, symbol, flag, params, args)
/*
 * A context made (its first argument): the copy engine knows it. The
 * process says HELLO before its first, whose memory NVML lists: a
 * process NVML lists with no connection is taken for one without the
 * shim (issue 38), and no name or grace keeps an honest one from it.
 */
#define GATE_CTX_ABI(name, version, symbol, params, args)		\
	GATE_BODY(symbol, symbol, GATE_CTX_FLAG, params, args,		\
	    client_context_coming(), vback_ctx_made(*(GATE_FIRST args)))
#define GATE_OWN_ABI(name, version, symbol, real, params, args)	\
	GATE_REAL(symbol, real, 0, params, args)
/* Legacy IPC: hooks_ipc.c's. */
#define IPC_ABI(name, version, symbol, flag, params, args)
#include "hooks_list.h"
