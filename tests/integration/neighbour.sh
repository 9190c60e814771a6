# No neighbour can lock others out (issue 22): a uid's connections past
# max_connections_per_uid are refused (root's never), the daemon raises its
# soft descriptor limit, a program whose daemon's backlog is full gives up
# connecting within 5 s and fails closed (issue 38 G), all output queues
# together stay under output_queue_limit (the one that reads least closed
# first), and gpufracctl allocs lists a million allocations of one process.
. "$(dirname "$0")/lib.sh"
H=$TOP/tests/clients/hostile.py
C=$CLIENTS/cuclient_linked
nobody_setup
ulimit -Sn 256
MPORT=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf '[daemon]\nmax_connections_per_uid = 8\noutput_queue_limit = 1Mi\nmetrics_listen = 127.0.0.1:%s\n' \
	"$MPORT" >"$TMP/gpufrac.conf"
daemon_start
uuid=$(ctl status --json | json 'j["devices"][0]["uuid"]')
# metric SERIES: its value now (name{label="value"} as the daemon writes it)
metric() {
	curl -sf "http://127.0.0.1:$MPORT/metrics" |
	    awk -v s="$1 " 'index($0, s) == 1 { print substr($0, length(s) + 1) }'
}

check "the daemon raised its soft descriptor limit to the hard one" \
	eval '[ "$(awk "/^Max open files/ { print \$4 }" /proc/$DAEMON_PID/limits)" = "$(ulimit -Hn)" ]'

# --- connections per uid -------------------------------------------------
conns_hold 20
check_eq "8 are served, 12 refused" "$(cat "$TMP/conns.out")" "ok 8 refused 12"
check "one warning says why" \
	grep -q "refused a connection of pid [0-9]*: uid 65534 has 8 connections to gpufracd, its max_connections_per_uid" \
	"$TMP/gpufracd.log"
check "an event says so" eval 'ctl events --json | grep -q "\"event\":\"conn-limit\""'
check_eq "a metric counts them" \
	"$(metric 'gpufrac_connections_refused_total{limit="max_connections_per_uid"}')" 12
check_eq "a root program is served meanwhile" \
	"$(preload "$C" alloc 1Gi 2>&1)" "alloc ok"
conns_drop

# --- a full backlog: the shim's connect has a deadline ---------------------
# A listener that never accepts, its backlog filled by one connection.
"$PYTHON" -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1]); s.listen(0)
c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); c.connect(sys.argv[1])
print("full", flush=True)
time.sleep(60)
' "$TMP/stuck.sock" >"$TMP/stuck.out" &
stuck=$!
wait_for "a stuck daemon's backlog is full" 10 grep -q full "$TMP/stuck.out"
# gpufracctl waits out its deadline beside the program, not after it.
timeout 30 "$GPUFRACCTL" -s "$TMP/stuck.sock" status >"$TMP/stuck.ctl" 2>&1 &
ctl_stuck=$!
GPUFRAC_SOCKET=$TMP/stuck.sock timeout 30 env \
	"LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM" "$C" alloc 1Gi \
	>"$TMP/stuck.cout" 2>"$TMP/stuck.cerr"
check_eq "the program runs on, neither crashing nor hanging" $? 0
check_eq "but a daemon there that cannot take it is no absence: refused" \
	"$(cat "$TMP/stuck.cout")" "alloc err=2"
check "saying once why" grep -q \
	"daemon at '$TMP/stuck.sock' had no room in its backlog within 5 s; allocations fail until it lets this process in" \
	"$TMP/stuck.cerr"
wait "$ctl_stuck"
check_eq "gpufracctl gives up too, in one line" "$(cat "$TMP/stuck.ctl")" \
	"gpufracctl: cannot connect to '$TMP/stuck.sock': no room within 5000 ms (is gpufracd stuck?)"
kill "$stuck"

# --- output queues together ------------------------------------------------
# Each non-reading connection holds what its socket does not take; four of
# them pass 1 MiB together: the ones read least are closed first.
for i in 1 2 3 4; do
	"$PYTHON" "$H" noread "$GPUFRAC_SOCKET" 2000 >"$TMP/nr$i.out" &
	noreaders="${noreaders:-} $!"
	wait_for "non-reader $i sends its requests" 20 grep -q '^sent' "$TMP/nr$i.out"
done
wait_for "a non-reader's connection is closed for output_queue_limit" 20 \
	grep -q "which reads least: all output queues together passed output_queue_limit" \
	"$TMP/gpufracd.log"
check "what is queued stays under the limit" \
	eval '[ "$(metric gpufrac_output_queued_bytes)" -le 1048576 ]'
check "a metric counts the drops" \
	eval '[ "$(metric '"'"'gpufrac_connections_refused_total{limit="output_queue_limit"}'"'"')" -ge 1 ]'
# shellcheck disable=SC2086
kill $noreaders
check_eq "the daemon answers others" "$(ctl ps --json | json 'type(j["clients"]).__name__')" list

# --- a million allocations, listed a page at a time ------------------------
# Their listing (32 MB) counts against output_queue_limit: the default.
printf '[daemon]\nmax_connections_per_uid = 8\n' >"$TMP/gpufrac.conf"
check "reload: output_queue_limit 256Mi" ctl reload
N=1000000
mkfifo "$TMP/many.in"
"$PYTHON" "$H" commits "$GPUFRAC_SOCKET" "$uuid" $N <"$TMP/many.in" \
	>"$TMP/many.out" 2>"$TMP/many.err" &
many=$!
exec 4>"$TMP/many.in"
wait_for "a process registers a million allocations" 120 \
	grep -q "^committed $N" "$TMP/many.out"
ctl allocs "$many" --json >"$TMP/allocs.json" 2>"$TMP/allocs.err"
check_eq "gpufracctl allocs lists them all" $? 0
# Counted in one read: grep -o over its one 120 MB line takes seconds.
check_eq "every one of them" "$("$PYTHON" -c \
	'import sys; print(sys.stdin.buffer.read().count(b"\"ptr\":"))' \
	<"$TMP/allocs.json")" $N
echo >&4
exec 4>&-
wait "$many"
wait_for "its charge goes" 20 device_used_is 0

# --- a re-registration no device could hold --------------------------------
# COMMIT (reserved 0) and LEASE_RESTORE: more than the 4 GiB device holds
# is refused, and the connection closed; and so is a charge the device
# could hold, since nothing was granted to this process.
for kind in commit lease; do
	check_eq "a $kind of 8 GiB on a 4 GiB device is refused" \
		"$("$PYTHON" "$H" overcharge "$GPUFRAC_SOCKET" "$uuid" $kind \
		$((8 << 30)))" CLOSED
	check "and nothing charged" device_used_is 0
done
check "the log says why" grep -q \
	"COMMIT of 8589934592 bytes, more than device 0 could hold" \
	"$TMP/gpufracd.log"
check_eq "3 GiB never granted is refused too" \
	"$("$PYTHON" "$H" overcharge "$GPUFRAC_SOCKET" "$uuid" commit \
	$((3 << 30)))" CLOSED
check "and nothing charged" device_used_is 0
finish
