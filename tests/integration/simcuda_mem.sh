# The simulated driver's pools, VMM and arrays (tests/simcuda), without the
# shim: their checks (and those of its graphs), then what a process holding each kind of memory is
# charged as another process sees it, and that SIGKILL returns it, after
# SIMCUDA_RELEASE_DELAY_MS if the holder has one.
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/sim_mem_linked

for p in sim_arrays_linked sim_vmm_linked sim_pools_linked sim_mem_linked \
    sim_graph_linked; do
	check "$p passes" "$CLIENTS/$p"
done
# Exported VMM memory a live process still holds stays charged after its
# exporter died, the release delay or not (its other memory comes back
# after the delay, which wait_free's poll allows).
check "sim_vmm_linked passes with a release delay" \
	env SIMCUDA_RELEASE_DELAY_MS=500 "$CLIENTS/sim_vmm_linked"

export SIMCUDA_DEVICES=4Gi
rm -f "/dev/shm/simcuda-$SIMCUDA_STATE"
free0=$("$C" free 0)
check_eq "a fresh device is free" "$free0" "$((4 << 30))"

# free_is BYTES: device 0 has BYTES free (checked anew each time).
free_is() { test "$("$C" free 0)" = "$1"; }

# hold WHAT BYTES [DELAY_MS]: a process holding WHAT is charged BYTES,
# seen from another process, until it is killed; with a release delay
# (its SIMCUDA_RELEASE_DELAY_MS) until that long after another process
# noticed its death (the first "free" does), and meanwhile it cannot be
# allocated.
hold() {
	local what=$1 bytes=$2 delay=${3:-0} pid
	SIMCUDA_RELEASE_DELAY_MS=$delay "$C" hold "$what" >"$TMP/hold.$what" &
	pid=$!
	wait_for "$what: the holder is ready" 10 grep -q ready "$TMP/hold.$what"
	check_eq "$what: charged as another process sees it" \
		"$("$C" free 0)" "$((free0 - bytes))"
	kill -9 "$pid"
	wait "$pid" 2>/dev/null
	[ "$delay" -gt 0 ] && check_eq "$what: still held after the kill" \
		"$("$C" free 0; "$CLIENTS/sim_check_linked" take \
		    $((free0 - bytes + 512)) 0)" \
		"$((free0 - bytes))
CUDA_ERROR_OUT_OF_MEMORY"
	wait_for "$what: returned when the holder is killed" 10 \
		free_is "$free0"
}
hold pool $((8 << 20))		# freed, cached by a pool that keeps it
hold vmm $((64 << 20))		# released, still mapped
hold array $((4 << 20))		# 1000x1000 floats: 4096-byte rows, 2 MiB pages
hold all $((76 << 20))
# 3 s leaves the two processes after the noticing one ample time.
hold all $((76 << 20)) 3000
finish
