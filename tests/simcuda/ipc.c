/*
 * CUDA IPC. Device memory here is private host memory, which another
 * process cannot map, so IPC is unsupported, as on platforms without it;
 * the entry points exist because clients (numba) resolve them at start.
 */
#include "sim.h"

/* What the real driver says where IPC is not supported. */
static CUresult
ipc_unsupported(const void *out)
{
	CUresult r = sim_ready_out(out);

	return r != CUDA_SUCCESS ? r : CUDA_ERROR_NOT_SUPPORTED;
}

CUresult
cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
	SIM_GATE();
	(void)dptr;
	return ipc_unsupported(pHandle);
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
