#!/usr/bin/env bash
# The real-GPU suite, made for a short visit to a GPU machine (at most 6.5
# minutes on an H200: GPU_SUITE_BUDGET, 390 s). Each step runs under its
# own timeout, cut to what is left of the budget (a step that cannot have
# 20 s is skipped, saying so); the total time is printed, and a one-line
# JSON summary comes last whatever happened (an exit trap, a signal too):
#   {"gpu":..,"driver":..,"passed":N,"failed":N,"skipped":N,
#    "checks":{"torch":"pass",...},"figures":{"pinned_h2d_gbps":..,...}}
# where the figures are the "FIGURE name value" lines the checks print
# (measured, never asserted). The steps, in order:
#
# 1. Against one daemon (built-in defaults), each check_NAME.py below with
#    libgpufrac.so preloaded and a 4 GiB limit (GPUFRAC_MEMORY_LIMIT=4Gi),
#    at most GPU_CHECK_TIMEOUT (60 s) each:
#      torch, cupy, numba  what each sees and may allocate (cuMemAlloc)
#      torch_vmm    PyTorch, expandable_segments:True: cuMemCreate pages,
#                   records of kind "vmm", charged and given back
#      torch_async  PyTorch, backend:cudaMallocAsync: the pool's reserve,
#                   kind "pool", and when it comes back (see the file)
#      jax          JAX's default preallocation is sized from the limit
#      nvml         NVML's memory view (ctypes, as pynvml): total = limit
#      nvidia_smi   the same view in nvidia-smi; SKIP where it does not
#                   reach the shim's NVML hooks
#    torch_vmm, torch_async, jax and nvml also print the daemon's "context"
#    record (reported, never asserted) and check that allocating past the
#    limit less it fails. A check whose framework is not installed is
#    skipped; one that exits 77 said why.
#    First driver_limits.sh: the driver's version and whether the daemon
#    found its memory limits per cgroup (r615, issue 31 C), as FIGURE
#    driver_version and driver_limits, and where they are on whether a
#    group's wall held a program without the shim (driver_wall); reported,
#    never asserted.
# 2. multi.sh's checks of several PyTorch processes (issue 20), each
#    against a daemon configured for it (see multi.sh): preempt (the
#    preemptor gets the memory of the process it preempts, at least 40 GiB:
#    GPU_PREEMPT_GIB; root), waiter (a waiter gets the memory of a holder
#    SIGKILLed), foreign (memory outside the shim counted), unshimmed (a
#    process without the shim listed in its group within 1.5 s, and killed
#    under unshimmed = kill; the driver's version, and whether the daemon
#    has the driver's limits), release (the driver's release of a killed
#    process's memory, measured only).
# 3. swap.sh: host swap between two PyTorch workers of GPU_SWAP_GIB (12
#    GiB) each, with each engine (GPU_SWAP_ENGINE, both): copy for
#    GPU_SWAP_ROUNDS (2) rounds, then checkpoint for GPU_SWAP_ROUNDS2 (1);
#    each engine's GB/s beside the pinned copies'; a step that overruns
#    prints the daemon's events, ps and the workers' Python stacks.
#    Then swap_frameworks.sh (at most 120 s): the copy engine alone with
#    the frameworks its default waits on (issue 21, point 4), one short
#    round of two workers of 4 GiB each for torch_vmm (expandable
#    segments), cupy and jax, a missing one skipped; per framework its
#    result, GB/s and what stayed on the device at swap-out (FIGURE
#    swap_result_copy_jax, swap_out_gbps_copy_jax, swap_stayed_copy_jax).
#    Then alloc_cost.sh: a 2 MiB alloc+free pair's cost bare and under the
#    shim with each swap engine (the copy engine's target: at most twice
#    the bare driver's), and host_probe.py: the ways of getting pinned
#    host memory for a swap-out, timed (cuMemHostAlloc, in parallel,
#    cuMemHostRegister of pages faulted in ahead), as figures. Then
#    fork_probe.sh: what the driver tells a child forked after cuInit (its
#    cuInit, cuDeviceGetCount, cuMemAlloc...), its own child, and a child
#    forked before, as figures (fork_child_cuInit ...); checked: under the
#    shim each is told the same, and the parent's allocations stay as the
#    daemon had them.
# 4. share.sh: make bench-share on the real driver (bench/share -r, root),
#    its tenants on 16 GiB of the GPU, the rest kept back by each way's
#    daemon; its JSON line is the figure "bench_share". The last step,
#    skipped when under 60 s of the budget are left, run short (-q) when
#    under 120 s (GPU_SHARE_QUICK=1 always short, 0 never).
#
# Run from the top of a built tree on a machine with a GPU:
#   tests/gpu/run.sh
#   tests/gpu/run.sh --sim   steps 2 and 3 on the simulated driver, with
#                            the workers' ctypes backend (standing in for
#                            the frameworks in swap_frameworks.sh): checks
#                            this script, its timeouts and its summary here
# GPU_LIBDIR may name a folder with shared libraries the binaries need
# (libinih.so.1) when they were built on another machine. Exits 0 when no
# check failed.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
here=$top/tests/gpu
sim=()
case $# in
0)	;;
1)	[ "$1" = --sim ] || { echo "usage: run.sh [--sim]" >&2; exit 2; }
	sim=(--sim);;
*)	echo "usage: run.sh [--sim]" >&2; exit 2;;
esac
budget=${GPU_SUITE_BUDGET:-390}
check_limit=${GPU_CHECK_TIMEOUT:-60}
for v in "$budget" "$check_limit"; do
	case $v in
	''|*[!0-9]*) echo "run.sh: bad GPU_SUITE_BUDGET or GPU_CHECK_TIMEOUT" \
	    "'$v': expected seconds" >&2; exit 2;;
	esac
done
deadline=$((SECONDS + budget))
export PYTHONUNBUFFERED=1
passed=0 failed=0 skipped=0
results=$tmp/results figures=$tmp/figures
: >"$results"
: >"$figures"
step_pid='' step_tee='' step_fd='' step_name=''

# NAME pass|fail|skip [WHY]: counted, said, kept for the summary.
record() {
	case $2 in
	pass)	passed=$((passed + 1)); echo "PASS  $1";;
	fail)	failed=$((failed + 1)); echo "FAIL  $1${3:+: $3}";;
	skip)	skipped=$((skipped + 1)); [ -n "${3:-}" ] && echo "SKIP  $1: $3";;
	esac
	printf '%s %s\n' "$1" "$2" >>"$results"
}

# The step in flight, if any: its process group (timeout's) ended, the
# step counted as failed.
stop_step() {
	[ -n "$step_pid" ] || return 0
	echo "run.sh: stopping the step in flight (pid $step_pid)"
	record "$step_name" fail "stopped with the suite"
	kill -TERM -- "-$step_pid" 2>/dev/null || kill -TERM "$step_pid" 2>/dev/null
	for _ in $(seq 50); do
		kill -0 "$step_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL -- "-$step_pid" 2>/dev/null
	step_pid=
}

# NAME LIMIT COMMAND...: COMMAND's status, run under timeout for LIMIT
# seconds or what is left of the budget, its output shown and its FIGURE
# lines kept; 77 without running it when under 20 s are left.
run_step() {
	local name=$1 limit=$2 left rc t0 log
	shift 2
	left=$((deadline - SECONDS))
	if [ "$left" -lt 20 ]; then
		echo "SKIP  $name: ${left}s left of the suite's ${budget}s"
		return 77
	fi
	[ "$limit" -gt "$left" ] && limit=$left
	echo "=== $name (at most ${limit}s; ${SECONDS}s into the suite)"
	log=$tmp/step-$name.log
	t0=$SECONDS
	exec {step_fd}> >(tee "$log")
	step_tee=$!
	timeout -k 10 "$limit" "$@" >&"$step_fd" 2>&1 &
	step_pid=$! step_name=$name
	wait "$step_pid"
	rc=$?
	step_pid=
	exec {step_fd}>&-
	for _ in $(seq 100); do
		kill -0 "$step_tee" 2>/dev/null || break
		sleep 0.05
	done
	sed -n 's/^FIGURE \([A-Za-z0-9_]*\) \(.*\)$/\1 \2/p' "$log" >>"$figures"
	case $rc in
	124|137) echo "=== $name: TIMED OUT after $((SECONDS - t0))s" \
	    "(limit ${limit}s)";;
	*)	echo "=== $name: exit $rc after $((SECONDS - t0))s";;
	esac
	return "$rc"
}

# NAME STATUS: the step's status counted.
judge() {
	case $2 in
	0)	record "$1" pass;;
	77)	record "$1" skip;;	# the step said why
	124|137) record "$1" fail "timed out";;
	*)	record "$1" fail "exit $2";;
	esac
}

gpu_info() {
	if [ ${#sim[@]} -gt 0 ]; then
		printf 'simulated\tsimcuda\n'
		return
	fi
	timeout 20 nvidia-smi --query-gpu=name,driver_version \
	    --format=csv,noheader 2>/dev/null | head -n 1 | sed 's/, */\t/'
}

# The last line: the JSON summary (python3's json, for the quoting).
summary() {
	local info gpu driver
	info=$(gpu_info)
	gpu=${info%%	*} driver=${info#*	}
	echo "gpu: $passed passed, $failed failed, $skipped skipped in ${SECONDS}s"
	"$python" - "$gpu" "$driver" "$passed" "$failed" "$skipped" \
	    "$results" "$figures" <<'PY' ||
import json, sys
gpu, driver, p, f, s, results, figures = sys.argv[1:]
checks, figs = {}, {}
for line in open(results):
    name, _, status = line.strip().partition(" ")
    checks[name] = status
for line in open(figures):
    name, _, value = line.strip().partition(" ")
    try:
        figs[name] = json.loads(value)
    except ValueError:
        figs[name] = value
print(json.dumps({"gpu": gpu, "driver": driver, "passed": int(p),
                  "failed": int(f), "skipped": int(s), "checks": checks,
                  "figures": figs}, separators=(",", ":")))
PY
	printf '{"gpu":"?","driver":"?","passed":%d,"failed":%d,"skipped":%d,"checks":{},"figures":{}}\n' \
	    "$passed" "$failed" "$skipped"
}

on_exit() {
	stop_step
	daemon_stop
	summary
	cleanup
}
trap on_exit EXIT
trap 'echo "run.sh: stopped by a signal"; exit 143' TERM INT HUP
if [ ${#sim[@]} -eq 0 ] && ! nvidia-smi -L >/dev/null 2>&1; then
	echo "no NVIDIA GPU here"
	exit 77
fi

# 1. The frameworks, against one daemon.
if [ ${#sim[@]} -eq 0 ]; then
	# shellcheck disable=SC2119	# no configuration: the built-in defaults
	daemon_start || exit 1
fi
# The driver's version, and whether it has memory limits per cgroup.
if [ ${#sim[@]} -eq 0 ]; then
	run_step driver_limits 20 bash "$here/driver_limits.sh"
	judge driver_limits $?
fi
# NAME:MODULE: check_NAME.py, where python can import MODULE (-: always).
for spec in torch:torch cupy:cupy numba:numba torch_vmm:torch \
    torch_async:torch jax:jax nvml:- nvidia_smi:-; do
	check=${spec%%:*} module=${spec#*:}
	if [ ${#sim[@]} -gt 0 ]; then
		record "$check" skip "the simulated run has no framework"
		continue
	fi
	if [ "$module" != - ] && ! "$python" -c "import $module" 2>/dev/null
	then
		record "$check" skip "$module not installed"
		continue
	fi
	run_step "$check" "$check_limit" env GPUFRAC_MEMORY_LIMIT=4Gi \
	    LD_PRELOAD="$build/shim/libgpufrac.so" \
	    "$python" "$here/check_$check.py"
	judge "$check" $?
done
if [ -n "$daemon" ]; then
	if [ "$failed" -gt 0 ]; then
		echo "--- gpufracd log"
		cat "$tmp/gpufracd.log"
	fi
	daemon_stop
fi

# 2. Several processes, each check with a daemon of its own.
for spec in preempt:90 waiter:75 foreign:75 unshimmed:60 release:60; do
	check=${spec%%:*}
	run_step "$check" "${spec#*:}" bash "$here/multi.sh" "$check" \
	    ${sim[@]+"${sim[@]}"}
	judge "$check" $?
done

# 3. Host swap: a daemon of its own (resolver = swap).
run_step swap 150 env GPU_SWAP_ROUNDS="${GPU_SWAP_ROUNDS:-2}" \
    bash "$here/swap.sh" ${sim[@]+"${sim[@]}"}
judge swap $?
run_step swap_frameworks 120 bash "$here/swap_frameworks.sh" \
    ${sim[@]+"${sim[@]}"}
judge swap_frameworks $?
run_step alloc_cost 40 bash "$here/alloc_cost.sh" ${sim[@]+"${sim[@]}"}
judge alloc_cost $?
run_step fork_probe 30 bash "$here/fork_probe.sh" ${sim[@]+"${sim[@]}"}
judge fork_probe $?
if [ ${#sim[@]} -eq 0 ]; then
	run_step host_probe 40 "$python" "$here/host_probe.py"
	judge host_probe $?
fi

# 4. The sharing benchmark on the real driver, if there is time for it.
left=$((deadline - SECONDS))
quick=${GPU_SHARE_QUICK:-}
if [ -z "$quick" ]; then
	quick=0
	[ "$left" -lt 120 ] && quick=1
fi
share_limit=110
[ "$quick" = 1 ] && share_limit=55
if [ "$left" -lt 60 ]; then
	record bench_share skip "${left}s left of the suite's ${budget}s, under the 60 s it needs"
else
	run_step bench_share "$share_limit" env GPU_SHARE_QUICK="$quick" \
	    bash "$here/share.sh" ${sim[@]+"${sim[@]}"}
	judge bench_share $?
fi
[ "$failed" -eq 0 ]
