# The driver is the truth of what is free (issue 20), on a simulated driver
# as late as a real one: a dead process's memory comes back only
# SIMCUDA_RELEASE_DELAY_MS after it died. Its charge stays (state
# releasing) until the driver has it back, so that a waiter whose holder is
# SIGKILLed, and a preemptor whose victim exits, get their memory and never
# an out-of-memory; memory held by a program without the shim is counted
# (unshimmed.sh), and follows the same way back;
# a driver out-of-memory on a granted request (the daemon let a charge go
# too soon: release_timeout) is resolved as a collision, not passed on.
# shellcheck disable=SC2154	# PID_* are client_start's and bg's
. "$(dirname "$0")/lib.sh"
# The delay is the holder's (its environment's). The first holder's is long
# enough to see it releasing through gpufracctl polls; the others' need
# only outlast the daemon's reaction (and release_timeout), and each is
# waited out whole.
export SIMCUDA_RELEASE_DELAY_MS=3000
SHORT_DELAY_MS=$((SLOW > 3 ? 3000 : 1000 * SLOW))
C=$CLIENTS/cuclient_linked
PRE="LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM"
conf=$TMP/gpufrac.conf
GiB=$((1 << 30))

nobody_setup
dev_field() { ctl status --json | json "j['devices'][0]['$1']"; }
field_is() { [ "$(dev_field "$1")" = "$2" ]; }
field_at_least() { [ "$(dev_field "$1")" -ge "$2" ]; }
# event_before FIRST PID1 SECOND PID2: the log has FIRST of PID1 before
# SECOND of PID2.
event_before() {
	ctl events --json | "$PYTHON" -c 'import json, sys
ev = [(e["event"], e["pid"]) for e in map(json.loads, sys.stdin)]
a, b = (sys.argv[1], int(sys.argv[2])), (sys.argv[3], int(sys.argv[4]))
sys.exit(0 if a in ev and b in ev and ev.index(a) < ev.index(b) else 1)' "$@"
}

printf '[daemon]\ndefault_resolver = wait\nwait_timeout = 20s\n' >"$conf"
daemon_start

# --- a waiter whose holder is SIGKILLed ------------------------------------
client_start h preload "$C" alloc 3Gi hold
bg w env "$PRE" "$C" alloc 2Gi
wait_for "the waiter waits" 10 state_is "$PID_w" waiting
kill -KILL "$PID_h"
wait "$PID_h" 2>/dev/null
releasing() { state_is "$1" releasing && field_is releasing_bytes "$2"; }
wait_for "the killed holder is shown releasing its 3 GiB" 10 \
	releasing "$PID_h" $((3 * GiB))
wait "$PID_w"
check_eq "the waiter gets its memory, not an out-of-memory" \
	"$(cat "$TMP/w.out")" "alloc ok"
check "a released event came before the waiter was woken" \
	event_before released "$PID_h" wake "$PID_w"
check "no driver out-of-memory on the way" eval \
	"! ctl events --json | grep -q '\"event\":\"driver-oom\"'"
wait_for "nothing is left charged" 10 field_is used_bytes 0

# --- a preemptor whose victim exits ----------------------------------------
printf '[group low]\nmatch = uid:0\npriority = 0\non_preempt = kill\n[group high]\nmatch = uid:65534\npriority = 10\nresolver = preempt\nwait_timeout = 20s\n' >"$conf"
check "reload: preempt" ctl reload
export SIMCUDA_RELEASE_DELAY_MS=$SHORT_DELAY_MS
client_start v preload "$C" alloc 3Gi hold
check_eq "the preemptor gets its memory once the driver has the victim's" \
	"$("${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" env "$PRE" "$C" alloc 2Gi 2>&1)" \
	"alloc ok"
wait "$PID_v"
check_eq "the victim died of SIGTERM" $? $((128 + 15))
check "its memory was released before the preemptor was granted" \
	event_before released "$PID_v" wake "$(ctl events --json | "$PYTHON" -c '
import json, sys
print([e["pid"] for e in map(json.loads, sys.stdin) if e["event"] == "wake"][-1])')"
wait_for "nothing is left charged" 10 field_is used_bytes 0

# --- memory of a program without the shim ------------------------------------
printf '[daemon]\ndefault_resolver = fail\n' >"$conf"
check "reload: fail" ctl reload
client_start f "$C" alloc 3Gi hold
wait_for "a program without the shim is counted" 10 \
	field_at_least used_bytes $((3 * GiB))
check_eq "what only fits if its memory were ignored is refused" \
	"$(preload "$C" alloc 2Gi)" "alloc err=2"
check "by the daemon, as a collision" eval \
	"ctl events --json | grep '\"event\":\"deny\"' | grep -q 'device full'"
check "status shows the FOREIGN column" eval "ctl status | grep -q FOREIGN"
client_release f
wait_for "its memory is released once the driver has it back" 10 \
	has_event released "$PID_f"
check_eq "and may be had" "$(preload "$C" alloc 2Gi)" "alloc ok"
wait_for "nothing is left charged" 10 field_is used_bytes 0

# --- the driver kept it longer than release_timeout -------------------------
printf '[daemon]\ndefault_resolver = wait\nwait_timeout = 20s\nrelease_timeout = 200ms\n' >"$conf"
check "reload: release_timeout = 200ms" ctl reload
client_start h preload "$C" alloc 3Gi hold
bg w env "$PRE" "$C" alloc 2Gi
wait_for "the waiter waits" 10 state_is "$PID_w" waiting
kill -KILL "$PID_h"
wait "$PID_h" 2>/dev/null
wait "$PID_w"
check_eq "the waiter still gets its memory, never an out-of-memory" \
	"$(cat "$TMP/w.out")" "alloc ok"
check "a driver-kept event says the charge went early" \
	has_event driver-kept "$PID_h"
check "the driver's refusal came back as a collision" eval \
	"ctl events --json | grep -q '\"event\":\"driver-oom\",\"pid\":$PID_w,'"
wait_for "nothing is left charged" 10 field_is used_bytes 0
daemon_stop
finish
