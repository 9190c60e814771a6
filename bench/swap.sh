#!/usr/bin/env bash
# make bench-swap (issue 21): the same process moved to host memory and
# back with each engine of host swap, on the simulated driver whose bus
# moves pinned copies at SIMCUDA_COPY_GBPS (20) and checkpoints at
# SIMCUDA_CKPT_GBPS (2.3). For each engine a gpufracd of its own (its
# [daemon] says swap_engine) swaps a process of BENCH_SWAP_ALLOCS (8)
# allocations of 64 MiB out and in BENCH_SWAP_ROUNDS (3) times by hand
# (gpufracctl swap), its data checked at the end; the GB/s are the swap
# events' bytes over their durations, out and in together. Prints a line
# per engine, then one JSON line:
#   {"bus_gbps":20,"ckpt_api_gbps":2.3,"copy_gbps":..,"checkpoint_gbps":..,
#    "copy_ratio":..,"checkpoint_ratio":..,"copy_out_gbps":..,...}
# the ratios being to bus_gbps. Exits 1 when a swap or the check fails.
# Run from the top of a built tree: bench/swap.sh [BUILD] (default build).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd) || exit 1
python=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpufrac-bench-swap.XXXXXX")
export LD_LIBRARY_PATH=$build/tests/simcuda
export SIMCUDA_STATE=gpufrac-bench-swap-$$ SIMCUDA_DEVICES=1Gi
export SIMCUDA_COPY_GBPS=${SIMCUDA_COPY_GBPS:-20}
export SIMCUDA_CKPT_GBPS=${SIMCUDA_CKPT_GBPS:-2.3}
export GPUFRAC_SOCKET=$tmp/gpufrac.sock
unset GPUFRAC_MEMORY_LIMIT GPUFRAC_DISABLE GPUFRAC_LOG CUDA_VISIBLE_DEVICES
rounds=${BENCH_SWAP_ROUNDS:-3} nalloc=${BENCH_SWAP_ALLOCS:-8}
daemon= client=

cleanup() {
	[ -n "$client" ] && kill -9 "$client" 2>/dev/null
	[ -n "$daemon" ] && kill -9 "$daemon" 2>/dev/null
	rm -rf "$tmp"
	rm -f "/dev/shm/simcuda-$SIMCUDA_STATE"
}
trap cleanup EXIT

ctl() { "$build/tools/gpufracctl" -s "$GPUFRAC_SOCKET" "$@"; }
die() { echo "bench-swap: $*" >&2; [ -f "$tmp/gpufracd.log" ] &&
	tail -20 "$tmp/gpufracd.log" >&2; exit 1; }

# until_ok SECS CMD...: poll CMD until it succeeds; 1 after SECS.
until_ok() {
	local end=$(($(date +%s) + $1)); shift
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.02
	done
}

# engine E: one engine's swaps; its events' JSON in $tmp/E.json.
engine() {
	local args=(alloc 64Mi) i
	printf '[daemon]\nswap_engine = %s\n' "$1" >"$tmp/$1.conf"
	"$build/daemon/gpufracd" -f -s "$GPUFRAC_SOCKET" -c "$tmp/$1.conf" \
	    2>"$tmp/gpufracd.log" &
	daemon=$!
	until_ok 10 ctl status || die "gpufracd did not start"
	for ((i = 1; i < nalloc; i++)); do args+=(alloc 64Mi); done
	env LD_PRELOAD="$build/shim/libgpufrac.so" \
	    "$build/tests/clients/cuclient_linked" "${args[@]}" fill hold \
	    check hold </dev/null >"$tmp/client.out" 2>&1 &
	client=$!
	until_ok 20 grep -q '^holding' "$tmp/client.out" ||
	    die "the client did not allocate: $(cat "$tmp/client.out")"
	for ((i = 0; i < rounds; i++)); do
		ctl swap out "$client" >/dev/null || die "$1: swap out failed"
		ctl swap in "$client" >/dev/null || die "$1: swap in failed"
	done
	kill -USR1 "$client"
	until_ok 20 grep -q '^check' "$tmp/client.out"
	grep -q '^check ok' "$tmp/client.out" ||
	    die "$1: the data did not come back: $(cat "$tmp/client.out")"
	ctl events --json >"$tmp/$1.json" || die "cannot read the events"
	echo "$client" >"$tmp/$1.pid"
	kill -USR1 "$client"
	wait "$client"
	client=
	kill -TERM "$daemon"
	wait "$daemon"
	daemon=
}

engine copy
engine checkpoint
"$python" - "$tmp" "$SIMCUDA_COPY_GBPS" "$SIMCUDA_CKPT_GBPS" <<'PY'
import json, sys

tmp, bus, api = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
out = {"bus_gbps": bus, "ckpt_api_gbps": api}
for engine in ("copy", "checkpoint"):
    pid = int(open("%s/%s.pid" % (tmp, engine)).read())
    evs = [json.loads(line) for line in open("%s/%s.json" % (tmp, engine))
           if line.strip()]
    total_b = total_ms = 0
    for kind, way in (("swap-out", "out"), ("swap-in", "in")):
        es = [e for e in evs if e["pid"] == pid and e["event"] == kind]
        b = sum(e["bytes"] for e in es)
        ms = sum(e["duration_ms"] for e in es)
        out["%s_%s_gbps" % (engine, way)] = round(b / ms / 1e6, 3) \
            if ms else None
        out["%s_%s_swaps" % (engine, way)] = len(es)
        total_b += b
        total_ms += ms
    rate = total_b / total_ms / 1e6 if total_ms else None
    out[engine + "_gbps"] = None if rate is None else round(rate, 3)
    out[engine + "_ratio"] = None if rate is None else round(rate / bus, 3)
    print("%-10s %d swaps out and in of %.1f MiB: %s GB/s, %s of the "
          "bus's %.2f GB/s" % (engine, out["%s_out_swaps" % engine],
                               total_b / max(1, 2 * out[engine +
                                                        "_out_swaps"]) / 2**20,
                               out[engine + "_gbps"],
                               "-" if rate is None else
                               "%.0f%%" % (100 * rate / bus), bus))
print(json.dumps(out, separators=(",", ":")))
PY
