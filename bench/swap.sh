#!/usr/bin/env bash
# make bench-swap: the same process moved to host memory and back with
# each engine of host swap, on a simulated bus slow enough that the
# engine, not this machine, sets the time. For each engine a gpufracd of
# its own (its [daemon] says swap_engine) swaps a process of
# BENCH_SWAP_ALLOCS (8) allocations of BENCH_SWAP_SIZE (8Mi) out and in
# BENCH_SWAP_ROUNDS (3) times by hand (gpufracctl swap), its data checked
# at the end; the GB/s are the swap events' bytes over their durations.
#
# A swap-in writes into device memory made afresh: the simulator's
# device memory is host memory, and a page written for the first time
# costs this machine a fault and a clearing that a real GPU does not pay
# (1.0-1.3 GB/s on the 2 shared cores of the development machine, against
# ~20 GB/s into pages already there). So the host's fresh-page write rate
# is measured first (dd into a new file in /dev/shm, as the simulator's
# memory files are, best of three), and the bus (SIMCUDA_COPY_GBPS) is a
# quarter of it unless set, so that the bus's time covers the faults
# (the simulator's calls take the longer of the two, not their sum).
# Both are printed. (The simulator's release of a memory file, 160-200 ms
# per GiB here, is done by a thread of its own, off the move, as a real
# driver's costs the move next to nothing: tests/simcuda/memfree.c.)
#
# The other rates are an H200's in its proportions to the bus: there
# pinned copies moved 52-55 GB/s, the checkpoint API 2.3 GB/s, and
# cuMemHostAlloc pinned 2-2.5 GB/s (12 GiB in ~5 s), so checkpointing
# (SIMCUDA_CKPT_GBPS) and pinning (SIMCUDA_PIN_GBPS) each run at 2.3/55
# of the bus unless set.
#
# The copy engine's first swap-out pins its host memory; keeping that
# memory between moves can only help the swaps after it, so the first
# swap-out is reported apart from the steady state: every swap after the
# first out and in. Prints the host's rate and the bus, a line per
# engine, then one JSON line:
#   {"host_fresh_gbps":..,"bus_gbps":..,"ckpt_api_gbps":..,"pin_gbps":..,
#    "copy_gbps":..,"copy_ratio":..,"copy_first_out_gbps":..,
#    "copy_steady_gbps":..,"copy_steady_ratio":..,"copy_out_gbps":..,
#    "copy_out_swaps":..,...}
# and the same for checkpoint: each engine's GB/s over all its swaps,
# out and in together, the ratios being to bus_gbps. Exits 1 when a swap
# or the check fails. Run from the top of a built tree:
# bench/swap.sh [BUILD] (default build).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd) || exit 1
python=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpufrac-bench-swap.XXXXXX")
export LD_LIBRARY_PATH=$build/tests/simcuda
export SIMCUDA_STATE=gpufrac-bench-swap-$$ SIMCUDA_DEVICES=1Gi
# scaled BUS: BUS * 2.3 / 55, the H200's checkpoint and pinning rates.
scaled() { LC_ALL=C awk -v b="$1" 'BEGIN { printf "%.4g", b * 2.3 / 55 }'; }

# fresh_gbps: GB/s at which this machine writes 256 MiB of pages it has
# never touched, into a memory file (/dev/shm), best of three; empty when
# dd cannot say.
fresh_gbps() {
	local f=/dev/shm/gpufrac-bench-swap-$$ i best=
	for i in 1 2 3; do
		best=$(LC_ALL=C dd if=/dev/zero of="$f" bs=1M count=256 2>&1 |
		    LC_ALL=C awk -v best="$best" '/bytes.*copied/ {
			r = $1 / $(NF - 3) / 1e9
			if (best == "" || r > best) best = r }
		    END { if (best != "") printf "%.3g", best }')
		rm -f "$f"
	done
	echo "$best"
}
host_gbps=$(fresh_gbps)
[ -n "$host_gbps" ] || { echo "bench-swap: cannot measure the host's" \
    "fresh-page write rate (dd into /dev/shm)" >&2; exit 1; }
bus_told=${SIMCUDA_COPY_GBPS:+1}
export SIMCUDA_COPY_GBPS=${SIMCUDA_COPY_GBPS:-$(LC_ALL=C awk -v h="$host_gbps" \
    'BEGIN { printf "%.2g", h / 4 }')}
export SIMCUDA_CKPT_GBPS=${SIMCUDA_CKPT_GBPS:-$(scaled "$SIMCUDA_COPY_GBPS")}
export SIMCUDA_PIN_GBPS=${SIMCUDA_PIN_GBPS:-$(scaled "$SIMCUDA_COPY_GBPS")}
export GPUFRAC_SOCKET=$tmp/gpufrac.sock
unset GPUFRAC_MEMORY_LIMIT GPUFRAC_DISABLE GPUFRAC_LOG CUDA_VISIBLE_DEVICES
rounds=${BENCH_SWAP_ROUNDS:-3} nalloc=${BENCH_SWAP_ALLOCS:-8}
size=${BENCH_SWAP_SIZE:-8Mi}
daemon='' client=''

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
	local args=(alloc "$size") i
	printf '[daemon]\nswap_engine = %s\n' "$1" >"$tmp/$1.conf"
	"$build/daemon/gpufracd" -f -s "$GPUFRAC_SOCKET" -c "$tmp/$1.conf" \
	    2>"$tmp/gpufracd.log" &
	daemon=$!
	until_ok 10 ctl status || die "gpufracd did not start"
	for ((i = 1; i < nalloc; i++)); do args+=(alloc "$size"); done
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
"$python" - "$tmp" "$SIMCUDA_COPY_GBPS" "$SIMCUDA_CKPT_GBPS" \
    "$SIMCUDA_PIN_GBPS" "$host_gbps" "${bus_told:-0}" <<'PY'
import json, sys

tmp, bus, api, pin, host = sys.argv[1], float(sys.argv[2]), \
    float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
told = sys.argv[6] == "1"
out = {"host_fresh_gbps": host, "bus_gbps": bus, "ckpt_api_gbps": api,
       "pin_gbps": pin}


def gbps(es):
    """The events' bytes over their durations; None when untimed."""
    ms = sum(e["duration_ms"] for e in es)
    return sum(e["bytes"] for e in es) / ms / 1e6 if ms else None


def r3(x):
    return None if x is None else round(x, 3)


def pct(x):
    return "-" if x is None else "%.0f%%" % (100 * x / bus)


print("host writes fresh pages at %g GB/s; bus %g GB/s (%s)"
      % (host, bus, "SIMCUDA_COPY_GBPS" if told else "a quarter of it"))
if bus > host / 2:
    print("the bus is more than half the host's fresh-page rate: the "
          "swap-ins may measure this machine's page faults")
print("checkpoint API %g GB/s, pinning %g GB/s" % (api, pin))
for engine in ("copy", "checkpoint"):
    pid = int(open("%s/%s.pid" % (tmp, engine)).read())
    evs = [json.loads(line) for line in open("%s/%s.json" % (tmp, engine))
           if line.strip()]
    evs = sorted((e for e in evs if e["pid"] == pid),
                 key=lambda e: e["time_ms"])
    way = {}
    for kind, name in (("swap-out", "out"), ("swap-in", "in")):
        way[name] = [e for e in evs if e["event"] == kind]
        out["%s_%s_gbps" % (engine, name)] = r3(gbps(way[name]))
        out["%s_%s_swaps" % (engine, name)] = len(way[name])
    rate = gbps(way["out"] + way["in"])
    out[engine + "_gbps"] = r3(rate)
    out[engine + "_ratio"] = None if rate is None else round(rate / bus, 3)
    # The first swap-out pins afresh; the steady state is every swap
    # after the first out and in.
    first = gbps(way["out"][:1])
    steady = gbps(way["out"][1:] + way["in"][1:])
    out[engine + "_first_out_gbps"] = r3(first)
    out[engine + "_steady_gbps"] = r3(steady)
    out[engine + "_steady_ratio"] = None if steady is None else \
        round(steady / bus, 3)
    print("%-10s %d swaps out and in of %.1f MiB: %s GB/s (%s of the bus); "
          "first out %s GB/s, steady %s GB/s (%s)"
          % (engine, len(way["out"]),
             sum(e["bytes"] for e in way["out"][:1]) / 2**20,
             out[engine + "_gbps"], pct(rate), out[engine +
                                                    "_first_out_gbps"],
             out[engine + "_steady_gbps"], pct(steady)))
print(json.dumps(out, separators=(",", ":")))
PY
