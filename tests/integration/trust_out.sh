# A process swapped out when its daemon dies re-registers with the next
# one past its group's limit (a group-mate took the room before it came
# back): NVML shows nothing of memory out to host, so its own limit
# bounds its word, and it is believed, said in a past-limit event; it is
# not refused at every reconnection, never to come back (issue 32; the
# soak found it). Where the earlier daemon left a record of what it
# granted, the record says instead (grants_restart.sh).
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
printf '[group g]\nmatch = uid:0\nlimit = 3Gi\nresolver = fail\n' \
	>"$TMP/gpufrac.conf"
daemon_start

client_start a preload "$C" alloc 2Gi fill hold check
check "an admin swaps it out" ctl swap out "$PID_a"
check "it is out" state_is "$PID_a" swapped
# The daemon dies (no SIGTERM, which would bring it back in first);
# the process waits, stopped, while a group-mate takes the room.
kill -STOP "$PID_a"
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
DAEMON_PID=
# An earlier daemon that left no record of what it granted (one before
# the grants' file): today's rules, said in an event.
rm "$TMP/grants"
daemon_start
client_start b preload "$C" alloc 2Gi hold alloc 1Gi
check "a group-mate holds 2 GiB of the group's 3 GiB" device_used_is $((2 << 30))
kill -CONT "$PID_a"
held() { ps_json "[c['devices'][0]['used_bytes'] + c['devices'][0]['host_bytes'] for c in j['clients'] if c['pid'] == $1][0]"; }
rejoined() { [ "$(held "$PID_a")" = $((2 << 30)) ]; }
wait_for "it rejoins, its 2 GiB past its group's limit" 10 rejoined
check "an event says it was believed, out to host, within its own limit" \
	eval 'events_of past-limit | grep -q "COMMIT past its group.s limit believed: uid 0 is out to host, within its own limit"'
check "an event says no record of what it was granted was left" \
	eval 'events_of unrecorded | grep -q "no record of what pid $PID_a was granted (no earlier daemon left"'
check_eq "and nothing of its word refused" "$(events_of refused | wc -l)" 0
client_release b
check_eq "the group held to its limit meanwhile" "$(tail -n 1 "$TMP/b.out")" \
	"alloc err=2"
wait_for "it comes back in" 20 state_is "$PID_a" running
client_release a
check_eq "its data intact" "$(tail -n 1 "$TMP/a.out")" "check ok"
finish
