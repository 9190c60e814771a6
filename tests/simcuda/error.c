/*
 * cuGetErrorName and cuGetErrorString: every CUresult of cuda.h with its
 * name and a description worded like the real driver's.
 */
#include <stddef.h>

#include "sim.h"

struct error_text {
	CUresult	code;
	const char	*name;
	const char	*desc;
};

#define E(code, desc)	{ code, #code, desc }

static const struct error_text errors[] = {
	E(CUDA_SUCCESS, "no error"),
	E(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
	E(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
	E(CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
	E(CUDA_ERROR_DEINITIALIZED, "driver shutting down"),
	E(CUDA_ERROR_PROFILER_DISABLED,
	    "profiler disabled while using external profiling tool"),
	E(CUDA_ERROR_PROFILER_NOT_INITIALIZED, "profiler not initialized"),
	E(CUDA_ERROR_PROFILER_ALREADY_STARTED, "profiler already started"),
	E(CUDA_ERROR_PROFILER_ALREADY_STOPPED, "profiler already stopped"),
	E(CUDA_ERROR_STUB_LIBRARY, "CUDA driver is a stub library"),
	E(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER,
	    "operation not supported by this driver version"),
	E(CUDA_ERROR_DEVICE_UNAVAILABLE,
	    "CUDA-capable device(s) is/are busy or unavailable"),
	E(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"),
	E(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
	E(CUDA_ERROR_DEVICE_NOT_LICENSED,
	    "device doesn't have valid Grid license"),
	E(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"),
	E(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
	E(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, "context already current"),
	E(CUDA_ERROR_MAP_FAILED, "mapping of buffer object failed"),
	E(CUDA_ERROR_UNMAP_FAILED, "unmapping of buffer object failed"),
	E(CUDA_ERROR_ARRAY_IS_MAPPED, "array is mapped"),
	E(CUDA_ERROR_ALREADY_MAPPED, "resource already mapped"),
	E(CUDA_ERROR_NO_BINARY_FOR_GPU,
	    "no kernel image is available for execution on the device"),
	E(CUDA_ERROR_ALREADY_ACQUIRED, "resource already acquired"),
	E(CUDA_ERROR_NOT_MAPPED, "resource not mapped"),
	E(CUDA_ERROR_NOT_MAPPED_AS_ARRAY, "resource not mapped as array"),
	E(CUDA_ERROR_NOT_MAPPED_AS_POINTER, "resource not mapped as pointer"),
	E(CUDA_ERROR_ECC_UNCORRECTABLE, "uncorrectable ECC error encountered"),
	E(CUDA_ERROR_UNSUPPORTED_LIMIT,
	    "limit is not supported on this architecture"),
	E(CUDA_ERROR_CONTEXT_ALREADY_IN_USE,
	    "exclusive-thread device already in use by a different thread"),
	E(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED,
	    "peer access is not supported between these two devices"),
	E(CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation failed"),
	E(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT,
	    "invalid OpenGL or DirectX context"),
	E(CUDA_ERROR_NVLINK_UNCORRECTABLE,
	    "uncorrectable NVLink error detected during the execution"),
	E(CUDA_ERROR_JIT_COMPILER_NOT_FOUND,
	    "PTX JIT compiler library not found"),
	E(CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
	    "the provided PTX was compiled with an unsupported toolchain."),
	E(CUDA_ERROR_JIT_COMPILATION_DISABLED,
	    "PTX JIT compilation was disabled"),
	E(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY,
	    "the provided execution affinity is not supported by the device"),
	E(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC,
	    "the provided PTX contains unsupported call to "
	    "cudaDeviceSynchronize"),
	E(CUDA_ERROR_CONTAINED, "an exception occurred on the device that "
	    "is now contained by the GPU's error containment capability"),
	E(CUDA_ERROR_INVALID_SOURCE, "device kernel image is invalid"),
	E(CUDA_ERROR_FILE_NOT_FOUND, "file not found"),
	E(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND,
	    "shared object symbol not found"),
	E(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED,
	    "shared object initialization failed"),
	E(CUDA_ERROR_OPERATING_SYSTEM,
	    "OS call failed or operation not supported on this OS"),
	E(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"),
	E(CUDA_ERROR_ILLEGAL_STATE,
	    "the operation cannot be performed in the present state"),
	E(CUDA_ERROR_LOSSY_QUERY,
	    "attempted introspection would be semantically lossy"),
	E(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
	E(CUDA_ERROR_NOT_READY, "device not ready"),
	E(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"),
	E(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
	    "too many resources requested for launch"),
	E(CUDA_ERROR_LAUNCH_TIMEOUT, "the launch timed out and was terminated"),
	E(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING,
	    "launch uses incompatible texturing mode"),
	E(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED,
	    "peer access is already enabled"),
	E(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "peer access has not been enabled"),
	E(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE,
	    "cannot set while device is active in this process"),
	E(CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed"),
	E(CUDA_ERROR_ASSERT, "device-side assert triggered"),
	E(CUDA_ERROR_TOO_MANY_PEERS, "peer mapping resources exhausted"),
	E(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
	    "part or all of the requested memory range is already mapped"),
	E(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
	    "pointer does not correspond to a registered memory region"),
	E(CUDA_ERROR_HARDWARE_STACK_ERROR, "hardware stack error"),
	E(CUDA_ERROR_ILLEGAL_INSTRUCTION, "an illegal instruction was encountered"),
	E(CUDA_ERROR_MISALIGNED_ADDRESS, "misaligned address"),
	E(CUDA_ERROR_INVALID_ADDRESS_SPACE,
	    "operation not supported on global/shared address space"),
	E(CUDA_ERROR_INVALID_PC, "invalid program counter"),
	E(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"),
	E(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
	    "too many blocks in cooperative launch"),
	E(CUDA_ERROR_TENSOR_MEMORY_LEAK, "tensor memory not completely freed"),
	E(CUDA_ERROR_NOT_PERMITTED, "operation not permitted"),
	E(CUDA_ERROR_NOT_SUPPORTED, "operation not supported"),
	E(CUDA_ERROR_SYSTEM_NOT_READY, "system not yet initialized"),
	E(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH,
	    "system has unsupported display driver / cuda driver combination"),
	E(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE,
	    "forward compatibility was attempted on non supported HW"),
	E(CUDA_ERROR_MPS_CONNECTION_FAILED,
	    "MPS client failed to connect to the MPS control daemon or the "
	    "MPS server"),
	E(CUDA_ERROR_MPS_RPC_FAILURE, "the remote procedural call between the "
	    "MPS server and the MPS client failed"),
	E(CUDA_ERROR_MPS_SERVER_NOT_READY, "MPS server is not ready to accept "
	    "new MPS client requests"),
	E(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED, "the hardware resources "
	    "required to create MPS client have been exhausted"),
	E(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED, "the hardware resources "
	    "required to support device connections have been exhausted"),
	E(CUDA_ERROR_MPS_CLIENT_TERMINATED,
	    "the MPS client has been terminated by the server"),
	E(CUDA_ERROR_CDP_NOT_SUPPORTED, "the module is using CUDA Dynamic "
	    "Parallelism, but the current configuration does not support it"),
	E(CUDA_ERROR_CDP_VERSION_MISMATCH, "the module uses CUDA Dynamic "
	    "Parallelism of a version the driver does not support"),
	E(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
	    "operation not permitted when stream is capturing"),
	E(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
	    "operation failed due to a previous error during capture"),
	E(CUDA_ERROR_STREAM_CAPTURE_MERGE,
	    "operation would result in a merge of separate capture sequences"),
	E(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,
	    "capture was not ended in the same stream as it began"),
	E(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "capturing stream has unjoined work"),
	E(CUDA_ERROR_STREAM_CAPTURE_ISOLATION,
	    "dependency created on uncaptured work in another stream"),
	E(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "operation would make the legacy "
	    "stream depend on a capturing blocking stream"),
	E(CUDA_ERROR_CAPTURED_EVENT, "operation not permitted on an event last "
	    "recorded in a capturing stream"),
	E(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, "attempt to terminate a "
	    "thread-local capture sequence from another thread"),
	E(CUDA_ERROR_TIMEOUT, "wait operation timed out"),
	E(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "the graph update was not "
	    "performed because it included changes which violated constraints "
	    "specific to instantiated graph update"),
	E(CUDA_ERROR_EXTERNAL_DEVICE,
	    "an async error has occurred in external entity outside of CUDA"),
	E(CUDA_ERROR_INVALID_CLUSTER_SIZE,
	    "a kernel launch error has occurred due to cluster misconfiguration"),
	E(CUDA_ERROR_FUNCTION_NOT_LOADED, "the function handle is not loaded "
	    "when calling an API that requires a loaded function"),
	E(CUDA_ERROR_INVALID_RESOURCE_TYPE, "one or more resources passed in "
	    "are not valid resource types for the operation"),
	E(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, "one or more resources "
	    "are insufficient or non-applicable for the operation"),
	E(CUDA_ERROR_KEY_ROTATION, "an error happened during the key rotation "
	    "sequence"),
	E(CUDA_ERROR_UNKNOWN, "unknown error"),
};

static const struct error_text *
error_find(CUresult error)
{
	size_t i;

	for (i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == error)
			return &errors[i];
	return NULL;
}

/*
 * Like the real ones: usable before cuInit; an unknown code is an error
 * and its text NULL.
 */
static CUresult
error_text_get(CUresult error, const char **pStr, int want_desc)
{
	const struct error_text *e = error_find(error);

	if (pStr == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (e == NULL) {
		*pStr = NULL;
		return CUDA_ERROR_INVALID_VALUE;
	}
	*pStr = want_desc ? e->desc : e->name;
	return CUDA_SUCCESS;
}

CUresult
cuGetErrorName(CUresult error, const char **pStr)
{
	return error_text_get(error, pStr, 0);
}

CUresult
cuGetErrorString(CUresult error, const char **pStr)
{
	return error_text_get(error, pStr, 1);
}
