# Host swap by the copy engine (swap_engine = copy, issue 21): the shim
# backs plain allocations with the driver's VMM, copies them to pinned
# host memory and releases the device's memory, then maps new memory at
# the same addresses and copies back. Data intact (plain, pitch and
# lease-drawn allocations), the device free while out, what stayed said,
# a swap that would pass swap_host_limit not started.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=64Mi
C=$CLIENTS/cuclient_linked
MiB=$((1 << 20))
conf=$TMP/gpufrac.conf

printf '[daemon]\ndefault_resolver = swap\nswap_engine = copy\nwait_timeout = 20s\nswap_min_idle = 100ms\n' >"$conf"
daemon_start
check_eq "status says the copy engine is in use" \
	"$(ctl status --json | json 'j["swap"]["available"], j["swap"]["engine"]')" \
	"(True, 'copy')"
check "gpufracctl status says it too" eval \
	"ctl status | grep -q '^host swap: available, engine copy'"

# a: plain (the first reserved, the next drawn from its lease), pitch and
# one small allocation that stays on the device.
client_start a preload "$C" alloc 8Mi alloc 4Mi alloc 4Mi pitch 4000 1024 \
	alloc 4Ki fill hold check hold
client_start b preload "$C" alloc 48Mi fill hold check
check "b was granted: a, idle, was swapped out" state_is "$PID_a" swapped
check "the swap-out event says the copy engine moved a's memory" \
	has_event swap-out "$PID_a" "by copy in [0-9]* ms, [0-9.]* GB/s"
check "what stayed on the device is said" \
	has_event swap-out "$PID_a" "1 stayed: 4.0KiB (small)"
check "the device holds b's 48 MiB and a's 4 KiB only" \
	device_used_is $((48 * MiB + 4096))
check_eq "the simulated driver agrees" "$("$CLIENTS/sim_mem_linked" free 0)" \
	$((64 * MiB - 48 * MiB - 4096))
kill -USR1 "$PID_a"
wait_for "a calls the driver: swapped back in, data intact" 20 \
	grep -q '^check ok' "$TMP/a.out"
check "making room for a swapped b out" state_is "$PID_b" swapped
check "the swap-in event says the copy engine" has_event swap-in "$PID_a" "by copy"
kill -USR1 "$PID_a"
wait "$PID_a"
wait_for "a gone, b comes back on its own" 20 state_is "$PID_b" running
kill -USR1 "$PID_b"
wait "$PID_b"
check_eq "b's data came back intact" "$(tail -1 "$TMP/b.out")" "check ok"
wait_for "nothing is left charged" 10 device_used_is 0

# Managed memory, which the driver migrates on its own, stays on the
# device while the rest moves (the checkpoint engine refuses it: swap.sh).
client_start m preload "$C" alloc 8Mi managed 4Mi fill hold check hold
check "m, with managed memory, is swapped out by copy" ctl swap out "$PID_m"
check "its managed memory stayed, and the event says so" \
	has_event swap-out "$PID_m" "1 stayed: 4.0MiB (managed)"
check "and in" ctl swap in "$PID_m"
kill -USR1 "$PID_m"
wait_for "m's data came back" 20 grep -q '^check' "$TMP/m.out"
check_eq "intact" "$(grep '^check' "$TMP/m.out")" "check ok"
kill -USR1 "$PID_m"
wait "$PID_m"

# --- the host limit ------------------------------------------------------
printf '[daemon]\ndefault_resolver = swap\nswap_engine = copy\nwait_timeout = 1s\nswap_min_idle = 100ms\nswap_host_limit = 16Mi\n' >"$conf"
check "reload: at most 16 MiB on host" ctl reload
client_start a preload "$C" alloc 32Mi hold
client_start b preload "$C" alloc 40Mi hold
wait_for "b was refused" 10 grep -q 'alloc err' "$TMP/b.out"
check "a was not swapped out: the swap-skip event says why" \
	has_event swap-skip "$PID_a" "would pass swap_host_limit 16.0MiB"
check "a runs" state_is "$PID_a" running
kill -USR1 "$PID_a"
wait "$PID_a"
finish
