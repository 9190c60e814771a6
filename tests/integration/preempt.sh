# The preempt resolver with real processes: a high-priority request that
# does not fit has a lower-priority process sent SIGTERM and is granted
# once its memory comes back; a group at its guarantee, or with
# on_preempt = none, is left alone and the request denied at once; a
# victim that ignores SIGTERM gets SIGKILL after kill_grace.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
PRE="LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM"
conf=$TMP/gpufrac.conf

nobody_setup

# high CMD...: the requester, of group high (uid 65534), in the foreground.
high() { "${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" env "$PRE" "$C" "$@" 2>&1; }

# has_event KIND PID: the decision log has such an event.
# conf LOW-SETTINGS: group low (root's processes, priority 0) with them,
# group high (uid 65534, priority 10, preempt).
write_conf() {
	printf '[group low]\nmatch = uid:0\nlimit = 100%%\npriority = 0\n%s\n[group high]\nmatch = uid:65534\nlimit = 100%%\npriority = 10\nresolver = preempt\n' \
	    "$1" >"$conf"
}

write_conf 'on_preempt = kill'
daemon_start

# --- a victim is sent SIGTERM, the requester granted ---------------------
client_start v preload "$C" alloc 3Gi hold
check_eq "the requester is granted once the victim is gone" \
	"$(high alloc 2Gi)" "alloc ok"
wait "$PID_v"
check_eq "the victim died of SIGTERM" $? $((128 + 15))
check "a preempt event names the victim" has_event preempt "$PID_v"

# --- a group at its guarantee is not touched -------------------------------
write_conf 'on_preempt = kill
guarantee = 2Gi'
check "reload: low guaranteed 2Gi" ctl reload
client_start v preload "$C" alloc 2Gi hold
check_eq "beyond what may be preempted: denied at once" \
	"$(high alloc 1Gi alloc 1536Mi)" "alloc ok
alloc err=2"
check "the victim at its guarantee is alive" kill -0 "$PID_v"
check "a deny event says nothing was preemptible" eval \
	'ctl events --json | grep -q "\"event\":\"deny\".*nothing preemptible"'
client_release v

# --- on_preempt = none --------------------------------------------------
write_conf 'on_preempt = none'
check "reload: low with on_preempt = none" ctl reload
client_start v preload "$C" alloc 3Gi hold
check_eq "on_preempt = none: denied at once" "$(high alloc 2Gi)" \
	"alloc err=2"
check "the victim with on_preempt = none is alive" kill -0 "$PID_v"
client_release v

# --- kill_grace: SIGTERM ignored, SIGKILL follows -----------------------
write_conf 'on_preempt = kill
kill_grace = 1s'
check "reload: kill_grace = 1s" ctl reload
# The ignored disposition survives exec.
client_start v sh -c 'trap "" TERM; exec "$@"' sh env "$PRE" "$C" alloc 3Gi hold
"${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" env "$PRE" "$C" alloc 2Gi \
	>"$TMP/r.out" 2>&1 &
req=$!
wait_for "the victim is sent SIGTERM" 10 has_event preempt "$PID_v"
wait_for "the requester is granted after the SIGKILL" 15 \
	grep -q '^alloc ok' "$TMP/r.out"
wait "$PID_v"
check_eq "the victim died of SIGKILL" $? $((128 + 9))
check "a kill event names the victim" has_event kill "$PID_v"
# Not "still alive after the SIGTERM", which a slow machine can miss:
# the daemon's own times say the SIGKILL waited for kill_grace (less
# 1 ms: the timer counts whole milliseconds of the monotonic clock, the
# events those of the wall clock, each truncated on its own).
event_ms() {
	ctl events --json | "$PYTHON" -c 'import json, sys
print([e["time_ms"] for e in map(json.loads, sys.stdin)
    if e["event"] == sys.argv[1] and e["pid"] == int(sys.argv[2])][-1])' \
	    "$1" "$PID_v"
}
check "the SIGKILL came kill_grace (1 s) after the SIGTERM" \
	[ $(($(event_ms kill) - $(event_ms preempt))) -ge 999 ]
wait "$req"

finish
