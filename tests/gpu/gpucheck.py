"""Shared by the real-GPU checks: assertions that print and count, a SKIP
that run.sh understands, this process as gpufracctl sees it (ps, allocs,
its "context" record), and the CUDA driver through ctypes (numba's way:
dlsym on the libcuda handle, so the shim's hooks) for what a framework
does not expose."""
import contextlib
import ctypes
import json
import os
import subprocess
import sys
import time

MIB = 1 << 20
GIB = 1 << 30
LIMIT = 4 * GIB		# run.sh sets GPUFRAC_MEMORY_LIMIT=4Gi for each check
CUDA_ERROR_OUT_OF_MEMORY = 2
failures = 0


def check(desc, ok, detail=""):
    global failures
    print(("ok - " if ok else "not ok - ") + desc + ("" if ok else ": " + str(detail)))
    if not ok:
        failures += 1


def note(line):
    """Information only: never counted."""
    print("# " + line)
    sys.stdout.flush()


def size(n):
    """Bytes in IEC units, as gpufracctl prints them."""
    for unit, scale in (("GiB", GIB), ("MiB", MIB), ("KiB", 1 << 10)):
        if abs(n) >= scale:
            return "%.1f%s" % (n / scale, unit)
    return "%dB" % n


def skip(reason):
    """Exit 77 (run.sh counts a SKIP), saying why on run.sh's line."""
    name = os.path.basename(sys.argv[0])
    if name.startswith("check_") and name.endswith(".py"):
        name = name[len("check_"):-len(".py")]
    print("SKIP  %s: %s" % (name, reason))
    sys.exit(77)


def expect_error(desc, fn, errors):
    """fn() must raise one of errors; what it returns is dropped at once."""
    try:
        fn()
    except errors:
        check(desc, True)
    else:
        check(desc, False, "no error")


def clean_env():
    """Ours, without the shim: for gpufracctl and baselines."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return env


def ctl_json(*args):
    """gpufracctl ARGS --json against the suite's daemon ($GPUFRAC_SOCKET)."""
    out = subprocess.run([os.environ["GPUFRACCTL"]] + list(args) + ["--json"],
                         env=clean_env(), check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def capacities():
    """{uuid: bytes the daemon shares} of every device it accounts."""
    return {d["uuid"]: d["capacity_bytes"]
            for d in ctl_json("status")["devices"]}


def my_devices():
    """This process's devices in one gpufracctl ps; [] if it has none."""
    for c in ctl_json("ps")["clients"]:
        if c["pid"] == os.getpid():
            return c["devices"]
    return []


def used_by_me():
    """This process's charge on its devices, as gpufracctl ps reports it:
    its allocations, its lease and its "context" record."""
    return sum(d["used_bytes"] for d in my_devices())


def my_allocs():
    """This process's records in gpufracctl allocs PID; [] if it has none."""
    try:
        return ctl_json("allocs", str(os.getpid()))["allocations"]
    except subprocess.CalledProcessError:
        return []


def bytes_of(kind, allocs=None):
    """The bytes of this process's records of kind."""
    return sum(a["size"] for a in (my_allocs() if allocs is None else allocs)
               if a["kind"] == kind)


def held_by_me():
    """What this process's allocations hold: its charge less its context
    and the unused part of its leases (allocations made inside a lease are
    not listed one by one, so allocs alone would miss them)."""
    allocated = sum(d["used_bytes"] - d["leased_bytes"] for d in my_devices())
    return allocated - bytes_of("context")


def kinds(allocs=None):
    """Records per kind, for messages: {"vmm": (count, bytes), ...}."""
    out = {}
    for a in my_allocs() if allocs is None else allocs:
        n, b = out.get(a["kind"], (0, 0))
        out[a["kind"]] = (n + 1, b + a["size"])
    return out


def context_bytes(timeout=5.0):
    """The daemon's "context" charge for this process: its NVML usage beyond
    its allocations, measured every second, so waited for up to timeout
    seconds. 0 when none comes (the daemon's NVML does not see this pid,
    e.g. in another PID namespace: its log says why)."""
    deadline = time.monotonic() + timeout
    while True:
        ctx = bytes_of("context")
        if ctx or time.monotonic() >= deadline:
            return ctx
        time.sleep(0.2)


def context_check(alloc, oom, settle=None):
    """Print this process's context record (reported, never asserted: a few
    hundred MiB on a real GPU), then check that the limit holds with it
    counted: alloc(limit - charge + margin), with the margin below the
    context so that it would fit were the context not charged, must raise
    oom. settle() first gives back what a framework keeps cached (which an
    allocation may reuse without a charge)."""
    ctx = context_bytes()
    if settle is not None:
        settle()
    used = used_by_me()
    if not ctx:
        note("context: no record within 5 s (NVML shows the daemon no "
             "usage of pid %d); the check that counts it is left out"
             % os.getpid())
        check("the charge is within the limit", used <= LIMIT, size(used))
        return
    note("context: %s charged as kind \"context\" (reported, not asserted); "
         "charge %s of a %s limit" % (size(ctx), size(used), size(LIMIT)))
    n = LIMIT - used + min(64 * MIB, ctx // 2)
    desc = ("allocating past limit - context - allocations (%s) fails"
            % size(n))
    if n <= 0:
        check(desc, False, "the charge %s leaves nothing to try" % size(used))
        return
    expect_error(desc, lambda: alloc(n), oom)


def all_equal(t, value, chunk=16 * MIB):
    """Whether every element of the 1-D tensor t is value, compared chunk
    elements at a time, so that no temporary passes chunk bytes: t.sum() of
    an int32 tensor makes an int64 copy twice its size, which a 2 GiB
    tensor cannot have under a 4 GiB limit."""
    return all(bool(t[s:s + chunk].eq(value).all())
               for s in range(0, t.numel(), chunk))


def fill(alloc, oom, chunk=256 * MIB):
    """Allocate chunk after chunk with alloc(nbytes) until it raises oom,
    checking that what was charged before and allocated since reaches the
    limit (within three chunks) but never passes it, and that neither does
    the daemon's charge. Returns what was taken, for the caller to drop."""
    context_bytes()			# counted from the start, once measured
    start, held, peak = used_by_me(), [], 0
    while len(held) * chunk < 2 * LIMIT:	# a stop, should the limit fail
        try:
            held.append(alloc(chunk))
        except oom:
            break
        peak = max(peak, used_by_me())
    got = len(held) * chunk
    note("filled %s in %s chunks on a charge of %s; the charge peaked at %s"
         % (size(got), size(chunk), size(start), size(peak)))
    check("filling up, the allocations reach the limit but never pass it",
          LIMIT - 3 * chunk <= start + got <= LIMIT, size(start + got))
    check("and neither does the daemon's charge", peak <= LIMIT, size(peak))
    return held


class DriverError(Exception):
    def __init__(self, call, code):
        super().__init__("%s: CUresult %d" % (call, code))
        self.code = code


class DriverOOM(DriverError):
    """CUDA_ERROR_OUT_OF_MEMORY."""


class Driver:
    """The CUDA driver through ctypes, on the primary context of device
    ordinal (the one frameworks use, so shared with them)."""

    RELEASE_THRESHOLD = 4		# CU_MEMPOOL_ATTR_RELEASE_THRESHOLD
    RESERVED_MEM_CURRENT = 5		# CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT

    def __init__(self, ordinal=0):
        self.cu = ctypes.CDLL("libcuda.so.1")
        self.call("cuInit", 0)
        dev = ctypes.c_int()
        self.call("cuDeviceGet", ctypes.byref(dev), ordinal)
        self.dev = dev.value
        self.ctx = ctypes.c_void_p()
        self.call("cuDevicePrimaryCtxRetain", ctypes.byref(self.ctx), self.dev)

    def call(self, name, *args):
        r = getattr(self.cu, name)(*args)
        if r == CUDA_ERROR_OUT_OF_MEMORY:
            raise DriverOOM(name, r)
        if r != 0:
            raise DriverError(name, r)

    @contextlib.contextmanager
    def current(self):
        self.call("cuCtxPushCurrent_v2", self.ctx)
        try:
            yield
        finally:
            self.cu.cuCtxPopCurrent_v2(ctypes.byref(ctypes.c_void_p()))

    def uuid(self):
        """As NVML, nvidia-smi and gpufracctl write it."""
        raw = (ctypes.c_ubyte * 16)()
        self.call("cuDeviceGetUuid", raw, self.dev)
        h = bytes(raw).hex()
        return "GPU-%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20],
                                       h[20:])

    def alloc(self, nbytes):
        """cuMemAlloc: a Buffer, freed when it goes; DriverOOM if denied."""
        return Buffer(self, nbytes)

    def pool_attribute(self, attr):
        """An attribute of the device's default memory pool (uint64_t)."""
        pool, value = ctypes.c_void_p(), ctypes.c_uint64()
        with self.current():
            self.call("cuDeviceGetDefaultMemPool", ctypes.byref(pool),
                      self.dev)
            self.call("cuMemPoolGetAttribute", pool, attr,
                      ctypes.byref(value))
        return value.value


class Buffer:
    def __init__(self, drv, nbytes):
        self.drv, self.ptr = drv, ctypes.c_uint64()
        with drv.current():
            drv.call("cuMemAlloc_v2", ctypes.byref(self.ptr),
                     ctypes.c_size_t(nbytes))

    def __del__(self):
        if self.ptr.value:
            with self.drv.current():
                self.drv.cu.cuMemFree_v2(self.ptr)


def done():
    sys.exit(1 if failures else 0)
