"""NVML's memory queries under a 4 GiB gpufrac limit, made the way pynvml
makes them (ctypes: dlopen libnvidia-ml.so.1, then dlsym, which the shim
interposes): the view of DESIGN.md section 3, total = the limit, free =
what is left of it and never more than the device has free, used = the
rest, on every device the daemon shares; before this process uses CUDA
(as nvidia-smi) and while it holds memory (as a monitor inside a limited
container). The shim's reading is compared with NVML's own, taken in a
process without the shim (check_nvml.py --bare)."""
import ctypes
import json
import subprocess
import sys

from gpucheck import (GIB, LIMIT, MIB, Driver, DriverOOM, capacities, check,
                      clean_env, context_check, done, note, skip, size)


class Memory(ctypes.Structure):		# nvmlMemory_t
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


class Memory2(ctypes.Structure):	# nvmlMemory_v2_t
    _fields_ = [("version", ctypes.c_uint), ("total", ctypes.c_ulonglong),
                ("reserved", ctypes.c_ulonglong),
                ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


# NVML_STRUCT_VERSION(Memory, 2)
MEMORY_V2 = ctypes.sizeof(Memory2) | 2 << 24


class Nvml:
    def __init__(self):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        r = self.lib.nvmlInit_v2()
        if r != 0:
            raise OSError("nvmlInit_v2: nvmlReturn_t %d" % r)

    def handles(self):
        """{uuid: handle} of every device."""
        n, out = ctypes.c_uint(), {}
        assert self.lib.nvmlDeviceGetCount_v2(ctypes.byref(n)) == 0
        for i in range(n.value):
            h, buf = ctypes.c_void_p(), ctypes.create_string_buffer(96)
            assert self.lib.nvmlDeviceGetHandleByIndex_v2(
                i, ctypes.byref(h)) == 0
            assert self.lib.nvmlDeviceGetUUID(h, buf, len(buf)) == 0
            out[buf.value.decode()] = h
        return out

    def memory(self, h):
        m = Memory()
        r = self.lib.nvmlDeviceGetMemoryInfo(h, ctypes.byref(m))
        assert r == 0, "nvmlDeviceGetMemoryInfo: %d" % r
        return m.total, m.free, m.used

    def memory_v2(self, h):
        """(total, free, used, reserved), or None where the driver has no
        _v2 (NVML_ERROR_NOT_SUPPORTED, _FUNCTION_NOT_FOUND)."""
        m = Memory2(version=MEMORY_V2)
        try:
            fn = self.lib.nvmlDeviceGetMemoryInfo_v2
        except AttributeError:
            return None
        r = fn(h, ctypes.byref(m))
        if r in (3, 13):
            return None
        assert r == 0, "nvmlDeviceGetMemoryInfo_v2: %d" % r
        return m.total, m.free, m.used, m.reserved


if sys.argv[1:] == ["--bare"]:		# the baseline, without the shim
    nv = Nvml()
    print(json.dumps({u: nv.memory(h) for u, h in nv.handles().items()}))
    sys.exit(0)

try:
    nv = Nvml()
except OSError as e:
    skip("no usable NVML: %s" % e)
view = {u: nv.memory(h) for u, h in nv.handles().items()}
bare = json.loads(subprocess.run([sys.executable, __file__, "--bare"],
                                 env=clean_env(), check=True,
                                 capture_output=True, text=True).stdout)
shared = capacities()


def show(m):
    return "total %s, free %s, used %s" % tuple(size(v) for v in m[:3])


for uuid, m in sorted(view.items()):
    if uuid not in shared:
        note("%s is not shared by the daemon: %s" % (uuid, show(m)))
        continue
    total, free, used = m
    note("%s: %s; without the shim %s" % (uuid, show(m), show(bare[uuid])))
    check("%s: total is the limit" % uuid,
          total == min(LIMIT, shared[uuid]), size(total))
    check("%s: free is no more than the device has" % uuid,
          free <= bare[uuid][1], "%s > %s" % (size(free), size(bare[uuid][1])))
    check("%s: used is the rest" % uuid, used == total - free, show(m))

# The same while this process holds 1 GiB on its device.
drv = Driver(0)
uuid = drv.uuid()
h = nv.handles()[uuid]
buf = drv.alloc(GIB)
total, free, used = nv.memory(h)
note("holding 1 GiB on %s: total %s, free %s, used %s"
     % (uuid, size(total), size(free), size(used)))
check("holding 1 GiB: total is still the limit",
      total == min(LIMIT, shared[uuid]), size(total))
check("and used counts it", used >= GIB and used == total - free,
      "used %s, free %s" % (size(used), size(free)))
v2 = nv.memory_v2(h)
if v2 is not None:
    check("nvmlDeviceGetMemoryInfo_v2 agrees, and reserves nothing",
          v2[0] == total and v2[3] == 0 and v2[1] + v2[2] == total,
          "total %s, free %s, used %s, reserved %s" % tuple(map(size, v2)))
context_check(drv.alloc, DriverOOM)
used = nv.memory(h)[2]			# the context is counted by now
del buf
after = nv.memory(h)[2]
check("freed, used drops by 1 GiB", after <= used - GIB + 64 * MIB,
      "%s then %s" % (size(used), size(after)))
done()
