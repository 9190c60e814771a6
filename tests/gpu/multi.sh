#!/usr/bin/env bash
# The real-GPU checks of several processes (issue 20), each against a
# gpufracd of its own whose configuration the check writes (sized from
# NVML's device 0), its processes swap_worker.py servers:
#   preempt   a priority-10 PyTorch process (resolver = preempt) gets the
#             memory of the priority-0 one it preempts (on_preempt = kill):
#             no out-of-memory error; the timeline printed (root: the
#             groups match gids)
#   waiter    a waiter (resolver = wait) whose holder is SIGKILLed gets its
#             memory; the time from the kill to the grant printed
#   foreign   memory held by a process not under the shim is counted (as
#             unshimmed, or as foreign by a daemon before issue 31) and a
#             request that fits only if it were ignored waits until it is
#             freed
#   unshimmed a PyTorch process without the shim in a group of 8 GiB takes
#             20 GiB: listed and counted within 1.5 s; under unshimmed =
#             kill, killed (issue 31); the driver's version and whether the
#             daemon has the driver's limits said
#   release   the driver's own release of a SIGKILLed process's memory:
#             reaped, gone from NVML's process list, free again (measured,
#             never asserted; no shim)
# Exits 0 (pass), 77 (skipped, the last line says why) or 1; the daemon's
# log is printed on a failure. Measured figures are "FIGURE name value"
# lines, gathered by run.sh. Run from a built tree:
#   tests/gpu/multi.sh CHECK          on the real GPU (run.sh runs each)
#   tests/gpu/multi.sh CHECK --sim    on the simulated driver (tests/simcuda),
#                                     with a worker that calls the driver
#                                     through ctypes instead of PyTorch
# GPU_PREEMPT_GIB sizes what preempt, waiter and release hold (default: 40
# GiB or 60 % of the device, whichever is more; see gpuproc.hold_bytes).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
here=$top/tests/gpu
backend=torch
unset GPUFRAC_MEMORY_LIMIT GPUFRAC_DISABLE GPUFRAC_PRIORITY GPUFRAC_RESOLVER \
    GPUFRAC_WAIT_TIMEOUT

usage() {
	echo "usage: multi.sh preempt|waiter|foreign|unshimmed|release [--sim]" >&2
	exit 2
}
[ $# -ge 1 ] || usage
name=$1
shift
case $name in
preempt|waiter|foreign|unshimmed|release) ;;
*)	usage;;
esac
case $# in
0)	nvidia-smi -L >/dev/null 2>&1 ||
	    { echo "SKIP  $name: no NVIDIA GPU here"; exit 77; }
	"$python" -c "import torch" 2>/dev/null ||
	    { echo "SKIP  $name: torch not installed"; exit 77; };;
1)	[ "$1" = --sim ] || usage
	backend=driver
	sim_use "$name" 2Gi;;
*)	usage;;
esac

"$python" "$here/check_$name.py" conf --backend "$backend" \
    --out "$tmp/$name.conf" --plan "$tmp/$name.json"
rc=$?
[ "$rc" -eq 0 ] || exit "$rc"
echo "--- $name: gpufracd's configuration"
cat "$tmp/$name.conf"
daemon_start "$tmp/$name.conf" >/dev/null || exit 1
"$python" "$here/check_$name.py" run --backend "$backend" \
    --shim "$build/shim/libgpufrac.so" --plan "$tmp/$name.json"
rc=$?
daemon_stop
if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
	echo "--- gpufracd log"
	cat "$tmp/gpufracd.log"
fi
exit "$rc"
