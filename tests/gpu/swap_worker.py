"""One of the two processes of the host swap check (check_swap.py drives
two of them under the shim; DESIGN.md section 4, issue 4). It holds a share
of the GPU in many buffers filled, on the GPU, with a pattern that encodes
(worker, buffer, index); each round of work changes every byte of them;
the last command checks every byte. Between commands it waits on stdin,
outside the driver, so gpufracd may swap it out; its next command's first
driver call brings it back.

  swap_worker.py serve --name NAME [--backend BACKEND]
      Commands on stdin, one per line; one answer per command on stdout,
      "ok COMMAND {json}" or "error COMMAND message":
        hello              initialise CUDA; pid, device, free, total
        alloc BYTES CHUNK  take BYTES in buffers of CHUNK bytes, fill them
        work ROUND         change every buffer; compute, and check it
        verify             compare every buffer with what it must hold
        exit               free everything, then exit: 0 only when verify
                           found every byte right and nothing failed
  swap_worker.py bandwidth BYTES [--backend torch|torch_vmm|driver]
                           [--reps N]
                           [--pin BYTES]
      Pinned host<->device copies of BYTES, best of N each way: one line
      {"bytes":..,"h2d_gbps":..,"d2h_gbps":..} (GB/s: 10^9 bytes/s). With
      --pin, first one cuMemHostAlloc of that many bytes, timed and freed
      (how fast the driver pins host memory, issue 21), adds
      "pin_bytes":..,"pin_gbps":.. (null, and "pin_error", if it failed).

Backends: torch (PyTorch tensors, its default caching allocator: what
the issue asks for), driver (the driver API through ctypes, no kernels of
its own: runs on the simulated driver too, for swap.sh --sim), and the
frameworks the copy engine must be shown with (issue 21, point 4;
swap_frameworks.sh): torch_vmm (torch with PYTORCH_CUDA_ALLOC_CONF=
expandable_segments:True, set here before torch is imported: cuMemCreate
pages), cupy (CuPy arrays, its default memory pool: cudaMalloc) and jax
(jax.numpy arrays; XLA_PYTHON_CLIENT_PREALLOCATE=false, set here before
jax is imported, so that XLA's pool grows as the worker allocates instead
of taking 75 % of the device at once). Each holds the same pattern, changes
every byte each round and checks every word as torch does; only torch and
torch_vmm multiply matrices. A backend whose module cannot be imported
makes the worker exit 77, saying so in one line on stderr. bandwidth takes
torch, torch_vmm or driver. Whatever else writes to stdout (a library) is
sent to stderr, so stdout carries answers only.

A server writes its threads' Python stacks to stderr on SIGUSR1 (the
driver asks when a step overruns, so that a stall explains itself), and
on SIGTERM writes "sigterm at MS ms" (CLOCK_REALTIME, the clock of the
daemon's events) to stderr before
it dies of the signal as it would have without a handler (the preemption
check times the daemon's SIGTERM with it). The other checks that need a
process holding memory (check_preempt.py, ...) use it too.
"""
import argparse
import ctypes
import faulthandler
import hashlib
import json
import os
import signal
import struct
import sys
import time

MIB = 1 << 20


def key(*parts):
    """A deterministic 30-bit number for parts (the same in every process)."""
    h = hashlib.blake2b(repr(parts).encode(), digest_size=4).digest()
    return int.from_bytes(h, "little") & 0x3FFFFFFF


def fill_key(name, j):
    # Bit 30 set: a buffer's words are never 0 (a zeroed page shows).
    return key(name, "fill", j) | 0x40000000


class Mismatch(Exception):
    pass


def pin_rate(cu, nbytes):
    """One cuMemHostAlloc of nbytes through the driver itself, timed, then
    freed: how fast the driver pins host memory, which the copy engine's
    swap-outs paid afresh each time (issue 21: 2-2.5 GB/s on an H200's
    host). The calling thread's context must be current. Reported only:
    a failure is said, not raised."""
    out = {"pin_bytes": nbytes, "pin_gbps": None}
    h = ctypes.c_void_p()
    cu.cuMemHostAlloc.argtypes = [ctypes.POINTER(ctypes.c_void_p),
                                  ctypes.c_size_t, ctypes.c_uint]
    cu.cuMemFreeHost.argtypes = [ctypes.c_void_p]
    t0 = time.perf_counter()
    res = cu.cuMemHostAlloc(ctypes.byref(h), nbytes, 0)
    secs = time.perf_counter() - t0
    if res != 0:
        out["pin_error"] = "cuMemHostAlloc of %d bytes: error %d" % (
            nbytes, res)
        return out
    cu.cuMemFreeHost(h)
    out["pin_gbps"] = nbytes / secs / 1e9 if secs > 0 else None
    return out


class TorchBackend:
    """int32 tensors: buffer j word i holds i ^ K_j; a round XORs every word
    of buffer j with a key of its own (bit 30 clear, so K_j keeps it), and
    multiplies two matrices whose product is known exactly."""

    SUB = 64 * MIB // 4			# words compared at once by verify
    MATMULS = 20

    def __init__(self, name):
        import torch

        self.torch = torch
        self.name = name
        self.bufs = []
        self.keys = []
        self.mat = None

    def hello(self):
        torch = self.torch
        torch.cuda.set_device(0)
        torch.zeros(1, device="cuda")		# the context, now
        torch.cuda.synchronize()
        free, total = torch.cuda.mem_get_info()
        return {"device": torch.cuda.get_device_name(0), "free": free,
                "total": total, "torch": torch.__version__,
                "cuda": torch.version.cuda}

    def alloc(self, nbytes, chunk):
        torch = self.torch
        words = chunk // 4
        for j in range(nbytes // chunk):
            t = torch.empty(words, dtype=torch.int32, device="cuda")
            torch.arange(words, out=t)
            t.bitwise_xor_(fill_key(self.name, j))
            self.bufs.append(t)
            self.keys.append(fill_key(self.name, j))
        n = 4096
        self.mat = (torch.ones(n, n, device="cuda"),
                    torch.empty(n, n, device="cuda"),
                    torch.empty(n, n, device="cuda"))
        torch.cuda.synchronize()
        return {"buffers": len(self.bufs), "bytes": len(self.bufs) * chunk}

    def work(self, rnd):
        torch = self.torch
        for j, t in enumerate(self.bufs):
            k = key(self.name, "round", rnd, j)
            t.bitwise_xor_(k)
            self.keys[j] ^= k
        a, b, c = self.mat
        v = rnd % 7 + 1
        b.fill_(v)
        for _ in range(self.MATMULS):
            torch.matmul(a, b, out=c)
        # Small integers: exact in float32 (and TF32) whatever the order.
        if not bool((c == a.shape[0] * v).all()):
            raise Mismatch("matmul: ones(%d) @ %d gave %r" %
                           (a.shape[0], v, c[0, 0].item()))
        torch.cuda.synchronize()
        return {"buffers": len(self.bufs), "matmuls": self.MATMULS}

    def verify(self):
        torch = self.torch
        bad, want = [], None
        for j, t in enumerate(self.bufs):
            for s in range(0, t.numel(), self.SUB):
                e = min(s + self.SUB, t.numel())
                want = torch.arange(s, e, dtype=torch.int32, device="cuda")
                want.bitwise_xor_(self.keys[j])
                if torch.equal(t[s:e], want):
                    continue
                diff = (t[s:e] != want).nonzero()
                i = int(diff[0])
                bad.append("buffer %d: %d wrong words from %d, word %d is "
                           "%#x, not %#x" % (j, diff.numel(), s, s + i,
                                             int(t[s + i]), int(want[i])))
                break
            if len(bad) >= 3:
                break
        del want
        torch.cuda.empty_cache()
        if bad:
            raise Mismatch("; ".join(bad))
        return {"buffers": len(self.bufs),
                "bytes": sum(t.numel() * 4 for t in self.bufs)}

    def free(self):
        self.bufs = []
        self.mat = None
        self.torch.cuda.synchronize()
        self.torch.cuda.empty_cache()

    def bandwidth(self, nbytes, reps, pin):
        torch = self.torch
        torch.cuda.set_device(0)
        torch.zeros(1, device="cuda")		# the context, current here
        torch.cuda.synchronize()
        # The driver's own call, not torch's caching host allocator (which
        # rounds sizes up and keeps what it frees).
        out = pin_rate(ctypes.CDLL("libcuda.so.1"), pin) if pin else {}
        host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
        dev = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
        host.fill_(1)
        for way, dst, src in (("h2d", dev, host), ("d2h", host, dev)):
            dst.copy_(src, non_blocking=True)		# warm-up
            torch.cuda.synchronize()
            best = float("inf")
            for _ in range(reps):
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                dst.copy_(src, non_blocking=True)
                end.record()
                end.synchronize()
                best = min(best, start.elapsed_time(end) / 1e3)
            out[way] = nbytes / best / 1e9
        return out


class TorchVmmBackend(TorchBackend):
    """TorchBackend with expandable segments: PyTorch's caching allocator
    maps cuMemCreate pages into one reserved range per segment, which the
    copy engine moves under handles of its own. The setting is read when
    torch initialises its allocator: set here, before torch is imported
    (this process imports it nowhere else)."""

    CONF = "expandable_segments:True"

    def __init__(self, name):
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = self.CONF
        super().__init__(name)

    def hello(self):
        return dict(super().hello(), alloc_conf=self.CONF)


class CupyBackend:
    """CuPy int32 arrays, as TorchBackend's tensors: buffer j word i holds
    i ^ K_j and a round XORs every word with a key of its own; no matrix
    products. CuPy's default memory pool takes each buffer with cudaMalloc
    and keeps what is freed until free_all_blocks."""

    SUB = 64 * MIB // 4			# words compared at once by verify

    def __init__(self, name):
        import cupy
        import numpy

        self.cp = cupy
        self.np = numpy
        self.name = name
        self.bufs = []
        self.keys = []

    def sync(self):
        self.cp.cuda.runtime.deviceSynchronize()

    def hello(self):
        cp = self.cp
        cp.cuda.Device(0).use()
        cp.zeros(1, dtype=cp.int32)		# the context, now
        self.sync()
        free, total = cp.cuda.runtime.memGetInfo()
        name = cp.cuda.runtime.getDeviceProperties(0)["name"]
        if isinstance(name, bytes):
            name = name.decode(errors="replace")
        return {"device": name, "free": free, "total": total,
                "cupy": cp.__version__,
                "cuda": cp.cuda.runtime.runtimeGetVersion()}

    def alloc(self, nbytes, chunk):
        cp, np = self.cp, self.np
        words = chunk // 4
        for j in range(nbytes // chunk):
            t = cp.arange(words, dtype=cp.int32)
            cp.bitwise_xor(t, np.int32(fill_key(self.name, j)), out=t)
            self.bufs.append(t)
            self.keys.append(fill_key(self.name, j))
        self.sync()
        return {"buffers": len(self.bufs), "bytes": len(self.bufs) * chunk}

    def work(self, rnd):
        cp, np = self.cp, self.np
        for j, t in enumerate(self.bufs):
            k = key(self.name, "round", rnd, j)
            cp.bitwise_xor(t, np.int32(k), out=t)
            self.keys[j] ^= k
        self.sync()
        return {"buffers": len(self.bufs)}

    def verify(self):
        cp, np = self.cp, self.np
        bad = []
        for j, t in enumerate(self.bufs):
            for s in range(0, t.size, self.SUB):
                e = min(s + self.SUB, t.size)
                want = cp.arange(s, e, dtype=cp.int32)
                cp.bitwise_xor(want, np.int32(self.keys[j]), out=want)
                if bool(cp.array_equal(t[s:e], want)):
                    continue
                diff = cp.flatnonzero(t[s:e] != want)
                i = int(diff[0])
                bad.append("buffer %d: %d wrong words from %d, word %d is "
                           "%#x, not %#x" % (j, int(diff.size), s, s + i,
                                             int(t[s + i]), int(want[i])))
                break
            if len(bad) >= 3:
                break
        want = diff = None
        self.sync()
        cp.get_default_memory_pool().free_all_blocks()
        if bad:
            raise Mismatch("; ".join(bad))
        return {"buffers": len(self.bufs),
                "bytes": sum(t.size * 4 for t in self.bufs)}

    def free(self):
        self.bufs = []
        self.sync()
        self.cp.get_default_memory_pool().free_all_blocks()


class JaxBackend:
    """jax.numpy int32 arrays, as TorchBackend's tensors; JAX arrays are
    immutable, so a round makes each buffer anew from the old one, which
    is dropped (one buffer more at a time); no matrix products. XLA's pool
    (its BFC allocator, cuMemAlloc regions it keeps) grows as the worker
    allocates (XLA_PYTHON_CLIENT_PREALLOCATE=false) up to its default
    ceiling, 75 % of the total the shim reports: swap_frameworks.sh sizes
    the workers to leave room for it. free and total in hello are XLA's
    (bytes_limit less bytes_in_use, and bytes_limit), not the driver's."""

    SUB = 64 * MIB // 4			# words compared at once by verify
    ENV = {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    UNSET = ("XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_ALLOCATOR",
             "JAX_PLATFORMS", "JAX_PLATFORM_NAME")

    def __init__(self, name):
        for var in self.UNSET:
            os.environ.pop(var, None)
        os.environ.update(self.ENV)
        import jax
        import jax.numpy as jnp
        import numpy

        self.jax = jax
        self.jnp = jnp
        self.np = numpy
        self.name = name
        self.dev = None
        self.bufs = []
        self.keys = []

        def pattern(start, k, n):
            # On the device (jnp.arange(start, stop) is made on the host
            # and copied), in one kernel: no temporary of n words.
            return jnp.bitwise_xor(jax.lax.iota(jnp.int32, n) + start, k)

        def wrong(t, start, k, n):
            got = jax.lax.dynamic_slice(t, (start,), (n,))
            return jnp.sum(got != pattern(start, k, n), dtype=jnp.int32)

        # n (the words) is static: one compilation per size.
        self.made = jax.jit(pattern, static_argnums=2)
        self.wrong = jax.jit(wrong, static_argnums=3)

    def pattern(self, start, n, k):
        """Words start .. start+n-1 of a buffer whose key is k."""
        np = self.np
        return self.made(np.int32(start), np.int32(k), n)

    def hello(self):
        jax = self.jax
        self.dev = jax.devices()[0]
        if self.dev.platform != "gpu":
            raise RuntimeError("JAX has no GPU here (its first device is "
                               "%s): jax[cuda] not installed?" % self.dev)
        self.jnp.zeros(1, dtype=self.jnp.int32).block_until_ready()
        stats = self.dev.memory_stats() or {}
        total = stats.get("bytes_limit", 0)
        return {"device": self.dev.device_kind,
                "free": max(0, total - stats.get("bytes_in_use", 0)),
                "total": total, "jax": jax.__version__}

    def alloc(self, nbytes, chunk):
        words = chunk // 4
        for j in range(nbytes // chunk):
            self.bufs.append(self.pattern(0, words, fill_key(self.name, j)))
            self.keys.append(fill_key(self.name, j))
        for t in self.bufs:
            t.block_until_ready()
        return {"buffers": len(self.bufs), "bytes": len(self.bufs) * chunk}

    def work(self, rnd):
        jnp, np = self.jnp, self.np
        for j in range(len(self.bufs)):
            k = key(self.name, "round", rnd, j)
            # The old array goes with its last reference, once the new
            # one is computed from it.
            self.bufs[j] = jnp.bitwise_xor(self.bufs[j], np.int32(k))
            self.bufs[j].block_until_ready()
            self.keys[j] ^= k
        return {"buffers": len(self.bufs)}

    def verify(self):
        jnp, np = self.jnp, self.np
        bad = []
        for j, t in enumerate(self.bufs):
            for s in range(0, t.size, self.SUB):
                e = min(s + self.SUB, t.size)
                if int(self.wrong(t, np.int32(s), np.int32(self.keys[j]),
                                  e - s)) == 0:
                    continue
                want = self.pattern(s, e - s, self.keys[j])
                got = t[s:e]
                diff = jnp.flatnonzero(got != want)
                i = int(diff[0])
                bad.append("buffer %d: %d wrong words from %d, word %d is "
                           "%#x, not %#x" % (j, int(diff.size), s, s + i,
                                             int(got[i]), int(want[i])))
                break
            if len(bad) >= 3:
                break
        if bad:
            raise Mismatch("; ".join(bad))
        return {"buffers": len(self.bufs),
                "bytes": sum(int(t.size) * 4 for t in self.bufs)}

    def free(self):
        for t in self.bufs:
            t.delete()
        self.bufs = []


class CudaError(Exception):
    pass


class DriverBackend:
    """The driver API through ctypes, and no kernels: buffer j is filled
    with the 32-bit word K_j (cuMemsetD32); a round rotates the buffers'
    contents by one (cuMemcpyDtoD through a spare buffer)."""

    def __init__(self, name):
        self.name = name
        self.cu = ctypes.CDLL("libcuda.so.1")
        self.dev = ctypes.c_int()
        self.ctx = ctypes.c_void_p()
        self.bufs = []			# device pointers, the spare last
        self.order = []			# whose fill each buffer holds
        self.chunk = 0
        self.started = False

    def call(self, fn, *args):
        res = getattr(self.cu, fn)(*args)
        if res != 0:
            name = ctypes.c_char_p()
            self.cu.cuGetErrorName(res, ctypes.byref(name))
            raise CudaError("%s: %s" % (fn, (name.value or b"?").decode()))

    def start(self):
        if self.started:
            return
        u64, size = ctypes.c_uint64, ctypes.c_size_t
        for fn, args in (
                ("cuMemAlloc_v2", [ctypes.POINTER(u64), size]),
                ("cuMemFree_v2", [u64]),
                ("cuMemsetD32_v2", [u64, ctypes.c_uint, size]),
                ("cuMemcpyDtoD_v2", [u64, u64, size]),
                ("cuMemcpyDtoH_v2", [ctypes.c_void_p, u64, size]),
                ("cuMemcpyHtoD_v2", [u64, ctypes.c_void_p, size]),
                ("cuMemAllocHost_v2", [ctypes.POINTER(ctypes.c_void_p),
                                       size]),
                ("cuMemFreeHost", [ctypes.c_void_p]),
                ("cuMemGetInfo_v2", [ctypes.POINTER(size)] * 2)):
            getattr(self.cu, fn).argtypes = args
        self.call("cuInit", 0)
        self.call("cuDeviceGet", ctypes.byref(self.dev), 0)
        self.call("cuDevicePrimaryCtxRetain", ctypes.byref(self.ctx),
                  self.dev)
        self.call("cuCtxSetCurrent", self.ctx)
        self.started = True

    def hello(self):
        self.start()
        name = ctypes.create_string_buffer(256)
        self.call("cuDeviceGetName", name, 256, self.dev)
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        self.call("cuMemGetInfo_v2", ctypes.byref(free), ctypes.byref(total))
        return {"device": name.value.decode(), "free": free.value,
                "total": total.value}

    def _alloc(self, nbytes):
        p = ctypes.c_uint64()
        self.call("cuMemAlloc_v2", ctypes.byref(p), nbytes)
        return p.value

    def alloc(self, nbytes, chunk):
        self.chunk = chunk
        n = nbytes // chunk
        for j in range(n + 1):
            self.bufs.append(self._alloc(chunk))
            if j < n:
                self.call("cuMemsetD32_v2", self.bufs[j],
                          fill_key(self.name, j), chunk // 4)
                self.order.append(j)
        self.call("cuCtxSynchronize")
        return {"buffers": n, "bytes": n * chunk}

    def work(self, rnd):
        b, n, c = self.bufs, len(self.order), self.chunk
        self.call("cuMemcpyDtoD_v2", b[n], b[n - 1], c)
        for i in range(n - 1, 0, -1):
            self.call("cuMemcpyDtoD_v2", b[i], b[i - 1], c)
        self.call("cuMemcpyDtoD_v2", b[0], b[n], c)
        self.order = self.order[-1:] + self.order[:-1]
        self.call("cuCtxSynchronize")
        return {"buffers": n, "round": rnd}

    def verify(self):
        host = ctypes.create_string_buffer(self.chunk)
        bad = []
        for i, j in enumerate(self.order):
            self.call("cuMemcpyDtoH_v2", host, self.bufs[i], self.chunk)
            want = struct.pack("<I", fill_key(self.name, j))
            got = ctypes.string_at(host, self.chunk)
            if got != want * (self.chunk // 4):
                bad.append("buffer %d: word 0 is %#x, not %#x (buffer %d's)"
                           % (i, struct.unpack_from("<I", got)[0],
                              fill_key(self.name, j), j))
            if len(bad) >= 3:
                break
        if bad:
            raise Mismatch("; ".join(bad))
        return {"buffers": len(self.order),
                "bytes": len(self.order) * self.chunk}

    def free(self):
        for p in self.bufs:
            self.call("cuMemFree_v2", p)
        self.bufs = []
        if self.started:
            self.call("cuCtxSynchronize")

    def bandwidth(self, nbytes, reps, pin):
        self.start()
        out = pin_rate(self.cu, pin) if pin else {}
        h = ctypes.c_void_p()
        self.call("cuMemAllocHost_v2", ctypes.byref(h), nbytes)
        d = self._alloc(nbytes)
        ctypes.memset(h, 1, nbytes)
        for way, fn, args in (("h2d", "cuMemcpyHtoD_v2", (d, h, nbytes)),
                              ("d2h", "cuMemcpyDtoH_v2", (h, d, nbytes))):
            self.call(fn, *args)			# warm-up
            best = float("inf")
            for _ in range(reps):
                t0 = time.perf_counter()
                self.call(fn, *args)
                self.call("cuCtxSynchronize")
                best = min(best, time.perf_counter() - t0)
            out[way] = nbytes / best / 1e9
        self.call("cuMemFree_v2", d)
        self.call("cuMemFreeHost", h)
        return out


BACKENDS = {"torch": TorchBackend, "driver": DriverBackend,
            "torch_vmm": TorchVmmBackend, "cupy": CupyBackend,
            "jax": JaxBackend}
# The backends that measure pinned copies (bandwidth): the others have no
# way of their own, and the driver's serves for them (check_swap.py).
BANDWIDTH = ("torch", "torch_vmm", "driver")


def backend(name, worker):
    """The backend called name for worker; a module it needs that cannot
    be imported ends the process with 77 (skipped), said in one line."""
    try:
        return BACKENDS[name](worker)
    except ImportError as e:
        print("SKIP  swap_worker: backend %s: %s" % (name, e),
              file=sys.stderr)
        sys.exit(77)


def answers_only():
    """Keep the real stdout for answers; send everything else to stderr."""
    sys.stdout.flush()
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return answers


def note_sigterm(sig, frame):
    """Say when SIGTERM came, then die of it as without a handler."""
    sys.stderr.write("sigterm at %.3f ms\n" % (time.time() * 1e3))
    sys.stderr.flush()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def serve(args):
    answers = answers_only()
    faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)
    signal.signal(signal.SIGTERM, note_sigterm)
    be = backend(args.backend, args.name)
    failed = verified = False
    rounds = 0
    while True:
        line = sys.stdin.readline()
        if not line:
            print("%s: stdin closed before exit" % args.name, file=sys.stderr)
            failed = True
            break
        words = line.split()
        if not words:
            continue
        cmd, t0 = words[0], time.perf_counter()
        try:
            if cmd == "hello":
                res = dict(be.hello(), pid=os.getpid())
            elif cmd == "alloc":
                res = be.alloc(int(words[1]), int(words[2]))
            elif cmd == "work":
                rounds += 1
                res = be.work(int(words[1]))
            elif cmd == "verify":
                res = be.verify()
                verified = True
            elif cmd == "exit":
                be.free()
                res = {}
            else:
                raise ValueError("unknown command %r" % line.strip())
        except Exception as e:  # every failure is an answer, not a crash
            failed = True
            answers.write("error %s %s: %s\n" % (cmd, type(e).__name__,
                                                 " ".join(str(e).split())))
            if cmd == "exit":
                break
            continue
        res["seconds"] = round(time.perf_counter() - t0, 3)
        answers.write("ok %s %s\n" % (cmd, json.dumps(res)))
        if cmd == "exit":
            break
    ok = verified and not failed
    print("%s: pid %d: %s after %d rounds" % (
        args.name, os.getpid(), "data correct" if ok else
        "FAILED" if failed else "never verified", rounds), file=sys.stderr)
    return 0 if ok else 1


def bandwidth(args):
    answers = answers_only()
    res = backend(args.backend, "bandwidth").bandwidth(args.bytes, args.reps,
                                                       args.pin)
    line = {"bytes": args.bytes, "h2d_gbps": res.pop("h2d"),
            "d2h_gbps": res.pop("d2h")}
    line.update(res)
    answers.write(json.dumps(line) + "\n")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="mode")
    s = sub.add_parser("serve", help="hold memory, take commands on stdin")
    s.add_argument("--name", required=True)
    s.add_argument("--backend", choices=sorted(BACKENDS), default="torch")
    b = sub.add_parser("bandwidth", help="measure pinned copy bandwidth")
    b.add_argument("bytes", type=int)
    b.add_argument("--backend", choices=BANDWIDTH, default="torch")
    b.add_argument("--reps", type=int, default=5)
    b.add_argument("--pin", type=int, default=0, metavar="BYTES",
                   help="also time one cuMemHostAlloc of BYTES")
    args = p.parse_args()
    if args.mode == "serve":
        return serve(args)
    if args.mode == "bandwidth":
        return bandwidth(args)
    p.print_usage(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
