/*
 * CUDA IPC. Device memory here is private host memory, which another
 * process cannot map, so IPC is unsupported, as on platforms without it;
 * the entry points exist because clients (numba) resolve them at start.
 */
#include "sim.h"

CUresult
cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
	CUresult r = sim_ready();

	(void)dptr;
	if (r != CUDA_SUCCESS)
		return r;
	return pHandle == NULL ? CUDA_ERROR_INVALID_VALUE :
	    CUDA_ERROR_NOT_SUPPORTED;
}

static CUresult
ipc_open(CUdeviceptr *pdptr)
{
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	return pdptr == NULL ? CUDA_ERROR_INVALID_VALUE :
	    CUDA_ERROR_NOT_SUPPORTED;
}

CUresult
cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle,
    unsigned int Flags)
{
	(void)handle;
	(void)Flags;
	return ipc_open(pdptr);
}

CUresult
cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle,
    unsigned int Flags)
{
	(void)handle;
	(void)Flags;
	return ipc_open(pdptr);
}

/* Nothing was ever opened. */
CUresult
cuIpcCloseMemHandle(CUdeviceptr dptr)
{
	CUresult r = sim_ready();

	(void)dptr;
	return r != CUDA_SUCCESS ? r : CUDA_ERROR_INVALID_VALUE;
}
