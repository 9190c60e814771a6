"""Preemption on the real driver (issue 20, 1): a process of priority 0
(group low, on_preempt = kill) holds HOLD through PyTorch; a process of
priority 10 (group high, resolver = preempt) asks for as much, which does
not fit beside it. gpufracd sends the holder SIGTERM; once it is gone the
preemptor must get its memory: no OutOfMemoryError, which is what the
driver says when the daemon grants before it has the dead process's
memory back.

HOLD is GPU_PREEMPT_GIB, or 40 GiB or 60 % of the device, whichever is
more (so that two do not fit the driver), never more than is free less
3 GiB. The groups match the processes' primary gids (47100, 47110), set as
they start: root only. Run by multi.sh (multi.sh preempt [--sim]).

Printed, never asserted, from the daemon's preempt event ("the request"):
the holder's SIGTERM (it notes the time), its exit (reaped here), the
preemptor's grant (event) and its allocation returned; as FIGURE lines too.
Asserted: the daemon preempted, the holder is gone, the preemptor's
allocation succeeded."""
import os

from gpucheck import check, done
from gpuproc import (HIGH_GID, LOW_GID, Events, Sampler, StepError, Worker,
                     client, diagnose, figure, first, granted, main, now_ms,
                     say, show_events, size, sized, skip, tight_section,
                     wait_for, worker_env)

NAME = "preempt"


def conf(nv, backend):
    hold, chunk, total, free, uuid = sized(nv, backend, NAME)
    extra, tight = tight_section(nv, hold, total, backend)
    text = ("[daemon]\ndefault_resolver = fail\nwait_timeout = 60s\n\n"
            "[group low]\nmatch = gid:%d\npriority = 0\non_preempt = kill\n"
            "kill_grace = 10s\n\n"
            "[group high]\nmatch = gid:%d\npriority = 10\n"
            "resolver = preempt\nwait_timeout = 60s\n%s"
            % (LOW_GID, HIGH_GID, extra))
    return text, {"hold": hold, "chunk": chunk, "uuid": uuid,
                  "tight": tight}


def run(args, plan):
    if os.geteuid() != 0:
        skip(NAME, "the groups match gids, which only root may set")
    hold, chunk = plan["hold"], plan["chunk"]
    env = worker_env(args.shim, plan["uuid"])
    say("# the holder (priority 0, on_preempt = kill) and the preemptor "
        "(priority 10, resolver = preempt) each ask for %s%s"
        % (size(hold), "" if plan["tight"] else
           " (the driver has room for both)"))
    events = Events()
    victim = Worker("holder", args.backend, env, gid=LOW_GID)
    pre = Worker("preemptor", args.backend, env, gid=HIGH_GID)
    workers = [victim, pre]
    alloc = "alloc %d %d" % (hold, chunk)
    error = t_send = t_ret = sampler = None
    try:
        victim.hello(60)
        victim.ask(alloc, 120)
        pre.hello(60)
        for w in workers:
            c = client(w.pid) or {}
            say("# %s: pid %d in group %s" % (w.name, w.pid, c.get("group")))
        sampler = Sampler([victim.pid, pre.pid])
        t_send = now_ms()
        pre.send(alloc)
        try:
            pre.answer("alloc", 90)
        except StepError as e:
            error = e
            diagnose(workers, "the preemptor's allocation failed")
        t_ret = now_ms()
        wait_for(lambda: not victim.alive(), 15)
    except StepError as e:
        error = error or e
        diagnose(workers, "set-up failed")
    if sampler is not None:
        sampler.stop()
    evs = events.stop()

    pev = first(evs, "preempt", after=t_send - 1) if t_send else None
    base = pev["time_ms"] if pev else (t_send or now_ms())
    if t_send is not None:
        say("", "--- events from the request on (ms from the daemon's "
            "preempt event%s)" % ("" if pev else "; none: from the request"))
        show_events(evs, {victim.pid, pre.pid}, since=base - 5, base=base)
        if sampler is not None:
            sampler.report({victim.pid: "holder", pre.pid: "preemptor"},
                           base)
    grant = granted(evs, pre.pid, base) if pev else None
    times = [("sigterm", victim.sigterm_ms), ("exit", victim.exit_ms),
             ("grant", grant["time_ms"] if grant else None),
             ("returned", t_ret if error is None else None)]
    say("timeline: request (preempt event) 0 ms -> " + " -> ".join(
        "%s %s" % (k, "-" if v is None else "%+.0f ms" % (v - base))
        for k, v in times))
    figure("preempt_gib", round(hold / (1 << 30), 1))
    for k, v in times:
        figure("preempt_to_%s_ms" % k, None if v is None else v - base)

    check("the daemon preempted the holder (a preempt event)",
          pev is not None, "no preempt event")
    check("the holder is gone", not victim.alive(),
          "still running after 15 s")
    say("# holder's exit status: %s" % victim.proc.poll())
    check("the preemptor got its %s (no out-of-memory error)" % size(hold),
          error is None, error)
    pre.finish(30)
    victim.kill()
    return done()


if __name__ == "__main__":
    raise SystemExit(main(NAME, __doc__, conf, run))
