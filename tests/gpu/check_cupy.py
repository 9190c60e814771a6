"""CuPy under a 4 GiB gpufrac limit (GPUFRAC_MEMORY_LIMIT=4Gi)."""
import cupy

from gpucheck import GIB, check, done, held_by_me, used_by_me

free, total = cupy.cuda.runtime.memGetInfo()
check("memGetInfo reports a 4 GiB total", total == 4 * GIB, total)
x = cupy.ones(256 << 20, dtype=cupy.float32)
check("a 1 GiB array fits and works", int(x.sum()) == 256 << 20)
check("gpufracctl ps shows it", used_by_me() >= GIB, used_by_me())
try:
    cupy.empty(4 * GIB, dtype=cupy.uint8)
    check("allocating past the limit raises OutOfMemoryError", False, "no error")
except cupy.cuda.memory.OutOfMemoryError:
    check("allocating past the limit raises OutOfMemoryError", True)
del x
cupy.get_default_memory_pool().free_all_blocks()
check("after free_all_blocks the memory is back in gpufracctl allocs "
      "(its context aside)",
      held_by_me() < 64 << 20, held_by_me())
done()
