"""What the driver says to processes forked around cuInit, through ctypes
as pynvml and numba reach it (fork_probe.sh runs it bare and under the
shim). Prints one JSON line of CUresults (nvmlReturn_t for nvml*; -1 for
a function the driver lacks):
  before      a child forked before this process's cuInit (a launcher's):
              cuInit, cuDevicePrimaryCtxRetain, cuCtxSetCurrent, then
              cuMemAlloc_v2 of 1 MiB and its cuMemFree_v2
  child       one forked after cuInit, this process holding 64 MiB (a data
              loader's worker): cuInit twice, cuDeviceGetCount,
              cuDriverGetVersion, cuGetProcAddress_v2 of cuMemAlloc,
              cuDeviceGet, cuDevicePrimaryCtxRetain, cuCtxSetCurrent of the
              parent's context, cuMemAlloc_v2 of 1 MiB, cuMemFree_v2 of the
              parent's 64 MiB, cuMemGetInfo_v2, nvmlInit_v2,
              nvmlDeviceGetCount_v2
  grandchild  the child's own child: cuInit
  parent      cuCheckpointProcessGetState on the child's pid while it
              lives; this process's cuMemAlloc_v2 of 1 MiB after the
              child exited
With --ctl GPUFRACCTL (under the shim) also "allocs": the sizes of this
process's and the child's allocations as gpufracctl allocs has them, before
the fork, while the child lives, and after it exited (null: no client),
and "pid", "child_pid".
"""
import ctypes
import json
import os
import subprocess
import sys

MiB = 1 << 20
cu = ctypes.CDLL("libcuda.so.1")
try:
    nvml = ctypes.CDLL("libnvidia-ml.so.1")
except OSError:
    nvml = None


def call(lib, name, *args):
    fn = getattr(lib, name, None) if lib is not None else None
    return -1 if fn is None else fn(*args)


def u64():
    return ctypes.c_uint64(0)


def read_all(fd):
    """Everything until the writer's end closes, then fd closed."""
    out = b""
    while True:
        b = os.read(fd, 65536)
        if not b:
            break
        out += b
    os.close(fd)
    return out


def in_child(fn):
    """fn() in a forked child; its dict back through a pipe."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.write(w, json.dumps(fn()).encode())
        os._exit(0)
    os.close(w)
    out = read_all(r)
    os.waitpid(pid, 0)
    return json.loads(out)


def before():
    ctx, p = ctypes.c_void_p(), u64()
    res = {"cuInit": call(cu, "cuInit", 0)}
    res["cuDevicePrimaryCtxRetain"] = call(cu, "cuDevicePrimaryCtxRetain",
                                           ctypes.byref(ctx), 0)
    res["cuCtxSetCurrent"] = call(cu, "cuCtxSetCurrent", ctx)
    res["cuMemAlloc_v2"] = call(cu, "cuMemAlloc_v2", ctypes.byref(p), MiB)
    res["cuMemFree_v2"] = call(cu, "cuMemFree_v2", p)
    return res


def child(ctx, mine):
    n, v, dev, c, p = (ctypes.c_int(0), ctypes.c_int(0), ctypes.c_int(0),
                       ctypes.c_void_p(), u64())
    fr, total, fn = ctypes.c_size_t(0), ctypes.c_size_t(0), ctypes.c_void_p()
    res = {"cuInit": call(cu, "cuInit", 0),
           "cuInit_again": call(cu, "cuInit", 0),
           "cuDeviceGetCount": call(cu, "cuDeviceGetCount", ctypes.byref(n)),
           "cuDriverGetVersion": call(cu, "cuDriverGetVersion",
                                      ctypes.byref(v)),
           "cuGetProcAddress_v2": call(cu, "cuGetProcAddress_v2",
                                       b"cuMemAlloc", ctypes.byref(fn),
                                       12000, ctypes.c_uint64(0), None),
           "cuDeviceGet": call(cu, "cuDeviceGet", ctypes.byref(dev), 0),
           "cuDevicePrimaryCtxRetain": call(cu, "cuDevicePrimaryCtxRetain",
                                            ctypes.byref(c), 0),
           "cuCtxSetCurrent": call(cu, "cuCtxSetCurrent", ctx),
           "cuMemAlloc_v2": call(cu, "cuMemAlloc_v2", ctypes.byref(p), MiB),
           "cuMemFree_v2_parents": call(cu, "cuMemFree_v2", mine),
           "cuMemGetInfo_v2": call(cu, "cuMemGetInfo_v2", ctypes.byref(fr),
                                   ctypes.byref(total)),
           "nvmlInit_v2": call(nvml, "nvmlInit_v2")}
    k = ctypes.c_uint(0)
    res["nvmlDeviceGetCount_v2"] = call(nvml, "nvmlDeviceGetCount_v2",
                                        ctypes.byref(k))
    res["grandchild"] = in_child(lambda: {"cuInit": call(cu, "cuInit", 0)})
    return res


def allocs(ctl, pids):
    """The sizes of each pid's allocations as the daemon has them (its
    contexts' records aside), or None where it is no client."""
    if ctl is None:
        return None
    seen = {}
    for p in pids:
        r = subprocess.run([ctl, "allocs", str(p), "--json"],
                           capture_output=True, text=True)
        seen[str(p)] = None if r.returncode != 0 else sorted(
            a["size"] for a in json.loads(r.stdout)["allocations"]
            if a["kind"] != "context")
    return seen


def main():
    ctl = sys.argv[2] if len(sys.argv) == 3 and sys.argv[1] == "--ctl" \
        else None
    out = {"before": in_child(before)}
    if call(cu, "cuInit", 0) != 0:
        print(json.dumps({"error": "cuInit failed in the parent"}))
        return 1
    ctx, mine, st = ctypes.c_void_p(), u64(), ctypes.c_int(-1)
    if (cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) != 0 or
            cu.cuCtxSetCurrent(ctx) != 0 or
            cu.cuMemAlloc_v2(ctypes.byref(mine), 64 * MiB) != 0):
        print(json.dumps({"error": "the parent could not allocate"}))
        return 1
    seen = {"before_fork": allocs(ctl, [os.getpid()])}
    res_r, res_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(res_r)
        os.close(go_w)
        os.write(res_w, json.dumps(child(ctx, mine)).encode())
        os.close(res_w)
        os.read(go_r, 1)
        os._exit(0)
    os.close(res_w)
    os.close(go_r)
    out["child"] = json.loads(read_all(res_r))
    out["grandchild"] = out["child"].pop("grandchild")
    out["parent"] = {"cuCheckpointProcessGetState": call(
        cu, "cuCheckpointProcessGetState", pid, ctypes.byref(st))}
    seen["child_alive"] = allocs(ctl, [os.getpid(), pid])
    os.write(go_w, b"x")
    os.waitpid(pid, 0)
    seen["child_gone"] = allocs(ctl, [os.getpid(), pid])
    p = u64()
    out["parent"]["cuMemAlloc_v2"] = cu.cuMemAlloc_v2(ctypes.byref(p), MiB)
    if ctl is not None:
        out["allocs"] = seen
        out["pid"] = os.getpid()
        out["child_pid"] = pid
    print(json.dumps(out, sort_keys=True))
    return 0


sys.exit(main())
