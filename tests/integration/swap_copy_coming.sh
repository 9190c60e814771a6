# A move in that the daemon stops waiting for once the shim has committed
# to it is taken as in (activity.h), while its bytes are still coming
# back: the program's calls wait at the gate until the last of them is
# back, and never see the memory half back. The move in is slow (8
# allocations of 2 MiB at 10 MB/s: 1.7 s), its deadline short
# (swap_move_timeout 500ms, reloaded once the move out is done).
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slow_move_in_lib.sh"
export SIMCUDA_DEVICES=64Mi

slow_move_in -- many 8 2Mi fill hold check
wait "$PID_a"
check_eq "a's call waited for all of its memory: intact" \
	"$(tail -1 "$TMP/a.out")" "check ok"
finish
