"""A waiter whose holder is SIGKILLed gets its memory (issue 20, 1): under
resolver = wait, a holder takes HOLD (as in check_preempt.py: two do not
fit the driver), a waiter asks for as much and is queued; the holder is
SIGKILLed, as a job usually ends, without freeing anything. The waiter
must get its memory with no out-of-memory error, which is what the driver
says when the daemon grants before it has the dead process's memory back.
Printed (and as FIGURE lines), never asserted: from the kill, the holder
reaped, the waiter's grant (event), its allocation returned. Run by
multi.sh (multi.sh waiter [--sim])."""
import signal

from gpucheck import check, done
from gpuproc import (Events, Sampler, StepError, Worker, client, diagnose,
                     figure, granted, main, now_ms, say, show_events, size,
                     sized, tight_section, wait_for, worker_env)

NAME = "waiter"


def conf(nv, backend):
    hold, chunk, total, free, uuid = sized(nv, backend, NAME)
    extra, tight = tight_section(nv, hold, total, backend)
    text = ("[daemon]\ndefault_resolver = wait\nwait_timeout = 60s\n%s"
            % extra)
    return text, {"hold": hold, "chunk": chunk, "uuid": uuid,
                  "tight": tight}


def state(w):
    c = client(w.pid)
    return c.get("state") if c else None


def run(args, plan):
    hold, chunk = plan["hold"], plan["chunk"]
    env = worker_env(args.shim, plan["uuid"])
    events = Events()
    holder = Worker("holder", args.backend, env)
    waiter = Worker("waiter", args.backend, env)
    workers = [holder, waiter]
    alloc = "alloc %d %d" % (hold, chunk)
    error = t_kill = t_ret = sampler = None
    queued = False
    try:
        holder.hello(60)
        holder.ask(alloc, 120)
        waiter.hello(60)
        sampler = Sampler([holder.pid, waiter.pid])
        waiter.send(alloc)
        queued = wait_for(lambda: waiter.answered() or
                          state(waiter) == "waiting", 30) is True and \
            not waiter.answered()
        if not queued:
            if waiter.answered():
                res = waiter.answer("alloc", 1)	# raises on an error
                raise StepError("the waiter was not queued: granted %s at "
                                "once" % size(res["bytes"]))
            raise StepError("the waiter was not seen waiting in 30 s")
        t_kill = now_ms()
        holder.proc.send_signal(signal.SIGKILL)
        try:
            waiter.answer("alloc", 90)
        except StepError as e:
            error = e
            diagnose(workers, "the waiter's allocation failed")
        t_ret = now_ms()
        wait_for(lambda: holder.exit_ms is not None, 15)
    except StepError as e:
        error = error or e
        diagnose(workers, "the check stopped")
    if sampler is not None:
        sampler.stop()
    evs = events.stop()

    if t_kill is not None:
        say("", "--- events from the kill on (ms from the kill)")
        show_events(evs, {holder.pid, waiter.pid}, since=t_kill - 5,
                    base=t_kill)
        sampler.report({holder.pid: "holder", waiter.pid: "waiter"}, t_kill)
        grant = granted(evs, waiter.pid, t_kill)
        times = [("reaped", holder.exit_ms),
                 ("grant", grant["time_ms"] if grant else None),
                 ("returned", t_ret if error is None else None)]
        say("timeline: SIGKILL 0 ms -> " + " -> ".join(
            "%s %s" % (k, "-" if v is None else "%+.0f ms" % (v - t_kill))
            for k, v in times))
        figure("waiter_gib", round(hold / (1 << 30), 1))
        for k, v in times:
            figure("waiter_kill_to_%s_ms" % k,
                   None if v is None else v - t_kill)
    check("the waiter was queued while the holder held %s" % size(hold),
          queued, error)
    check("after the holder's SIGKILL the waiter got its %s (no "
          "out-of-memory error)" % size(hold),
          queued and error is None, error)
    waiter.finish(30)
    holder.kill()
    return done()


if __name__ == "__main__":
    raise SystemExit(main(NAME, __doc__, conf, run))
