#!/usr/bin/env bash
# make bench-looks (issue 38, D): how long memory held past a limit,
# without the shim, goes unseen now that the daemon's looks come at random
# and a glance at the device's used memory every ~100 ms calls one at
# once. On an 8 GiB simulated device, a gpufracd whose group "cap" (this
# user, limit 1 GiB, unshimmed = kill) holds burst_linked, which takes
# 3 GiB bursts at a period of its own, untimed to the daemon:
#  - unseen: for each HOLD (BENCH_LOOKS_HOLDS, ms), BENCH_LOOKS_RUNS (5)
#    processes each taking bursts of HOLD every HOLD + 300 ms, up to
#    BENCH_LOOKS_BURSTS (20) of them: how many went by before one was
#    seen (the process killed), so the longest burst that can go unseen,
#    and the slowest kill after a burst began;
#  - fraction: a process holding 3 GiB for f of each second (f = 0.6 and
#    0.1), BENCH_LOOKS_RUNS (5) times each: how long it lasted, from its
#    first burst to its death;
#  - cost: what one glance costs on the simulated driver with
#    BENCH_LOOKS_PROCS (8) processes holding memory: the simulated
#    nvmlDeviceGetMemoryInfo's wall time and system calls (strace) over
#    2000 calls, and the daemon's instructions per glance (callgrind,
#    glance_fire inclusive, over BENCH_LOOKS_CG_S (20) s), the reading's
#    and the daemon's own apart; each skipped without its tool.
# Prints a line per measure, then one JSON line. Run from the top of a
# built tree (make bench-looks builds burst_linked and nvml_query):
# bench/looks.sh [BUILD] (default build).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd) || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpufrac-bench-looks.XXXXXX")
export LD_LIBRARY_PATH=$build/tests/simcuda
export SIMCUDA_STATE=gpufrac-bench-looks-$$ SIMCUDA_DEVICES=8Gi
export GPUFRAC_SOCKET=$tmp/gpufrac.sock
unset GPUFRAC_MEMORY_LIMIT GPUFRAC_DISABLE GPUFRAC_LOG CUDA_VISIBLE_DEVICES
unset LD_PRELOAD
holds=${BENCH_LOOKS_HOLDS:-25 50 75 100 125 150 200}
bursts=${BENCH_LOOKS_BURSTS:-20} runs=${BENCH_LOOKS_RUNS:-5}
nprocs=${BENCH_LOOKS_PROCS:-8} cg_s=${BENCH_LOOKS_CG_S:-20}
B=$build/tests/clients/burst_linked
daemon='' holders=()

cleanup() {
	[ ${#holders[@]} -gt 0 ] && kill -9 "${holders[@]}" 2>/dev/null
	[ -n "$daemon" ] && kill -9 "$daemon" 2>/dev/null
	rm -rf "$tmp"
	rm -f "/dev/shm/simcuda-$SIMCUDA_STATE"
}
trap cleanup EXIT

ctl() { "$build/tools/gpufracctl" -s "$GPUFRAC_SOCKET" "$@"; }
die() { echo "bench-looks: $*" >&2; [ -f "$tmp/gpufracd.log" ] &&
	tail -20 "$tmp/gpufracd.log" >&2; exit 1; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# until_ok SECS CMD...: poll CMD until it succeeds; 1 after SECS.
until_ok() {
	local end=$(($(date +%s) + $1)); shift
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.01
	done
}

printf '[group cap]\nmatch = uid:%s\nlimit = 1Gi\nunshimmed = kill\n' \
	"$(id -u)" >"$tmp/gpufrac.conf"
daemon_start() {
	"$@" "$build/daemon/gpufracd" -f -s "$GPUFRAC_SOCKET" \
	    -c "$tmp/gpufrac.conf" 2>"$tmp/gpufracd.log" &
	daemon=$!
	until_ok 60 ctl status || die "gpufracd did not start"
}
daemon_stop() { kill -TERM "$daemon"; wait "$daemon"; daemon=; }
nothing_held() { ! ctl ps | grep -q unshimmed; }

# burster HOLD PERIOD COUNT: one burster to its end (not this shell's
# job: its death by SIGKILL is the daemon's to say); prints
# "SEEN K LASTED_MS KILL_MS": SEEN 1 if it was killed, in burst K,
# LASTED_MS after its first instant, KILL_MS after burst K began.
ended() { ! kill -0 "$1"; }
burster() {
	local pid start line at
	pid=$("$B" 3Gi "$1" "$2" "$3" </dev/null >"$tmp/b.out" 2>&1 & echo $!)
	until_ok $(($2 * $3 / 1000 + 30)) ended "$pid" ||
	    die "burst_linked did not end"
	start=$(sed -n 's/^start //p' "$tmp/b.out")
	line=$(grep '^burst' "$tmp/b.out" | tail -n 1)
	read -r -a line <<<"$line"
	if [ -z "$start" ] || [ ${#line[@]} != 3 ]; then
		die "burst_linked: $(cat "$tmp/b.out")"
	fi
	set -- "${line[@]}"
	at=$(ctl events --json | grep "\"event\":\"unshimmed-kill\",\"pid\":$pid," |
	    sed 's/.*"time_ms":\([0-9]*\).*/\1/')
	until_ok 10 nothing_held || die "the burster's memory is still held"
	if [ -n "$at" ]; then
		echo "1 $2 $((at - start)) $((at - start - $3))"
	else
		echo "0 $2 0 0"
	fi
}

daemon_start
declare -A unseen=() taken=()
longest=0 worst_kill=0
for h in $holds; do
	unseen[$h]=0 taken[$h]=0
	for ((i = 0; i < runs; i++)); do
		read -r seen k lasted kill_ms < <(burster "$h" $((h + 300)) \
		    "$bursts")
		unseen[$h]=$((unseen[$h] + (seen ? k - 1 : k)))
		taken[$h]=$((taken[$h] + k))
		[ "$seen" = 1 ] && [ "$kill_ms" -gt "$worst_kill" ] &&
		    worst_kill=$kill_ms
	done
	[ "${unseen[$h]}" -gt 0 ] && [ "$h" -gt "$longest" ] && longest=$h
	echo "3 GiB bursts of $h ms: ${unseen[$h]} of ${taken[$h]} unseen"
done
echo "the slowest kill came $worst_kill ms into the burst it saw"
declare -A lasted=()
for f in 6 1; do
	every=()
	for ((i = 0; i < runs; i++)); do
		read -r seen k ms kill_ms < <(burster $((f * 100)) 1000 600)
		[ "$seen" = 1 ] || die "f = 0.$f: never killed in 600 s"
		every+=("$ms")
	done
	lasted[$f]=$(printf '%s\n' "${every[@]}" | sort -n | tr '\n' ' ')
	echo "holding 3 GiB 0.$f of each second: killed after ${lasted[$f]}ms"
done

# The glance's cost: nprocs holders, each a 2 MiB probe.
for ((i = 0; i < nprocs; i++)); do
	holders+=("$("$B" 1Mi 0 3600000 1 </dev/null >"$tmp/h$i.out" 2>&1 &
	    echo $!)")
done
for ((i = 0; i < nprocs; i++)); do
	until_ok 20 grep -q '^probe' "$tmp/h$i.out" || die "a holder did not start"
done
Q=$build/tests/clients/nvml_query
t0=$(date +%s%N); "$Q" mem 0 >/dev/null; t1=$(date +%s%N)
mapfile -t many < <(yes 'mem
0' | head -n 2000)
"$Q" "${many[@]}" >/dev/null; t2=$(date +%s%N)
# "mem" reads it twice (nvmlDeviceGetMemoryInfo and its _v2).
read_ns=$(( (t2 - t1 - (t1 - t0)) / 999 / 2 ))
read_sys=null
if command -v strace >/dev/null; then
	calls() { strace -c -o "$tmp/st" "$Q" "$@" >/dev/null &&
	    awk '$NF == "total" { print $4 }' "$tmp/st"; }
	one=$(calls mem 0) all=$(calls "${many[@]}")
	read_sys=$(( (all - one) / 999 / 2 ))
fi
echo "NVML's used memory on the simulated driver, $nprocs processes: $read_ns ns, $read_sys system calls a reading"
glance_ir=null reading_ir=null own_ir=null
if command -v valgrind >/dev/null; then
	daemon_stop
	daemon_start valgrind -q --tool=callgrind --toggle-collect=glance_fire \
	    --callgrind-out-file="$tmp/cg.out"
	sleep "$cg_s"
	daemon_stop
	# Glances: the calls of nvml_used (one a device) inside glance_fire,
	# the only code collected; callgrind names a function once, by id.
	calls=$(awk '/^c?fn=\([0-9]+\) nvml_used$/ { id = $1;
	    sub("^c?fn=", "", id) }
	    /^cfn=/ { c = $1; sub("^cfn=", "", c); hit = (id != "" && c == id) }
	    /^calls=/ && hit { sub("calls=", ""); n += $1; hit = 0 }
	    END { print n + 0 }' "$tmp/cg.out")
	ir=$(awk '/^summary:/ { print $2 }' "$tmp/cg.out")
	# Of which the reading: nvml_used, the simulated NVML's call within.
	nvml_ir=$(callgrind_annotate --inclusive=yes "$tmp/cg.out" 2>/dev/null |
	    awk '/:nvml_used( |$)/ && !/=>/ { gsub(",", "", $1); print $1; exit }')
	if [ -n "$ir" ] && [ "$calls" -gt 0 ]; then
		glance_ir=$((ir / calls))
		[ -n "$nvml_ir" ] && reading_ir=$((nvml_ir / calls)) &&
		    own_ir=$((glance_ir - reading_ir))
	fi
	echo "a glance in the daemon: $glance_ir instructions (callgrind), ${reading_ir:-?} of them NVML's reading"
fi
printf '{"unseen_by_hold_ms":{'
sep=
for h in $holds; do printf '%s"%s":%s' "$sep" "$h" "${unseen[$h]}"; sep=,; done
printf '},"bursts_by_hold_ms":{'
sep=
for h in $holds; do printf '%s"%s":%s' "$sep" "$h" "${taken[$h]}"; sep=,; done
printf '},"longest_unseen_ms":%s,"slowest_kill_ms":%s,' \
	"$longest" "$worst_kill"
printf '"lasted_ms_f06":[%s],"lasted_ms_f01":[%s],' \
	"$(echo "${lasted[6]% }" | tr ' ' ,)" "$(echo "${lasted[1]% }" | tr ' ' ,)"
printf '"procs":%s,"reading_ns":%s,"reading_syscalls":%s,' \
	"$nprocs" "$read_ns" "$read_sys"
printf '"glance_instructions":%s,"reading_instructions":%s,"own_instructions":%s}\n' \
	"$glance_ir" "$reading_ir" "$own_ir"
