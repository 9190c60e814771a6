/*
 * Pointer attributes of memory the copy engine backs (issue 21, point 3):
 * a VMM mapping, rounded up to the granularity and made in no context.
 * The program is shown what the bare driver shows of a cuMemAlloc: a
 * range of the size it asked for, the context it was made in, and legacy
 * IPC (the shim's handles, vback_ipc.h) where backed memory has it. Every
 * other answer is the driver's.
 */
#include <stdint.h>

#include "activity.h"
#include "hooks.h"
#include "hooks_enter.h"
#include "real.h"
#include "vback.h"

/* What the program is shown of a backed allocation (vback_holding). */
struct ptr_shown {
	uint64_t	size;
	CUcontext	ctx;
};

/* Whether the shim answers attr itself for backed memory. */
static int
ptr_ours(CUpointer_attribute attr)
{
	return attr == CU_POINTER_ATTRIBUTE_CONTEXT ||
	    attr == CU_POINTER_ATTRIBUTE_RANGE_SIZE ||
	    attr == CU_POINTER_ATTRIBUTE_MAPPING_SIZE ||
	    attr == CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE;
}

/* Write attr (ptr_ours) as the bare driver would, as cuda.h types it. */
static void
ptr_answer(void *data, CUpointer_attribute attr, const struct ptr_shown *s)
{
	if (attr == CU_POINTER_ATTRIBUTE_CONTEXT)
		*(CUcontext *)data = s->ctx;
	else if (attr == CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE)
		*(unsigned int *)data = (unsigned int)vback_ipc_capable();
	else
		*(size_t *)data = (size_t)s->size;
}

/*
 * The driver may refuse CONTEXT for VMM memory where it knows none; the
 * bare driver answers it for a cuMemAlloc, so the answer is then ours.
 */
CUresult
cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
    CUdeviceptr ptr)
{
	struct gf_activity *act;
	struct ptr_shown s;
	CUresult r;

	if (!hook_enter())
		return REAL_CALL(cuPointerGetAttribute, data, attribute, ptr);
	act = activity_enter();
	r = REAL_CALL(cuPointerGetAttribute, data, attribute, ptr);
	if (data != NULL && ptr_ours(attribute) &&
	    vback_holding(ptr, &s.size, &s.ctx)) {
		ptr_answer(data, attribute, &s);
		r = CUDA_SUCCESS;
	}
	activity_leave(act);
	hook_leave();
	return r;
}

CUresult
cuPointerGetAttributes(unsigned int numAttributes,
    CUpointer_attribute *attributes, void **data, CUdeviceptr ptr)
{
	struct gf_activity *act;
	struct ptr_shown s;
	unsigned int i;
	CUresult r;
	int ours = 0;

	if (!hook_enter())
		return REAL_CALL(cuPointerGetAttributes, numAttributes,
		    attributes, data, ptr);
	act = activity_enter();
	r = REAL_CALL(cuPointerGetAttributes, numAttributes, attributes, data,
	    ptr);
	for (i = 0; r == CUDA_SUCCESS && i < numAttributes && !ours; i++)
		ours = ptr_ours(attributes[i]);
	if (ours && vback_holding(ptr, &s.size, &s.ctx))
		for (i = 0; i < numAttributes; i++)
			if (ptr_ours(attributes[i]) && data[i] != NULL)
				ptr_answer(data[i], attributes[i], &s);
	activity_leave(act);
	hook_leave();
	return r;
}
