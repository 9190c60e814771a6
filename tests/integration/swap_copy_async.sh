# The copy engine and work another context left queued (issue 33): a move
# out synchronises every context of the process before it copies, not
# only those that own backed memory, so that a copy queued in another
# context and still running lands before the memory moves, not after it
# is unmapped. The simulated driver runs stream work asynchronously here
# (SIMCUDA_ASYNC=1), on a slow bus: 40 MiB queued ahead of the write,
# 4 s at least, against a move of 0.4 s.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=64Mi SIMCUDA_ASYNC=1 SIMCUDA_COPY_GBPS=0.01
C=$CLIENTS/cuclient_linked

printf '[daemon]\nswap_engine = copy\nswap_move_timeout = 30s\n' \
	>"$TMP/gpufrac.conf"
daemon_start
client_start a preload "$C" alloc 4Mi fill ctx seed 1 asyncfill 40 hold \
	check
check_eq "a's second context queued its write, behind 40 MiB" \
	"$(grep '^asyncfill' "$TMP/a.out")" "asyncfill ok"
check "a is swapped out" ctl swap out "$PID_a"
check "and in" ctl swap in "$PID_a"
client_release a
check_eq "the queued write came through the move" \
	"$(tail -1 "$TMP/a.out")" "check ok"
finish
