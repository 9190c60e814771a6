# The copy engine keeps pinned host memory (issue 21): pinning runs far
# slower than the bus (an H200 pinned 12 GiB in 5 s and copied it in
# 0.23 s), so a process's first move out pins its buffers and its later
# ones reuse them. What is kept counts against swap_host_limit, shows in
# status, and is given back when a swap needs the room, or once the
# process has been back in for swap_keep.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=64Mi
C=$CLIENTS/cuclient_linked
MiB=$((1 << 20))
conf=$TMP/gpufrac.conf

# pinned_said PID: how many times the daemon said PID pinned anew.
pinned_said() {
	grep -c "pid $1: .* of host memory pinned for its move out" \
	    "$TMP/gpufracd.log"
}
host() { ctl status --json | json "j['swap']['$1']"; }

printf '[daemon]\nswap_engine = copy\n' >"$conf"
daemon_start
client_start a preload "$C" alloc 16Mi alloc 8Mi fill hold check hold
check "a is swapped out by hand" ctl swap out "$PID_a"
check_eq "its first move out pinned its host memory" "$(pinned_said "$PID_a")" 1
check "and back in" ctl swap in "$PID_a"
check_eq "a runs; its 24 MiB of host memory are kept and counted" \
	"$(host host_kept_bytes) $(host host_bytes)" "$((24 * MiB)) $((24 * MiB))"
check "gpufracctl status says so" eval \
	"ctl status | grep -q '^host swap: .*24.0MiB of it kept pinned for the next swap-out'"
check "out again" ctl swap out "$PID_a"
check_eq "the second move out pinned nothing anew" "$(pinned_said "$PID_a")" 1
check_eq "out, its memory counts once" "$(host host_bytes)" $((24 * MiB))
check "in again" ctl swap in "$PID_a"

# --- kept memory given back when a swap needs the room -----------------
printf '[daemon]\nswap_engine = copy\nswap_host_limit = 28Mi\n' >"$conf"
check "reload: at most 28 MiB on host" ctl reload
client_start b preload "$C" alloc 8Mi fill hold check
check "b's 8 MiB beside a's kept 24 would pass the limit: refused" eval \
	"! ctl swap out $PID_b 2>$TMP/b.swap"
check "the refusal says a's kept memory is asked back" \
	grep -q "would pass swap_host_limit 28.0MiB; 24.0MiB of kept pinned memory asked back" \
	"$TMP/b.swap"
wait_for "a gives it back" 10 eval '[ "$(host host_kept_bytes)" = 0 ]'
check "now b is swapped out" ctl swap out "$PID_b"
check "and in" ctl swap in "$PID_b"
kill -USR1 "$PID_b"
wait "$PID_b"
check_eq "b's data came back intact" "$(tail -1 "$TMP/b.out")" "check ok"
check "a goes out again" ctl swap out "$PID_a"
check_eq "having given its memory back, it pinned anew" "$(pinned_said "$PID_a")" 2
check "and in" ctl swap in "$PID_a"
kill -USR1 "$PID_a"
wait_for "a's data came back intact through it all" 20 \
	grep -q '^check ok' "$TMP/a.out"
kill -USR1 "$PID_a"
wait "$PID_a"
wait_for "a gone, nothing is kept" 10 eval '[ "$(host host_bytes)" = 0 ]'

# --- a process back in for swap_keep gives it back -----------------------
printf '[daemon]\nswap_engine = copy\nswap_keep = 300ms\n' >"$conf"
check "reload: kept memory goes back after 300 ms in" ctl reload
client_start c preload "$C" alloc 8Mi fill hold check hold
check "c is swapped out" ctl swap out "$PID_c"
check "and in" ctl swap in "$PID_c"
wait_for "300 ms on, c has given its 8 MiB back" 10 \
	eval '[ "$(host host_kept_bytes)" = 0 ]'
check "the log says why" grep -q \
	"pid $PID_c: asked for the 8.0MiB of pinned host memory it keeps, back in for swap_keep" \
	"$TMP/gpufracd.log"
check "out again" ctl swap out "$PID_c"
check_eq "pinned anew" "$(pinned_said "$PID_c")" 2
check "in again" ctl swap in "$PID_c"
kill -USR1 "$PID_c"
wait_for "c's data came back intact" 20 grep -q '^check ok' "$TMP/c.out"
kill -USR1 "$PID_c"
wait "$PID_c"
finish
