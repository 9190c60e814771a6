#!/usr/bin/env bash
# The copy engine with each framework of issue 21's point 4 (swap_engine =
# copy stays opt-in until a real GPU has shown it with PyTorch's default
# allocator, expandable segments, JAX and CuPy; swap.sh shows the first):
# for each of GPU_SWAP_FRAMEWORKS (torch_vmm cupy jax), one short swap.sh
# under the copy engine only, its two workers of that backend (see
# swap_worker.py), GPU_SWAP_GIB (4) each, GPU_SWAP_ROUNDS (1) round, each
# 60 % of what the daemon shares (GPU_SWAP_FRACTION, 0.6, not swap.sh's
# 0.7: room beside the two for the contexts and for what JAX's pool takes
# above the worker's buffers), a step that overruns GPU_SWAP_STEP_TIMEOUT
# (30 s) failing, the pinned copies measured once for all of them (by
# the first, GPU_SWAP_PINNED). A framework whose module is not installed
# is skipped, saying so. After each framework, one line: its result, its
# swap-out and swap-in GB/s, and what its swap-outs said stayed on the
# device (pools or small allocations a framework keeps may stay), and
# FIGURE lines named after it (swap_out_gbps_copy_cupy,
# swap_in_gbps_copy_cupy, swap_stayed_copy_cupy, swap_result_copy_cupy);
# swap.sh's own FIGURE lines are shown as "figure", so that run.sh keeps
# these only. A table of them all comes last.
# Exits 0 when none failed and one passed, 77 when all were skipped, 1
# otherwise. Run from a built tree:
#   tests/gpu/swap_frameworks.sh          on the real GPU (run.sh runs it)
#   tests/gpu/swap_frameworks.sh --sim    on the simulated driver, where
#                         the driver backend stands in for the frameworks
#                         (GPU_SWAP_FRAMEWORKS=driver, GPU_SWAP_GIB 1):
#                         checks this script, not the frameworks
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
here=$top/tests/gpu
sim=()
case $# in
0)	frameworks=${GPU_SWAP_FRAMEWORKS:-torch_vmm cupy jax}
	gib=${GPU_SWAP_GIB:-4};;
1)	[ "$1" = --sim ] ||
	    { echo "usage: swap_frameworks.sh [--sim]" >&2; exit 2; }
	sim=(--sim)
	frameworks=${GPU_SWAP_FRAMEWORKS:-driver}
	gib=${GPU_SWAP_GIB:-1};;
*)	echo "usage: swap_frameworks.sh [--sim]" >&2; exit 2;;
esac
export GPU_SWAP_ENGINE=copy GPU_SWAP_GIB=$gib \
    GPU_SWAP_ROUNDS=${GPU_SWAP_ROUNDS:-1} \
    GPU_SWAP_FRACTION=${GPU_SWAP_FRACTION:-0.6} \
    GPU_SWAP_STEP_TIMEOUT=${GPU_SWAP_STEP_TIMEOUT:-30} \
    GPU_SWAP_PINNED=$tmp/pinned.json
table=()
passed=0 failed=0

# figure LOG NAME: the value of swap.sh's FIGURE NAME in LOG (null if none).
figure() {
	local v
	v=$(sed -n "s/^FIGURE $2 //p" "$1" | tail -n 1)
	echo "${v:-null}"
}

# FRAMEWORK RESULT OUT IN STAYED: its line, its figures, its table row
# (STAYED as JSON: a string, or null).
said() {
	local left=$5
	[ "$left" = null ] && left=-
	left=${left#\"} left=${left%\"}
	echo "=== $1: $2; swap-out $3 GB/s, swap-in $4 GB/s; stayed: $left"
	echo "FIGURE swap_result_copy_$1 \"$2\""
	echo "FIGURE swap_out_gbps_copy_$1 $3"
	echo "FIGURE swap_in_gbps_copy_$1 $4"
	echo "FIGURE swap_stayed_copy_$1 $5"
	table+=("$(printf '%-10s %-6s %8s %8s  %s' "$1" "$2" "$3" "$4" "$left")")
}

for fw in $frameworks; do
	case $fw in
	torch_vmm) module=torch;;
	cupy|jax) module=$fw;;
	torch|driver) module=;;
	*)	echo "swap_frameworks.sh: bad framework '$fw' in" \
		    "GPU_SWAP_FRAMEWORKS: expected torch_vmm, cupy, jax," \
		    "torch or driver" >&2; exit 2;;
	esac
	echo "=== $fw (copy engine, ${gib} GiB each, ${GPU_SWAP_ROUNDS} round)"
	if [ ${#sim[@]} -gt 0 ] && [ "$fw" != driver ]; then
		echo "SKIP  swap $fw: the simulated driver runs no framework"
		said "$fw" skip null null null
		continue
	fi
	if [ -n "$module" ] && ! "$python" -c "import $module" 2>/dev/null
	then
		echo "SKIP  swap $fw: $module not installed"
		said "$fw" skip null null null
		continue
	fi
	log=$tmp/swap-$fw.log
	# Its figures are read from the log and said again under its name.
	GPU_SWAP_BACKEND=$fw bash "$here/swap.sh" ${sim[@]+"${sim[@]}"} 2>&1 |
	    tee "$log" | sed -u 's/^FIGURE /figure /'
	rc=${PIPESTATUS[0]}
	# swap.sh names a framework's figures after it, the driver's not.
	sfx=_copy_$fw
	case $fw in torch|driver) sfx=_copy;; esac
	result=fail
	case $rc in
	0)	result=pass passed=$((passed + 1));;
	77)	result=skip;;
	*)	failed=$((failed + 1));;
	esac
	said "$fw" "$result" "$(figure "$log" "swap_out_gbps$sfx")" \
	    "$(figure "$log" "swap_in_gbps$sfx")" \
	    "$(figure "$log" "swap_stayed$sfx")"
done

echo "--- the copy engine with each framework (GB/s; what stayed on the" \
    "device at swap-out)"
printf '%-10s %-6s %8s %8s  %s\n' FRAMEWORK RESULT OUT IN STAYED
printf '%s\n' "${table[@]}"
[ "$failed" -gt 0 ] && exit 1
[ "$passed" -gt 0 ] && exit 0
exit 77
