"""numba-cuda under a 4 GiB gpufrac limit (GPUFRAC_MEMORY_LIMIT=4Gi)."""
import numpy as np
from numba import cuda

from gpucheck import GIB, check, done, held_by_me, used_by_me

ctx = cuda.current_context()
free, total = ctx.get_memory_info()
check("get_memory_info reports a 4 GiB total", total == 4 * GIB, total)
host = np.arange(GIB // 8, dtype=np.int64)
dev = cuda.to_device(host)
check("1 GiB survives a round trip", (dev.copy_to_host() == host).all())
check("gpufracctl ps shows it", used_by_me() >= GIB, used_by_me())
try:
    cuda.device_array(4 * GIB, dtype=np.uint8)
    check("allocating past the limit fails with CUDA_ERROR_OUT_OF_MEMORY", False)
except Exception as e:  # numba-cuda's error class differs between versions
    check("allocating past the limit fails with CUDA_ERROR_OUT_OF_MEMORY",
          "OUT_OF_MEMORY" in str(e) or getattr(e, "code", None) == 2, e)
del dev
ctx.deallocations.clear()
check("after freeing the memory is back in gpufracctl allocs "
      "(its context aside)",
      held_by_me() < 64 << 20, held_by_me())
done()
