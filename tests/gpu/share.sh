#!/usr/bin/env bash
# make bench-share on the real driver (build/bench/share -r): the six
# seeded tenants of the sharing benchmark, four ways (static partitions,
# wait, swap, preempt), on 16 GiB of device 0, each way's gpufracd keeping
# the rest back as its reserve (README, "make bench-share"). Prints the
# benchmark's table, then its JSON line as "FIGURE bench_share JSON" for
# run.sh's summary. Exits as the benchmark does (0: every way measured),
# or 77 when it cannot run here (the last line says why).
#   tests/gpu/share.sh          on the real GPU (run.sh's last step)
#   tests/gpu/share.sh --sim    the same, with the simulated driver standing
#                               in for the real one (a 24 GiB device)
# GPU_SHARE_QUICK=1 runs it short (bench/share -q: three tenants, bursts
# due over 1 s): with --sim on 2 cores, 7 s instead of 27.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
args=(-r)
[ "${GPU_SHARE_QUICK:-0}" = 1 ] && args+=(-q)
case $# in
0)	nvidia-smi -L >/dev/null 2>&1 ||
	    { echo "SKIP  bench_share: no NVIDIA GPU here"; exit 77; };;
1)	[ "$1" = --sim ] ||
	    { echo "usage: share.sh [--sim]" >&2; exit 2; }
	sim_state=gpufrac-gpu-share-$$
	export LD_LIBRARY_PATH=$build/tests/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	export SIMCUDA_STATE=$sim_state SIMCUDA_DEVICES=24Gi;;
*)	echo "usage: share.sh [--sim]" >&2; exit 2;;
esac
if [ "$(id -u)" != 0 ]; then
	echo "SKIP  bench_share: needs root (the preempt way tells its" \
	    "tenants apart by gid)"
	exit 77
fi
if [ ! -x "$build/bench/share" ] || [ ! -x "$build/bench/share_tenant" ]
then
	echo "SKIP  bench_share: not built (make build/bench/share" \
	    "build/bench/share_tenant)"
	exit 77
fi
TMPDIR=$tmp "$build/bench/share" "${args[@]}" | tee "$tmp/share.out"
rc=${PIPESTATUS[0]}
last=$(tail -n 1 "$tmp/share.out")
case $last in
'{'*)	echo "FIGURE bench_share $last";;
esac
exit "$rc"
