/*
 * The part of NVML's ABI that the simulated libnvidia-ml.so.1 implements
 * and its test client calls: types, values and prototypes as NVIDIA's
 * nvml.h (NVML API version 12, driver 570) declares them. The CUDA toolkit
 * used here ships no nvml.h, so they are written out from the NVML API
 * Reference Guide (docs.nvidia.com/deploy/nvml-api): "Device Structs",
 * "Error reporting", "Initialization and Cleanup", "System Queries",
 * "Device Queries". Sizes and values must not change: they are the ABI.
 *
 * Like nvml.h with NVML_NO_UNVERSIONED_FUNC_DEFS, the old entry points
 * (nvmlInit, nvmlDeviceGetCount, ...) are declared under their own names,
 * not #defined to the newest versions.
 */
#ifndef SIMCUDA_NVML_ABI_H
#define SIMCUDA_NVML_ABI_H

typedef enum nvmlReturn_enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_ALREADY_INITIALIZED = 5,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_INSUFFICIENT_POWER = 8,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_TIMEOUT = 10,
	NVML_ERROR_IRQ_ISSUE = 11,
	NVML_ERROR_LIBRARY_NOT_FOUND = 12,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
	NVML_ERROR_CORRUPTED_INFOROM = 14,
	NVML_ERROR_GPU_IS_LOST = 15,
	NVML_ERROR_RESET_REQUIRED = 16,
	NVML_ERROR_OPERATING_SYSTEM = 17,
	NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
	NVML_ERROR_IN_USE = 19,
	NVML_ERROR_MEMORY = 20,
	NVML_ERROR_NO_DATA = 21,
	NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
	NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
	NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
	NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
	NVML_ERROR_DEPRECATED = 26,
	NVML_ERROR_NOT_READY = 27,
	NVML_ERROR_GPU_NOT_FOUND = 28,
	NVML_ERROR_INVALID_STATE = 29,
	NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

/* nvmlInitWithFlags */
#define NVML_INIT_FLAG_NO_GPUS		1	/* no GPU is not an error */
#define NVML_INIT_FLAG_NO_ATTACH	2	/* don't attach GPUs */

/* Buffer sizes that are guaranteed to be large enough. */
#define NVML_DEVICE_UUID_BUFFER_SIZE		80
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE		96
#define NVML_DEVICE_NAME_BUFFER_SIZE		64
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE		96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE	80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE	80
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE	32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE	16

#define NVML_DEVICE_PCI_BUS_ID_LEGACY_FMT	"%04X:%02X:%02X.0"
#define NVML_DEVICE_PCI_BUS_ID_FMT		"%08X:%02X:%02X.0"

/* A versioned struct's version word: its size, and the version in the
 * top byte. */
#define NVML_STRUCT_VERSION(data, ver) \
	(unsigned int)(sizeof(nvml ## data ## _v ## ver ## _t) | (ver << 24U))

typedef struct nvmlDevice_st *nvmlDevice_t;

typedef struct nvmlPciInfo_st {
	char		busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
	unsigned int	domain;
	unsigned int	bus;
	unsigned int	device;
	unsigned int	pciDeviceId;	/* device id << 16 | vendor id */
	unsigned int	pciSubSystemId;
	char		busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

/* total = free + used */
typedef struct nvmlMemory_st {
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;	/* reserved and allocated */
} nvmlMemory_t;

typedef struct nvmlMemory_v2_st {
	unsigned int	version;	/* nvmlMemory_v2 */
	unsigned long long total;
	unsigned long long reserved;	/* for the driver and firmware */
	unsigned long long free;
	unsigned long long used;	/* allocated */
} nvmlMemory_v2_t;

#define nvmlMemory_v2	NVML_STRUCT_VERSION(Memory, 2)

/* nvmlDeviceGet*RunningProcesses (no suffix) */
typedef struct nvmlProcessInfo_v1_st {
	unsigned int	pid;
	unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

/* _v2 and _v3; the instance ids are 0xFFFFFFFF without MIG. */
typedef struct nvmlProcessInfo_v2_st {
	unsigned int	pid;
	unsigned long long usedGpuMemory;
	unsigned int	gpuInstanceId;
	unsigned int	computeInstanceId;
} nvmlProcessInfo_v2_t, nvmlProcessInfo_t;

nvmlReturn_t	nvmlInit_v2(void);
nvmlReturn_t	nvmlInit(void);
nvmlReturn_t	nvmlInitWithFlags(unsigned int flags);
nvmlReturn_t	nvmlShutdown(void);
const char	*nvmlErrorString(nvmlReturn_t result);

nvmlReturn_t	nvmlSystemGetDriverVersion(char *version, unsigned int length);
nvmlReturn_t	nvmlSystemGetNVMLVersion(char *version, unsigned int length);
nvmlReturn_t	nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion);
nvmlReturn_t	nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion);

nvmlReturn_t	nvmlDeviceGetCount_v2(unsigned int *deviceCount);
nvmlReturn_t	nvmlDeviceGetCount(unsigned int *deviceCount);
nvmlReturn_t	nvmlDeviceGetHandleByIndex_v2(unsigned int index,
		    nvmlDevice_t *device);
nvmlReturn_t	nvmlDeviceGetHandleByIndex(unsigned int index,
		    nvmlDevice_t *device);
nvmlReturn_t	nvmlDeviceGetHandleByUUID(const char *uuid,
		    nvmlDevice_t *device);
nvmlReturn_t	nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId,
		    nvmlDevice_t *device);
nvmlReturn_t	nvmlDeviceGetHandleByPciBusId(const char *pciBusId,
		    nvmlDevice_t *device);

nvmlReturn_t	nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index);
nvmlReturn_t	nvmlDeviceGetName(nvmlDevice_t device, char *name,
		    unsigned int length);
nvmlReturn_t	nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid,
		    unsigned int length);
nvmlReturn_t	nvmlDeviceGetPciInfo_v3(nvmlDevice_t device,
		    nvmlPciInfo_t *pci);
nvmlReturn_t	nvmlDeviceGetMemoryInfo(nvmlDevice_t device,
		    nvmlMemory_t *memory);
nvmlReturn_t	nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device,
		    nvmlMemory_v2_t *memory);

/* nvmlDeviceGetMigMode */
#define NVML_DEVICE_MIG_DISABLE		0
#define NVML_DEVICE_MIG_ENABLE		1

nvmlReturn_t	nvmlDeviceGetMigMode(nvmlDevice_t device,
		    unsigned int *currentMode, unsigned int *pendingMode);

/*
 * Memory partitioning by cgroup (driver r615, CUDA 13.4's nvml.h):
 * nameSpace is the full path of a cgroup v2 directory; soft 0 and hard
 * ULLONG_MAX clear a limit. 24 and 32 bytes on x86-64.
 */
typedef struct {
	const char		*nameSpace;
	unsigned long long	softLimit;
	unsigned long long	hardLimit;
} nvmlSetMemoryLimits_v1_t;

typedef struct {
	const char		*nameSpace;
	unsigned long long	softLimit;
	unsigned long long	hardLimit;
	unsigned long long	currentUsed;
} nvmlGetMemoryLimits_v1_t;

nvmlReturn_t	nvmlDeviceSetMemoryLimits_v1(nvmlDevice_t device,
		    nvmlSetMemoryLimits_v1_t *limits);
nvmlReturn_t	nvmlDeviceGetMemoryLimits_v1(nvmlDevice_t device,
		    nvmlGetMemoryLimits_v1_t *limits);

nvmlReturn_t	nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
		    unsigned int *infoCount, nvmlProcessInfo_t *infos);
nvmlReturn_t	nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device,
		    unsigned int *infoCount, nvmlProcessInfo_v2_t *infos);
nvmlReturn_t	nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device,
		    unsigned int *infoCount, nvmlProcessInfo_v1_t *infos);
nvmlReturn_t	nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device,
		    unsigned int *infoCount, nvmlProcessInfo_t *infos);
nvmlReturn_t	nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device,
		    unsigned int *infoCount, nvmlProcessInfo_v2_t *infos);
nvmlReturn_t	nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device,
		    unsigned int *infoCount, nvmlProcessInfo_v1_t *infos);

#endif
