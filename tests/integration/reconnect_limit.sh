# A limit lowered while a process's connection is down (issue 40, C) is
# handled as `gpufracctl limit` is: what the process was granted is
# believed when it re-registers, its next allocations are refused until
# it is under the limit, and it is never killed for the lowering, in a
# group that kills unshimmed processes past their limits. Its socket is
# out of its reach (renamed) until the daemon has looked at it past its
# grace: holding no more than it was granted, it is not counted as an
# unshimmed process.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
export GPUFRAC_LOG=info
nobody_setup
conf() {
	printf '[group low]\nmatch = uid:0\nlimit = %s\nunshimmed = kill\n' "$1" \
	    >"$TMP/gpufrac.conf"
}
conf 1Gi
daemon_start
client_start p preload "$C" alloc 768Mi hold alloc 64Mi free alloc 64Mi hold
away=$TMP/away.sock
actl() { "$GPUFRACCTL" -s "$away" "$@"; }
cut() { [ "$(grep -c "closing the connection of pid $PID_p" "$TMP/gpufracd.log")" -ge "$1" ]; }
rereg() { [ "$(grep -c "reconnected to gpufracd" "$TMP/p.err")" -ge "$1" ]; }

mv "$GPUFRAC_SOCKET" "$away"
check "its connection is cut" actl disconnect "$PID_p"
wait_for "the daemon has closed it" 10 cut 1
conf 512Mi
check "the limit is lowered meanwhile" actl reload
# A beacon, lost a moment later and holding more than it was granted:
# once the daemon counts it unshimmed, its grace is over, and so is p's.
uuid=$(actl status --json | json 'j["devices"][0]["uuid"]')
mkfifo "$TMP/beacon.in"
"${NOBODY_ENV[@]}" ${SAN_RT:+LD_PRELOAD=$SAN_RT} "${AS_NOBODY[@]}" \
	"$PYTHON" "$TOP/tests/clients/launder.py" cut "$away" "$uuid" \
	$((64 << 20)) $((64 << 20)) <"$TMP/beacon.in" >"$TMP/beacon.out" \
	2>"$TMP/beacon.err" &
PID_beacon=$!
exec {beacon_fd}>"$TMP/beacon.in"
wait_for "the daemon counts the beacon unshimmed, its grace over" 20 \
	eval "GPUFRAC_SOCKET=$away has_event unshimmed $PID_beacon"
check "holding what it was granted, p is not" eval \
	"! GPUFRAC_SOCKET=$away has_event unshimmed $PID_p"
mv "$away" "$GPUFRAC_SOCKET"
wait_for "it re-registers" 20 rereg 1
check "it lives" kill -0 "$PID_p"
check "counted as connected" state_is "$PID_p" running
check_eq "its 768 MiB believed: nothing refused, nothing past a limit" \
	"$(events_of refused; events_of past-limit)" ""

kill -USR1 "$PID_p"
wait_for "it allocates again" 10 eval \
	"[ \"\$(grep -c '^holding' '$TMP/p.out')\" = 2 ]"
check_eq "its next allocation is refused; under the limit, it is not" \
	"$(sed -n 3,5p "$TMP/p.out")" "alloc err=2
free ok
alloc ok"
check "never killed for the lowering" eval \
	"! has_event unshimmed-kill $PID_p && ! has_event unshimmed $PID_p"
client_release p
kill "$PID_beacon"
exec {beacon_fd}>&-
finish
