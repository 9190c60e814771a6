# The copy engine on a device of ordinal 8 or more (issue 33): MOVED says
# what stayed on ordinals 0 to 7 only (GF_MOVED_DEVICES); on another, the
# daemon keeps the process's charge whole on the device rather than take
# what stayed there for gone, so that the ledger never holds less than
# the driver does.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=64Mi,64Mi,64Mi,64Mi,64Mi,64Mi,64Mi,64Mi,64Mi
C=$CLIENTS/cuclient_linked
MiB=$((1 << 20))

printf '[daemon]\nswap_engine = copy\n' >"$TMP/gpufrac.conf"
daemon_start
client_start a preload "$C" dev 8 alloc 8Mi alloc 4Ki fill hold check
check "a, on device 8, is swapped out" ctl swap out "$PID_a"
ledger=$(ctl status --json | json "j['devices'][8]['used_bytes']")
driver=$((64 * MiB - $("$CLIENTS/sim_mem_linked" free 8)))
check "what stayed there is still charged ($ledger >= $driver)" \
	[ "$ledger" -ge "$driver" ]
check "and in" ctl swap in "$PID_a"
client_release a
check_eq "intact" "$(tail -1 "$TMP/a.out")" "check ok"
finish
