# The program's VMM allocations that the driver binds where the shim does
# not follow (issue 21): a sparse array's tiles (cuMemMapArrayAsync and its
# _ptsz) and a multicast object (cuMulticastBindMem). Under the copy engine
# the program's handles, the shim's, reach the driver as the driver's: the
# simulated one, which checks them and then has nothing to bind them to,
# answers as with no shim. What was handed over stays on the device at a
# swap, and is said (vmm); the rest moves.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=32Mi
C=$CLIENTS/cuclient_linked
MiB=$((1 << 20))
conf=$TMP/gpufrac.conf
bind="vmm 2Mi vmmarray vmm 2Mi vmmarraypt vmm 2Mi vmmbind segment 2 4Mi"

# shellcheck disable=SC2086	# the commands are words
check_eq "with no shim, each handle is checked, then not supported" \
	"$("$C" $bind)" "vmm ok
vmmarray err=801
vmm ok
vmmarraypt err=801
vmm ok
vmmbind err=801
segment ok"

# Deadlines scaled under a sanitizer (lib.sh).
printf '[daemon]\ndefault_resolver = swap\nswap_engine = copy\nwait_timeout = %ss\nswap_min_idle = 100ms\nswap_move_timeout = %ss\n' \
	$((20 * SLOW)) $((10 * SLOW)) >"$conf"
daemon_start

# shellcheck disable=SC2086
client_start a preload "$C" $bind fill hold check hold
check_eq "under the copy engine, the same answers: not INVALID_VALUE" \
	"$(sed -n '1,7p' "$TMP/a.out")" "vmm ok
vmmarray err=801
vmm ok
vmmarraypt err=801
vmm ok
vmmbind err=801
segment ok"
client_start b preload "$C" alloc 24Mi fill hold check
check "b was granted: a, idle, was swapped out" state_is "$PID_a" swapped
check "the swap-out event says the copy engine moved a's segment" \
	has_event swap-out "$PID_a" "8.0MiB by copy"
check "the three handed to the driver stayed, and are said" \
	has_event swap-out "$PID_a" "3 stayed: 6.0MiB (vmm)"
check "the device holds b's 24 MiB and a's 6 MiB" \
	device_used_is $((30 * MiB))
check_eq "the simulated driver agrees" "$("$CLIENTS/sim_mem_linked" free 0)" \
	$((2 * MiB))
kill -USR1 "$PID_a"
wait_for "a calls the driver: swapped back in, data intact" 20 \
	grep -q '^check ok' "$TMP/a.out"
kill -USR1 "$PID_a"
wait "$PID_a"
wait_for "a gone, b comes back" 20 state_is "$PID_b" running
kill -USR1 "$PID_b"
wait "$PID_b"
check_eq "b's data came back intact" "$(tail -1 "$TMP/b.out")" "check ok"
wait_for "nothing is left charged" 10 device_used_is 0
check_eq "nor in the simulated driver" "$("$CLIENTS/sim_mem_linked" free 0)" \
	$((32 * MiB))
finish
