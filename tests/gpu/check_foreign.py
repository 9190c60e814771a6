"""Memory held outside gpufrac (issue 20, 1 and B): a process NOT under the
shim (PyTorch without LD_PRELOAD) holds FOREIGN, half the device. The
daemon must count it within 5 s (refreshed every second): as the used
bytes of a process gpufracctl ps --json lists as "unshimmed" (issue 31),
or, by a daemon before that, in status's devices[0].foreign_bytes. Then a process
under the shim (resolver = wait) asks for 70 % of the device, which fits
the daemon only if the foreign memory were ignored: it must be queued
(or refused by the daemon, a deny event), not granted into a driver
out-of-memory error; once the foreign process exits, it must get its
memory. Printed (and as FIGURE lines): how long until the daemon showed
the foreign memory, and from the foreign process's exit to the grant. Run
by multi.sh (multi.sh foreign [--sim])."""
from gpucheck import check, done
from gpuproc import (GIB, MIB, Events, Sampler, StepError, Worker,
                     chunk_bytes, client, ctl_json, device0, diagnose, figure, first,
                     granted, main, now_ms, say, show_events, size, skip,
                     wait_for, worker_env)

NAME = "foreign"


def conf(nv, backend):
    total, free, _ = nv.memory()
    unit = GIB if backend == "torch" else 64 * MIB
    held = int(min(0.5 * total, free - 3 * unit)) // unit * unit
    ask = int(0.7 * total) // unit * unit
    if held < 4 * unit:
        skip(NAME, "%s free of %s leaves too little to hold"
             % (size(free), size(total)))
    return ("[daemon]\ndefault_resolver = wait\nwait_timeout = 60s\n",
            {"held": held, "ask": ask, "chunk": chunk_bytes(backend),
             "uuid": nv.uuid(), "total": total})


def foreign_bytes():
    """What the daemon counts outside the shim: FOREIGN, and what ps lists
    as unshimmed; None where it reports neither."""
    dev = device0() or {}
    ps = ctl_json("ps") or {}
    unshimmed = sum(d.get("used_bytes", 0) for c in ps.get("clients", [])
                    if c.get("state") == "unshimmed"
                    for d in c.get("devices", []))
    if dev.get("foreign_bytes") is None and not unshimmed:
        return None
    return (dev.get("foreign_bytes") or 0) + unshimmed


def run(args, plan):
    held, ask, chunk = plan["held"], plan["ask"], plan["chunk"]
    say("# outside the shim: %s of the device's %s; under it, a request "
        "for %s" % (size(held), size(plan["total"]), size(ask)))
    events = Events()
    outside = Worker("outside", args.backend,
                     worker_env(None, plan["uuid"]))
    inside = Worker("inside", args.backend,
                    worker_env(args.shim, plan["uuid"]))
    workers = [outside, inside]
    error = fb = t_gone = sampler = None
    seen = False
    queued = refused = False
    try:
        outside.hello(60)
        outside.ask("alloc %d %d" % (held, chunk), 120)
        t_held = now_ms()
        seen = wait_for(lambda: (foreign_bytes() or 0) >= held, 5, 0.1)
        fb = foreign_bytes()
        t_seen = now_ms()
        say("# foreign_bytes: %s" % ("not reported by this daemon"
                                    if fb is None else size(fb)))
        figure("foreign_seen_ms", t_seen - t_held if seen else None)
        inside.hello(60)
        sampler = Sampler([inside.pid])
        t_ask = now_ms()
        inside.send("alloc %d %d" % (ask, chunk))
        wait_for(lambda: inside.answered() or
                 (client(inside.pid) or {}).get("state") == "waiting", 10)
        if inside.answered():
            try:
                res = inside.answer("alloc", 1)
                raise StepError("granted %s at once, which exists only if "
                                "the foreign memory is ignored"
                                % size(res["bytes"]))
            except StepError as e:
                deny = first(events.now(), "deny", inside.pid, t_ask)
                refused = deny is not None
                if not refused:
                    raise
                say("# refused by the daemon: %s" % deny.get("reason"))
        else:
            queued = True
            outside.finish(30)
            t_gone = now_ms()
            try:
                inside.answer("alloc", 60)
            except StepError as e:
                error = e
                diagnose(workers, "the request failed once the foreign "
                         "process had gone")
    except StepError as e:
        error = e
        diagnose(workers, "the check stopped")
    if sampler is not None:
        sampler.stop()
    evs = events.stop()
    if t_gone is not None:
        say("", "--- events from the foreign process's exit on")
        show_events(evs, {inside.pid}, since=t_gone - 5, base=t_gone)
        sampler.report({inside.pid: "inside"}, t_gone)
        grant = granted(evs, inside.pid, t_gone)
        figure("foreign_gone_to_grant_ms",
               grant["time_ms"] - t_gone if grant else None)
    check("gpufracctl counts the %s held outside the shim (unshimmed or "
          "foreign) within 5 s" % size(held), bool(seen),
          "foreign_bytes %s" % ("not reported" if fb is None else size(fb)))
    check("a request that fits only if foreign memory were ignored is "
          "queued or refused by the daemon", queued or refused, error)
    if queued:
        check("once the foreign process is gone it gets its %s"
              % size(ask), error is None, error)
    for w in workers:
        w.kill()
    return done()


if __name__ == "__main__":
    raise SystemExit(main(NAME, __doc__, conf, run))
