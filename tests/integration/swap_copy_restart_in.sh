# A daemon killed while the copy engine brings a process back in, whose
# move then fails: the record of a move in under way says "out by copy",
# so the next daemon believes the page. It takes the process as in
# while the page says the move goes on (charged on the device, as the
# daemon before charged it from the move's start: no honest request is
# refused for it), and as out once the page says the move failed: asked
# to bring it in, it moves it in anew, never clearing the mark while the
# memory is still on host. a holds 8 allocations of 2 MiB at 10 MB/s
# (1.7 s each way); the last copy of its move in fails (the 16th across
# the bus: 8 out, then 8 in).
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=64Mi
MiB=$((1 << 20))

printf '[daemon]\nswap_engine = copy\nswap_move_timeout = 60s\n' \
	>"$TMP/gpufrac.conf"
daemon_start
SIMCUDA_COPY_GBPS=0.01 SIMCUDA_FAIL_BUS_COPY=16 GPUFRAC_LOG=debug client_start a preload \
	"$CLIENTS/cuclient_linked" many 8 2Mi fill hold check hold
check "a is swapped out" ctl swap out "$PID_a"
# Asked in by hand: a's program makes no call until its move has failed
# (a call with no daemon would have its shim bring the memory back).
bg swapin "$GPUFRACCTL" -s "$GPUFRAC_SOCKET" swap in "$PID_a"
host_of() { ps_json "[c['devices'][0]['host_bytes'] for c in j['clients'] if c['pid'] == $1][0]"; }
wait_for "a's move in has begun: its charge is back on the device" 10 \
	eval '[ "$(host_of "$PID_a")" = 0 ]'
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
daemon_start
wait_for "a's move in fails" 20 grep -q "moved 0 bytes in in" "$TMP/a.err"
wait_for "a has rejoined the new daemon" 20 grep -q "reconnected to gpufracd" \
	"$TMP/a.err"
kill -USR1 "$PID_a"
wait_for "a's call goes on once its memory is back" 30 \
	grep -q '^check' "$TMP/a.out"
check_eq "a's call never reached memory still on host: intact" \
	"$(grep '^check' "$TMP/a.out")" "check ok"
check "the new daemon believed a's page: coming in, or out" grep -q \
	"pid $PID_a was left \(coming back in\|swapped out\) by copy" \
	"$TMP/gpufracd.log"
check_eq "and moved it in anew: running, its 16 MiB on the device" \
	"$(ps_json "[(c['state'], c['devices'][0]['used_bytes'] - c['devices'][0]['leased_bytes'], c['devices'][0]['host_bytes']) for c in j['clients'] if c['pid'] == $PID_a]")" \
	"[('running', $((16 * MiB)), 0)]"
client_release a
finish
