"""PyTorch's cudaMallocAsync backend under a 4 GiB gpufrac limit: tensors
come from the device's default stream-ordered pool (cuMemAllocAsync), and
the shim charges the pool's reserve, what it holds of the device, as one
record of kind "pool": its growth at an allocation, what it gives back at
a synchronisation, a trim or its destruction (DESIGN.md section 3).

What is asserted about giving back, and why. A pool keeps freed memory and
releases it at a synchronisation only down to its release threshold (CUDA
Driver API, "Stream Ordered Memory Allocator"; the default threshold is 0).
PyTorch sets the default pool's threshold to UINT64_MAX when it first uses
a device (c10/cuda/CUDAMallocAsyncAllocator.cpp, lazy_init_device, "Retaining
memory in the pool"), so after del and torch.cuda.synchronize() the freed
tensors stay in the reserve: still taken from the device, so still charged
(the charge follows the reserve, never the allocations), and only asserted
to stay within the limit. torch.cuda.empty_cache() is cudaDeviceSynchronize
and cudaMemPoolTrimTo(pool, 0) there: after it the charge must be back.
The threshold is read from the driver, not assumed: where it is 0 (a
PyTorch that leaves CUDA's default), the synchronisation alone must give
the charge back."""
import os

os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "backend:cudaMallocAsync"
import torch  # noqa: E402

from gpucheck import (GIB, LIMIT, MIB, Driver, all_equal, check,  # noqa: E402
                      context_check, done, expect_error, fill, held_by_me,
                      kinds, note, skip, size, used_by_me)

OOM = torch.cuda.OutOfMemoryError
if not hasattr(torch.cuda, "get_allocator_backend"):
    skip("PyTorch %s has no backend:cudaMallocAsync (2.0 and later)"
         % torch.__version__)
if not torch.cuda.is_available():
    skip("PyTorch sees no CUDA device")


def empty(n):
    return torch.empty(n, dtype=torch.uint8, device="cuda")


def back(since):
    """The pool's charge, less what was there before: < 64 MiB left."""
    return held_by_me() < since + 64 * MIB


check("PyTorch allocates with cudaMallocAsync",
      torch.cuda.get_allocator_backend() == "cudaMallocAsync",
      torch.cuda.get_allocator_backend())
free, total = torch.cuda.mem_get_info()
check("mem_get_info reports the limit as total", total == LIMIT, total)
torch.zeros(1, device="cuda")
torch.cuda.empty_cache()
base = held_by_me()
drv = Driver(torch.cuda.current_device())

x = torch.full((GIB // 4,), 3, dtype=torch.int32, device="cuda")
check("a 1 GiB tensor fits and works", all_equal(x, 3))
torch.cuda.synchronize()
k = kinds()
pool = k.get("pool", (0, 0))[1]
reserved = drv.pool_attribute(Driver.RESERVED_MEM_CURRENT)
check("gpufracctl allocs shows the pool's reserve as kind pool",
      pool >= GIB, k)
check("after a synchronisation the charge is the pool's reserve",
      pool >= reserved, "charged %s, reserved %s" % (size(pool),
                                                      size(reserved)))
expect_error("allocating past the limit raises OutOfMemoryError",
             lambda: empty(LIMIT + 64 * MIB), OOM)

del x
torch.cuda.synchronize()
threshold = drv.pool_attribute(Driver.RELEASE_THRESHOLD)
if threshold == 0:
    check("release threshold 0: the synchronisation gives the charge back",
          back(base), size(held_by_me()))
else:
    note("release threshold %#x (PyTorch's): the synchronisation keeps the "
         "reserve, %s charged" % (threshold, size(held_by_me())))
    check("the charge stays within the limit", used_by_me() <= LIMIT,
          size(used_by_me()))
torch.cuda.empty_cache()
check("empty_cache (synchronise, trim to 0) gives the charge back",
      back(base), size(held_by_me()))

for r in range(1, 5):
    x = torch.full((GIB // 2,), r, dtype=torch.int32, device="cuda")
    ok = all_equal(x, r)
    del x
    torch.cuda.empty_cache()
    check("round %d: 2 GiB allocated, used and freed" % r,
          ok and back(base),
          "values right: %s, %s held" % (ok, size(held_by_me())))

held = fill(empty, OOM)
del held
torch.cuda.empty_cache()
check("after filling up and empty_cache the charge is back", back(base),
      size(held_by_me()))

context_check(empty, OOM, settle=torch.cuda.empty_cache)
done()
