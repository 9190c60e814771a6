"""Shared by the real-GPU checks that run several processes (check_swap.py,
check_preempt.py, check_waiter.py, check_foreign.py, check_release.py):
swap_worker.py processes driven one command at a time, the daemon's
events, gpufracctl's JSON read tolerantly (a field this daemon does not
report yet is None, never a crash), NVML through ctypes, the figures
run.sh gathers ("FIGURE name value" lines) and what a stalled step prints
to explain itself (the daemon's events and ps, every worker's Python
stacks).

Times are CLOCK_REALTIME in milliseconds, as the daemon's events give
them (time_ms), so that they compare across processes."""
import ctypes
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "swap_worker.py")
MIB = 1 << 20
GIB = 1 << 30
out_lock = threading.Lock()


class StepError(Exception):
    pass


def say(*lines):
    with out_lock:
        for line in lines:
            print(line)
        sys.stdout.flush()


def size(n):
    """Bytes in IEC units, as gpufracctl prints them."""
    for unit, scale in (("TiB", 1 << 40), ("GiB", GIB), ("MiB", MIB),
                        ("KiB", 1 << 10)):
        if abs(n) >= scale:
            return "%.1f%s" % (n / scale, unit)
    return "%dB" % n


def now_ms():
    """CLOCK_REALTIME in ms, the clock of the daemon's events (time_ms)."""
    return time.time() * 1e3


def env_number(name, default, kind=float):
    v = os.environ.get(name, "")
    return kind(v) if v else default


def figure(name, value):
    """A measured figure for run.sh's summary: reported, never asserted."""
    if value is None:
        say("FIGURE %s null" % name)
    elif isinstance(value, float):
        say("FIGURE %s %.3f" % (name, value))
    else:
        say("FIGURE %s %s" % (name, value))


def clean_env():
    """Ours, without the shim: for gpufracctl and processes outside it."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return env


def ctl(*args, timeout=10):
    return subprocess.run([os.environ["GPUFRACCTL"], "-s",
                           os.environ["GPUFRAC_SOCKET"]] + list(args),
                          env=clean_env(), check=True, capture_output=True,
                          text=True, timeout=timeout).stdout


def ctl_json(*args):
    """gpufracctl ARGS --json, parsed; None (said why) if it failed."""
    try:
        return json.loads(ctl(*(list(args) + ["--json"])))
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired,
            ValueError) as e:
        say("# gpufracctl %s --json: %s" % (" ".join(args), str(e).strip()))
        return None


def device0(st=None):
    """The daemon's first device in a status, or None."""
    st = st if st is not None else ctl_json("status")
    if not st or not st.get("devices"):
        return None
    return st["devices"][0]


def client(pid, ps=None):
    """pid's record in gpufracctl ps --json, or None."""
    ps = ps if ps is not None else ctl_json("ps")
    for c in (ps or {}).get("clients", []):
        if c.get("pid") == pid:
            return c
    return None


def wait_for(cond, timeout, step=0.05):
    """cond() until it is true or timeout seconds passed; its last value."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(step)


class Worker:
    """A swap_worker.py serve, its answers queued by a reader thread, its
    stderr echoed with its name. gid: its primary gid (the daemon matches
    groups on it; root only). It notes when it got SIGTERM (a line from
    the worker) and when it exited, and answers SIGUSR1 with its Python
    stacks on stderr (swap_worker.py), which dump_stacks asks for."""

    def __init__(self, name, backend, env, gid=None):
        self.name = name
        self.pid = None
        self.sigterm_ms = None
        self.exit_ms = None
        self.status = None
        kw = {}
        if gid is not None:
            kw = {"group": gid, "extra_groups": []}
        self.proc = subprocess.Popen(
            [sys.executable, WORKER, "serve", "--name", name,
             "--backend", backend],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=env, text=True, bufsize=1, **kw)
        self.answers = queue.Queue()
        threading.Thread(target=self._answers, daemon=True).start()
        threading.Thread(target=self._stderr, daemon=True).start()

    def _answers(self):
        for line in self.proc.stdout:
            self.answers.put(line.rstrip("\n"))
        self.status = self.proc.wait()
        self.exit_ms = now_ms()
        self.answers.put(None)

    def _stderr(self):
        for line in self.proc.stderr:
            line = line.rstrip("\n")
            m = re.match(r"sigterm at (\d+(?:\.\d+)?) ms$", line)
            if m:
                self.sigterm_ms = float(m.group(1))
            say("  %s| %s" % (self.name, line))

    def send(self, line):
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            raise StepError("%s: gone before %r" % (self.name, line))

    def answer(self, cmd, timeout):
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.answers.get(
                    timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise StepError("%s: no answer to %s within %g s"
                                % (self.name, cmd, timeout))
            if line is None:
                self.answers.put(None)
                raise StepError("%s: exited (status %s) before answering %s"
                                % (self.name, self.proc.wait(), cmd))
            word, _, rest = line.partition(" ")
            got, _, rest = rest.partition(" ")
            if word == "ok" and got == cmd:
                return json.loads(rest)
            if word == "error" and got == cmd:
                raise StepError("%s: %s: %s" % (self.name, cmd, rest))
            say("  %s| unexpected answer: %s" % (self.name, line))

    def answered(self):
        """Whether an answer (or the worker's end) is waiting: peeked, so
        the next answer() still gets it."""
        return not self.answers.empty()

    def ask(self, line, timeout):
        self.send(line)
        return self.answer(line.split()[0], timeout)

    def hello(self, timeout):
        res = self.ask("hello", timeout)
        self.pid = res["pid"]
        say("%s: pid %d sees %s: %s total, %s free" % (
            self.name, self.pid, res["device"], size(res["total"]),
            size(res["free"])))
        return res

    def alive(self):
        return self.proc.poll() is None

    def dump_stacks(self):
        """SIGUSR1: the worker writes its threads' Python stacks to stderr,
        which _stderr echoes."""
        if self.alive():
            try:
                self.proc.send_signal(signal.SIGUSR1)
            except OSError:
                pass

    def kill(self):
        if self.alive():
            self.proc.kill()
        self.proc.wait()

    def finish(self, timeout):
        """exit, then its status; killed if it does not go in time."""
        if not self.alive():
            return self.proc.wait()
        try:
            self.ask("exit", timeout)
        except StepError as e:
            say("  %s" % e)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            say("  %s: still running after exit; killed" % self.name)
            self.proc.kill()
            return self.proc.wait()


class Events:
    """gpufracctl events --json --follow, collected from now on."""

    def __init__(self):
        self.lines = []
        self.proc = subprocess.Popen(
            [os.environ["GPUFRACCTL"], "-s", os.environ["GPUFRAC_SOCKET"],
             "events", "--json", "--follow"], stdout=subprocess.PIPE,
            env=clean_env(), text=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.strip())

    def now(self):
        """Every event seen so far: followed, and the ring's (in case the
        follower missed some), oldest first."""
        try:
            snapshot = ctl("events", "--json").splitlines()
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            snapshot = []
        seen, events = set(), []
        for line in list(self.lines) + snapshot:
            if not line or line in seen:
                continue
            seen.add(line)
            try:
                events.append(json.loads(line))
            except ValueError:
                say("  events| not JSON: %s" % line)
        events.sort(key=lambda e: e.get("time_ms", 0))
        return events

    def stop(self):
        """now(), once the last event had time to arrive; no more after."""
        time.sleep(0.5)
        self.proc.terminate()
        self.proc.wait()
        self.reader.join(5)
        return self.now()


def first(events, kind, pid=None, after=0.0):
    """The first event of kind (a name or a tuple of names) of pid at or
    after time after, or None."""
    kinds = (kind,) if isinstance(kind, str) else kind
    for e in events:
        if e.get("event") in kinds and e.get("time_ms", 0) >= after and \
                (pid is None or e.get("pid") == pid):
            return e
    return None


def granted(events, pid, after):
    """When pid's memory was granted from after on: a waiter's wake (with
    the memory) or a grant, whichever comes first; None if neither."""
    for e in events:
        if e.get("pid") == pid and e.get("time_ms", 0) >= after and (
                e.get("event") == "grant" or (
                    e.get("event") == "wake" and
                    "granted" in e.get("reason", ""))):
            return e
    return None


def show_events(events, pids, since=0.0, base=None):
    """The events of pids (all with pids None) from since on, with their
    time from base."""
    base = since if base is None else base
    for e in events:
        if e.get("time_ms", 0) < since:
            continue
        if pids is not None and e.get("pid") not in pids:
            continue
        say("  %+8.0f ms  %-10s pid %-7s %-9s %s" % (
            e.get("time_ms", 0) - base, e.get("event"), e.get("pid"),
            size(e.get("bytes", 0)), e.get("reason", "")))


def diagnose(workers, why):
    """A step overran or failed: say why, then the daemon's events and
    ps, then each worker's Python stacks (SIGUSR1), so that a stall on a
    real GPU explains itself."""
    say("=== %s: the daemon's events, gpufracctl ps and the workers' "
        "stacks follow" % why)
    for args in (("events",), ("ps",), ("status",)):
        try:
            lines = ctl(*args).rstrip().split("\n")
            if len(lines) > 41:		# the header, the last 40 events
                lines = lines[:1] + ["  ..."] + lines[-40:]
            say("--- gpufracctl %s" % " ".join(args), *lines)
        except (subprocess.CalledProcessError,
                subprocess.TimeoutExpired) as e:
            say("--- gpufracctl %s: %s" % (" ".join(args), e))
    for w in workers:
        if w.alive():
            say("--- %s (pid %s): Python stacks" % (w.name, w.pid))
            w.dump_stacks()
        else:
            say("--- %s: exited, status %s" % (w.name, w.proc.poll()))
    time.sleep(1.0)			# the stacks come through _stderr
    say("=== end of %s" % why)


class Sampler:
    """A device's fields in gpufracctl status --json (foreign_bytes,
    releasing_bytes: None where the daemon does not report them) and the
    states of pids in ps, every period seconds, with the time."""

    FIELDS = ("foreign_bytes", "releasing_bytes", "free_bytes")

    def __init__(self, pids=(), period=0.25):
        self.pids = list(pids)
        self.period = period
        self.samples = []		# (ms, {field: value}, {pid: state})
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stopping.is_set():
            t = now_ms()
            dev = device0() or {}
            ps = ctl_json("ps") if self.pids else None
            states = {}
            for pid in self.pids:
                c = client(pid, ps)
                states[pid] = c.get("state") if c else None
            self.samples.append((t, {f: dev.get(f) for f in self.FIELDS},
                                 states))
            self.stopping.wait(self.period)

    def stop(self):
        self.stopping.set()
        self.thread.join(10)
        return self.samples

    def report(self, names, base):
        """What was seen: the most of each field, and when each pid was
        first seen in each state, from base."""
        for f in ("foreign_bytes", "releasing_bytes"):
            vals = [s[1][f] for s in self.samples if s[1][f] is not None]
            if not vals:
                say("# %s: not reported by this daemon" % f)
                continue
            peak = max(vals)
            when = next(s[0] for s in self.samples if s[1][f] == peak)
            say("# %s: at most %s (%+.0f ms)" % (f, size(peak), when - base))
        for pid, name in names.items():
            seen = {}
            for t, _, states in self.samples:
                st = states.get(pid)
                if st is not None and st not in seen:
                    seen[st] = t
            say("# %s (pid %s) in ps: %s" % (name, pid, ", ".join(
                "%s %+.0f ms" % (st, t - base) for st, t in seen.items())
                or "never seen"))


class NvmlProcess(ctypes.Structure):	# nvmlProcessInfo_t (v2, v3)
    _fields_ = [("pid", ctypes.c_uint),
                ("usedGpuMemory", ctypes.c_ulonglong),
                ("gpuInstanceId", ctypes.c_uint),
                ("computeInstanceId", ctypes.c_uint)]


class NvmlMemory(ctypes.Structure):	# nvmlMemory_t
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


class Nvml:
    """NVML's view of device index, without the shim: its memory and the
    processes that hold some (as pynvml asks, which may not be there)."""

    def __init__(self, index=0):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        self.ok("nvmlInit_v2", self.lib.nvmlInit_v2())
        self.h = ctypes.c_void_p()
        self.ok("nvmlDeviceGetHandleByIndex_v2",
                self.lib.nvmlDeviceGetHandleByIndex_v2(
                    index, ctypes.byref(self.h)))
        try:
            self.procs_fn = self.lib.nvmlDeviceGetComputeRunningProcesses_v3
        except AttributeError:
            self.procs_fn = self.lib.nvmlDeviceGetComputeRunningProcesses_v2

    @staticmethod
    def ok(call, r):
        if r != 0:
            raise OSError("%s: nvmlReturn_t %d" % (call, r))

    def string(self, fn, *args):
        buf = ctypes.create_string_buffer(96)
        self.ok(fn, getattr(self.lib, fn)(*(list(args) + [buf, len(buf)])))
        return buf.value.decode()

    def uuid(self):
        return self.string("nvmlDeviceGetUUID", self.h)

    def name(self):
        return self.string("nvmlDeviceGetName", self.h)

    def memory(self):
        """(total, free, used) in bytes."""
        m = NvmlMemory()
        self.ok("nvmlDeviceGetMemoryInfo",
                self.lib.nvmlDeviceGetMemoryInfo(self.h, ctypes.byref(m)))
        return m.total, m.free, m.used

    def processes(self):
        """{pid: bytes} of the compute processes NVML lists (pids as NVML
        sees them: another PID namespace's, in some containers)."""
        n = ctypes.c_uint(64)
        infos = (NvmlProcess * 64)()
        self.ok("nvmlDeviceGetComputeRunningProcesses",
                self.procs_fn(self.h, ctypes.byref(n), infos))
        return {infos[i].pid: infos[i].usedGpuMemory
                for i in range(n.value)}


def hold_bytes(total, free, backend, var="GPU_PREEMPT_GIB"):
    """How much a process holds in the preempt, waiter and release checks:
    $var GiB if set, else 40 GiB or 60 % of the device, whichever is more,
    so that two do not fit the driver's memory (the case of issue 20: a
    grant the driver cannot honour yet); never more than is free less
    3 GiB (contexts, the workers' matrices). On the simulated driver
    (backend driver): 60 % of the device, in 64 MiB."""
    if backend == "driver":
        return int(0.6 * total) // (64 * MIB) * (64 * MIB)
    want = env_number(var, 0.0) * GIB or max(40 * GIB, 0.6 * total)
    return int(min(want, free - 3 * GIB)) // GIB * GIB


def chunk_bytes(backend):
    return GIB if backend == "torch" else 64 * MIB


def device_section(nv, capacity):
    """The [device] section that makes the daemon share capacity bytes of
    NVML's device (its total less a reserve); empty if capacity is all."""
    total = nv.memory()[0]
    if capacity >= total:
        return ""
    return "\n[device %s]\nreserve = %d\n" % (nv.uuid(), total - capacity)


def worker_env(shim, uuid):
    """A worker's environment: under the shim if shim, else outside it."""
    env = clean_env()
    env["CUDA_VISIBLE_DEVICES"] = uuid
    env["PYTHONUNBUFFERED"] = "1"
    if shim:
        env["LD_PRELOAD"] = shim
    return env


LOW_GID, HIGH_GID = 47100, 47110	# the preemption check's groups


def skip(name, reason):
    """Exit 77 (run.sh counts a SKIP), saying why on run.sh's line."""
    say("SKIP  %s: %s" % (name, reason))
    sys.exit(77)


def main(name, doc, conf, run):
    """The command line of a check run by multi.sh:
      check_NAME.py conf --backend B --out CONF --plan PLAN
          CONF gets the daemon's configuration for the check, sized from
          NVML's device 0, PLAN (JSON) the sizes run is to use;
      check_NAME.py run --backend B --shim PATH --plan PLAN
          the check, against the daemon on $GPUFRAC_SOCKET.
    conf(nv, backend) returns (config text, plan); run(args, plan)
    returns the exit status (0, 1, or 77 through skip())."""
    import argparse

    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("mode", choices=("conf", "run"))
    p.add_argument("--backend", choices=("torch", "driver"), default="torch")
    p.add_argument("--shim", default=os.path.join(
        HERE, "..", "..", "build", "shim", "libgpufrac.so"))
    p.add_argument("--out")
    p.add_argument("--plan", required=True)
    args = p.parse_args()
    args.shim = os.path.abspath(args.shim)
    if args.mode == "conf":
        if not args.out:
            p.error("conf needs --out")
        try:
            nv = Nvml()
        except OSError as e:
            skip(name, "no usable NVML: %s" % e)
        text, plan = conf(nv, args.backend)
        with open(args.out, "w") as f:
            f.write(text)
        with open(args.plan, "w") as f:
            json.dump(plan, f)
        return 0
    for var in ("GPUFRACCTL", "GPUFRAC_SOCKET"):
        if var not in os.environ:
            p.error("%s is not set (multi.sh sets it)" % var)
    with open(args.plan) as f:
        plan = json.load(f)
    return run(args, plan)


def sized(nv, backend, name):
    """(hold, chunk, total, free, uuid) for the checks that need one
    process's memory not to fit twice; skip() if the device is too small."""
    total, free, _ = nv.memory()
    hold = hold_bytes(total, free, backend)
    chunk = chunk_bytes(backend)
    if hold < 4 * chunk:
        skip(name, "%s free of %s leaves too little to hold"
             % (size(free), size(total)))
    return hold, chunk, total, free, nv.uuid()


def tight_section(nv, hold, total, backend):
    """Where two holds fit the device (GPU_PREEMPT_GIB set small), the
    [device] section that makes the daemon share 1.5 holds, so that they
    collide in the daemon all the same (not in the driver: said so)."""
    margin = 2 * GIB if backend == "torch" else 128 * MIB
    if 2 * hold + margin <= total:
        say("# two holds of %s fit the device's %s: the daemon is to share "
            "%s, so they collide there but not in the driver"
            % (size(hold), size(total), size(hold + hold // 2)))
        return device_section(nv, hold + hold // 2), False
    return "", True
