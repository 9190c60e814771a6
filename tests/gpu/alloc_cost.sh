#!/usr/bin/env bash
# What an allocation costs under the shim on a real GPU (issue 21: the
# copy engine backs an allocation of 2 MiB or more with the driver's
# virtual memory management, which must cost at most twice the bare
# driver's cuMemAlloc): alloc_pair.py's 2 MiB alloc+free pair bare, then
# preloaded under a daemon whose swap_engine is checkpoint, then copy, in
# one run. Prints FIGURE lines for run.sh, never asserts a speed:
#   alloc_pair_us_bare, alloc_pair_us_checkpoint, alloc_pair_us_copy,
#   alloc_pair_ratio_checkpoint, alloc_pair_ratio_copy (to bare)
# Exits 0, 77 (skipped, the line says why) or 1 (a probe failed). Run
# from a built tree:
#   tests/gpu/alloc_cost.sh         on the real GPU (run.sh runs it)
#   tests/gpu/alloc_cost.sh --sim   on the simulated driver: checks this
#                                   script and the probe without a GPU
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
here=$top/tests/gpu
unset GPUFRAC_MEMORY_LIMIT GPUFRAC_DISABLE
gpu_or_sim alloc_cost 1Gi "$@"

# probe MODE [ENV...]: alloc_pair.py's figure for MODE into $tmp/MODE.
probe() {
	local mode=$1 out
	shift
	out=$(env "$@" "$python" "$here/alloc_pair.py") || {
		echo "alloc_cost: the $mode probe failed: $out"; return 1; }
	echo "$mode: $out"
	echo "${out#us_per_pair }" >"$tmp/$mode"
	echo "FIGURE alloc_pair_us_$mode ${out#us_per_pair }"
}

probe bare || exit 1
for engine in checkpoint copy; do
	printf '[daemon]\nswap_engine = %s\n' "$engine" >"$tmp/$engine.conf"
	daemon_start "$tmp/$engine.conf" >/dev/null || exit 1
	probe "$engine" LD_PRELOAD="$build/shim/libgpufrac.so" || exit 1
	daemon_stop
done
for engine in checkpoint copy; do
	echo "FIGURE alloc_pair_ratio_$engine $("$python" -c \
	    'import sys; print("%.2f" % (float(sys.argv[1]) / float(sys.argv[2])))' \
	    "$(cat "$tmp/$engine")" "$(cat "$tmp/bare")")"
done
