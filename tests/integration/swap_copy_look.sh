# The copy engine's own move thread is not a program thread stuck in the
# driver (issue 33, point 5): the stall look spares it from the first
# move on, though the daemon wakes the look before MOVE arrives and the
# thread starts only then. The bus is slowed so that the first move out
# outlasts many looks (each verdict made on two, 100 ms apart): an idle
# process swapped out by hand stays out.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=256Mi
C=$CLIENTS/cuclient_linked

printf '[daemon]\nswap_engine = copy\n' >"$TMP/gpufrac.conf"
daemon_start
# 64 MiB at 0.1 GB/s: the move out takes 0.67 s at least, in the driver.
SIMCUDA_COPY_GBPS=0.1 GPUFRAC_LOG=debug client_start a preload "$C" \
	alloc 64Mi fill hold check
check "a is swapped out by hand, its first move" ctl swap out "$PID_a"
wait_for "its shim has looked at its threads five times" 10 \
	grep -q "no thread waits in the driver unseen after 5 looks" \
	"$TMP/a.err"
check "the move thread was not taken for a stuck one" eval \
	"! grep -q 'waits in the driver unseen while' $TMP/a.err"
check "a stays out" state_is "$PID_a" swapped
check "no swap-in event" eval "! has_event swap-in $PID_a"
check "an admin brings it back" ctl swap in "$PID_a"
client_release a
check_eq "its data came through" "$(tail -1 "$TMP/a.out")" "check ok"
finish
