#!/usr/bin/env bash
# Host swap on a real GPU (DESIGN.md §4, issue 4): two PyTorch processes
# of GPU_SWAP_GIB each (12 GiB) take turns working and idling under
# resolver = swap, the daemon sharing only as much of the GPU as makes that
# 70 % of it, so that they collide (check_swap.py drives them,
# swap_worker.py is each one); GPU_SWAP_GIB=0: each needs 70 % of the
# whole GPU (minutes on a large one).
# Both must finish with their data intact, and at least one swap-out and
# one swap-in must have happened; swap speed is reported against pinned
# host<->device copies measured in the same run, never asserted. Exits 0
# (pass), 77 (skipped, the last line says why) or 1. Run from a built tree:
#   tests/gpu/swap.sh          on the real GPU (run.sh runs it)
#   tests/gpu/swap.sh --sim    on the simulated driver (tests/simcuda), with
#                              a worker that calls the driver through ctypes
#                              instead of PyTorch: checks this script, the
#                              alternation and the report without a GPU
# GPU_SWAP_ENGINE (both) picks the engines (issue 21): copy, checkpoint,
# or both, copy first, each with a daemon of its own (swap_engine in its
# [daemon] section); each engine's GB/s is printed beside the pinned
# copies measured once for the run (FIGURE swap_out_gbps_copy,
# swap_in_gbps_checkpoint, ...), and beside them how fast one
# cuMemHostAlloc of a worker's share pinned in the same probe (FIGURE
# pin_gbps: what each swap-out by copy paid on an H200). On the
# simulated driver the bus has SIMCUDA_COPY_GBPS (20), SIMCUDA_CKPT_GBPS
# (2.3) and SIMCUDA_PIN_GBPS (2.3) unless set.
# GPU_SWAP_FRACTION (0.7), GPU_SWAP_ROUNDS (3: the first engine's rounds),
# GPU_SWAP_ROUNDS2 (1: the second's, so that both fit run.sh's 150 s on
# an H200), GPU_SWAP_IDLE (1 s between turns), GPU_SWAP_STEP_TIMEOUT (60 s:
# a step that overruns prints the daemon's events and ps and the workers'
# Python stacks) tune check_swap.py; GPU_SWAP_WAIT_TIMEOUT (60s) is the
# daemon's wait_timeout. GPU_SWAP_PINNED names the file that keeps the
# pinned copies' figures (measured once if it is not there; this run's
# own by default), so that several runs compare with one measurement.
# GPU_SWAP_BACKEND (torch) picks the workers' backend on a real GPU:
# torch, torch_vmm (expandable segments), cupy, jax (swap_worker.py says
# how each holds its memory) or driver; skipped (77) when its module is
# not installed (swap_frameworks.sh runs torch_vmm, cupy and jax with the
# copy engine). --sim takes driver only.
# The simulated run (--sim) shares the whole simulated device unless
# GPU_SWAP_GIB is set (SIMCUDA_DEVICES=8Gi GPU_SWAP_GIB=1 swap.sh --sim).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
here=$top/tests/gpu
backend=${GPU_SWAP_BACKEND:-torch}
share=()
unset GPUFRAC_MEMORY_LIMIT GPUFRAC_DISABLE GPUFRAC_PRIORITY GPUFRAC_RESOLVER \
    GPUFRAC_WAIT_TIMEOUT

case $# in
0)	case $backend in
	torch|torch_vmm) module=torch;;
	cupy|jax) module=$backend;;
	driver)	module=;;
	*)	echo "swap.sh: bad GPU_SWAP_BACKEND '$backend': expected torch," \
		    "torch_vmm, cupy, jax or driver" >&2; exit 2;;
	esac
	nvidia-smi -L >/dev/null 2>&1 ||
	    { echo "SKIP  swap: no NVIDIA GPU here"; exit 77; }
	if [ -n "$module" ] && ! "$python" -c "import $module" 2>/dev/null; then
		echo "SKIP  swap: $module not installed (backend $backend)"
		exit 77
	fi
	gib=${GPU_SWAP_GIB:-12};;
1)	[ "$1" = --sim ] || { echo "usage: swap.sh [--sim]" >&2; exit 2; }
	case ${GPU_SWAP_BACKEND:-driver} in
	driver)	backend=driver;;
	*)	echo "swap.sh: --sim runs the driver backend only, not" \
		    "'$GPU_SWAP_BACKEND'" >&2; exit 2;;
	esac
	sim_state=gpufrac-gpu-swap-$$
	export LD_LIBRARY_PATH=$build/tests/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	export SIMCUDA_STATE=$sim_state SIMCUDA_DEVICES=${SIMCUDA_DEVICES:-2Gi}
	export SIMCUDA_COPY_GBPS=${SIMCUDA_COPY_GBPS:-20}
	export SIMCUDA_CKPT_GBPS=${SIMCUDA_CKPT_GBPS:-2.3}
	export SIMCUDA_PIN_GBPS=${SIMCUDA_PIN_GBPS:-2.3}
	unset CUDA_VISIBLE_DEVICES
	gib=${GPU_SWAP_GIB:-0};;
*)	echo "usage: swap.sh [--sim]" >&2; exit 2;;
esac
case $gib in
''|*[!0-9]*)
	echo "swap.sh: bad GPU_SWAP_GIB '$gib': expected whole GiB" >&2; exit 2;;
esac
[ "$gib" -gt 0 ] && share=(--share $((gib << 30)))

case ${GPU_SWAP_ENGINE:-both} in
both)	engines=(copy checkpoint);;
copy|checkpoint) engines=("$GPU_SWAP_ENGINE");;
*)	echo "swap.sh: bad GPU_SWAP_ENGINE '$GPU_SWAP_ENGINE': expected" \
	    "copy, checkpoint or both" >&2; exit 2;;
esac

# one_engine ENGINE ROUNDS: the two workers under a daemon that swaps with
# ENGINE; check_swap.py's status (0, 1 or 77).
one_engine() {
	local conf=$tmp/swap-$1.conf rc
	echo "--- engine $1, backend $backend"
	printf '[daemon]\ndefault_resolver = swap\nwait_timeout = %s\nswap_engine = %s\n' \
	    "${GPU_SWAP_WAIT_TIMEOUT:-60s}" "$1" >"$conf"
	daemon_start "$conf" || return 1
	# Two swapped-out images must fit in host memory: share less of a
	# device larger than that (check_swap.py plan writes the [device]
	# section).
	"$python" "$here/check_swap.py" plan --out "$tmp/device.conf" \
	    ${share[@]+"${share[@]}"}
	rc=$?
	if [ "$rc" -eq 0 ] && [ -s "$tmp/device.conf" ]; then
		daemon_stop
		cat "$tmp/device.conf" >>"$conf"
		daemon_start "$conf" || return 1
	fi
	if [ "$rc" -eq 0 ]; then
		"$python" "$here/check_swap.py" run --backend "$backend" \
		    --shim "$build/shim/libgpufrac.so" --engine "$1" \
		    --rounds "$2" \
		    --bandwidth "${GPU_SWAP_PINNED:-$tmp/pinned.json}" \
		    ${share[@]+"${share[@]}"}
		rc=$?
	fi
	daemon_stop
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
		echo "--- gpufracd log ($1)"
		cat "$tmp/gpufracd.log"
	fi
	: >"$tmp/gpufracd.log"
	return "$rc"
}

# Failed beats passed beats skipped.
status=77 rounds=${GPU_SWAP_ROUNDS:-3}
for engine in "${engines[@]}"; do
	one_engine "$engine" "$rounds"
	case $? in
	0)	[ "$status" -eq 77 ] && status=0;;
	77)	;;
	*)	status=1;;
	esac
	rounds=${GPU_SWAP_ROUNDS2:-1}
done
exit "$status"
