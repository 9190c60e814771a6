# The copy engine and a daemon that dies (issue 33, points 1 and 4): the
# page's mark says where a process's memory is (activity.h), so a new
# daemon takes a process whose move out committed while none ran as out,
# charging its memory to host, not to a device that no longer holds it;
# and a process left out rejoins at once, restoring nothing on its own,
# to come back when it fits. A daemon that stops leaves it out, and the
# process restores itself when it needs its memory.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=512Mi
C=$CLIENTS/cuclient_linked
MiB=$((1 << 20))

# The move's deadline as the default's, scaled under a sanitizer (lib.sh).
printf '[daemon]\nswap_engine = copy\nswap_move_timeout = %ss\n' \
	$((10 * SLOW)) >"$TMP/gpufrac.conf"
daemon_start
daemon_kill() { kill -9 "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; }
# backlog N: the stopped daemon's socket, bound as $TMP/new.sock, holds N
# connections not accepted.
backlog() {
	[ "$(ss -xlnH | awk -v s="$TMP/new.sock" '$5 == s { print $3 }')" = "$1" ]
}

# --- 1: killed mid-move, the move commits before the new one's HELLO -----
# 32 MiB at 12.5 MB/s: a move out of 2.7 s at least, of few bytes (each
# one costs a sanitizer its time).
SIMCUDA_COPY_GBPS=0.0125 GPUFRAC_LOG=debug client_start a preload "$C" \
	alloc 32Mi fill hold check
ctl swap out "$PID_a" >/dev/null 2>&1 &
wait_for "a's move out has begun" 10 state_is "$PID_a" swapped
daemon_kill
# Started on another path and stopped before the shim may reach it there.
GPUFRAC_SOCKET=$TMP/new.sock daemon_start
kill -STOP "$DAEMON_PID"
mv "$TMP/new.sock" "$GPUFRAC_SOCKET"
wait_for "a's shim connects to the new daemon, stopped" 10 backlog 1
wait_for "a's move out commits meanwhile" 20 grep -q \
	"moved $((32 * MiB)) bytes out" "$TMP/a.err"
kill -CONT "$DAEMON_PID"
wait_for "a has rejoined" 10 clients_are 1
check "the new daemon takes it as out, as its page says" grep -q \
	"pid $PID_a was left swapped out by copy" "$TMP/gpufracd.log"
wait_for "and brings it back, as it fits" 20 state_is "$PID_a" running
check_eq "the ledger and the driver agree" "$(ctl status --json | \
	json "j['devices'][0]['used_bytes']")" \
	$((512 * MiB - $("$CLIENTS/sim_mem_linked" free 0)))
kill -USR1 "$PID_a"
wait "$PID_a"
check_eq "a comes back when it calls the driver, intact" \
	"$(tail -1 "$TMP/a.out")" "check ok"

# --- 4: left out, no room: it rejoins, and comes back when it fits ------
client_start b preload "$C" alloc 32Mi fill hold check
check "b is swapped out" ctl swap out "$PID_b"
daemon_kill
# No daemon: the device filled by a process that knows no limit.
client_start f preload "$C" alloc 496Mi hold
daemon_start
wait_for "b and f rejoin the new daemon" 10 clients_are 2
check "b is listed out" state_is "$PID_b" swapped
check "b's shim said once that its memory stays out, at most" eval \
	"[ \$(grep -c 'cannot bring this process' $TMP/b.err) -le 1 ]"
client_release f
kill -USR1 "$PID_b"
wait "$PID_b"
check_eq "b came back once f left room, intact" \
	"$(tail -1 "$TMP/b.out")" "check ok"

# --- a daemon that stops leaves a process out by copy out --------------
# (it cannot move it back without the event loop); with no daemon, the
# process brings its memory back itself when a thread calls the driver.
client_start c preload "$C" alloc 16Mi fill hold check
check "c is swapped out" ctl swap out "$PID_c"
daemon_stop
check "the daemon said it stays out" grep -q \
	"pid $PID_c stays swapped out by copy" "$TMP/gpufracd.log"
kill -USR1 "$PID_c"
wait "$PID_c"
check_eq "c brought its memory back itself, intact" \
	"$(tail -1 "$TMP/c.out")" "check ok"
finish
