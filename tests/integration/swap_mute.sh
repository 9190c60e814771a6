# The copy engine's deadline (swap_move_timeout, issue 21): a shim that
# never answers MOVE does not stall host swap. The daemon gives up on the
# move, marks the process back in and says why; a late MOVED is ignored;
# the next swap runs. A shim that passed its point of no return is taken
# as out. A real shim whose copies outlast the deadline keeps its memory
# on the device, data intact. A page that says, unasked, that a move in
# failed (committed out) is not believed when its process asks to come
# back: no move in was taken as in.
# shellcheck disable=SC2154	# PID_* are client_start's and bg's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=64Mi
C=$CLIENTS/cuclient_linked
MiB=$((1 << 20))
printf '[daemon]\nswap_engine = copy\nswap_move_timeout = 1s\n' \
	>"$TMP/gpufrac.conf"
daemon_start
uuid=$(ctl status --json | json 'j["devices"][0]["uuid"]')

# mute NAME [commit]: a mute_mover.py of 8 MiB, stdin on fd 3 or 4.
mute() {
	mkfifo "$TMP/$1.in"
	"$PYTHON" "$TOP/tests/clients/mute_mover.py" "$GPUFRAC_SOCKET" \
		"$uuid" $((8 * MiB)) ${2:+"$2"} <"$TMP/$1.in" \
		>"$TMP/$1.out" 2>"$TMP/$1.err" &
	printf -v "PID_$1" %s $!
}

# --- a shim that never answers -------------------------------------------
mute m
exec 3>"$TMP/m.in"
wait_for "m holds 8 MiB" 10 grep -q '^ready' "$TMP/m.out"
bg swap_m "$GPUFRACCTL" -s "$GPUFRAC_SOCKET" swap out "$PID_m"
wait_for "m is asked to move" 10 grep -q '^move out' "$TMP/m.out"
wait_for "the swap it never answers is given up" 20 \
	eval "! kill -0 $PID_swap_m 2>/dev/null"
check "gpufracctl swap says why" \
	grep -q 'no MOVED within [0-9]* ms' "$TMP/swap_m.err"
check "the swap-skip event says why" \
	has_event swap-skip "$PID_m" "not swapped out by copy .*no MOVED within"
check "m is marked back in" state_is "$PID_m" running
echo page >&3
wait_for "its page's mark is taken back" 10 grep -q '^swapped 0' \
	"$TMP/m.out"
id=$(sed -n 's/^move out //p' "$TMP/m.out")
echo "moved $id" >&3
wait_for "its late MOVED changes nothing but what it keeps" 10 grep -q \
	"pid $PID_m: the MOVED of a move given up on (id $id) came" \
	"$TMP/gpufracd.log"
check "m still runs, charged on the device" state_is "$PID_m" running
check "the device holds m's 8 MiB" device_used_is $((8 * MiB))

# --- the next swap runs ----------------------------------------------------
client_start a preload "$C" alloc 8Mi fill hold check hold
check "a is swapped out after m's move was given up" \
	timeout 20 "$GPUFRACCTL" -s "$GPUFRAC_SOCKET" swap out "$PID_a"
check "a is out" state_is "$PID_a" swapped
kill -USR1 "$PID_a"
wait_for "a comes back, data intact" 20 grep -q '^check ok' "$TMP/a.out"
client_release a

# --- past the point of no return -------------------------------------------
mute n commit
exec 4>"$TMP/n.in"
wait_for "n holds 8 MiB" 10 grep -q '^ready' "$TMP/n.out"
check "n, whose memory left but who never answers, is taken as out" \
	timeout 20 "$GPUFRACCTL" -s "$GPUFRAC_SOCKET" swap out "$PID_n"
check "the swap-out event says so" \
	has_event swap-out "$PID_n" "no MOVED within [0-9]* ms, its 8.0MiB had left"
check "n is out" state_is "$PID_n" swapped
check "n comes back when asked, and answers" \
	timeout 20 "$GPUFRACCTL" -s "$GPUFRAC_SOCKET" swap in "$PID_n"
check "n runs" state_is "$PID_n" running
echo exit >&3
echo exit >&4
wait "$PID_m" "$PID_n"

# --- copies that outlast the deadline --------------------------------------
# 16 MiB at 4 MB/s take 4 s on the simulated bus; the deadline is 1 s and
# 16 ms. The shim finds the mark taken back and keeps its memory.
client_start b preload env SIMCUDA_COPY_GBPS=0.004 "$C" alloc 16Mi fill \
	hold check hold
check "b's slow move is given up" \
	eval "! timeout 20 '$GPUFRACCTL' -s '$GPUFRAC_SOCKET' swap out $PID_b"
check "b is marked back in" state_is "$PID_b" running
wait_for "b's late MOVED says its shim called the move off" 20 grep -q \
	"pid $PID_b: the MOVED of a move given up on" "$TMP/gpufracd.log"
check_eq "b's memory stayed on the device" \
	"$("$CLIENTS/sim_mem_linked" free 0)" $((64 * MiB - 16 * MiB))
kill -USR1 "$PID_b"
wait_for "b's data is intact" 20 grep -q '^check ok' "$TMP/b.out"
client_release b
wait_for "nothing is left charged" 10 device_used_is 0

# --- a page that says, unasked, its move in failed -----------------------
mute p
exec 5>"$TMP/p.in"
wait_for "p holds 8 MiB" 10 grep -q '^ready' "$TMP/p.out"
echo deaf >&5
wait_for "p answers no MOVE in from now on" 10 grep -q '^deaf' "$TMP/p.out"
echo mark >&5
wait_for "p's page says it is out, unasked" 10 grep -q '^marked' "$TMP/p.out"
echo swapin >&5
wait_for "p's SWAP_IN is answered" 10 grep -q '^swapin' "$TMP/p.out"
check_eq "at once: it is in" "$(grep '^swapin' "$TMP/p.out")" "swapin OK"
check_eq "running, its 8 MiB on the device, none on the host" \
	"$(ps_json "[(c['state'], c['devices'][0]['used_bytes'], c['devices'][0]['host_bytes']) for c in j['clients'] if c['pid'] == $PID_p]")" \
	"[('running', $((8 * MiB)), 0)]"
echo exit >&5
wait "$PID_p" 2>/dev/null
finish
