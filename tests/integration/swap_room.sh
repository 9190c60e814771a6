# Making room to bring a swapped-out process back: nobody is swapped out
# for a process that would not fit even once everybody who may be is out
# (it would be swapped in again as it fits, and out, for ever: found by the
# soak), and such a process does not hold back one asking after it that
# fits. One passed over once and then swapped out by hand comes back when
# it asks (the soak found it waiting for ever).
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
export GPUFRAC_LOG=info
MiB=$((1 << 20))

# asked NAME: NAME's shim was told to wait for its swap-in (the daemon
# decided what to do for it before it answered).
asked() { grep -q 'queued our swap-in' "$TMP/$1.err"; }
# holds NAME N: NAME has reached its Nth hold.
holds() { [ "$(grep -c '^holding' "$TMP/$1.out")" = "$2" ]; }
idle_over() {
	[ "$(ctl ps --json | json "[c['idle_ms'] for c in j['clients'] if c['pid'] == $1][0]")" -ge "$2" ]
}
# swap_events PID: how many swap-out and swap-in events name PID.
swap_events() {
	ctl events --json | grep -c "\"event\":\"swap-\(out\|in\)\",\"pid\":$1,"
}

printf '[daemon]\nswap_min_idle = 200ms\n' >"$TMP/gpufrac.conf"
daemon_start

client_start a preload "$C" alloc 2Gi hold alloc 1Mi hold
check "a is swapped out by hand" ctl swap out "$PID_a"
client_start m preload "$C" managed 3Gi hold
client_start c preload "$C" alloc 512Mi hold
client_start d preload "$C" alloc 256Mi hold alloc 1Mi hold
check "d is swapped out by hand" ctl swap out "$PID_d"

# a needs 2 GiB; 256 MiB are free, and c's 512 MiB the most that may go.
wait_for "c idles past swap_min_idle" 10 idle_over "$PID_c" 300
kill -USR1 "$PID_a"
wait_for "a calls the driver and asks to come back" 10 asked a
check "c, idle, was not swapped out in vain" state_is "$PID_c" running
check_eq "nor was anybody swapped for a" "$(swap_events "$PID_c")" 0
check "a is still out" state_is "$PID_a" swapped
kill -USR1 "$PID_d"
wait_for "d, asking after a, fits and comes back" 10 holds d 2
check "a still waits" state_is "$PID_a" swapped
check "the process that cannot move said why, once" eval \
	"[ \"\$(ctl events --json | grep -c '\"event\":\"swap-skip\",\"pid\":$PID_m,.*managed memory')\" = 1 ]"

# The managed memory goes: a fits, and comes back of its own.
client_release m
wait_for "a comes back once it fits" 10 holds a 2
check "a runs" state_is "$PID_a" running
check_eq "c was never swapped" "$(swap_events "$PID_c")" 0
check_eq "a went out and came in once" "$(swap_events "$PID_a")" 2
client_release a
client_release c
client_release d
wait_for "nothing is left charged" 10 device_used_is 0
check_eq "a and d allocated again once back" \
	"$(grep -c '^alloc ok' "$TMP/a.out" "$TMP/d.out")" \
	"$TMP/a.out:2
$TMP/d.out:2"

# A process passed over once (busy in a driver call when room was wanted)
# and then swapped out by hand is no less free to come back when it asks.
printf '[daemon]\ndefault_resolver = swap\nwait_timeout = 1s\nswap_min_idle = 100ms\n' \
    >"$TMP/gpufrac.conf"
check "reload: the swap resolver, 1 s waits" ctl reload
client_start v preload "$C" alloc 1Gi busy hold alloc 1Mi hold
wait_for "v idles in its driver call past swap_min_idle" 10 \
	idle_over "$PID_v" 300
check_eq "a request that needs v's memory waits in vain" \
	"$(preload "$C" alloc 3584Mi 2>/dev/null)" "alloc err=2"
check "v was passed over: busy in a driver call" has_event swap-skip \
	"$PID_v" "busy: in a driver call"
kill -USR1 "$PID_v"
wait_for "v leaves its driver call" 10 holds v 2
check "v is swapped out by hand" ctl swap out "$PID_v"
kill -USR1 "$PID_v"
wait_for "v calls the driver, and is brought back" 10 holds v 3 ||
	kill -9 "$PID_v"
client_release v
daemon_stop
finish
