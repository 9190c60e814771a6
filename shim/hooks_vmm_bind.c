/*
 * VMM memory the driver binds where the shim does not follow (issue 21): a
 * sparse array's tiles (cuMemMapArrayAsync) and a multicast object
 * (cuMulticastBindMem). The program's virtual handles (vmm_virt.h) are
 * turned into the driver's, and their allocations pinned to the device:
 * the copy engine could neither undo such a binding nor make it again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "activity.h"
#include "hooks.h"
#include "hooks_enter.h"
#include "real.h"
#include "vmm_virt.h"

#define MAP_LIST_STACK	16	/* entries translated without malloc */

typedef CUresult map_array_fn(CUarrayMapInfo *, unsigned int, CUstream);

/* One cuMemMapArrayAsync: the real_cu field to call, and its arguments. */
struct map_call {
	map_array_fn	*const *fn;
	CUarrayMapInfo	*prog;		/* the program's list */
	CUarrayMapInfo	*list;		/* the driver's: prog, buf or malloc'd */
	unsigned int	 count;
	CUstream	 stream;
	int		 called;	/* the driver was given the list */
	CUarrayMapInfo	 buf[MAP_LIST_STACK];
};

/* An entry naming one of the shim's handles. */
static int
map_virt(const CUarrayMapInfo *m)
{
	return m->memHandleType == CU_MEM_HANDLE_TYPE_GENERIC &&
	    vmm_virt_is(m->memHandle.memHandle);
}

static void
map_list_free(struct map_call *c)
{
	if (c->list != c->prog && c->list != c->buf)
		free(c->list);
	c->list = c->prog;
}

/*
 * The list the driver is given: the program's own when it names none of
 * the shim's handles (it is not written to), else a copy with the
 * driver's handles. A virtual handle that is gone is refused as the
 * driver refuses a released one.
 */
static CUresult
map_list_real(struct map_call *c)
{
	CUmemGenericAllocationHandle real;
	unsigned int i;

	c->list = c->prog;
	for (i = 0; c->prog != NULL && i < c->count; i++)
		if (map_virt(&c->prog[i]))
			break;
	if (c->prog == NULL || i == c->count)
		return CUDA_SUCCESS;
	if (c->count <= MAP_LIST_STACK)
		c->list = c->buf;
	else if ((c->list = calloc(c->count, sizeof(*c->list))) == NULL) {
		c->list = c->prog;
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	memcpy(c->list, c->prog, c->count * sizeof(*c->list));
	for (; i < c->count; i++) {
		if (!map_virt(&c->prog[i]))
			continue;
		if ((real = vmm_virt_real(c->prog[i].memHandle.memHandle)) ==
		    0) {
			map_list_free(c);
			return CUDA_ERROR_INVALID_VALUE;
		}
		c->list[i].memHandle.memHandle = real;
	}
	return CUDA_SUCCESS;
}

static CUresult
map_call_run(struct map_call *c)
{
	CUresult r;

	if ((r = map_list_real(c)) != CUDA_SUCCESS)
		return r;
	c->called = 1;
	r = *c->fn != NULL ? (*c->fn)(c->list, c->count, c->stream) :
	    real_missing("cuMemMapArrayAsync");
	map_list_free(c);
	return r;
}

/*
 * Pinned whatever the driver answered, once it was given the handles:
 * its documentation promises no list mapped all or nothing, and an
 * asynchronous map may fail after its call has returned. The cost of a
 * wrong guess is memory left on the device, not tiles bound to memory
 * that is gone.
 */
static void
map_pin(const struct map_call *c)
{
	unsigned int i;

	for (i = 0; c->prog != NULL && i < c->count; i++)
		if (map_virt(&c->prog[i]))
			vmm_virt_pin(c->prog[i].memHandle.memHandle);
}

static CUresult
map_array(map_array_fn *const *fn, CUarrayMapInfo *list, unsigned int count,
    CUstream stream)
{
	struct map_call c = { .fn = fn, .prog = list, .count = count,
	    .stream = stream };
	struct gf_activity *g;
	CUresult r;

	if (!hook_enter())
		return map_call_run(&c);
	g = activity_enter();
	r = map_call_run(&c);
	if (c.called)
		map_pin(&c);
	activity_leave(g);
	hook_leave();
	return r;
}

CUresult
cuMemMapArrayAsync(CUarrayMapInfo *mapInfoList, unsigned int count,
    CUstream hStream)
{
	return map_array(&real_cu.cuMemMapArrayAsync, mapInfoList, count,
	    hStream);
}

CUresult
cuMemMapArrayAsync_ptsz(CUarrayMapInfo *mapInfoList, unsigned int count,
    CUstream hStream)
{
	return map_array(&real_cu.cuMemMapArrayAsync_ptsz, mapInfoList, count,
	    hStream);
}

/* The multicast object is the driver's (cuMulticastCreate): as it is. */
CUresult
cuMulticastBindMem(CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
    CUmemGenericAllocationHandle memHandle, size_t memOffset, size_t size,
    unsigned long long flags)
{
	CUmemGenericAllocationHandle real;
	struct gf_activity *g;
	CUresult r;

	if (!hook_enter())
		return REAL_CALL(cuMulticastBindMem, mcHandle, mcOffset,
		    vmm_virt_real(memHandle), memOffset, size, flags);
	g = activity_enter();
	if ((real = vmm_virt_real(memHandle)) == 0 && memHandle != 0)
		r = CUDA_ERROR_INVALID_VALUE;
	else {
		r = REAL_CALL(cuMulticastBindMem, mcHandle, mcOffset, real,
		    memOffset, size, flags);
		/* As map_pin: whatever the answer. */
		if (vmm_virt_is(memHandle))
			vmm_virt_pin(memHandle);
	}
	activity_leave(g);
	hook_leave();
	return r;
}
