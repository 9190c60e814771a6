/*
 * Virtual memory management: physical allocations (cuMemCreate, charged at
 * once), address reservations (cuMemAddressReserve, host address space,
 * free) and the mappings between them (cuMemMap, free). A physical
 * allocation is a memfd; a mapping maps it MAP_SHARED over its part of a
 * PROT_NONE reservation, so that every mapping of one allocation, in this
 * process or in one that imported it, reaches the same bytes.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptrmap.h"
#include "sim.h"

#define VMM_GRANULE	(2u << 20)	/* minimum and recommended */

/*
 * A physical allocation, alive while a handle or a mapping holds it (the
 * real driver frees it only then); its address is its handle. A freed
 * one's address is the next one's, as the real driver's handles, heap
 * pointers, may come back: a released handle names the next allocation.
 */
struct vmm_phys {
	int		fd;		/* the memfd */
	uint64_t	size;
	int		phys;
	uint64_t	charged;	/* 0 when imported: the creator's */
	int		share;		/* state_share_* index once exported or
					 * imported, else -1 */
	unsigned	handles;	/* create/import + retains - releases */
	unsigned	maps;
	CUmemAllocationProp prop;
	struct vmm_phys	*next_spare;
};

/* What a sim_alloc of kind SIM_MEM_VMM, one mapping, owns. */
struct vmm_map {
	struct vmm_phys	*phys;
	uint8_t		access[SIM_MAX_DEVICES];	/* CUmemAccess_flags by
							 * physical device */
};

struct vmm_range {
	uint64_t	base, size;
	struct vmm_range *next;
};

static struct ptrmap handles;	/* struct vmm_phys by address */
/* Under sim_lock, as every table here: a lock of its own would be one
 * more for the fork handlers to take (init.c). */
static struct vmm_phys *spare;	/* freed, for the next ones */
static struct ptrmap maps;	/* struct vmm_map by mapped address */
static struct vmm_range *ranges;

#define HANDLE(p)	((CUmemGenericAllocationHandle)(uintptr_t)(p))

/* A live handle: one not released as often as made and retained. */
static struct vmm_phys *
phys_get(CUmemGenericAllocationHandle h)
{
	struct vmm_phys *p = ptrmap_get(&handles, h);

	return p != NULL && p->handles > 0 ? p : NULL;
}

/* Another allocation of this process is the same shared memory. */
static int
share_used(const struct vmm_phys *p)
{
	struct vmm_phys *q;
	size_t pos = 0;

	while ((q = ptrmap_next(&handles, &pos, NULL)) != NULL)
		if (q != p && q->share == p->share)
			return 1;
	return 0;
}

/* p's address for the next allocation: a handle reused (see above). */
static void
phys_spare(struct vmm_phys *p)
{
	p->next_spare = spare;
	spare = p;
}

/* The newest spare, or a new one; zeroed. */
static struct vmm_phys *
phys_alloc(void)
{
	struct vmm_phys *p;

	if ((p = spare) != NULL)
		spare = p->next_spare;
	if (p == NULL)
		return calloc(1, sizeof(*p));
	memset(p, 0, sizeof(*p));
	return p;
}

/*
 * Free p once neither a handle nor a mapping holds it. Shared memory is
 * given back by the last holder of all processes (share.c).
 */
static void
phys_put(struct vmm_phys *p)
{
	if (p->handles > 0 || p->maps > 0)
		return;
	if (p->share >= 0) {
		if (!share_used(p))
			state_share_leave(p->share);
	} else if (p->charged != 0)
		state_uncharge(p->phys, p->charged);
	ptrmap_del(&handles, HANDLE(p));
	memfree_later(p->fd);	/* its pages, off this thread (memfree.c) */
	phys_spare(p);
}

/*
 * The device prop puts memory on. Host allocations (CUDA 12.2) are not
 * simulated, nor exports other than a POSIX file descriptor.
 */
static CUresult
prop_check(const CUmemAllocationProp *prop, int *phys)
{
	if (prop == NULL || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED)
		return CUDA_ERROR_INVALID_VALUE;
	if (prop->location.type == CU_MEM_LOCATION_TYPE_HOST ||
	    prop->location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	if ((*phys = device_phys(prop->location.id)) < 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if ((prop->requestedHandleTypes &
	    ~(unsigned)CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0)
		return CUDA_ERROR_NOT_SUPPORTED;
	return CUDA_SUCCESS;
}

CUresult
cuMemGetAllocationGranularity(size_t *granularity,
    const CUmemAllocationProp *prop, CUmemAllocationGranularity_flags option)
{
	SIM_GATE();
	int phys;
	CUresult r = sim_ready_out(granularity);

	if (r != CUDA_SUCCESS)
		return r;
	if (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
	    option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)
		return CUDA_ERROR_INVALID_VALUE;
	if ((r = prop_check(prop, &phys)) == CUDA_SUCCESS)
		*granularity = VMM_GRANULE;
	return r;
}

/* A new allocation record for the memfd fd, which it then owns. */
static struct vmm_phys *
phys_new(int fd, uint64_t size, int phys, const CUmemAllocationProp *prop)
{
	struct vmm_phys *p = phys_alloc();

	if (p == NULL)
		return NULL;
	p->fd = fd;
	p->size = size;
	p->phys = phys;
	p->share = -1;
	p->handles = 1;
	p->prop = *prop;
	/* The simulated devices have no compression: the real driver then
	 * quietly clears the hint. GPUDirect RDMA they have (device.c). */
	p->prop.allocFlags.compressionType = CU_MEM_ALLOCATION_COMP_NONE;
	return p;
}

int
vmm_rdma(const struct sim_alloc *a)
{
	const struct vmm_map *m = a->owner;

	return a->kind == SIM_MEM_VMM && m != NULL && m->phys != NULL &&
	    m->phys->prop.allocFlags.gpuDirectRDMACapable != 0;
}

/* Device capacity is charged here, at creation, not when mapped. */
CUresult
cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
    const CUmemAllocationProp *prop, unsigned long long flags)
{
	SIM_GATE();
	struct vmm_phys *p;
	int fd, phys;
	CUresult r = sim_ready_out(handle);

	if (r != CUDA_SUCCESS || (r = prop_check(prop, &phys)) != CUDA_SUCCESS)
		return r;
	if (flags != 0 || size == 0 || size % VMM_GRANULE != 0)
		return CUDA_ERROR_INVALID_VALUE;
	if ((fd = memfd_create("simcuda-vmm", MFD_CLOEXEC)) < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (ftruncate(fd, (off_t)size) < 0) {
		close(fd);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	sim_lock();
	r = CUDA_ERROR_OUT_OF_MEMORY;
	if ((p = phys_new(fd, size, phys, prop)) == NULL)
		goto out_close;
	if (state_charge(phys, size) < 0)
		goto out_free;
	p->charged = size;
	if (ptrmap_put(&handles, HANDLE(p), p) < 0)
		goto out_uncharge;
	sim_unlock();
	*handle = HANDLE(p);
	return CUDA_SUCCESS;
out_uncharge:
	state_uncharge(phys, size);
out_free:
	free(p);
out_close:
	sim_unlock();
	close(fd);
	return r;
}

/* The memory itself goes when no mapping of it is left either. */
CUresult
cuMemRelease(CUmemGenericAllocationHandle handle)
{
	SIM_GATE();
	struct vmm_phys *p;
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	if ((p = phys_get(handle)) != NULL) {
		p->handles--;
		phys_put(p);
	} else
		r = CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return r;
}

CUresult
cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
    CUmemGenericAllocationHandle handle)
{
	SIM_GATE();
	struct vmm_phys *p;
	CUresult r = sim_ready_out(prop);

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	if ((p = phys_get(handle)) != NULL)
		*prop = p->prop;
	else
		r = CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return r;
}

/* Host address space, PROT_NONE until mapped: a reservation costs no
 * device memory. */
static void *
range_map(uint64_t size, uint64_t align, uint64_t hint)
{
	const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
	uint8_t *p, *base;

	if (hint != 0 && hint % align == 0) {
		p = mmap((void *)(uintptr_t)hint, size, PROT_NONE,
		    flags | MAP_FIXED_NOREPLACE, -1, 0);
		if (p == (void *)(uintptr_t)hint)
			return p;
		if (p != MAP_FAILED)	/* a kernel that took it as a hint */
			munmap(p, size);
	}
	if (size > SIZE_MAX - align ||
	    (p = mmap(NULL, size + align, PROT_NONE, flags, -1, 0)) ==
	    MAP_FAILED)
		return NULL;
	base = (uint8_t *)(((uintptr_t)p + align - 1) / align * align);
	if (base != p)
		munmap(p, (size_t)(base - p));
	if (align - (uint64_t)(base - p) != 0)
		munmap(base + size, (size_t)(align - (uint64_t)(base - p)));
	return base;
}

/*
 * Size and hint a multiple of the host page size, alignment a power of
 * two (0: the granularity); the hint is taken when it is free.
 */
CUresult
cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
    CUdeviceptr addr, unsigned long long flags)
{
	SIM_GATE();
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), align;
	struct vmm_range *g;
	void *p;
	CUresult r = sim_ready_out(ptr);

	if (r != CUDA_SUCCESS)
		return r;
	if (flags != 0 || size == 0 || size % page != 0 || addr % page != 0 ||
	    (alignment & (alignment - 1)) != 0)
		return CUDA_ERROR_INVALID_VALUE;
	align = alignment == 0 ? VMM_GRANULE : alignment < page ? page :
	    alignment;
	if ((g = calloc(1, sizeof(*g))) == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if ((p = range_map(size, align, addr)) == NULL) {
		free(g);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	g->base = (uint64_t)(uintptr_t)p;
	g->size = size;
	sim_lock();
	g->next = ranges;
	ranges = g;
	sim_unlock();
	*ptr = g->base;
	return CUDA_SUCCESS;
}

/*
 * Exactly a reservation. One still mapped is refused: the documentation
 * does not say that freeing unmaps, and an unmap can free memory.
 */
CUresult
cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	SIM_GATE();
	struct vmm_range **gp, *g = NULL;
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	for (gp = &ranges; *gp != NULL; gp = &(*gp)->next)
		if ((*gp)->base == ptr && (*gp)->size == size)
			break;
	if (*gp == NULL || alloc_find_range(ptr, size) != NULL)
		r = CUDA_ERROR_INVALID_VALUE;
	else {
		g = *gp;
		*gp = g->next;
	}
	sim_unlock();
	if (g != NULL) {
		munmap((void *)(uintptr_t)g->base, g->size);
		free(g);
	}
	return r;
}

/* Whether [ptr, ptr + size) lies inside one reservation. */
static int
range_reserved(uint64_t ptr, uint64_t size)
{
	struct vmm_range *g;

	for (g = ranges; g != NULL; g = g->next)
		if (ptr >= g->base && ptr - g->base <= g->size &&
		    size <= g->size - (ptr - g->base))
			return 1;
	return 0;
}

/* Map p's bytes [offset, offset + size) at ptr. */
static CUresult
map_add(uint64_t ptr, uint64_t size, uint64_t offset, struct vmm_phys *p)
{
	struct sim_alloc *a;
	struct vmm_map *m;
	void *at = (void *)(uintptr_t)ptr;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if ((m = calloc(1, sizeof(*m))) == NULL)
		goto out_free;
	if (mmap(at, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
	    p->fd, (off_t)offset) == MAP_FAILED)
		goto out_free;
	m->phys = p;
	a->base = ptr;
	a->size = (size_t)size;
	a->kind = SIM_MEM_VMM;
	a->phys = p->phys;
	a->id = alloc_next_id();
	a->owner = m;
	if (ptrmap_put(&maps, ptr, m) < 0)
		goto out_unmap;
	if (alloc_insert(a) < 0) {
		ptrmap_del(&maps, ptr);
		goto out_unmap;
	}
	p->maps++;
	return CUDA_SUCCESS;
out_unmap:
	mmap(at, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
	    MAP_FIXED, -1, 0);
out_free:
	free(m);
	free(a);
	return CUDA_ERROR_OUT_OF_MEMORY;
}

/*
 * Maps cost no device memory. The range must be reserved and unmapped,
 * granularity-aligned; it starts inaccessible (cuMemSetAccess).
 */
CUresult
cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
    CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	SIM_GATE();
	struct vmm_phys *p;
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	r = CUDA_ERROR_INVALID_VALUE;
	if ((p = phys_get(handle)) == NULL || flags != 0 || size == 0 ||
	    ptr % VMM_GRANULE != 0 || size % VMM_GRANULE != 0 ||
	    offset % VMM_GRANULE != 0 || offset > p->size ||
	    size > p->size - offset || !range_reserved(ptr, size) ||
	    alloc_find_range(ptr, size) != NULL)
		goto out;
	r = map_add(ptr, size, offset, p);
out:
	sim_unlock();
	return r;
}

/* Whether [ptr, ptr + size) is whole mappings, end to end. */
static int
whole_maps(uint64_t ptr, uint64_t size)
{
	struct sim_alloc *a;
	uint64_t end;

	if (size == 0 || __builtin_add_overflow(ptr, size, &end))
		return 0;
	while (ptr < end) {
		if ((a = alloc_at(ptr)) == NULL || a->kind != SIM_MEM_VMM ||
		    a->size > end - ptr)
			return 0;
		ptr += a->size;
	}
	return 1;
}

/* Back to reserved; the memory goes if nothing holds it any longer. */
static void
map_remove(struct sim_alloc *a)
{
	struct vmm_map *m = a->owner;
	struct vmm_phys *p = m->phys;

	mmap((void *)(uintptr_t)a->base, a->size, PROT_NONE, MAP_PRIVATE |
	    MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
	ptrmap_del(&maps, a->base);
	free(m);
	alloc_destroy(a);
	p->maps--;
	phys_put(p);
}

/* Not a sub-range of a mapping: whole ones only (the documentation). */
CUresult
cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	SIM_GATE();
	struct sim_alloc *a;
	uint64_t end = ptr + size;
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	if (!whole_maps(ptr, size))
		r = CUDA_ERROR_INVALID_VALUE;
	else
		while (ptr < end) {
			a = alloc_at(ptr);
			ptr += a->size;
			map_remove(a);
		}
	sim_unlock();
	return r;
}

/* The physical device a location names, or an error. */
static CUresult
location_phys(const CUmemLocation *loc, int *phys)
{
	if (loc == NULL || loc->type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	*phys = device_phys(loc->id);
	return *phys >= 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

/*
 * Recorded per mapping and device; copies by a device without access
 * fail (copy.c). Costs nothing.
 */
CUresult
cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
    size_t count)
{
	SIM_GATE();
	struct sim_alloc *a;
	struct vmm_map *m;
	uint64_t end = ptr + size;
	size_t i;
	int phys;
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	if (desc == NULL || count == 0)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < count; i++) {
		r = location_phys(&desc[i].location, &phys);
		if (r != CUDA_SUCCESS)
			return r;
		if (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
		    desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
		    desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
			return CUDA_ERROR_INVALID_VALUE;
	}
	sim_lock();
	if (!whole_maps(ptr, size))
		r = CUDA_ERROR_INVALID_VALUE;
	else
		for (; ptr < end; ptr += a->size) {
			a = alloc_at(ptr);
			m = a->owner;
			for (i = 0; i < count; i++)
				m->access[device_phys(desc[i].location.id)] =
				    (uint8_t)desc[i].flags;
		}
	sim_unlock();
	return r;
}

CUresult
cuMemGetAccess(unsigned long long *flags, const CUmemLocation *location,
    CUdeviceptr ptr)
{
	SIM_GATE();
	struct sim_alloc *a;
	int phys;
	CUresult r = sim_ready_out(flags);

	if (r != CUDA_SUCCESS ||
	    (r = location_phys(location, &phys)) != CUDA_SUCCESS)
		return r;
	sim_lock();
	if ((a = alloc_find(ptr)) != NULL && a->kind == SIM_MEM_VMM)
		*flags = ((struct vmm_map *)a->owner)->access[phys];
	else
		r = CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return r;
}

unsigned
vmm_access(const struct sim_alloc *a, int phys)
{
	return ((const struct vmm_map *)a->owner)->access[phys];
}

/* Another reference to the handle of the memory mapped at addr. */
CUresult
cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
	SIM_GATE();
	struct sim_alloc *a;
	struct vmm_phys *p;
	CUresult r = sim_ready_out(handle);

	if (r != CUDA_SUCCESS)
		return r;
	sim_lock();
	if ((a = alloc_find((uint64_t)(uintptr_t)addr)) != NULL &&
	    a->kind == SIM_MEM_VMM) {
		p = ((struct vmm_map *)a->owner)->phys;
		p->handles++;
		*handle = HANDLE(p);
	} else
		r = CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return r;
}

/*
 * A POSIX file descriptor: a dup of the memfd, the caller's to close and
 * to pass on (SCM_RIGHTS, inheritance). The charge stays the creator's
 * for as long as any process holds the memory (share.c).
 */
CUresult
cuMemExportToShareableHandle(void *shareableHandle,
    CUmemGenericAllocationHandle handle, CUmemAllocationHandleType handleType,
    unsigned long long flags)
{
	SIM_GATE();
	struct vmm_phys *p;
	struct stat st;
	int fd;
	CUresult r = sim_ready_out(shareableHandle);

	if (r != CUDA_SUCCESS)
		return r;
	if (flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
		return CUDA_ERROR_NOT_SUPPORTED;
	sim_lock();
	r = CUDA_ERROR_INVALID_VALUE;
	if ((p = phys_get(handle)) == NULL || !(p->prop.requestedHandleTypes &
	    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
		goto out;
	r = CUDA_ERROR_OUT_OF_MEMORY;
	if (p->share < 0 && (fstat(p->fd, &st) < 0 ||
	    (p->share = state_share_open((uint64_t)st.st_dev,
	    (uint64_t)st.st_ino, p->phys, p->charged)) < 0))
		goto out;
	if ((fd = dup(p->fd)) < 0)
		goto out;
	*(int *)shareableHandle = fd;
	r = CUDA_SUCCESS;
out:
	sim_unlock();
	return r;
}

/*
 * Another handle to memory exported by any process of this machine. The
 * importer is not charged; while it holds the memory, the memory stays
 * charged even when its creator lets go or dies.
 */
CUresult
cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle,
    void *osHandle, CUmemAllocationHandleType shHandleType)
{
	SIM_GATE();
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE },
	};
	struct vmm_phys *p = NULL;
	struct stat st;
	uint64_t bytes;
	int fd = -1, share, phys;
	CUresult r = sim_ready_out(handle);

	if (r != CUDA_SUCCESS)
		return r;
	if (shHandleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (fstat((int)(intptr_t)osHandle, &st) < 0)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	share = state_share_join((uint64_t)st.st_dev, (uint64_t)st.st_ino,
	    &phys, &bytes);
	r = share == -1 ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_OUT_OF_MEMORY;
	if (share < 0)
		goto out;
	r = CUDA_ERROR_INVALID_VALUE;
	if ((uint64_t)st.st_size != bytes)
		goto out_leave;
	/* Memory of a device this process does not see. */
	r = CUDA_ERROR_NOT_SUPPORTED;
	if ((prop.location.id = device_ordinal(phys)) < 0)
		goto out_leave;
	r = CUDA_ERROR_OUT_OF_MEMORY;
	if ((fd = fcntl((int)(intptr_t)osHandle, F_DUPFD_CLOEXEC, 0)) < 0 ||
	    (p = phys_new(fd, bytes, phys, &prop)) == NULL)
		goto out_leave;
	p->share = share;
	if (ptrmap_put(&handles, HANDLE(p), p) < 0)
		goto out_leave;
	sim_unlock();
	*handle = HANDLE(p);
	return CUDA_SUCCESS;
out_leave:
	free(p);
	if (fd >= 0)
		close(fd);
	/* Unless another handle of this process holds it already. */
	{
		struct vmm_phys q = { .share = share };

		if (!share_used(&q))
			state_share_leave(share);
	}
out:
	sim_unlock();
	return r;
}

/*
 * Sparse arrays and multicast objects are not simulated. The handles a
 * call would map or bind are checked first, as the real driver checks
 * them: an unknown or released one is CUDA_ERROR_INVALID_VALUE, as for
 * cuMemMap (the documentation's CUDA_ERROR_INVALID_HANDLE is for the
 * array and the stream); then the call is CUDA_ERROR_NOT_SUPPORTED.
 */
static CUresult
map_array(const CUarrayMapInfo *list, unsigned int count)
{
	unsigned int i;
	CUresult r = sim_ready();

	if (r != CUDA_SUCCESS)
		return r;
	if (list == NULL || count == 0)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	for (i = 0; i < count && r == CUDA_SUCCESS; i++)
		if (list[i].memOperationType == CU_MEM_OPERATION_TYPE_MAP &&
		    (list[i].memHandleType != CU_MEM_HANDLE_TYPE_GENERIC ||
		    phys_get(list[i].memHandle.memHandle) == NULL))
			r = CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return r != CUDA_SUCCESS ? r : CUDA_ERROR_NOT_SUPPORTED;
}

CUresult
cuMemMapArrayAsync(CUarrayMapInfo *mapInfoList, unsigned int count,
    CUstream hStream)
{
	SIM_GATE();
	(void)hStream;
	return map_array(mapInfoList, count);
}

CUresult
cuMemMapArrayAsync_ptsz(CUarrayMapInfo *mapInfoList, unsigned int count,
    CUstream hStream)
{
	SIM_GATE();
	(void)hStream;
	return map_array(mapInfoList, count);
}

/* The multicast object is not looked at: no call makes one here. */
CUresult
cuMulticastBindMem(CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
    CUmemGenericAllocationHandle memHandle, size_t memOffset, size_t size,
    unsigned long long flags)
{
	SIM_GATE();
	CUresult r = sim_ready();

	(void)mcHandle, (void)mcOffset, (void)memOffset, (void)size;
	if (r != CUDA_SUCCESS)
		return r;
	if (flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	if (phys_get(memHandle) == NULL)
		r = CUDA_ERROR_INVALID_VALUE;
	sim_unlock();
	return r != CUDA_SUCCESS ? r : CUDA_ERROR_NOT_SUPPORTED;
}

/*
 * In a forked child: the mappings, reservations and memfds are copies of
 * the parent's; the charges and shares stay the parent's.
 */
void
vmm_forget(void)
{
	struct vmm_range *g, *next;
	struct vmm_phys *p;
	size_t pos = 0;
	void *m;

	while ((m = ptrmap_next(&maps, &pos, NULL)) != NULL)
		free(m);
	ptrmap_free(&maps);
	pos = 0;
	while ((p = ptrmap_next(&handles, &pos, NULL)) != NULL) {
		close(p->fd);
		free(p);
	}
	ptrmap_free(&handles);
	for (g = ranges; g != NULL; g = next) {
		next = g->next;
		munmap((void *)(uintptr_t)g->base, g->size);
		free(g);
	}
	ranges = NULL;
}
