# A move in that the daemon stops waiting for once the shim has committed
# to it is taken as in (activity.h), while its bytes are still coming
# back: the program's calls wait at the gate until the last of them is
# back, and never see the memory half back. The move in is slow (8
# allocations of 2 MiB at 10 MB/s: 1.7 s), its deadline short
# (swap_move_timeout 500ms, reloaded once the move out is done).
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=64Mi
C=$CLIENTS/cuclient_linked
conf=$TMP/gpufrac.conf

printf '[daemon]\nswap_engine = copy\nswap_move_timeout = 60s\n' >"$conf"
daemon_start
SIMCUDA_COPY_GBPS=0.01 client_start a preload "$C" many 8 2Mi fill hold \
	check
check "a is swapped out" ctl swap out "$PID_a"
printf '[daemon]\nswap_engine = copy\nswap_move_timeout = 500ms\n' >"$conf"
check "the move deadline is made short" ctl reload
kill -USR1 "$PID_a"
wait_for "the daemon takes a's move in as done while it still comes" 20 \
	grep -q "pid $PID_a: no MOVED .*coming back: taken as in" \
	"$TMP/gpufracd.log"
wait "$PID_a"
check_eq "a's call waited for all of its memory: intact" \
	"$(tail -1 "$TMP/a.out")" "check ok"
finish
