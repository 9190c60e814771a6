/*
 * Checks of the simulated driver's virtual memory management
 * (tests/simcuda/vmm.c), linked against it: physical allocations,
 * reservations, mappings and access, what they charge to the device seen
 * from this process and from another one of the same SIMCUDA_STATE, and
 * memory exported to another process, which stays charged while anyone
 * holds it. Prints one line per failed check and exits 1 if any failed,
 * else 0.
 *
 *   sim_vmm_linked           run every check (uses $SIMCUDA_STATE, or a
 *                            private name; sets SIMCUDA_DEVICES=4Gi,2Gi)
 *   sim_vmm_linked free DEV  print the free bytes of device DEV
 * The other modes are the children the checks start.
 */
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "child.h"
#include "lookup.h"
#include "machine.h"
#include "memcheck.h"

#define FD_HANDLE	CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR

static const struct lookup_want lookups[] = {
	{ "cuMemCreate", 10020, 0, (void *)cuMemCreate },
	{ "cuMemRetainAllocationHandle", 12000, 0,
	    (void *)cuMemRetainAllocationHandle },
	{ "cuMemImportFromShareableHandle", 12000, 0,
	    (void *)cuMemImportFromShareableHandle },
	/* Too new for the version asked for. */
	{ "cuMemCreate", 10010, 0, NULL },
	{ "cuMemRetainAllocationHandle", 10020, 0, NULL },
};

static const CUdevice_attribute supported[] = {
	CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
	CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
};

static void
check_vmm_errors(void)
{
	CUmemAllocationProp p = prop_of(0, 0);
	CUmemGenericAllocationHandle h;
	size_t g = 0;

	OK(cuMemGetAllocationGranularity(&g, &p,
	    CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	CHECK(g == 2 * MiB, "minimum granularity %zu", g);
	g = 0;
	OK(cuMemGetAllocationGranularity(&g, &p,
	    CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
	CHECK(g == 2 * MiB, "recommended granularity %zu", g);
	EXPECT(cuMemGetAllocationGranularity(&g, &p,
	    (CUmemAllocationGranularity_flags)7), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemGetAllocationGranularity(&g, NULL,
	    CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_ERROR_INVALID_VALUE);
	p.location.id = 5;
	EXPECT(cuMemCreate(&h, 2 * MiB, &p, 0), CUDA_ERROR_INVALID_DEVICE);
	p = prop_of(0, 0);
	EXPECT(cuMemCreate(&h, 3 * MiB, &p, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemCreate(&h, 0, &p, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemCreate(&h, 2 * MiB, &p, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemCreate(&h, 6 * GiB, &p, 0), CUDA_ERROR_OUT_OF_MEMORY);
	p.type = CU_MEM_ALLOCATION_TYPE_MANAGED;
	EXPECT(cuMemCreate(&h, 2 * MiB, &p, 0), CUDA_ERROR_INVALID_VALUE);
	p = prop_of(0, CU_MEM_HANDLE_TYPE_FABRIC);
	EXPECT(cuMemCreate(&h, 2 * MiB, &p, 0), CUDA_ERROR_NOT_SUPPORTED);
	EXPECT(cuMemRelease(12345), CUDA_ERROR_INVALID_VALUE);
}

/* A 64 MiB allocation mapped twice, at va and va + 64 MiB. */
struct twice {
	CUmemGenericAllocationHandle h;
	CUdeviceptr	va;
	uint64_t	before;		/* the free bytes without it */
	unsigned char	in[4096];	/* written at va + 1 MiB */
};

/* Created: charged at once, to the byte; reserved and mapped: no more. */
static void
vmm_map_twice(struct twice *t)
{
	CUmemAllocationProp p = prop_of(0, 0), got;
	CUdeviceptr va;

	t->before = free_bytes();
	OK(cuMemCreate(&t->h, 64 * MiB, &p, 0));
	CHECK(peer_free(0) == t->before - 64 * MiB, "cuMemCreate charged %llu",
	    (unsigned long long)(t->before - peer_free(0)));
	OK(cuMemGetAllocationPropertiesFromHandle(&got, t->h));
	CHECK(got.type == CU_MEM_ALLOCATION_TYPE_PINNED &&
	    got.location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
	    got.location.id == 0, "properties");

	EXPECT(cuMemAddressReserve(&va, 1000, 0, 0, 0),
	    CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemAddressReserve(&va, 2 * MiB, 3 * MiB, 0, 0),
	    CUDA_ERROR_INVALID_VALUE);
	t->va = va = must_reserve(128 * MiB);
	CHECK(va % (2 * MiB) == 0, "reservation %#llx not aligned", va);
	CHECK(free_bytes() == t->before - 64 * MiB,
	    "a reservation was charged");
	EXPECT(cuMemMap(va + 4096, 2 * MiB, 0, t->h, 0),
	    CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemMap(va, 128 * MiB, 0, t->h, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemMap(va, 2 * MiB, 2 * MiB + 4096, t->h, 0),
	    CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemMap(va + 96 * MiB, 64 * MiB, 0, t->h, 0),
	    CUDA_ERROR_INVALID_VALUE);	/* past the reservation */
	OK(cuMemMap(va, 64 * MiB, 0, t->h, 0));
	EXPECT(cuMemMap(va + 62 * MiB, 2 * MiB, 0, t->h, 0),
	    CUDA_ERROR_INVALID_VALUE);	/* already mapped */
	OK(cuMemMap(va + 64 * MiB, 64 * MiB, 0, t->h, 0));
	CHECK(free_bytes() == t->before - 64 * MiB, "a mapping was charged");
}

/*
 * No access before cuMemSetAccess, which charges nothing; then bytes
 * written through one mapping are the other's.
 */
static void
check_vmm_access(struct twice *t)
{
	CUmemLocation loc = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 };
	unsigned long long access = 9;
	unsigned char out[8192];
	CUdeviceptr va = t->va, base = 0;
	size_t size = 0, i;
	unsigned type = 0, ipc = 9;
	CUipcMemHandle handle;
	int ord = -1;

	for (i = 0; i < sizeof(t->in); i++)
		t->in[i] = (unsigned char)(i * 7 + 5);
	EXPECT(cuMemcpyHtoD_v2(va, t->in, sizeof(t->in)),
	    CUDA_ERROR_INVALID_VALUE);
	OK(cuMemGetAccess(&access, &loc, va));
	CHECK(access == CU_MEM_ACCESS_FLAGS_PROT_NONE, "access %llu", access);
	EXPECT(cuMemSetAccess(va, 32 * MiB, &(CUmemAccessDesc){ .location =
	    loc, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE }, 1),
	    CUDA_ERROR_INVALID_VALUE);	/* part of a mapping */
	set_access(va, 64 * MiB, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	set_access(va + 64 * MiB, 64 * MiB, 0, CU_MEM_ACCESS_FLAGS_PROT_READ);
	CHECK(free_bytes() == t->before - 64 * MiB, "cuMemSetAccess charged");
	OK(cuMemGetAccess(&access, &loc, va + 100));
	CHECK(access == CU_MEM_ACCESS_FLAGS_PROT_READWRITE, "access %llu",
	    access);

	OK(cuMemcpyHtoD_v2(va + 1 * MiB, t->in, sizeof(t->in)));
	memset(out, 0, sizeof(out));
	OK(cuMemcpyDtoH_v2(out, va + 65 * MiB, sizeof(t->in)));
	CHECK(memcmp(t->in, out, sizeof(t->in)) == 0, "the mappings differ");
	EXPECT(cuMemcpyHtoD_v2(va + 65 * MiB, t->in, 1),
	    CUDA_ERROR_INVALID_VALUE);	/* read-only */
	OK(cuMemsetD8_v2(va + 64 * MiB - 4096, 0x3c, 4096));
	/* One copy across both mappings, end to end. */
	OK(cuMemcpyDtoH_v2(out, va + 64 * MiB - 4096, sizeof(out)));
	CHECK(out[0] == 0x3c && out[4095] == 0x3c && out[4096] == 0,
	    "copy across mappings");
	OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
	    va + 10));
	CHECK(type == CU_MEMORYTYPE_DEVICE, "memory type %u", type);
	OK(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
	    va + 10));
	CHECK(ord == 0, "device ordinal %d", ord);
	/* VMM memory has no legacy IPC handle, on the real driver too. */
	OK(cuPointerGetAttribute(&ipc,
	    CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, va + 10));
	CHECK(ipc == 0, "IS_LEGACY_CUDA_IPC_CAPABLE %u", ipc);
	EXPECT(cuIpcGetMemHandle(&handle, va), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemGetAddressRange_v2(&base, &size, va + 70 * MiB));
	CHECK(base == va + 64 * MiB && size == 64 * MiB, "range %#llx+%zu",
	    base, size);
}

/*
 * A retained handle is the same handle and needs its release. Released
 * while mapped: still charged; the last unmap frees it.
 */
static void
check_vmm_release(struct twice *t)
{
	CUmemGenericAllocationHandle h = t->h, h2;
	CUdeviceptr va = t->va;
	uint64_t before = t->before;
	unsigned char out[16];

	OK(cuMemRetainAllocationHandle(&h2, (void *)(uintptr_t)(va + 5)));
	CHECK(h2 == h, "retained another handle");
	OK(cuMemRelease(h2));

	OK(cuMemRelease(h));
	EXPECT(cuMemRelease(h), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemMap(va, 2 * MiB, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
	CHECK(peer_free(0) == before - 64 * MiB,
	    "released while mapped: charged %llu",
	    (unsigned long long)(before - peer_free(0)));
	OK(cuMemcpyDtoH_v2(out, va + 1 * MiB, 16));
	CHECK(memcmp(t->in, out, 16) == 0, "released memory changed");
	EXPECT(cuMemUnmap(va, 32 * MiB), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemAddressFree(va, 128 * MiB), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemUnmap(va, 64 * MiB));
	CHECK(peer_free(0) == before - 64 * MiB, "one mapping left: %llu",
	    (unsigned long long)(before - peer_free(0)));
	EXPECT(cuMemcpyDtoH_v2(out, va, 16), CUDA_ERROR_INVALID_VALUE);
	/* Retaining through the remaining mapping brings the handle back. */
	OK(cuMemRetainAllocationHandle(&h2,
	    (void *)(uintptr_t)(va + 65 * MiB)));
	CHECK(h2 == h, "retained another handle");
	OK(cuMemUnmap(va + 64 * MiB, 64 * MiB));
	CHECK(peer_free(0) == before - 64 * MiB, "unmapped but retained");
	OK(cuMemRelease(h2));
	CHECK(peer_free(0) == before, "unmapped and released: charged %llu",
	    (unsigned long long)(before - peer_free(0)));
	EXPECT(cuMemAddressFree(va, 64 * MiB), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemAddressFree(va, 128 * MiB));
	EXPECT(cuMemAddressFree(va, 128 * MiB), CUDA_ERROR_INVALID_VALUE);
}

/* Unmapping two mappings at once; a hint is taken when free. */
static void
check_vmm_hint(uint64_t before)
{
	CUmemAllocationProp p = prop_of(0, 0);
	CUmemGenericAllocationHandle h;
	CUdeviceptr va, base = 0;

	OK(cuMemCreate(&h, 4 * MiB, &p, 0));
	va = must_reserve(8 * MiB);
	OK(cuMemAddressFree(va, 8 * MiB));
	OK(cuMemAddressReserve(&base, 8 * MiB, 0, va, 0));
	CHECK(base == va, "the free hint %#llx was not taken: %#llx", va,
	    base);
	OK(cuMemMap(va, 4 * MiB, 0, h, 0));
	OK(cuMemMap(va + 4 * MiB, 4 * MiB, 0, h, 0));
	OK(cuMemRelease(h));
	OK(cuMemUnmap(va, 8 * MiB));
	CHECK(free_bytes() == before, "memory kept after unmapping");
	OK(cuMemAddressFree(va, 8 * MiB));
}

/* Send fd over the socket sock (SCM_RIGHTS). */
static int
send_fd(int sock, int fd)
{
	char byte = 'f', cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
	    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;

	memset(cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int
recv_fd(int sock)
{
	char byte, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
	    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1 || (cm = CMSG_FIRSTHDR(&msg)) == NULL ||
	    cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* Import fd, map it at a new reservation readable and writable. */
static CUdeviceptr
import_map(int fd, size_t size, CUmemGenericAllocationHandle *h)
{
	CUdeviceptr va;

	OK(cuMemImportFromShareableHandle(h, (void *)(intptr_t)fd,
	    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
	va = must_reserve(size);
	OK(cuMemMap(va, size, 0, *h, 0));
	set_access(va, size, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	return va;
}

/* Only what was created exportable exports; descriptor 0 is no export. */
static void
check_export_errors(void)
{
	CUmemAllocationProp plain = prop_of(0, 0);
	CUmemGenericAllocationHandle h;
	int fd = -1;

	OK(cuMemCreate(&h, 2 * MiB, &plain, 0));
	EXPECT(cuMemExportToShareableHandle(&fd, h,
	    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
	    CUDA_ERROR_INVALID_VALUE);	/* not requested at creation */
	OK(cuMemRelease(h));
	EXPECT(cuMemImportFromShareableHandle(&h, (void *)(intptr_t)0,
	    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_ERROR_INVALID_VALUE);
}

/*
 * This process exports, a child imports: the child is not charged, and
 * the memory stays charged while the child holds it after this process
 * let go.
 */
static void
check_export(uint64_t before)
{
	CUmemAllocationProp p = prop_of(0, FD_HANDLE);
	CUmemGenericAllocationHandle h, h2;
	uint64_t charged;
	char fdarg[16];
	char *imp[] = { program_invocation_short_name, "import", fdarg, NULL };
	unsigned char b[4] = { 0 };
	CUdeviceptr va;
	int fd = -1, in = -1, out = -1;
	pid_t pid;

	OK(cuMemCreate(&h, 32 * MiB, &p, 0));
	va = must_reserve(32 * MiB);
	OK(cuMemMap(va, 32 * MiB, 0, h, 0));
	set_access(va, 32 * MiB, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	OK(cuMemsetD8_v2(va, 0x5a, 4096));
	OK(cuMemExportToShareableHandle(&fd, h,
	    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
	charged = free_bytes();
	CHECK(before - charged == 32 * MiB, "exported: charged %llu",
	    (unsigned long long)(before - charged));

	/* Imported here too: another handle, no charge; the last of the two
	 * handles of this process returns it. */
	OK(cuMemImportFromShareableHandle(&h2, (void *)(intptr_t)fd,
	    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
	CHECK(free_bytes() == charged, "importing here charged again");

	snprintf(fdarg, sizeof(fdarg), "%d", fd);
	pid = spawn(imp, NULL, &in, &out);
	CHECK(read_char(out) == 'i', "the importing child failed");
	CHECK(peer_free(0) == charged, "the importer was charged: %llu",
	    (unsigned long long)(charged - peer_free(0)));
	OK(cuMemcpyDtoH_v2(b, va + 4096, sizeof(b)));
	CHECK(b[0] == 0xa5 && b[3] == 0xa5, "the importer's bytes: %#x", b[0]);
	close(fd);
	unmap_release(va, 32 * MiB, h);
	OK(cuMemRelease(h2));
	CHECK(free_bytes() == charged, "freed while another process holds it");
	CHECK(write(in, "r", 1) == 1 && read_char(out) == 'r',
	    "the importing child did not let go");
	CHECK(free_bytes() == before, "not freed by its last holder: %llu",
	    (unsigned long long)(before - free_bytes()));
	close(in);
	close(out);
	CHECK(wait_status(pid) == 0, "the importing child failed");
}

/*
 * A child exports and is killed while this process holds the memory: it
 * stays charged until this process lets go.
 */
static void
check_exporter_killed(uint64_t before)
{
	CUmemGenericAllocationHandle h;
	uint64_t charged;
	char fdarg[16];
	char *exp[] = { program_invocation_short_name, "export", fdarg, NULL };
	unsigned char b[4] = { 0 };
	CUdeviceptr va2;
	int fd2, out = -1, sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
		CHECK(0, "socketpair");
		return;
	}
	snprintf(fdarg, sizeof(fdarg), "%d", sv[1]);
	pid = spawn(exp, NULL, NULL, &out);
	close(sv[1]);
	fd2 = recv_fd(sv[0]);
	close(sv[0]);
	CHECK(fd2 >= 0 && read_char(out) == 'e', "the exporting child failed");
	charged = free_bytes();	/* its 16 MiB and the 32 exported */
	CHECK(before - charged == 48 * MiB, "exporter holds %llu",
	    (unsigned long long)(before - charged));
	va2 = import_map(fd2, 32 * MiB, &h);
	close(fd2);
	CHECK(free_bytes() == charged, "importing charged");
	OK(cuMemcpyDtoH_v2(b, va2, sizeof(b)));
	CHECK(b[0] == 0x77, "the exporter's bytes: %#x", b[0]);
	kill(pid, SIGKILL);
	CHECK(wait_free(before - 32 * MiB), "killed exporter: charged %llu",
	    (unsigned long long)(before - free_bytes()));
	CHECK(wait_status(pid) == 128 + SIGKILL, "the exporter was not killed");
	close(out);
	CHECK(peer_free(0) == before - 32 * MiB, "held memory of a dead "
	    "exporter: charged %llu", (unsigned long long)(before -
	    peer_free(0)));
	OK(cuMemcpyDtoH_v2(b, va2, sizeof(b)));
	CHECK(b[0] == 0x77, "memory of a dead exporter changed");
	unmap_release(va2, 32 * MiB, h);
	CHECK(peer_free(0) == before, "its last holder let go: charged %llu",
	    (unsigned long long)(before - peer_free(0)));
}

/* Child: import fd, write 0xa5 at 4096, say "i"; on "r" let go, say "r". */
static int
child_import(const char *fdarg)
{
	CUmemGenericAllocationHandle h;
	uint64_t before;
	unsigned char b[4];
	CUdeviceptr va;
	CUcontext c;
	int fd = (int)strtol(fdarg, NULL, 10);

	OK(cuInit(0));
	OK(cuDevicePrimaryCtxRetain(&c, 0));
	OK(cuCtxPushCurrent_v2(c));
	before = free_bytes();
	va = import_map(fd, 32 * MiB, &h);
	close(fd);
	CHECK(free_bytes() == before, "import charged the importer");
	OK(cuMemcpyDtoH_v2(b, va, sizeof(b)));
	CHECK(b[0] == 0x5a && b[3] == 0x5a, "exported bytes %#x", b[0]);
	OK(cuMemsetD8_v2(va + 4096, 0xa5, 4));
	if (write(STDOUT_FILENO, "i", 1) != 1 || read_char(STDIN_FILENO) != 'r')
		return 1;
	unmap_release(va, 32 * MiB, h);
	if (write(STDOUT_FILENO, "r", 1) != 1)
		return 1;
	read_char(STDIN_FILENO);
	return failures != 0;
}

/* Child: hold 16 MiB and 32 MiB exported (0x77), send the fd, wait. */
static int
child_export(const char *sockarg)
{
	CUmemAllocationProp p = prop_of(0, FD_HANDLE);
	CUmemGenericAllocationHandle h;
	CUdeviceptr d, va;
	CUcontext c;
	int fd, sock = (int)strtol(sockarg, NULL, 10);

	if (cuInit(0) != CUDA_SUCCESS || cuCtxCreate_v2(&c, 0, 0) !=
	    CUDA_SUCCESS || cuMemAlloc_v2(&d, 16 * MiB) != CUDA_SUCCESS ||
	    cuMemCreate(&h, 32 * MiB, &p, 0) != CUDA_SUCCESS ||
	    cuMemAddressReserve(&va, 32 * MiB, 0, 0, 0) != CUDA_SUCCESS ||
	    cuMemMap(va, 32 * MiB, 0, h, 0) != CUDA_SUCCESS)
		return 1;
	set_access(va, 32 * MiB, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	if (cuMemsetD8_v2(va, 0x77, 4096) != CUDA_SUCCESS ||
	    cuMemExportToShareableHandle(&fd, h,
	    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) != CUDA_SUCCESS ||
	    send_fd(sock, fd) < 0 || write(STDOUT_FILENO, "e", 1) != 1)
		return 1;
	for (;;)
		pause();
}

static void
check_vmm(CUstream s)
{
	struct twice t;
	uint64_t before;

	(void)s;
	check_lookups(lookups, sizeof(lookups) / sizeof(lookups[0]));
	check_supported(supported, sizeof(supported) / sizeof(supported[0]));
	check_vmm_errors();
	vmm_map_twice(&t);
	check_vmm_access(&t);
	check_vmm_release(&t);
	check_vmm_hint(t.before);
	before = free_bytes();
	check_export_errors();
	check_export(before);
	check_exporter_killed(before);
}

int
main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "import") == 0)
		return child_import(argv[2]);
	if (argc > 2 && strcmp(argv[1], "export") == 0)
		return child_export(argv[2]);
	return mem_main(argc, argv, "simvmm", check_vmm);
}
