"""No way out (issue 31): a PyTorch process WITHOUT the shim, of a group
matched by its kernel identity (gid: the workers run as root) whose limit
is 8 GiB, takes 20 GiB (on the simulated driver: 25 % and 60 % of the
device). The daemon must list it within 1.5 s of its allocation: gpufracctl
ps --json state "unshimmed", its used bytes NVML's (at least what it
took), counted in its group's used. Then one of a group that says
unshimmed = kill takes as much: it must be killed (SIGKILL, event
unshimmed-kill), and its memory come back. Printed: the driver's version,
whether the daemon has the driver's own limits (gpufracctl status
driver_limits, where this daemon reports them), and as FIGURE lines the
time from the allocation to the listing and from the first look past the
limit to the kill. Run by multi.sh (multi.sh unshimmed [--sim])."""
from gpucheck import check, done
from gpuproc import (GIB, Events, StepError, Worker, chunk_bytes,
                     client, ctl_json, device0, diagnose, figure, first,
                     main, now_ms, say, show_events, size, skip, wait_for,
                     worker_env)

NAME = "unshimmed"
COUNT_GID, KILL_GID = 47120, 47121


def conf(nv, backend):
    total, free, _ = nv.memory()
    unit = chunk_bytes(backend)
    if backend == "torch":
        limit, held = 8 * GIB, 20 * GIB
    else:
        limit = int(0.25 * total) // unit * unit
        held = int(0.6 * total) // unit * unit
    if held > free - 3 * unit:
        skip(NAME, "%s free of %s leaves too little to hold %s"
             % (size(free), size(total), size(held)))
    text = ("[group counted]\nmatch = gid:%d\nlimit = %d\n"
            "[group killed]\nmatch = gid:%d\nlimit = %d\nunshimmed = kill\n"
            % (COUNT_GID, limit, KILL_GID, limit))
    return text, {"limit": limit, "held": held, "chunk": unit,
                  "uuid": nv.uuid(), "total": total,
                  "driver": nv.string("nvmlSystemGetDriverVersion")}


def listed(pid, held):
    """pid's ps record once it is unshimmed with held bytes, else None."""
    c = client(pid) or {}
    used = sum(d.get("used_bytes", 0) for d in c.get("devices", []))
    return c if c.get("state") == "unshimmed" and used >= held else None


def group_used(name):
    st = ctl_json("status") or {}
    return sum(g.get("used_bytes", 0) for g in st.get("groups", [])
               if g.get("name") == name)


def outside(args, plan, name, gid, body):
    """A worker without the shim of gid: body(worker, plan); None or the
    StepError that stopped it (diagnosed)."""
    w = Worker(name, args.backend, worker_env(None, plan["uuid"]), gid=gid)
    try:
        w.hello(60)
        body(w, plan)
        return None
    except StepError as e:
        diagnose([w], "the %s process" % name)
        return e
    finally:
        w.kill()


def counted(w, plan):
    """The counted group's process: listed within 1.5 s."""
    held = plan["held"]
    w.ask("alloc %d %d" % (held, plan["chunk"]), 120)
    t_held = now_ms()
    seen = wait_for(lambda: listed(w.pid, held), 5, 0.05)
    t_seen = now_ms()
    figure("unshimmed_seen_ms", t_seen - t_held if seen else None)
    check("a process without the shim is listed as unshimmed with its "
          "%s within 1.5 s" % size(held),
          bool(seen) and t_seen - t_held <= 1500,
          "seen after %.0f ms" % (t_seen - t_held) if seen else
          "not seen within 5 s: %s" % client(w.pid))
    used = group_used("counted")
    check("counted in its group's used", used >= held,
          "group counted uses %s" % size(used))


def killed(w, plan):
    """The killing group's process: killed past the limit, memory back."""
    events = Events()
    t_ask = now_ms()
    w.send("alloc %d %d" % (plan["held"], plan["chunk"]))
    wait_for(lambda: not w.alive(), 30, 0.05)
    evs = events.stop()
    kill = first(evs, "unshimmed-kill", w.pid, t_ask)
    seen = first(evs, "unshimmed", w.pid, t_ask)
    if seen and kill:
        figure("unshimmed_kill_ms", kill["time_ms"] - seen["time_ms"])
    show_events(evs, {w.pid}, since=t_ask, base=t_ask)
    check("under unshimmed = kill it is killed past its group's %s"
          % size(plan["limit"]), kill is not None and not w.alive(),
          "alive: %s, events: %s" % (w.alive(), kill))
    back = wait_for(lambda: group_used("killed") == 0, 30, 0.1)
    check("and its memory comes back", bool(back),
          "group killed uses %s" % size(group_used("killed")))


def run(args, plan):
    say("# driver %s; the group's limit %s, its process holds %s"
        % (plan["driver"], size(plan["limit"]), size(plan["held"])))
    dev = device0() or {}
    dl = dev.get("driver_limits")
    say("# driver limits: %s" % ("not reported by this daemon" if dl is None
                                 else dl))
    figure("driver_limits_available",
           None if dl is None else int(bool(dl.get("available"))))
    error = (outside(args, plan, "counted", COUNT_GID, counted) or
             outside(args, plan, "killed", KILL_GID, killed))
    check("the check ran to its end", error is None, error)
    return done()


if __name__ == "__main__":
    raise SystemExit(main(NAME, __doc__, conf, run))
