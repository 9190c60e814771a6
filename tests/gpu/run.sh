#!/usr/bin/env bash
# The real-GPU suite: preload libgpufrac.so into PyTorch, CuPy and numba-cuda
# (each where installed) with a 4 GiB limit on a real NVIDIA GPU and check
# what they see; then host swap (swap.sh: two PyTorch processes that each
# need 70 % of the GPU, under resolver = swap). Run from the top of a built
# tree on a machine with a GPU:
#   tests/gpu/run.sh
# GPU_LIBDIR may name a folder with shared libraries the binaries need
# (libinih.so.1) when they were built on another machine.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
passed=0 failed=0 skipped=0

nvidia-smi -L >/dev/null 2>&1 || { echo "no NVIDIA GPU here"; exit 77; }
# shellcheck disable=SC2119	# no configuration: the built-in defaults
daemon_start || exit 1

for check in torch cupy numba; do
	if ! "$python" -c "import $check" 2>/dev/null; then
		echo "SKIP  $check: not installed"
		skipped=$((skipped + 1))
		continue
	fi
	if GPUFRAC_MEMORY_LIMIT=4Gi LD_PRELOAD=$top/shim/libgpufrac.so \
	    "$python" "$top/tests/gpu/check_$check.py"; then
		echo "PASS  $check"; passed=$((passed + 1))
	else
		echo "FAIL  $check"; failed=$((failed + 1))
	fi
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
