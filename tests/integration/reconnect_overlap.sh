# A process says HELLO on a second connection while its first is still
# open (a shim whose reply timed out under load, its old connection not
# yet seen to close; or a liar opening two on purpose): one process is one
# client, so the daemon closes the first at once, as if lost, and the
# second takes what the first was granted. Its re-registration is
# believed once, the process is charged once, in one record, and the
# first connection's charge does not linger beside the new one. A process
# that says HELLO only once, beside it, keeps its connection.
# shellcheck disable=SC2154	# PID_* are launder's
. "$(dirname "$0")/lib.sh"
L=$TOP/tests/clients/launder.py
export SIMCUDA_DEVICES=8Gi
"$PYTHON" -c 'import ctypes' 2>/dev/null || skip "no python3 ctypes"

printf '[daemon]\nlease_idle = 1h\n[group all]\nmatch = uid:0\nlimit = 4Gi\nunshimmed = kill\n' \
	>"$TMP/gpufrac.conf"
daemon_start
uuid=$(ctl status --json | json 'j["devices"][0]["uuid"]')
# launder NAME ARGS...: launder.py ARGS in the background (its driver
# built with the sanitizer, when it is; CPython's leaks are not ours).
launder() {
	env ${SAN_RT:+LD_PRELOAD=$SAN_RT} \
	    ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" "$PYTHON" "$L" \
	    "${@:2}" >"$TMP/$1.out" 2>"$TMP/$1.err" &
	printf -v "PID_$1" %s $!
}
said() { grep -q "^$2" "$TMP/$1.out"; }
# used PID: what the daemon charges PID, all its records.
used() {
	ctl ps --json | json "sum(d['used_bytes'] for c in j['clients'] if c['pid'] == $1 for d in c['devices'])"
}
records() {
	ctl ps --json | json "len([c for c in j['clients'] if c['pid'] == $1])"
}

client_start once preload "$CLIENTS/cuclient_linked" alloc 64Mi hold
launder twice overlap "$GPUFRAC_SOCKET" "$uuid" $((256 << 20))
wait_for "the second connection's re-registration is answered" 10 \
	said twice first
check_eq "believed, and the first connection closed" \
	"$(cat "$TMP/twice.out")" "$(printf 'rereg DEVICE_INFO\nfirst CLOSED')"
check_eq "the process has one record" "$(records "$PID_twice")" 1
check_eq "charged once" "$(used "$PID_twice")" $((256 << 20))
check "the daemon says why it closed the first" grep -q \
	"closing the connection of pid $PID_twice: its process connected again" \
	"$TMP/gpufracd.log"
check_eq "nothing was refused" "$(events_of refused)" ""
check_eq "nothing was believed past a limit" "$(events_of past-limit)" ""
check "the process that said HELLO once keeps its connection" \
	eval "! grep -q 'closing the connection of pid $PID_once' '$TMP/gpufracd.log'"
check "and is counted as connected" state_is "$PID_once" running
check_eq "in one record" "$(records "$PID_once")" 1
finish
