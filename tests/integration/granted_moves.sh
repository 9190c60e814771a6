# A copy engine's move that ends after its process's connection closed
# (the process lives on: its grants are kept): the kept record says
# where the move left the memory, for its next connection and for the
# next daemon. l's move out is given up at its deadline (its memory
# never left): a page it then marks out, unasked, changes nothing when
# it connects again. k's move in is given up (its memory stays out): its
# page, which says so, is believed by a daemon started after, as the
# record the one before kept says it is out by copy.
# shellcheck disable=SC2154	# PID_* are bg's and liar's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=512Mi
MiB=$((1 << 20))
# conf DEADLINE: the daemon's configuration, moves given up after DEADLINE.
conf() {
	printf '[daemon]\nswap_engine = copy\nlease_idle = 1h\nswap_move_timeout = %s\n' \
	    "$1" >"$TMP/gpufrac.conf"
}
conf 60s
daemon_start
uuid=$(ctl status --json | json 'j["devices"][0]["uuid"]')

. "$(dirname "$0")/mover_lib.sh"
given_up() { grep -q "pid $1: no MOVED within .*the move is given up" \
	"$TMP/gpufracd.log"; }
field() { ps_json "[c for c in j['clients'] if c['pid'] == $1][0]$2"; }
out_by_copy() { grep -c "pid $1 was left swapped out by copy" "$TMP/gpufracd.log"; }
liar l $((4 * MiB))
liar k $((4 * MiB))

# k is moved out, as its MOVED says; then each move is given up soon.
bg swap_k "$GPUFRACCTL" -s "$GPUFRAC_SOCKET" swap out "$PID_k"
wait_for "k is asked to move out" 10 said k "move out" 1
say k moved
wait_for "its 4 MiB are out" 10 eval \
	'[ "$(field "$PID_k" "[\"devices\"][0][\"host_bytes\"]")" = $((4 * MiB)) ]'
conf $((500 * SLOW))ms
check "the move deadline is made short" ctl reload

# --- l: asked out, gone before it moves; the move given up ---------------
bg swap_l "$GPUFRACCTL" -s "$GPUFRAC_SOCKET" swap out "$PID_l"
wait_for "l is asked to move out" 10 said l "move out" 1
say l hangup
wait_for "its connection closes" 10 said l "hung up" 1
wait_for "and its move is given up at its deadline" 10 given_up "$PID_l"
say l mark
wait_for "l's page says it is out by copy, unasked" 10 said l marked 1
say l "rejoin $((4 * MiB))"
wait_for "l re-registers what it was granted" 10 said l rejoined 1
check_eq "its page is not believed: its record says its memory stayed" \
	"$(out_by_copy "$PID_l")" 0
check_eq "running, its 4 MiB on the device" \
	"$(field "$PID_l" "['state']") $(field "$PID_l" "['devices'][0]['used_bytes']") $(field "$PID_l" "['devices'][0]['host_bytes']")" \
	"running $((4 * MiB)) 0"

# --- k: asked back in, gone before it moves; the move given up -----------
say k deaf
wait_for "k will not answer a move in" 10 said k deaf 1
bg swapin_k "$GPUFRACCTL" -s "$GPUFRAC_SOCKET" swap in "$PID_k"
wait_for "k is asked to move in" 10 said k "move in" 1
say k hangup
wait_for "its connection closes" 10 said k "hung up" 1
wait_for "and its move in is given up at its deadline" 10 given_up "$PID_k"
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
daemon_start
say k "rejoin $((4 * MiB))"
wait_for "k re-registers what it was granted" 10 said k rejoined 1
check_eq "its page, which says it is out, is believed: its record says so" \
	"$(out_by_copy "$PID_k")" 1
say l exit
say k exit
wait "$PID_l" "$PID_k" 2>/dev/null
finish
