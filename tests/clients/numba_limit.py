"""A real client nobody here wrote: numba's CUDA driver bindings (ctypes,
dlsym on the libcuda handle). Prints what it sees, one fact per line:
  total N        get_memory_info() total
  free N         get_memory_info() free before allocating
  roundtrip ok   64 MiB copied to the device and back intact
  oom            a device_array beyond the limit raised CUDA_ERROR_OUT_OF_MEMORY
  after N        free memory after the big request failed
"""
import numpy as np
from numba import cuda
from numba.cuda.cudadrv.driver import CudaAPIError

ctx = cuda.current_context()
free, total = ctx.get_memory_info()
print("total", total)
print("free", free)
host = np.arange(64 << 20, dtype=np.uint8)
dev = cuda.to_device(host)
print("roundtrip", "ok" if (dev.copy_to_host() == host).all() else "bad")
try:
    cuda.device_array(total, dtype=np.uint8)
    print("no oom")
except CudaAPIError as e:
    print("oom" if e.code == 2 else "error %d" % e.code)
print("after", ctx.get_memory_info()[0])
