# The simulated driver (tests/simcuda) on its own, without the shim: its
# checks, device selection by CUDA_VISIBLE_DEVICES, capacity contended by
# processes starting at once, and numba running on it.
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/sim_check_linked

check "sim_check_linked passes" "$C"

# Devices are listed as "ORDINAL NAME UUID TOTAL".
export SIMCUDA_DEVICES=8Gi,4Gi,2Gi
names() {
	"$C" list | awk '{ printf "%s%s", sep, $4; sep = "," } END { print "" }'
}
uuid1=$("$C" list | awk '$1 == 1 { print $5 }')
check_eq "all devices in order" "$(names)" "0,1,2"
check_eq "ordinals follow CUDA_VISIBLE_DEVICES" \
	"$(CUDA_VISIBLE_DEVICES=2,0 names)" "2,0"
check_eq "ordinal 0 has the first listed device's memory" \
	"$(CUDA_VISIBLE_DEVICES=2,0 "$C" list | awk '$1 == 0 { print $6 }')" \
	"$((2 << 30))"
check_eq "a device chosen by UUID" "$(CUDA_VISIBLE_DEVICES=$uuid1 names)" "1"
check_eq "by UUID prefix, mixed with an index" \
	"$(CUDA_VISIBLE_DEVICES="$(echo "$uuid1" | cut -c1-12),0" names)" "1,0"
check_eq "the list ends at an invalid entry" \
	"$(CUDA_VISIBLE_DEVICES=1,7,0 names)" "1"
check_eq "the list ends at a repeated entry" \
	"$(CUDA_VISIBLE_DEVICES=2,1,2,0 names)" "2,1"
check_eq "an ambiguous UUID prefix is invalid" \
	"$(CUDA_VISIBLE_DEVICES=GPU- "$C" list)" "CUDA_ERROR_NO_DEVICE"
check_eq "empty: no device" "$(CUDA_VISIBLE_DEVICES= "$C" list)" \
	"CUDA_ERROR_NO_DEVICE"
check_eq "-1: no device" "$(CUDA_VISIBLE_DEVICES=-1 "$C" list)" \
	"CUDA_ERROR_NO_DEVICE"

# Eight processes start at once on a fresh 4Gi device; four 1Gi fit.
export SIMCUDA_DEVICES=4Gi
rm -f "/dev/shm/simcuda-$SIMCUDA_STATE"
for i in 1 2 3 4 5 6 7 8; do
	"$C" take $((1 << 30)) 2 >"$TMP/take.$i" &
done
wait
check_eq "capacity is shared by processes starting at once" \
	"$(cat "$TMP"/take.* | sort | uniq -c | awk '{ print $1, $2 }')" \
	"4 CUDA_ERROR_OUT_OF_MEMORY
4 ok"
check_eq "and returned when they exit" "$("$C" take $((4 << 30)) 0)" "ok"
check_eq "a bad SIMCUDA_RELEASE_DELAY_MS is said, and 0 used" \
	"$(SIMCUDA_RELEASE_DELAY_MS=2s "$C" take 512 0 2>&1)" \
	"simcuda: bad SIMCUDA_RELEASE_DELAY_MS '2s': using 0
ok"

# numba's ctypes bindings on the simulator, without the shim.
rm -f "/dev/shm/simcuda-$SIMCUDA_STATE"
if "$PYTHON" -c 'import numba' 2>/dev/null; then
	out=$(ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 LD_PRELOAD=$SAN_RT "$PYTHON" -c '
from numba import cuda; import numpy as np
a = cuda.to_device(np.arange(1000))
print(a.copy_to_host().sum(), cuda.current_context().get_memory_info())' 2>&1)
	check_eq "numba runs on the simulator" "$out" \
		"499500 MemoryInfo(free=$(((4 << 30) - 8192)), total=$((4 << 30)))"
else
	echo "# $PYTHON has no numba: its check is skipped"
fi
finish
