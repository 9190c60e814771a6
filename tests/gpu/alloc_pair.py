"""One process's cost of a cuMemAlloc + cuMemFree pair of SIZE bytes (2
MiB unless GPU_ALLOC_SIZE says), through ctypes as numba reaches the
driver (dlopen + dlsym), so that a preloaded libgpufrac.so hands out its
hooks: the best of 5 runs of GPU_ALLOC_PAIRS (2000) pairs, after 100 to
warm up, printed as "us_per_pair X" (microseconds). alloc_cost.sh runs it
bare and under the shim with each swap engine; nothing is asserted."""
import ctypes
import os
import sys
import time


def main():
    size = int(os.environ.get("GPU_ALLOC_SIZE", str(2 << 20)))
    pairs = int(os.environ.get("GPU_ALLOC_PAIRS", "2000"))
    cu = ctypes.CDLL("libcuda.so.1")
    dev, ctx, ptr = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_uint64()
    alloc, free = cu.cuMemAlloc_v2, cu.cuMemFree_v2
    alloc.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
    free.argtypes = [ctypes.c_uint64]
    for name, r in (("cuInit", cu.cuInit(0)),
                    ("cuDeviceGet", cu.cuDeviceGet(ctypes.byref(dev), 0)),
                    ("cuDevicePrimaryCtxRetain",
                     cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)),
                    ("cuCtxSetCurrent", cu.cuCtxSetCurrent(ctx))):
        if r != 0:
            print("alloc_pair: %s failed: %d" % (name, r))
            return 1
    best = None
    for run in range(6):
        n = 100 if run == 0 else pairs
        t0 = time.perf_counter()
        for _ in range(n):
            if alloc(ctypes.byref(ptr), size) != 0 or free(ptr.value) != 0:
                print("alloc_pair: an allocation of %d bytes failed" % size)
                return 1
        us = (time.perf_counter() - t0) * 1e6 / n
        if run > 0 and (best is None or us < best):
            best = us
    print("us_per_pair %.2f" % best)
    return 0


if __name__ == "__main__":
    sys.exit(main())
