/*
 * The simulated devices: their list from SIMCUDA_DEVICES, the ordinals a
 * process sees through CUDA_VISIBLE_DEVICES, identity (name, UUID, PCI id)
 * and attributes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "sim.h"
#include "units.h"
#include "uuid.h"

#define DEVICE_DEFAULT_BYTES	(16ull << 30)

static int visible[SIM_MAX_DEVICES];	/* ordinal -> physical index */
static int nvisible;

/* SIMCUDA_DEVICES: "8Gi,4Gi"; a bad list is reported and the default used. */
static unsigned
devices_parse(uint64_t *cap)
{
	const char *env = getenv("SIMCUDA_DEVICES");
	char buf[512], *tok, *save;
	unsigned n = 0;

	if (env == NULL)
		goto out_default;
	if (strlen(env) >= sizeof(buf))
		goto out_bad;
	strcpy(buf, env);
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		if (n == SIM_MAX_DEVICES || size_parse(tok, &cap[n]) < 0 ||
		    cap[n] == 0)
			goto out_bad;
		n++;
	}
	return n;		/* "" is a machine without GPUs */
out_bad:
	log_warnx("bad SIMCUDA_DEVICES '%s': using one %lluGi device", env,
	    DEVICE_DEFAULT_BYTES >> 30);
out_default:
	cap[0] = DEVICE_DEFAULT_BYTES;
	return 1;
}

/* splitmix64: stable, well-spread bytes from the physical index. */
static uint64_t
mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static void
uuid_make(int phys, CUuuid *u)
{
	uint64_t w[2] = { mix(0x51c0da00u + (unsigned)phys),
	    mix(0xdec0de00u + (unsigned)phys) };
	int i;

	for (i = 0; i < 16; i++)
		u->bytes[i] = (char)(w[i / 8] >> (8 * (i % 8)));
}

/* The UUID as CUDA_VISIBLE_DEVICES and nvidia-smi write it. */
static void
uuid_string(int phys, char *buf, size_t size)
{
	CUuuid u;
	uint8_t bytes[GF_UUID_LEN];

	uuid_make(phys, &u);
	memcpy(bytes, u.bytes, sizeof(bytes));
	uuid_format(bytes, buf, size);
}

/* One CUDA_VISIBLE_DEVICES entry: an index or a UUID prefix; -1 if bad. */
static int
visible_entry(const char *tok, unsigned ndev)
{
	char uuid[UUID_STR_LEN];
	int found = -1;
	unsigned d;

	if (strncasecmp(tok, "GPU-", 4) == 0) {
		for (d = 0; d < ndev; d++) {
			uuid_string((int)d, uuid, sizeof(uuid));
			if (strncasecmp(uuid, tok, strlen(tok)) != 0)
				continue;
			if (found >= 0)
				return -1;	/* ambiguous prefix */
			found = (int)d;
		}
		return found;
	}
	if (*tok < '0' || *tok > '9' || strspn(tok, "0123456789") !=
	    strlen(tok) || strlen(tok) > 4)
		return -1;
	d = (unsigned)strtoul(tok, NULL, 10);
	return d < ndev ? (int)d : -1;
}

/*
 * Like the real driver: the list is read up to its first invalid or
 * repeated entry; ordinals follow the list order; set but empty, no device.
 */
static void
visible_parse(unsigned ndev)
{
	const char *env = getenv("CUDA_VISIBLE_DEVICES");
	char buf[1024], *tok, *save;
	int i, d;

	nvisible = 0;
	if (env == NULL) {
		for (d = 0; d < (int)ndev; d++)
			visible[nvisible++] = d;
		return;
	}
	if (strlen(env) >= sizeof(buf))
		return;
	strcpy(buf, env);
	for (tok = strtok_r(buf, ",", &save); tok != NULL &&
	    nvisible < SIM_MAX_DEVICES; tok = strtok_r(NULL, ",", &save)) {
		tok += strspn(tok, " \t");
		tok[strcspn(tok, " \t")] = '\0';
		if ((d = visible_entry(tok, ndev)) < 0)
			return;
		for (i = 0; i < nvisible; i++)
			if (visible[i] == d)
				return;
		visible[nvisible++] = d;
	}
}

int
device_attach(void)
{
	uint64_t cap[SIM_MAX_DEVICES];
	unsigned n = devices_parse(cap);

	return state_attach(getenv("SIMCUDA_STATE"), n, cap);
}

CUresult
device_init(void)
{
	if (device_attach() < 0)
		return CUDA_ERROR_OPERATING_SYSTEM;
	visible_parse(state_ndev());
	return nvisible > 0 ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

int
device_phys(CUdevice dev)
{
	return dev >= 0 && dev < nvisible ? visible[dev] : -1;
}

CUdevice
device_ordinal(int phys)
{
	CUdevice dev;

	for (dev = 0; dev < nvisible; dev++)
		if (visible[dev] == phys)
			return dev;
	return -1;
}

/*
 * Identity by physical index, for this file and the simulated NVML
 * (nvml.c), which sees every device whatever CUDA_VISIBLE_DEVICES says.
 */
void
device_name(int phys, char *buf, size_t size)
{
	snprintf(buf, size, "simcuda device %d", phys);
}

void
device_uuid_string(int phys, char *buf, size_t size)
{
	uuid_string(phys, buf, size);
}

/* Bus numbers follow the physical index: device 0 is 0000:01:00.0. */
unsigned
device_pci_bus(int phys)
{
	return (unsigned)phys + 1;
}

CUresult
device_check(CUdevice dev)
{
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	return device_phys(dev) >= 0 ? CUDA_SUCCESS :
	    CUDA_ERROR_INVALID_DEVICE;
}

/* The prologue of a device query: device_check(), then out; dev's
 * physical index. */
static CUresult
device_query(CUdevice dev, const void *out, int *phys)
{
	CUresult r = device_check(dev);

	if (r != CUDA_SUCCESS)
		return r;
	if (out == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*phys = device_phys(dev);
	return CUDA_SUCCESS;
}

CUresult
cuDeviceGetCount(int *count)
{
	SIM_GATE();
	CUresult r = sim_ready_out(count);

	if (r == CUDA_SUCCESS)
		*count = nvisible;
	return r;
}

/*
 * Every simulated device reaches every other one peer to peer, as the
 * GPUs of one NVLink or PCIe switch do; a device is not its own peer.
 */
CUresult
cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
{
	SIM_GATE();
	CUresult r = sim_ready_out(canAccessPeer);

	if (r == CUDA_SUCCESS && (r = device_check(dev)) == CUDA_SUCCESS &&
	    (r = device_check(peerDev)) == CUDA_SUCCESS)
		*canAccessPeer = dev != peerDev;
	return r;
}

CUresult
cuDeviceGet(CUdevice *device, int ordinal)
{
	SIM_GATE();
	CUresult r = sim_ready_out(device);

	if (r != CUDA_SUCCESS)
		return r;
	if (device_phys(ordinal) < 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*device = ordinal;
	return CUDA_SUCCESS;
}

CUresult
cuDeviceGetName(char *name, int len, CUdevice dev)
{
	SIM_GATE();
	int phys;
	CUresult r = device_query(dev, name, &phys);

	if (r != CUDA_SUCCESS)
		return r;
	if (len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	device_name(phys, name, (size_t)len);
	return CUDA_SUCCESS;
}

static CUresult
device_uuid(CUuuid *uuid, CUdevice dev)
{
	int phys;
	CUresult r = device_query(dev, uuid, &phys);

	if (r == CUDA_SUCCESS)
		uuid_make(phys, uuid);
	return r;
}

/* The two differ only for MIG instances, which are not simulated. */
CUresult
cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	SIM_GATE();
	return device_uuid(uuid, dev);
}

CUresult
cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	SIM_GATE();
	return device_uuid(uuid, dev);
}

CUresult
cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	SIM_GATE();
	int phys;
	CUresult r = device_query(dev, bytes, &phys);

	if (r == CUDA_SUCCESS)
		*bytes = state_capacity(phys);
	return r;
}

CUresult
cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
	SIM_GATE();
	int phys;
	CUresult r = device_query(dev, pciBusId, &phys);

	if (r != CUDA_SUCCESS)
		return r;
	if (len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(pciBusId, (size_t)len, "0000:%02x:00.0",
	    device_pci_bus(phys));
	return CUDA_SUCCESS;
}

CUresult
cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
	SIM_GATE();
	CUresult r = device_check(dev);

	if (r != CUDA_SUCCESS)
		return r;
	if (major == NULL || minor == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*major = 9;
	*minor = 0;
	return CUDA_SUCCESS;
}

/*
 * An H100-like device (compute capability 9.0). Features the simulator
 * lacks (memory pools, VMM, IPC, peer access) are reported absent so that
 * clients do not try them; the rest read 0.
 */
static int
attribute_value(CUdevice_attribute a, int phys)
{
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:		return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:		return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:		return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:		return 64;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:		return 2147483647;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:		return 65535;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:		return 65535;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:	return 49152;
	case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY:		return 65536;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE:			return 32;
	case CU_DEVICE_ATTRIBUTE_MAX_PITCH:			return 2147483647;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:	return 65536;
	case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:			return 1980000;
	case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT:		return 512;
	case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP:			return 1;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:		return 132;
	case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:		return 1;
	case CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT:		return 512;
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:		return 1;
	case CU_DEVICE_ATTRIBUTE_ECC_ENABLED:			return 1;
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:	return (int)device_pci_bus(phys);
	case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:		return 2619000;
	case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:	return 5120;
	case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:			return 52428800;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return 2048;
	case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT:		return 2;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:		return 1;
	case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT:	return 32;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:	return 9;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:	return 0;
	case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED:	return 1;
	case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED:	return 1;
	case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED:	return 1;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: return 233472;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: return 65536;
	case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:		return 1;
	case CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO: return 2;
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS:	return 1;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED:	return 1;
	case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: return 1;
	case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:		return 1;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return 232448;
	case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED:	return 1;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR:	return 32;
	case CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE:	return 32505856;
	case CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE:	return 134213632;
	case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: return 1024;
	case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH:		return 1;
	case CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT:		return 4;
	case CU_DEVICE_ATTRIBUTE_NUMA_ID:			return -1;
	case CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID:			return -1;
	/* Pools, VMM (fd export) and deferred arrays: pool.c, vmm.c, array.c */
	case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:
								return 1;
	case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:	return 1;
	case CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED: return 1;
	/*
	 * GPUDirect RDMA, as an H100's: cuMemAlloc memory is capable, VMM
	 * memory only when made so (gpuDirectRDMACapable; pointer.c).
	 */
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED:	return 1;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED:
								return 1;
	default:						return 0;
	}
}

CUresult
cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
	SIM_GATE();
	int phys;
	CUresult r = device_query(dev, pi, &phys);

	if (r != CUDA_SUCCESS)
		return r;
	if (attrib < 1 || attrib >= CU_DEVICE_ATTRIBUTE_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	*pi = attribute_value(attrib, phys);
	return CUDA_SUCCESS;
}
