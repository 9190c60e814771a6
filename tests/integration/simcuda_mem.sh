# The simulated driver's pools, VMM and arrays (tests/simcuda), without the
# shim: their checks, then what a process holding each kind of memory is
# charged as another process sees it, and that SIGKILL returns it.
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/sim_mem_linked

for p in sim_arrays_linked sim_vmm_linked sim_pools_linked sim_mem_linked; do
	check "$p passes" "$CLIENTS/$p"
done

export SIMCUDA_DEVICES=4Gi
rm -f "/dev/shm/simcuda-$SIMCUDA_STATE"
free0=$("$C" free 0)
check_eq "a fresh device is free" "$free0" "$((4 << 30))"

# hold WHAT BYTES: a process holding WHAT is charged BYTES, seen from
# another process, until it is killed.
hold() {
	local what=$1 bytes=$2 pid
	"$C" hold "$what" >"$TMP/hold.$what" &
	pid=$!
	wait_for "$what: the holder is ready" 10 grep -q ready "$TMP/hold.$what"
	check_eq "$what: charged as another process sees it" \
		"$("$C" free 0)" "$((free0 - bytes))"
	kill -9 "$pid"
	wait "$pid" 2>/dev/null
	wait_for "$what: returned when the holder is killed" 10 \
		test "$("$C" free 0)" = "$free0"
}
hold pool $((8 << 20))		# freed, cached by a pool that keeps it
hold vmm $((64 << 20))		# released, still mapped
hold array $((4 << 20))		# 1000x1000 floats: 4096-byte rows, 2 MiB pages
hold all $((76 << 20))
finish
