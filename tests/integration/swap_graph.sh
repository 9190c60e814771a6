# A CUDA graph built before a swap-out by the copy engine replays after the
# swap-in with the right data (issue 21: the graphs a program holds stay
# valid). A graph keeps the device addresses its nodes were made with
# inside the driver, where no shim sees or translates them: it replays
# only if the swap-in mapped new memory at the very same addresses, with
# access for the device. Had the swap-in mapped it elsewhere, the old
# addresses would be unmapped and the launch would fail
# (CUDA_ERROR_ILLEGAL_ADDRESS, the simulated driver's answer to memory that
# is gone, as a real GPU's memset kernel faults on it), or, had another
# allocation come to lie there, it would write that one and this one's
# rows would read back zero. A shim that translated the pointers of the
# calls it hooks could pass the program's own copies (check) and still
# fail this.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=64Mi
C=$CLIENTS/cuclient_linked
MiB=$((1 << 20))

printf '[daemon]\nswap_engine = copy\nwait_timeout = 20s\n' >"$TMP/gpufrac.conf"
daemon_start

check_eq "without the shim, a graph over freed memory fails at launch" \
	"$("$C" alloc 8Mi graph free launch)" "alloc ok
graph ok 1
free ok
launch err=700"

client_start a preload "$C" alloc 8Mi alloc 3Mi pitch 4000 1000 alloc 4Ki \
	fill graph hold launch check hold
check_eq "a built a graph of three memset nodes" "$(sed -n 6p "$TMP/a.out")" \
	"graph ok 3"
check "a is swapped out by hand" ctl swap out "$PID_a"
wait_for "a is out" 10 state_is "$PID_a" swapped
check "by copy" has_event swap-out "$PID_a" "by copy"
check_eq "the device holds a's small allocation only" \
	"$("$CLIENTS/sim_mem_linked" free 0)" $((64 * MiB - 4096))
kill -USR1 "$PID_a"
wait_for "a holds again" 10 eval "[ \$(grep -c '^holding' $TMP/a.out) = 2 ]"
check "brought back in by copy" has_event swap-in "$PID_a" "by copy"
check_eq "the graph replayed on the memory, the rest intact" \
	"$(sed -n '8,9p' "$TMP/a.out")" "launch ok
check ok"
client_release a
wait_for "nothing is left charged" 10 device_used_is 0
finish
