"""Host swap (DESIGN.md section 4, issue 4): two processes that each need
70 % of what the daemon shares of the GPU take turns working and idling
under resolver = swap; both must finish with correct results. Run by
swap.sh against a gpufracd it started on $GPUFRAC_SOCKET with
default_resolver = swap.

  check_swap.py plan --out FILE [--share BYTES]
      FILE gets the [device] section that makes the daemon share no more
      of its first device than host memory can hold swapped out twice,
      and, with --share, no more than makes BYTES 70 % of what it shares
      (so that two workers of BYTES collide: a short run on a large GPU);
      empty when the whole device fits.
  check_swap.py run [--backend B] [--shim PATH] [--share BYTES]
                    [--engine copy|checkpoint] [--bandwidth FILE]
      Measure pinned host<->device copy bandwidth and how fast one
      cuMemHostAlloc of a worker's share pins, run two swap_worker.py
      under the shim and make them alternate, then report every swap-out
      and swap-in against that bandwidth (and as FIGURE lines for run.sh).
      Each worker takes 70 % of what the daemon shares, or BYTES if less.
      With --engine, the daemon must swap with that engine (swap_engine)
      and every swap event must say so; the figures are named after it
      (swap_out_gbps_copy). With --bandwidth, the pinned copies are read
      from FILE if it exists, else measured and written there: the
      engines of one swap.sh run are set beside the same figures.
      B is swap_worker.py's backend: torch (the default), driver, or a
      framework of issue 21's point 4, torch_vmm, cupy or jax, whose
      swap figures are named after it too (swap_out_gbps_copy_cupy; the
      driver backend measures the pinned copies for cupy and jax); one
      whose module is not installed is skipped (77).
      The summary says what the swap-outs said stayed on the device
      ("2 stayed: 258.0KiB (small)", or nothing), and so does the FIGURE
      swap_stayed_ENGINE[_B] (a string, or null without a swap-out).

A step that overruns (GPU_SWAP_STEP_TIMEOUT) or fails prints the daemon's
events, gpufracctl ps and status, and each worker's Python stacks.

Both exit 77, saying why, when the daemon has no host swap.

The alternation is driven from here, one command at a time, never by
sleeps: A fills its share; B fills its own, which does not fit, so the
daemon swaps idle A out; then, each round, A works (its first driver call
swaps it back in, swapping idle B out to make room), then B works (and
swaps A out); at the end A, then B, checks every byte. Between its turns
a worker waits on its stdin, outside the driver.

Asserted: both workers' data are intact and they exit 0, and at least one
swap-out and one swap-in happened. Speed is reported only (DESIGN.md
section 7: swap-out + swap-in at >= 80 % of pinned copy bandwidth).
"""
import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import time

from gpucheck import check, done
from gpuproc import (GIB, MIB, WORKER, Events, StepError, Worker, ctl,
                     diagnose, env_number, figure, say, size, worker_env)

TARGET = 0.80			# DESIGN.md section 7
# swap_worker.py's backends, and the module each needs (None: ctypes).
MODULES = {"torch": "torch", "driver": None, "torch_vmm": "torch",
           "cupy": "cupy", "jax": "jax"}
# Those that stand for a framework of issue 21's point 4: their figures
# carry their name (swap_frameworks.sh runs them one after another).
FRAMEWORKS = ("torch_vmm", "cupy", "jax")


def status_or_skip():
    st = json.loads(ctl("status", "--json"))
    if not st["swap"]["available"]:
        say("SKIP  swap: host swap unavailable: " + st["swap"]["reason"])
        sys.exit(77)
    if not st["devices"]:
        say("SKIP  swap: the daemon has no device")
        sys.exit(77)
    return st


def mem_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no MemAvailable in /proc/meminfo")


def host_budget(avail):
    """What the swapped-out images may take of the host's free memory: both
    workers' at once (the one coming in is still out while the other goes
    out), with room left for the processes themselves."""
    return avail - max(8 * GIB, avail // 4)


def plan(args):
    st = status_or_skip()
    dev = st["devices"][0]
    avail, cap = mem_available(), dev["capacity_bytes"]
    budget = host_budget(avail)
    open(args.out, "w").close()
    want = cap
    if args.share:
        want = min(cap, -(-int(args.share / args.fraction) // MIB) * MIB)
        say("workers of %s: the daemon is to share %s of the device's %s"
            % (size(args.share), size(want), size(dev["total_bytes"])))
    if 2 * args.fraction * want <= budget:
        say("host memory: %s available holds two swapped-out shares of %s"
            % (size(avail), size(int(args.fraction * want))))
        share = want
    else:
        share = int(budget / (2 * args.fraction)) // GIB * GIB
        if share < GIB:
            say("SKIP  swap: %s of host memory available cannot hold two "
                "swapped-out shares of even 1 GiB" % size(avail))
            return 77
        say("host memory: %s available cannot hold two swapped-out shares "
            "of %s; the daemon will share %s of the device's %s"
            % (size(avail), size(int(args.fraction * want)), size(share),
               size(dev["total_bytes"])))
    if share < cap:
        with open(args.out, "w") as f:
            f.write("[device %s]\nreserve = %d\n"
                    % (dev["uuid"], dev["total_bytes"] - share))
    return 0


def measure_bandwidth(args, nbytes, pin, env):
    """The baseline: pinned copies of nbytes and one pinning of pin bytes
    in a process of its own, no shim; read from args.bandwidth when an
    earlier engine of the run measured it."""
    if args.bandwidth and os.path.exists(args.bandwidth):
        with open(args.bandwidth) as f:
            return json.load(f)
    bw = measure_once(args, nbytes, pin, env)
    if args.bandwidth:
        with open(args.bandwidth, "w") as f:
            json.dump(bw, f)
    return bw


def bandwidth_backend(backend):
    """The worker backend that measures pinned copies for backend: cupy
    and jax have no way of their own, the driver's serves."""
    return backend if backend in ("torch", "torch_vmm", "driver") \
        else "driver"


def measure_once(args, nbytes, pin, env):
    out = subprocess.run(
        [sys.executable, WORKER, "bandwidth", str(nbytes), "--backend",
         bandwidth_backend(args.backend), "--pin", str(pin)], env=env,
        capture_output=True, text=True,
        timeout=max(args.step_timeout, 60.0))
    if out.returncode != 0:
        raise StepError("bandwidth measurement failed (status %d): %s"
                        % (out.returncode, out.stderr.strip()[-2000:]))
    return json.loads(out.stdout.splitlines()[-1])


def pinning(bw):
    """How fast one cuMemHostAlloc pinned, for the summary lines."""
    if bw.get("pin_gbps") is None:
        return "pinning not measured%s" % (
            ": " + bw["pin_error"] if bw.get("pin_error") else "")
    return "pinning %.2f GB/s (%s in one cuMemHostAlloc)" % (
        bw["pin_gbps"], size(bw["pin_bytes"]))


def gbps(e):
    return e["bytes"] / e["duration_ms"] / 1e6 if e["duration_ms"] else None


def stayed(outs):
    """What the swap-outs said stayed on the device (the copy engine's
    "; N stayed: SIZE (WHAT)" at the end of the reason, cut where the
    reason was), each different one once."""
    said = []
    for e in outs:
        m = re.search(r"; (\d+ stayed: .*)$", e.get("reason", ""))
        if m and m.group(1) not in said:
            said.append(m.group(1))
    return said


def report(events, who, bw, engine, backend):
    """The swap table and its summary; returns the swap-outs and -ins."""
    pinned = {"swap-out": bw["d2h_gbps"], "swap-in": bw["h2d_gbps"]}
    swaps = [e for e in events if e["pid"] in who and e["event"] in pinned]
    rows = [("EVENT", "WORKER", "PID", "BYTES", "MS", "GB/S", "OF PINNED",
             "REASON")]
    for e in swaps:
        r = gbps(e)
        rows.append((e["event"], who[e["pid"]], str(e["pid"]),
                     size(e["bytes"]), str(e["duration_ms"]),
                     "-" if r is None else "%.2f" % r,
                     "-" if r is None else
                     "%.0f%%" % (100 * r / pinned[e["event"]]), e["reason"]))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    say("", "--- swap events%s (pinned copies: host->device %.2f GB/s, "
        "device->host %.2f GB/s, %s each way; %s)"
        % (", engine " + engine if engine else "", bw["h2d_gbps"],
           bw["d2h_gbps"], size(bw["bytes"]), pinning(bw)))
    for r in rows:
        say("  ".join(c.rjust(w) if i in (2, 3, 4, 5, 6) else c.ljust(w)
                      for i, (c, w) in enumerate(zip(r, widths)))
            + "  " + r[-1])
    ideal = actual = 0.0
    for kind, way in (("swap-out", "device->host"), ("swap-in",
                                                     "host->device")):
        timed = [e for e in swaps if e["event"] == kind and e["duration_ms"]]
        n = sum(1 for e in swaps if e["event"] == kind)
        if not timed:
            say("%-9s %d, none long enough to time" % (kind + ":", n))
            continue
        nbytes = sum(e["bytes"] for e in timed)
        secs = sum(e["duration_ms"] for e in timed) / 1e3
        ideal += nbytes / (pinned[kind] * 1e9)
        actual += secs
        say("%s%-9s %s, %s in %.2f s: %.2f GB/s, %.0f%% of pinned %s"
            % (engine + " " if engine else "", kind + ":", n if n == len(timed) else "%d (%d timed)" % (
                n, len(timed)), size(nbytes), secs, nbytes / secs / 1e9,
               100 * nbytes / secs / 1e9 / pinned[kind], way))
    if actual > 0:
        ratio = ideal / actual
        say("swap-out + swap-in: %.0f%% of pinned host<->device bandwidth "
            "(target >= %.0f%%: %s; reported, not asserted)"
            % (100 * ratio, 100 * TARGET,
               "met" if ratio >= TARGET else "not met"))
    for e in events:
        if e["pid"] in who and e["event"] in ("swap-skip", "fallback",
                                              "timeout", "deny"):
            say("note: %s %s (pid %d): %s" % (e["event"], who[e["pid"]],
                                              e["pid"], e["reason"]))
    outs = [e for e in swaps if e["event"] == "swap-out"]
    left = stayed(outs)
    if not outs:
        say("stayed on the device at swap-out: no swap-out")
    else:
        say("stayed on the device at swap-out (%s): %s" % (
            backend, "; ".join(left) if left else
            "nothing said (%d swap-outs)" % len(outs)))
    figures(swaps, bw, engine, backend,
            None if not outs else "; ".join(left) or "nothing")
    return outs, [e for e in swaps if e["event"] == "swap-in"]


def figures(swaps, bw, engine, backend, left):
    """For run.sh's summary: pinned copies, pinning, each swap's GB/s each
    way (null where too short to time) and each way's over all timed
    swaps, and what stayed (left), named after the engine when one was
    given and after a framework's backend."""
    suffix = "_" + engine if engine else ""
    if backend in FRAMEWORKS:
        suffix += "_" + backend
    figure("pinned_h2d_gbps", bw["h2d_gbps"])
    figure("pinned_d2h_gbps", bw["d2h_gbps"])
    figure("pin_gbps", bw.get("pin_gbps"))
    figure("swap_stayed" + suffix, json.dumps(left))
    for kind, name in (("swap-out", "swap_out"), ("swap-in", "swap_in")):
        each = [gbps(e) for e in swaps if e["event"] == kind]
        figure(name + "_each_gbps" + suffix, json.dumps(
            [None if r is None else round(r, 3) for r in each]))
        timed = [e for e in swaps if e["event"] == kind and e["duration_ms"]]
        secs = sum(e["duration_ms"] for e in timed) / 1e3
        figure(name + "_gbps" + suffix, sum(e["bytes"] for e in timed) /
               secs / 1e9 if secs else None)


def sizes(args, cap):
    """Each worker's share and its buffers' size: whole buffers, many."""
    top = 64 * MIB if args.backend == "driver" else GIB
    want = int(args.fraction * cap)
    if args.share:
        want = min(want, args.share)
    chunk = max(2 * MIB, min(top, want // 16))
    chunk = chunk // (2 * MIB) * (2 * MIB)
    return want // chunk * chunk, chunk


def alternate(workers, share, chunk, args):
    """The turns (see the top of the file); StepError ends them early."""
    a, b = workers
    steps = [(a, "alloc %d %d" % (share, chunk)),
             (b, "alloc %d %d" % (share, chunk))]
    for r in range(1, args.rounds + 1):
        steps += [(a, "work %d" % r), (b, "work %d" % r)]
    steps += [(a, "verify"), (b, "verify")]
    verified = set()
    for i, (w, line) in enumerate(steps):
        if i > 0:
            time.sleep(args.idle)
        try:
            res = w.ask(line, args.step_timeout)
        except StepError as e:
            diagnose(workers, "step %d (%s: %s) failed or overran" % (
                i + 1, w.name, line))
            raise e
        say("%s: %-22s %8.2f s" % (w.name, line if not line.startswith(
            "alloc") else "alloc " + size(res["bytes"]), res["seconds"]))
        if line == "verify":
            verified.add(w.name)
    return verified


def run(args):
    module = MODULES[args.backend]
    if module and importlib.util.find_spec(module) is None:
        say("SKIP  swap: %s not installed (backend %s)" % (module,
                                                        args.backend))
        return 77
    st = status_or_skip()
    dev = st["devices"][0]
    groups = [g for g in st["groups"] if g["name"] == "default" and
              g["device"] in (dev["uuid"], None)]
    if not groups or groups[0]["resolver"] != "swap":
        say("check_swap: the daemon's default group does not resolve "
            "collisions by swap: %s" % groups)
        return 1
    if args.engine and st["swap"]["engine"] != args.engine:
        say("check_swap: the daemon swaps with the %s engine, not %s"
            % (st["swap"]["engine"], args.engine))
        return 1
    cap = dev["capacity_bytes"]
    share, chunk = sizes(args, cap)
    say("device %s (%s): %s shared of %s; each worker takes %s (%d %% of "
        "it) in %s buffers, %d rounds"
        % (dev["index"], dev["name"], size(cap), size(dev["total_bytes"]),
           size(share), round(100 * args.fraction), size(chunk),
           args.rounds))
    avail = mem_available()
    if 2 * share > host_budget(avail):
        say("warning: %s of host memory available may not hold two "
            "swapped-out shares" % size(avail))

    env = worker_env(None, dev["uuid"])
    bw_bytes = min(256 * MIB if bandwidth_backend(args.backend) == "driver"
                   else 4 * GIB,
                   cap // 8, host_budget(avail) // 4) // (2 * MIB) * (2 * MIB)
    # One pinning of a worker's share, as a swap-out by copy pins it, if
    # host memory holds it beside the copies' buffers.
    pin = max(0, min(share, host_budget(avail) // 2)) // (2 * MIB) * (
        2 * MIB)
    try:
        bw = measure_bandwidth(args, bw_bytes, pin, env)
    except (StepError, subprocess.TimeoutExpired, ValueError,
            IndexError) as e:
        check("pinned copy bandwidth measured", False, e)
        return done()
    say("pinned copies: host->device %.2f GB/s, device->host %.2f GB/s; %s"
        % (bw["h2d_gbps"], bw["d2h_gbps"], pinning(bw)))

    env["LD_PRELOAD"] = args.shim
    events = Events()
    workers = [Worker(n, args.backend, env) for n in ("A", "B")]
    verified, error = set(), None
    try:
        for w in workers:
            w.hello(args.step_timeout)
        verified = alternate(workers, share, chunk, args)
    except StepError as e:
        error = e
        say("stopped: %s" % e)
    # B is on the device at the end: it goes first, A comes back to go.
    codes = {w.name: w.finish(args.step_timeout) for w in workers[::-1]}
    evs = events.stop()

    who = {w.pid: w.name for w in workers if w.pid is not None}
    outs, ins = report(evs, who, bw, args.engine, args.backend)
    say("")
    check("A and B took turns to the end", error is None, error)
    for w in workers:
        check("%s's %s came back from host memory intact" % (
            w.name, size(share)), w.name in verified)
        check("%s exits 0" % w.name, codes[w.name] == 0, codes[w.name])
    check("at least one swap-out", len(outs) >= 1, len(outs))
    check("at least one swap-in", len(ins) >= 1, len(ins))
    if args.engine:
        other = [e["reason"] for e in outs + ins
                 if " by %s " % args.engine not in e["reason"]]
        check("every swap was by %s" % args.engine, not other, other[:2])
    return done()


def fraction(s):
    v = float(s)
    if not 0.5 < v < 1.0:
        raise argparse.ArgumentTypeError("not between 0.5 and 1: %s" % s)
    return v


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--fraction", type=fraction,
                   default=env_number("GPU_SWAP_FRACTION", 0.7),
                   help="each worker's share of the device (0.7)")
    sub = p.add_subparsers(dest="mode")
    pl = sub.add_parser("plan", help="how much of the device to share")
    pl.add_argument("--out", required=True)
    pl.add_argument("--share", type=int, default=0,
                    help="each worker's bytes (0: 70 %% of the device)")
    r = sub.add_parser("run", help="run the two workers, report the swaps")
    r.add_argument("--backend", choices=sorted(MODULES), default="torch")
    r.add_argument("--shim", default=os.path.join(
        os.path.dirname(WORKER), "..", "..", "shim", "libgpufrac.so"))
    r.add_argument("--share", type=int, default=0,
                   help="each worker's bytes, at most (0: no more)")
    r.add_argument("--rounds", type=int,
                   default=env_number("GPU_SWAP_ROUNDS", 3, int))
    r.add_argument("--idle", type=float,
                   default=env_number("GPU_SWAP_IDLE", 1.0),
                   help="seconds between turns (1)")
    r.add_argument("--engine", choices=("copy", "checkpoint"),
                   help="the engine the daemon must swap with")
    r.add_argument("--bandwidth", metavar="FILE",
                   help="pinned copies: read here, or measured and kept")
    r.add_argument("--step-timeout", type=float,
                   default=env_number("GPU_SWAP_STEP_TIMEOUT", 60.0))
    args = p.parse_args()
    for var in ("GPUFRACCTL", "GPUFRAC_SOCKET"):
        if var not in os.environ:
            p.error("%s is not set (swap.sh sets it)" % var)
    if args.mode == "plan":
        return plan(args)
    if args.mode == "run":
        args.shim = os.path.abspath(args.shim)
        return run(args)
    p.print_usage(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
