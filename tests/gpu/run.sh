#!/usr/bin/env bash
# The real-GPU suite: preload libgpufrac.so with a 4 GiB limit
# (GPUFRAC_MEMORY_LIMIT=4Gi) into each check_NAME.py below, against one
# daemon, on a real NVIDIA GPU; then host swap (swap.sh: two PyTorch
# processes that each need 70 % of the GPU, under resolver = swap).
#   torch, cupy, numba  what each sees and may allocate (cuMemAlloc)
#   torch_vmm    PyTorch, expandable_segments:True: cuMemCreate pages,
#                records of kind "vmm", charged and given back
#   torch_async  PyTorch, backend:cudaMallocAsync: the pool's reserve, kind
#                "pool", and when it comes back (see the file)
#   jax          JAX's default preallocation is sized from the limit
#   nvml         NVML's memory view (ctypes, as pynvml): total = the limit
#   nvidia_smi   the same view in nvidia-smi; SKIP where it does not reach
#                the shim's NVML hooks
# torch_vmm, torch_async, jax and nvml also print the daemon's "context"
# record (a process's NVML usage beyond its allocations; reported, never
# asserted) and check that allocating past the limit less it fails. A check
# whose framework is not installed is skipped; one that exits 77 said why.
# Run from the top of a built tree on a machine with a GPU:
#   tests/gpu/run.sh
# GPU_LIBDIR may name a folder with shared libraries the binaries need
# (libinih.so.1) when they were built on another machine.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
passed=0 failed=0 skipped=0

nvidia-smi -L >/dev/null 2>&1 || { echo "no NVIDIA GPU here"; exit 77; }
# shellcheck disable=SC2119	# no configuration: the built-in defaults
daemon_start || exit 1

# NAME:MODULE: check_NAME.py, where python can import MODULE (-: always).
for spec in torch:torch cupy:cupy numba:numba torch_vmm:torch \
    torch_async:torch jax:jax nvml:- nvidia_smi:-; do
	check=${spec%%:*} module=${spec#*:}
	if [ "$module" != - ] && ! "$python" -c "import $module" 2>/dev/null
	then
		echo "SKIP  $check: $module not installed"
		skipped=$((skipped + 1))
		continue
	fi
	GPUFRAC_MEMORY_LIMIT=4Gi LD_PRELOAD=$build/shim/libgpufrac.so \
	    "$python" "$top/tests/gpu/check_$check.py"
	case $? in
	0)  echo "PASS  $check"; passed=$((passed + 1));;
	77) skipped=$((skipped + 1));;		# the check said why
	*)  echo "FAIL  $check"; failed=$((failed + 1));;
	esac
done
echo "--- gpufracd log"; cat "$tmp/gpufracd.log"
daemon_stop

# Host swap needs a daemon of its own (resolver = swap) and the whole GPU.
bash "$top/tests/gpu/swap.sh"
case $? in
0)  echo "PASS  swap"; passed=$((passed + 1));;
77) skipped=$((skipped + 1));;		# swap.sh said why
*)  echo "FAIL  swap"; failed=$((failed + 1));;
esac
echo "gpu: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
