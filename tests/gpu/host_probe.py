"""How fast can a process get pinned host memory for a swap-out? (issue
21: on an H200's host one cuMemHostAlloc of 12 GiB took about 5 s, while
the bus copied 12 GiB in 0.23 s, so the copy engine's first move out of a
process is bound by pinning, and its later ones reuse what it pinned.)
The ways timed here, each for GPU_PROBE_GIB (4) GiB, through the driver
itself (ctypes), with the context of device 0 current:

  alloc        one cuMemHostAlloc (what the copy engine does today)
  alloc_par    GPU_PROBE_THREADS (4) threads, each a cuMemHostAlloc of
               its part, at once: does the driver pin in parallel?
  touch        an anonymous mapping, madvise(MADV_HUGEPAGE), its pages
               written by the threads at once (the kernel's page faults)
  register     then one cuMemHostRegister of it (pages already present)
  register_par the same registered by the threads, a part each
  d2h          a device buffer copied into the registered memory (the bus)
  free, unregister  what giving it back costs

Each is printed as GB/s (10^9 bytes/s) in one JSON line and as "FIGURE
host_NAME_gbps X" lines for run.sh; nothing is asserted. A way that fails
says why and goes on. Runs on the simulated driver too (its rates are
its own)."""
import ctypes
import json
import mmap
import os
import sys
import threading
import time

GIB = 1 << 30
cu = ctypes.CDLL("libcuda.so.1")
libc = ctypes.CDLL(None, use_errno=True)
P = ctypes.c_void_p
cu.cuMemHostAlloc.argtypes = [ctypes.POINTER(P), ctypes.c_size_t,
                              ctypes.c_uint]
cu.cuMemFreeHost.argtypes = [P]
cu.cuMemHostRegister_v2.argtypes = [P, ctypes.c_size_t, ctypes.c_uint]
cu.cuMemHostUnregister.argtypes = [P]
cu.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
cu.cuMemFree_v2.argtypes = [ctypes.c_uint64]
cu.cuMemcpyDtoH_v2.argtypes = [P, ctypes.c_uint64, ctypes.c_size_t]
libc.madvise.argtypes = [P, ctypes.c_size_t, ctypes.c_int]
MADV_HUGEPAGE = 14
CU_MEMHOSTALLOC_PORTABLE = 1


def check(what, r):
    if r != 0:
        raise RuntimeError("%s: error %d" % (what, r))


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def parallel(n, fn):
    """fn(i) on n threads at once (ctypes lets go of the GIL); the first
    failure is raised."""
    errs = []

    def run(i):
        try:
            fn(i)
        except Exception as e:  # noqa: BLE001 (said by the caller)
            errs.append(e)
    ts = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errs:
        raise errs[0]


def main():
    nbytes = int(float(os.environ.get("GPU_PROBE_GIB", "4")) * GIB)
    nthreads = int(os.environ.get("GPU_PROBE_THREADS", "4"))
    part = nbytes // nthreads
    dev, ctx = ctypes.c_int(), P()
    check("cuInit", cu.cuInit(0))
    check("cuDeviceGet", cu.cuDeviceGet(ctypes.byref(dev), 0))
    check("cuDevicePrimaryCtxRetain",
          cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev))
    check("cuCtxSetCurrent", cu.cuCtxSetCurrent(ctx))
    out = {"bytes": nbytes, "threads": nthreads}

    def way(name, fn, nb=nbytes):
        try:
            s = timed(fn)
            out[name + "_gbps"] = round(nb / s / 1e9, 3)
        except Exception as e:  # noqa: BLE001 (said, and the probe goes on)
            out[name + "_gbps"] = None
            out[name + "_error"] = str(e)

    h = P()
    way("alloc", lambda: check("cuMemHostAlloc", cu.cuMemHostAlloc(
        ctypes.byref(h), nbytes, CU_MEMHOSTALLOC_PORTABLE)))
    if h.value:
        way("free", lambda: check("cuMemFreeHost", cu.cuMemFreeHost(h)))
    hs = [P() for _ in range(nthreads)]

    def alloc_part(i):
        cu.cuCtxSetCurrent(ctx)
        check("cuMemHostAlloc", cu.cuMemHostAlloc(
            ctypes.byref(hs[i]), part, CU_MEMHOSTALLOC_PORTABLE))
    way("alloc_par", lambda: parallel(nthreads, alloc_part))
    for x in hs:
        if x.value:
            cu.cuMemFreeHost(x)

    m = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    base = ctypes.addressof(ctypes.c_char.from_buffer(m))
    libc.madvise(base, nbytes, MADV_HUGEPAGE)
    way("touch", lambda: parallel(nthreads, lambda i: ctypes.memset(
        base + i * part, 1, part)))
    registered = []

    def register():
        check("cuMemHostRegister", cu.cuMemHostRegister_v2(
            base, nbytes, CU_MEMHOSTALLOC_PORTABLE))
        registered.append(base)
    way("register", register)
    dptr = ctypes.c_uint64()
    if registered and cu.cuMemAlloc_v2(ctypes.byref(dptr), nbytes) == 0:
        way("d2h", lambda: (check("cuMemcpyDtoH", cu.cuMemcpyDtoH_v2(
            base, dptr.value, nbytes)), check("cuCtxSynchronize",
                                              cu.cuCtxSynchronize())))
        cu.cuMemFree_v2(dptr.value)
    if registered:
        way("unregister", lambda: check("cuMemHostUnregister",
                                        cu.cuMemHostUnregister(base)))

    def register_part(i):
        cu.cuCtxSetCurrent(ctx)
        check("cuMemHostRegister", cu.cuMemHostRegister_v2(
            base + i * part, part, CU_MEMHOSTALLOC_PORTABLE))
    way("register_par", lambda: parallel(nthreads, register_part))
    for i in range(nthreads):
        cu.cuMemHostUnregister(P(base + i * part))
    print(json.dumps(out, separators=(",", ":")))
    for k, v in out.items():
        if k.endswith("_gbps"):
            print("FIGURE host_%s %s" % (k, "null" if v is None else v))
    return 0


if __name__ == "__main__":
    sys.exit(main())
