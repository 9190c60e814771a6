# Host swap on the simulated driver's checkpoint API: an idle process is
# swapped out to make room and comes back with its data intact when it
# next calls the driver (making room in turn), or on its own once its
# memory fits; only a process idle for swap_min_idle is taken; on_preempt
# = swap parks a victim (one busy in the driver once it is out of it,
# one holding managed memory is killed instead); a guarantee protects; a
# busy process is skipped (in a hooked call, or by the lock's timeout);
# managed memory is never moved; an admin swaps by hand, others may not;
# without the checkpoint API swap falls back to wait and kill.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
PRE="LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM"
conf=$TMP/gpufrac.conf

nobody_setup

# as_nobody CMD...: run CMD as uid 65534, with the shim.
as_nobody() { "${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" env "$PRE" "$@" 2>&1; }

# has_event KIND PID [TEXT]: the decision log has such an event.
# host_is PID BYTES: what ps says of PID.
host_is() {
	[ "$(ctl ps --json | json "[c['devices'][0]['host_bytes'] for c in j['clients'] if c['pid'] == $1]")" = "[$2]" ]
}

GiB=$((1 << 30))
printf '[daemon]\ndefault_resolver = swap\nwait_timeout = 20s\n' >"$conf"
daemon_start
check_eq "status says swap is available" \
	"$(ctl status --json | json 'j["swap"]')" \
	"{'available': True, 'engine': 'checkpoint', 'host_limit_bytes': 0, 'host_bytes': 0, 'host_kept_bytes': 0, 'reason': ''}"

# --- an idle process makes room, and comes back when it calls ------------
client_start a preload "$C" alloc 3Gi fill hold check hold
client_start b preload "$C" alloc 2Gi fill hold check
check "b was granted: a, idle, was swapped out" state_is "$PID_a" swapped
check "a holds 3 GiB in host memory" host_is "$PID_a" $((3 * GiB))
check "the device holds b's 2 GiB only" device_used_is $((2 * GiB))
check "a swap-out event names a, its bytes and duration" eval \
	"ctl events --json | grep -q '\"event\":\"swap-out\",\"pid\":$PID_a,.*\"bytes\":$((3 * GiB)),\"duration_ms\":[0-9]*,'"
kill -USR1 "$PID_a"
wait_for "a calls the driver: swapped back in, data intact" 20 \
	grep -q '^check ok' "$TMP/a.out"
check "making room for a swapped b out" state_is "$PID_b" swapped
check "a runs again" state_is "$PID_a" running
check "a swap-in event names a" has_event swap-in "$PID_a"
kill -USR1 "$PID_a"
wait "$PID_a"
wait_for "a gone, b comes back on its own" 20 state_is "$PID_b" running
check "b's swap-in says it fits again" has_event swap-in "$PID_b" "fits again"
kill -USR1 "$PID_b"
wait "$PID_b"
check_eq "b's data came back intact" "$(tail -1 "$TMP/b.out")" "check ok"
wait_for "nothing is left charged" 10 device_used_is 0

# --- activity: known without a message, least recently active goes first --
idle_of() { ctl ps --json | json "[c['idle_ms'] for c in j['clients'] if c['pid'] == $1][0]"; }
idle_over() { [ "$(idle_of "$1")" -ge "$2" ]; }
client_start a preload "$C" alloc 1Gi hold sync hold
client_start b preload "$C" alloc 1Gi hold
wait_for "a idles past 300 ms" 10 idle_over "$PID_a" 300
before=$(idle_of "$PID_a")
kill -USR1 "$PID_a"
wait_for "a synchronises (a call the daemon is not told of)" 10 \
	eval "[ \"\$(grep -c '^holding' $TMP/a.out)\" = 2 ]"
after=$(idle_of "$PID_a")
check "the daemon saw the call: idle $after ms < $before ms" \
	[ "$after" -lt "$before" ]
client_start r preload "$C" alloc 2560Mi hold
check "the least recently active (b) was swapped out" state_is "$PID_b" \
	swapped
check "alone: a was not" state_is "$PID_a" running
kill -USR1 "$PID_a" "$PID_b" "$PID_r"
wait "$PID_a" "$PID_b" "$PID_r"

# --- a busy process is skipped -------------------------------------------
# Longer than the lock's 1 s timeout, short enough not to wait long; a
# victim need not first be idle for the default swap_min_idle's 1 s (the
# lock would then end when the request does, and under load after it).
printf '[daemon]\ndefault_resolver = swap\nwait_timeout = 2s\nswap_min_idle = 0\n' >"$conf"
check "reload: requests wait 2 s" ctl reload
client_start v preload "$C" alloc 3Gi busy
check_eq "in a hooked driver call: skipped, the request waits it out" \
	"$(as_nobody "$C" alloc 2Gi)" \
	"alloc err=2"
check "a swap-skip event says it was busy" has_event swap-skip "$PID_v" \
	"busy: in a driver call"
check "the busy process still runs" state_is "$PID_v" running
client_release v
client_start v preload "$C" alloc 3Gi busy-unhooked
check_eq "in a call gpufrac does not hook: the lock times out" \
	"$(as_nobody "$C" alloc 2Gi)" \
	"alloc err=2"
wait_for "a swap-skip event says the lock failed" 5 has_event swap-skip \
	"$PID_v" "lock failed"
check "the process whose lock timed out still runs" state_is "$PID_v" \
	running
client_release v

# --- managed memory is never moved ---------------------------------------
client_start v preload "$C" managed 3Gi hold
check_eq "managed memory: skipped" \
	"$(as_nobody "$C" alloc 2Gi)" \
	"alloc err=2"
check "a swap-skip event names managed memory" has_event swap-skip \
	"$PID_v" "managed memory"
client_release v

# --- only a process idle for swap_min_idle is swapped out -----------------
printf '[daemon]\ndefault_resolver = swap\nwait_timeout = 20s\nswap_min_idle = 3s\n' >"$conf"
check "reload: swap_min_idle = 3s" ctl reload
client_start a preload "$C" alloc 3Gi hold
bg b env "$PRE" "$C" alloc 2Gi hold
wait_for "a request for room waits" 10 state_is "$PID_b" waiting
check "while the process that used the GPU a moment ago keeps its memory" \
	state_is "$PID_a" running
wait_for "once it has been idle long enough it is swapped out" 10 \
	state_is "$PID_a" swapped
wait_for "and the request is granted" 10 grep -q '^holding' "$TMP/b.out"
kill -USR1 "$PID_b"; wait "$PID_b"
client_release a

# --- an admin swaps by hand; others may not -------------------------------
printf '[daemon]\ndefault_resolver = swap\nwait_timeout = 20s\n' >"$conf"
check "reload: requests wait 20 s" ctl reload
client_start v preload "$C" alloc 1Gi fill hold check
check "an admin swaps a process out" ctl swap out "$PID_v"
check "it is swapped, and stays out though it would fit" state_is \
	"$PID_v" swapped
check "swapping it out again is refused" eval "! ctl swap out $PID_v 2>/dev/null"
# Another group's guarantee, not lent, leaves v's group 512 MiB.
printf '[daemon]\ndefault_resolver = swap\nwait_timeout = 20s\nlend_guarantees = no\n[group g]\nmatch = uid:4242\nguarantee = 3584Mi\n' >"$conf"
check "reload: a guarantee of 3.5 GiB for another group" ctl reload
check "swapping it in is refused, saying how short its group is" eval \
	"ctl swap in $PID_v 2>&1 | grep -q 'do not fit the device now (device 0: 1.0GiB to come back, 512.0MiB free to its group)'"
printf '[daemon]\ndefault_resolver = swap\nwait_timeout = 20s\n' >"$conf"
check "reload: no guarantee" ctl reload
check "anyone else is refused" eval \
	"! as_nobody '$GPUFRACCTL' -s '$GPUFRAC_SOCKET' swap in $PID_v >$TMP/refused.out"
check "with a clear reason" grep -q "swap.*root.*admin_group\|not allowed\|permission" \
	"$TMP/refused.out"
check_eq "an admin swaps it back in (--json)" \
	"$(ctl swap in "$PID_v" --json)" "{\"pid\":$PID_v,\"swapped\":\"in\"}"
check "it runs again" state_is "$PID_v" running
client_release v
check_eq "its data survived the round trip" "$(tail -1 "$TMP/v.out")" \
	"check ok"

# --- a restore that would find no room -----------------------------------
client_start v preload "$C" alloc 1Gi fill hold check
check "swapped out by hand" ctl swap out "$PID_v"
# Memory taken behind gpufrac's back (no shim): the driver has no room,
# as NVML shows, before the daemon's look has counted it as foreign.
client_start x "$C" alloc 3584Mi hold
check "swap in is refused, no restore tried: the driver has no room" eval \
	"ctl swap in $PID_v 2>&1 | grep -q 'do not fit the device now (device 0: the driver has no room'"
check "a swap-skip event says so" has_event swap-skip "$PID_v" \
	"not swapped in (by hand, pid [0-9]*): its [0-9]* bytes do not fit"
check "no restore was tried in vain" eval \
	"! ctl events --json | grep -q '\"pid\":$PID_v,.*restore failed'"
check "it is still out" state_is "$PID_v" swapped
client_release x
check "with room again, swap in works" ctl swap in "$PID_v"
client_release v
check_eq "its data came through" "$(tail -1 "$TMP/v.out")" "check ok"

# --- the daemon goes away while a process is out --------------------------
client_start v preload "$C" alloc 1Gi fill hold check hold check
check "swapped out by hand" ctl swap out "$PID_v"
kill -9 "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
daemon_start
wait_for "a new gpufracd finds it out, and brings it back as it fits" 10 \
	has_event swap-in "$PID_v" "fits again"
wait_for "its re-registered bytes are on the device again" 10 \
	device_used_is "$GiB"
check "it runs" state_is "$PID_v" running
kill -USR1 "$PID_v"
wait_for "it carries on, data intact" 10 \
	eval "grep -q '^check ok' $TMP/v.out"
check "swapped out by hand again" ctl swap out "$PID_v"
daemon_stop
kill -USR1 "$PID_v"
wait "$PID_v"
check_eq "a stopping gpufracd brought it back first" \
	"$(tail -1 "$TMP/v.out")" "check ok"
daemon_start

# --- the guarantee protects ---------------------------------------------
printf '[daemon]\ndefault_resolver = swap\nwait_timeout = 1s\n[group kept]\nmatch = uid:0\nguarantee = 3Gi\n' \
    >"$conf"
check "reload: root's processes guaranteed 3 GiB" ctl reload
client_start v preload "$C" alloc 3Gi hold
check_eq "a process within its guarantee is not swapped out" \
	"$(as_nobody "$C" alloc 2Gi)" "alloc err=2"
check "it still runs" state_is "$PID_v" running
client_release v

# --- on_preempt = swap ----------------------------------------------------
printf '[group low]\nmatch = uid:0\npriority = 0\non_preempt = swap\n[group high]\nmatch = uid:65534\npriority = 10\nresolver = preempt\n' \
    >"$conf"
check "reload: low is parked when preempted" ctl reload
client_start v preload "$C" alloc 3Gi fill hold check
check_eq "the high-priority request is granted" "$(as_nobody "$C" alloc 2Gi)" \
	"alloc ok"
check "a preempt event says the victim is swapped" has_event preempt \
	"$PID_v" "swap out"
check "the victim is alive" kill -0 "$PID_v"
client_release v
check_eq "the victim resumes with its data" "$(tail -1 "$TMP/v.out")" \
	"check ok"

# A victim busy in a driver call is tried again until it can be moved.
client_start v preload "$C" alloc 3Gi busy hold
bg h "${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" env "$PRE" "$C" alloc 2Gi hold
wait_for "a busy victim is skipped, to be tried again" 10 \
	has_event swap-skip "$PID_v" "in a driver call; trying again"
check "the request waits meanwhile" state_is "$PID_h" waiting
kill -USR1 "$PID_v"
wait_for "once out of its driver call the victim is swapped out" 10 \
	state_is "$PID_v" swapped
wait_for "and the high-priority request is granted" 10 \
	grep -q '^holding' "$TMP/h.out"
kill -USR1 "$PID_h"; wait "$PID_h"
client_release v

# One that holds managed memory cannot be swapped: it is killed instead.
client_start m preload "$C" managed 3Gi hold
check_eq "a victim that cannot be swapped makes way all the same" \
	"$(as_nobody "$C" alloc 2Gi)" "alloc ok"
wait "$PID_m"
check_eq "it was stopped by SIGTERM" $? $((128 + 15))
check "a fallback event says why" has_event fallback "$PID_m" \
	"cannot be swapped (it holds managed memory, which cannot be swapped): killing instead"
daemon_stop

# --- without the checkpoint API ------------------------------------------
printf '[daemon]\ndefault_resolver = swap\nwait_timeout = 20s\n' >"$conf"
SIMCUDA_NO_CHECKPOINT=1 daemon_start
check_eq "status says swap is unavailable, and why" \
	"$(ctl status --json | json 'j["swap"]["available"], j["swap"]["reason"]')" \
	"(False, 'the driver has no checkpoint API (needs driver 570 or later)')"
check "the table says so too" eval "ctl status | grep -q 'host swap: unavailable'"
client_start v preload "$C" alloc 3Gi hold
env "$PRE" "$C" alloc 2Gi >"$TMP/w.out" 2>&1 &
w=$!
wait_for "swap falls back to waiting" 10 has_event fallback "$w" \
	"waiting instead"
client_release v
wait "$w"
check_eq "the waiter is granted when memory is freed" "$(cat "$TMP/w.out")" \
	"alloc ok"
check "a manual swap is refused with the reason" eval \
	"ctl swap out $DAEMON_PID 2>&1 | grep -q 'no client'"
printf '[group low]\nmatch = uid:0\npriority = 0\non_preempt = swap\n[group high]\nmatch = uid:65534\npriority = 10\nresolver = preempt\n' \
    >"$conf"
check "reload: low is to be parked when preempted" ctl reload
client_start v preload "$C" alloc 3Gi hold
check_eq "on_preempt = swap falls back to kill" \
	"$(as_nobody "$C" alloc 2Gi)" "alloc ok"
wait "$PID_v"
check_eq "the victim died of SIGTERM" $? $((128 + 15))
check "a fallback event says so" has_event fallback "$PID_v" \
	"killing instead"

daemon_stop

finish
