/*
 * Legacy IPC hooks: gated as every call that uses the device, and noted
 * as IPC memory, which no engine may swap; the copy engine's memory gets
 * handles of the shim's own (vback_ipc.h), everything else the driver's.
 */
#include "activity.h"
#include "gpufrac/activity.h"
#include "hooks.h"
#include "hooks_enter.h"
#include "real.h"
#include "vback_ipc.h"

CUresult
cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
	struct gf_activity *act;
	CUresult r;

	if (!hook_enter())
		return REAL_CALL(cuIpcGetMemHandle, pHandle, dptr);
	act = activity_enter();
	if (!vback_ipc_get(pHandle, dptr, &r))
		r = REAL_CALL(cuIpcGetMemHandle, pHandle, dptr);
	activity_leave(act);
	if (r == CUDA_SUCCESS)
		activity_flag(GF_ACT_IPC);
	hook_leave();
	return r;
}

typedef CUresult (*ipc_open_fn)(CUdeviceptr *, CUipcMemHandle, unsigned int);

static CUresult
ipc_open(ipc_open_fn real, const char *name, CUdeviceptr *pdptr,
    CUipcMemHandle handle, unsigned int Flags)
{
	struct gf_activity *act;
	CUresult r;

	if (!hook_enter())
		return real != NULL ? real(pdptr, handle, Flags) :
		    real_missing(name);
	act = activity_enter();
	if (!vback_ipc_open(pdptr, &handle, &r))
		r = real != NULL ? real(pdptr, handle, Flags) :
		    real_missing(name);
	activity_leave(act);
	if (r == CUDA_SUCCESS)
		activity_flag(GF_ACT_IPC);
	hook_leave();
	return r;
}

CUresult
cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle,
    unsigned int Flags)
{
	return ipc_open(real_cu.cuIpcOpenMemHandle, "cuIpcOpenMemHandle",
	    pdptr, handle, Flags);
}

CUresult
cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle,
    unsigned int Flags)
{
	return ipc_open(real_cu.cuIpcOpenMemHandle_v2, "cuIpcOpenMemHandle_v2",
	    pdptr, handle, Flags);
}

CUresult
cuIpcCloseMemHandle(CUdeviceptr dptr)
{
	struct gf_activity *act;
	CUresult r;

	if (!hook_enter())
		return REAL_CALL(cuIpcCloseMemHandle, dptr);
	act = activity_enter();
	if (!vback_ipc_close(dptr, &r))
		r = REAL_CALL(cuIpcCloseMemHandle, dptr);
	activity_leave(act);
	hook_leave();
	return r;
}
