# Host swap by the copy engine of the program's own VMM allocations (issue
# 21), as PyTorch's expandable segments make them: a reserved range, chunks
# made by cuMemCreate, each mapped once whole. They move to the host and
# back with their data; the device's memory is free meanwhile; the handles
# the program holds still work after (they are the shim's, standing for
# the driver's, whose values the simulated driver, like the real one,
# hands out again); one mapped twice stays and is said.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=64Mi
C=$CLIENTS/cuclient_linked
MiB=$((1 << 20))
conf=$TMP/gpufrac.conf

printf '[daemon]\ndefault_resolver = swap\nswap_engine = copy\nwait_timeout = 20s\nswap_min_idle = 100ms\n' >"$conf"
daemon_start

# a: a segment of 4 chunks of 4 MiB, and 2 MiB mapped twice. After the
# swap-in: the handles asked about and retained, a new handle made, the
# segment given back, the rest freed.
client_start a preload "$C" segment 4 4Mi vmmtwice 2Mi fill hold check \
	vmmprops vmmretain vmm 2Mi fill segfree check hold vmmfreeall hold
check_eq "a's chunks and the twice-mapped one are charged as vmm" \
	"$(ctl allocs "$PID_a" --json | json 'sorted((x["kind"], x["size"]) for x in j["allocations"])')" \
	"[('vmm', $((2 * MiB))), ('vmm', $((4 * MiB))), ('vmm', $((4 * MiB))), ('vmm', $((4 * MiB))), ('vmm', $((4 * MiB)))]"
client_start b preload "$C" alloc 48Mi fill hold check
check "b was granted: a, idle, was swapped out" state_is "$PID_a" swapped
check "the swap-out event says the copy engine moved a's 16 MiB" \
	has_event swap-out "$PID_a" "16.0MiB by copy"
check "the one mapped twice stayed, and is said" \
	has_event swap-out "$PID_a" "1 stayed: 2.0MiB (vmm)"
check "the device holds b's 48 MiB and a's 2 MiB only" \
	device_used_is $((50 * MiB))
check_eq "the simulated driver agrees" "$("$CLIENTS/sim_mem_linked" free 0)" \
	$((14 * MiB))
kill -USR1 "$PID_a"
wait_for "a calls the driver: swapped back in, data intact" 20 \
	grep -q '^check ok' "$TMP/a.out"
check "the swap-in event says the copy engine" has_event swap-in "$PID_a" "by copy"
wait_for "a's old handles work: asked about, retained, given back" 20 \
	eval "[ \"\$(grep -c '^holding' $TMP/a.out)\" = 2 ]"
check_eq "a's answers after the swap-in" "$(sed -n '6,11p' "$TMP/a.out")" \
	"vmmprops ok
vmmretain ok
vmm ok
fill ok
segfree ok
check ok"
check_eq "the segment's charge went, the new handle's came" \
	"$(ctl allocs "$PID_a" --json | json 'sorted((x["kind"], x["size"]) for x in j["allocations"])')" \
	"[('vmm', $((2 * MiB))), ('vmm', $((2 * MiB)))]"
kill -USR1 "$PID_a"
wait_for "a freed the rest" 20 \
	eval "[ \"\$(grep -c '^holding' $TMP/a.out)\" = 3 ]"
check_eq "every handle unmapped and released" "$(sed -n '13p' "$TMP/a.out")" \
	"vmmfreeall ok"
check_eq "a's charge is back to 0" \
	"$(ctl allocs "$PID_a" --json | json 'len(j["allocations"])')" 0
kill -USR1 "$PID_a"
wait "$PID_a"
wait_for "a gone, b comes back" 20 state_is "$PID_b" running
kill -USR1 "$PID_b"
wait "$PID_b"
check_eq "b's data came back intact" "$(tail -1 "$TMP/b.out")" "check ok"
wait_for "nothing is left charged" 10 device_used_is 0
check_eq "nor in the simulated driver" "$("$CLIENTS/sim_mem_linked" free 0)" \
	$((64 * MiB))
# A mapping made in a context the program later destroys (legal: VMM
# memory is the process's, issue 33 point 7) still moves, by the device's
# primary context.
client_start d preload "$C" ctx vmm 4Mi fill ctxdestroy hold check
check "d, whose mapping's context is gone, is swapped out" \
	ctl swap out "$PID_d"
check "its 4 MiB moved" has_event swap-out "$PID_d" "4.0MiB by copy"
check "and in" ctl swap in "$PID_d"
client_release d
check_eq "its data came through" "$(tail -1 "$TMP/d.out")" "check ok"
finish
