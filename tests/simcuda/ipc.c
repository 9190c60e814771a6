/*
 * CUDA IPC. Device memory here is private host memory, which another
 * process cannot map, so IPC is unsupported, as on platforms without it;
 * the entry points exist because clients (numba) resolve them at start.
 * Memory that the real driver refuses a legacy handle is refused first,
 * as it is there: only cuMemAlloc memory has one (VMM memory is shared
 * by cuMemExportToShareableHandle instead).
 */
#include "sim.h"

/* What the real driver says where IPC is not supported. */
static CUresult
ipc_unsupported(const void *out)
{
	CUresult r = sim_ready_out(out);

	return r != CUDA_SUCCESS ? r : CUDA_ERROR_NOT_SUPPORTED;
}

/*
 * Memory not from cuMemAlloc (VMM, pools, managed, host, none at all):
 * the driver's reference names no error of its own for it;
 * CUDA_ERROR_INVALID_VALUE, its error for a bad argument.
 */
CUresult
cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
	SIM_GATE();
	struct sim_alloc *a;
	CUresult r = sim_ready_out(pHandle);

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	a = alloc_find(dptr);
	r = a != NULL && a->kind == SIM_MEM_DEVICE ? CUDA_ERROR_NOT_SUPPORTED :
	    CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return r;
}

CUresult
cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle,
    unsigned int Flags)
{
	SIM_GATE();
	(void)handle;
	(void)Flags;
	return ipc_unsupported(pdptr);
}

CUresult
cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle,
    unsigned int Flags)
{
	SIM_GATE();
	(void)handle;
	(void)Flags;
	return ipc_unsupported(pdptr);
}

/* Nothing was ever opened. */
CUresult
cuIpcCloseMemHandle(CUdeviceptr dptr)
{
	SIM_GATE();
	CUresult r = sim_ready();

	(void)dptr;
	return r != CUDA_SUCCESS ? r : CUDA_ERROR_INVALID_VALUE;
}
