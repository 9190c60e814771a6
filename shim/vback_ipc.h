/*
 * Legacy IPC of the copy engine's memory (issue 21). The driver gives no
 * legacy handle (cuIpcGetMemHandle) for VMM memory, which is what backed
 * allocations are (vback.h); the shim answers for them with a handle of
 * its own: the exporter's pid and a POSIX descriptor of the physical
 * memory (cuMemExportToShareableHandle) that it keeps open. A process
 * under the shim that opens such a handle takes the descriptor with
 * pidfd_getfd(2), which needs the permission to ptrace the exporter,
 * imports it and maps it; one without the shim cannot open it. Handles
 * of the driver's own go to the driver untouched.
 *
 * Each function returns 0 when the call is not the shim's to answer
 * (the hook then asks the driver), else 1 with the answer in *r.
 */
#ifndef GF_SHIM_VBACK_IPC_H
#define GF_SHIM_VBACK_IPC_H

#include <cuda.h>

/*
 * cuIpcGetMemHandle of dptr, anywhere in a backed allocation: the
 * allocation is marked exported (it stays on the device from then on)
 * and *out names it and dptr's offset in it.
 */
int	vback_ipc_get(CUipcMemHandle *out, CUdeviceptr dptr, CUresult *r);

/*
 * cuIpcOpenMemHandle of a handle vback_ipc_get made (in any process):
 * the memory mapped read-write for the current context's device, at a
 * new address; *pdptr is the exported pointer's counterpart.
 */
int	vback_ipc_open(CUdeviceptr *pdptr, const CUipcMemHandle *handle,
	    CUresult *r);

/* cuIpcCloseMemHandle of a pointer vback_ipc_open gave: unmapped. */
int	vback_ipc_close(CUdeviceptr dptr, CUresult *r);

#endif
