#!/usr/bin/env bash
# The real-GPU suite: preload libgpufrac.so into PyTorch, CuPy and numba-cuda
# (each where installed) with a 4 GiB limit on a real NVIDIA GPU and check
# what they see. Run from the top of a built tree on a machine with a GPU:
#   tests/gpu/run.sh
# GPU_LIBDIR may name a folder with shared libraries the binaries need
# (libinih.so.1) when they were built on another machine.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpufrac-gpu.XXXXXX")
python=${PYTHON:-python3}
export GPUFRAC_SOCKET=$tmp/gpufrac.sock GPUFRACCTL=$top/tools/gpufracctl
[ -n "${GPU_LIBDIR:-}" ] && export LD_LIBRARY_PATH=$GPU_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
passed=0 failed=0 skipped=0

cleanup() {
	[ -n "${daemon:-}" ] && kill "$daemon" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

nvidia-smi -L >/dev/null 2>&1 || { echo "no NVIDIA GPU here"; exit 77; }
"$top/daemon/gpufracd" -f -s "$GPUFRAC_SOCKET" 2>"$tmp/gpufracd.log" &
daemon=$!
for _ in $(seq 100); do
	"$GPUFRACCTL" status >/dev/null 2>&1 && break
	sleep 0.1
done
"$GPUFRACCTL" status || { cat "$tmp/gpufracd.log"; exit 1; }

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
echo "gpu: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
