"""The driver's release of a killed process's memory, measured (issue 20,
B): a PyTorch process NOT under the shim holds HOLD (as check_preempt.py
sizes it) and is SIGKILLed. From the kill, printed (and as FIGURE lines),
never asserted: when it is reaped (waitpid), when NVML's process list no
longer shows it, and when NVML's device free memory has it back. This
says whether NVML still lists a dead process while its memory is being
released, which the daemon's count of releasing memory relies on. NVML
through ctypes (libnvidia-ml.so.1; pynvml may not be there), polled every
2 ms for up to 30 s. Its pid is found in NVML's list as the process that
appeared holding at least half of HOLD (NVML may show the pids of another
PID namespace). The daemon multi.sh starts is not used. Run by multi.sh
(multi.sh release [--sim])."""
import signal
import time

from gpucheck import check, done
from gpuproc import (Nvml, StepError, Worker, diagnose, figure, main, now_ms,
                     say, size, sized, wait_for, worker_env)

NAME = "release"


def conf(nv, backend):
    hold, chunk, total, free, uuid = sized(nv, backend, NAME)
    return "[daemon]\n", {"hold": hold, "chunk": chunk, "uuid": uuid}


def run(args, plan):
    hold, chunk = plan["hold"], plan["chunk"]
    nv = Nvml()
    before = set(nv.processes())
    p = Worker("killed", args.backend, worker_env(None, plan["uuid"]))
    try:
        p.hello(60)
        p.ask("alloc %d %d" % (hold, chunk), 120)
    except StepError as e:
        diagnose([p], "the process to kill could not hold %s" % size(hold))
        check("a process holds %s to be killed" % size(hold), False, e)
        p.kill()
        return done()
    # NVML's accounting of a new allocation may lag: wait for it.
    listed = wait_for(lambda: {pid: b for pid, b in nv.processes().items()
                               if pid not in before and b >= hold // 2}, 5)
    nvml_pid = max(listed, key=listed.get) if listed else None
    free_held = nv.memory()[1]
    say("# pid %d holds %s; NVML lists %s; device free %s"
        % (p.pid, size(hold), "it as pid %d (%s)" % (
            nvml_pid, size(listed[nvml_pid])) if listed else
           "no new process holding that much", size(free_held)))

    t_kill = now_ms()
    p.proc.send_signal(signal.SIGKILL)
    gone = back = None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        t = now_ms()
        if gone is None and (nvml_pid is None or
                             nvml_pid not in nv.processes()):
            gone = t
        if back is None and nv.memory()[1] >= free_held + 0.9 * hold:
            back = t
        if gone is not None and back is not None and p.exit_ms is not None:
            break
        time.sleep(0.002)
    reaped = p.exit_ms
    times = [("reaped", reaped), ("nvml_gone", gone if nvml_pid else None),
             ("free_back", back)]
    say("release of %s: SIGKILL 0 ms -> " % size(hold) + " -> ".join(
        "%s %s" % (k, "-" if v is None else "%+.0f ms" % (v - t_kill))
        for k, v in times))
    figure("release_gib", round(hold / (1 << 30), 1))
    for k, v in times:
        figure("release_kill_to_%s_ms" % k, None if v is None else v - t_kill)
    if reaped is not None and gone is not None and nvml_pid is not None:
        figure("release_nvml_lists_dead_ms", max(0.0, gone - reaped))
        say("# NVML %s the dead process after it was reaped%s" % (
            "still listed" if gone > reaped else "no longer listed",
            " (for %.0f ms)" % (gone - reaped) if gone > reaped else ""))
    if back is None:
        say("# NVML's free memory did not show the %s back within 30 s"
            % size(hold))
    check("the process was killed and reaped", reaped is not None,
          "not reaped in 30 s")
    p.kill()
    return done()


if __name__ == "__main__":
    raise SystemExit(main(NAME, __doc__, conf, run))
