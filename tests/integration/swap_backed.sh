# What a program sees of the memory the copy engine backs (swap_engine =
# copy, issue 21, point 3): nothing else changes for it. Pointer
# attributes and address ranges are those of a cuMemAlloc, at the base and
# inside, before a swap and after it; a context that ends frees the backed
# allocations made in it, on the device and in the daemon's books, as the
# driver frees a cuMemAlloc's (cuCtxDestroy, cuDevicePrimaryCtxReset, the
# last cuDevicePrimaryCtxRelease).
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=64Mi
C=$CLIENTS/cuclient_linked
MiB=$((1 << 20))
conf=$TMP/gpufrac.conf

printf '[daemon]\nswap_engine = copy\nwait_timeout = 20s\n' >"$conf"
daemon_start

# sim_free BYTES: the simulated driver's free memory, seen from outside.
sim_free() { [ "$("$CLIENTS/sim_mem_linked" free 0)" = "$1" ]; }

# 3 MiB and a pitch of 4096 x 1000 are backed by mappings of 4 MiB, which
# the simulated driver shows as ranges of 4 MiB (a VMM mapping's range is
# the mapping). A 4 KiB allocation is not backed.
check_eq "without the shim: the driver's own answers" \
	"$("$C" alloc 3Mi attrs pitch 4000 1000 attrs)" "alloc ok
attrs ok
pitch ok 4096
attrs ok"
client_start a preload "$C" alloc 3Mi attrs pitch 4000 1000 attrs \
	ctx alloc 5Mi attrs alloc 4Ki attrs hold free attrs alloc 6Mi attrs hold
check_eq "backed: the size asked for and the context it was made in" \
	"$(grep -v holding "$TMP/a.out")" "alloc ok
attrs ok
pitch ok 4096
attrs ok
ctx ok
alloc ok
attrs ok
alloc ok
attrs ok"
check "they were backed: the device holds 4, 4 and 6 MiB, and 4 KiB" \
	sim_free $((64 * MiB - 14 * MiB - 4096))
check "a is swapped out by hand" ctl swap out "$PID_a"
wait_for "a is out" 10 state_is "$PID_a" swapped
check "the device holds a's small allocation only" sim_free $((64 * MiB - 4096))
kill -USR1 "$PID_a"
wait_for "a holds again" 10 eval "[ \$(grep -c '^holding' $TMP/a.out) = 2 ]"
check_eq "back in: the same answers, before the swap or after" \
	"$(sed -n '11,$p' "$TMP/a.out")" "free ok
attrs ok
alloc ok
attrs ok
holding"
client_release a
wait_for "nothing is left charged" 10 device_used_is 0

# A context that ends takes its backed allocations with it, as the driver
# takes a cuMemAlloc's: cuCtxDestroy, then cuDevicePrimaryCtxReset, while
# the process lives on; and its later allocations swap as before.
client_start c preload "$C" ctx alloc 4Mi pitch 4000 1000 ctxdestroy hold \
	dev 0 alloc 6Mi alloc 4Ki reset hold dev 0 alloc 3Mi fill hold check
check_eq "cuCtxDestroy" "$(grep -v holding "$TMP/c.out")" "ctx ok
alloc ok
pitch ok 4096
ctxdestroy ok"
check "the device has the backed memory of the destroyed context back" \
	sim_free $((64 * MiB))
check "the daemon charges nothing" device_used_is 0
kill -USR1 "$PID_c"
wait_for "c holds again" 10 eval "[ \$(grep -c '^holding' $TMP/c.out) = 2 ]"
check_eq "cuDevicePrimaryCtxReset" "$(sed -n '6,$p' "$TMP/c.out")" "alloc ok
alloc ok
reset ok
holding"
check "the device has the backed and the small memory back" \
	sim_free $((64 * MiB))
check "the daemon charges nothing" device_used_is 0
check_eq "nor lists any" "$(ctl allocs "$PID_c" --json | json 'len(j["allocations"])')" 0
kill -USR1 "$PID_c"
wait_for "c holds a third time" 10 eval "[ \$(grep -c '^holding' $TMP/c.out) = 3 ]"
check "the new allocation is charged" device_used_is $((4 * MiB))
check "c is swapped out by hand" ctl swap out "$PID_c"
wait_for "c is out" 10 state_is "$PID_c" swapped
check "by copy, with nothing left of the ended contexts" \
	has_event swap-out "$PID_c" "by copy"
check "the device is free" sim_free $((64 * MiB))
client_release c
check_eq "back in, data intact" "$(tail -1 "$TMP/c.out")" "check ok"
wait_for "nothing is left charged" 10 device_used_is 0

# The last cuDevicePrimaryCtxRelease ends the primary context too.
client_start d preload "$C" alloc 4Mi pitch 4000 1000 alloc 4Ki release hold
check_eq "cuDevicePrimaryCtxRelease, the last" "$(sed -n 4p "$TMP/d.out")" \
	"release ok"
check "the device has it all back" sim_free $((64 * MiB))
check "the daemon charges nothing" device_used_is 0
client_release d
finish
