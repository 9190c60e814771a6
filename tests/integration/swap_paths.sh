# The copy engine backs and moves the allocations of every way a program
# reaches the driver (issue 21): the linked symbols (cuMemAlloc_v2,
# cuMemAllocPitch_v2, cuMemFree_v2), dlsym under both glibc versions,
# cuGetProcAddress v1 and v2 (asked for itself first, and with the
# per-thread default stream flag, which cuMemAlloc and cuMemAllocPitch,
# having no _ptds form, answer as without). Each program is swapped out by
# hand: everything it holds is backed, so the device is left with nothing
# of it; back in, its data is intact and a free through the same path
# gives the device its memory back. The ABIs of CUDA < 3.2 (32-bit
# pointers: the plain cuMemAlloc symbol) are neither hooked nor simulated.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=64Mi
C=$CLIENTS/cuclient_linked
MiB=$((1 << 20))

printf '[daemon]\nswap_engine = copy\nwait_timeout = 20s\n' >"$TMP/gpufrac.conf"
daemon_start

# sim_free BYTES: the simulated driver's free memory, seen from outside.
sim_free() { [ "$("$CLIENTS/sim_mem_linked" free 0)" = "$1" ]; }

for path in linked dlsym dlsym-old procaddr procaddr1 procaddr-self \
    procaddr-ptds; do
	client_start a preload "$C" -p $path alloc 8Mi pitch 4000 1000 \
		alloc 3Mi fill hold check free hold
	check "$path: backed, the device holds 8 + 4 + 4 MiB" \
		sim_free $((48 * MiB))
	check "$path: swapped out by hand" ctl swap out "$PID_a"
	wait_for "$path: out" 10 state_is "$PID_a" swapped
	check "$path: by copy, nothing stayed" eval \
		"has_event swap-out $PID_a 'by copy' &&
		! has_event swap-out $PID_a stayed"
	check "$path: the device holds nothing of it" sim_free $((64 * MiB))
	kill -USR1 "$PID_a"
	wait_for "$path: holds again" 10 \
		eval "[ \$(grep -c '^holding' $TMP/a.out) = 2 ]"
	check_eq "$path: back in, data intact, freed" \
		"$(sed -n '6,7p' "$TMP/a.out")" "check ok
free ok"
	check "$path: the free gave the device its 4 MiB back" \
		sim_free $((52 * MiB))
	check "$path: and the daemon its charge" device_used_is $((12 * MiB))
	client_release a
	wait_for "$path: nothing is left charged" 10 device_used_is 0
done
finish
