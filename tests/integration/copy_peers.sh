# Peer access under the copy engine (issue 21: "nothing else changes for
# the program"): the driver's own allocation is reached by another device
# once it enables peer access; one the shim backs with the driver's
# virtual memory management only by a device granted access to its
# mapping. The shim grants it to every device that can reach it peer to
# peer, when it maps the memory and again when it brings it back.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=64Mi,64Mi
C=$CLIENTS/cuclient_linked
steps=(dev 0 alloc 8Mi fill dev 1 alloc 8Mi peercopy)

check_eq "the bare driver: device 1 copies device 0's memory" \
	"$("$C" "${steps[@]}" | tail -1)" "peercopy ok"
printf '[daemon]\nswap_engine = copy\n' >"$TMP/gpufrac.conf"
daemon_start
check_eq "under the copy engine too" \
	"$(preload "$C" "${steps[@]}" | tail -1)" "peercopy ok"
client_start a preload "$C" "${steps[@]}" hold peercopy hold
check "device 0's 8 MiB are backed: a is swapped out by copy" eval \
	"ctl swap out $PID_a && has_event swap-out $PID_a 'by copy'"
check "and in" ctl swap in "$PID_a"
kill -USR1 "$PID_a"
wait_for "a copies again" 20 eval "[ \$(grep -c '^peercopy' $TMP/a.out) = 2 ]"
check_eq "device 1 still copies device 0's memory, brought back intact" \
	"$(grep '^peercopy' "$TMP/a.out" | tail -1)" "peercopy ok"
kill -USR1 "$PID_a"
wait "$PID_a"
finish
