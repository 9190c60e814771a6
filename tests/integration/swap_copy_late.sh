# Copy engine moves the daemon gives up on (issue 33, points 3 and 6).
# The shim is stopped (SIGSTOP) past swap_move_timeout, then let go: a
# move in given up is not finished behind the daemon's back (the page's
# mark says whether the daemon still waits, activity.h), so the ledger
# and the driver agree and another process is granted only what the
# driver has; a move out given up leaves pinned host memory that goes
# back after swap_keep, as after a swap-in.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=64Mi
C=$CLIENTS/cuclient_linked
MiB=$((1 << 20))

# The deadline leaves a real move room under a sanitizer's slowness.
printf '[daemon]\nswap_engine = copy\nswap_move_timeout = %ss\nswap_keep = 1s\n' \
	$((3 * SLOW)) >"$TMP/gpufrac.conf"
daemon_start
host() { ctl status --json | json "j['swap']['$1']"; }
driver_used() { echo $((64 * MiB - $("$CLIENTS/sim_mem_linked" free 0))); }

# --- 3: a move in given up --------------------------------------------------
GPUFRAC_LOG=debug client_start a preload "$C" alloc 32Mi fill hold check
check "a is swapped out" ctl swap out "$PID_a"
kill -STOP "$PID_a"
check "a, stopped, cannot answer its move in: given up" eval \
	"! ctl swap in $PID_a 2>$TMP/in.err"
kill -CONT "$PID_a"
wait_for "a's shim has answered the move given up" 10 \
	grep -q "moved 0 bytes in" "$TMP/a.err"
check "a is still out" state_is "$PID_a" swapped
check_eq "the ledger and the driver agree" "$(ctl status --json | \
	json "j['devices'][0]['used_bytes']")" "$(driver_used)"
client_start b preload "$C" alloc 40Mi hold
check_eq "b is granted 40 MiB, which the driver has" \
	"$(grep '^alloc' "$TMP/b.out")" "alloc ok"
client_release b
kill -USR1 "$PID_a"
wait "$PID_a"
check_eq "a comes back when it calls the driver, intact" \
	"$(tail -1 "$TMP/a.out")" "check ok"

# --- 6: a move out given up -------------------------------------------------
GPUFRAC_LOG=debug client_start c preload "$C" alloc 32Mi fill hold check
kill -STOP "$PID_c"
check "c, stopped, cannot answer its move out: given up" eval \
	"! ctl swap out $PID_c 2>$TMP/out.err"
kill -CONT "$PID_c"
wait_for "c's shim has answered the move given up" 10 \
	grep -q "moved 0 bytes out" "$TMP/c.err"
check "c runs" state_is "$PID_c" running
wait_for "the host memory it pinned goes back after swap_keep" 10 \
	eval '[ "$(host host_kept_bytes)" = 0 ]'
client_release c
check_eq "c's data is intact" "$(tail -1 "$TMP/c.out")" "check ok"
finish
