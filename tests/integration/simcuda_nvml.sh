# The simulated NVML (tests/simcuda/libnvidia-ml.so.1) on its own, without
# the shim: its API contract, every device in PCI order whatever
# CUDA_VISIBLE_DEVICES says, and memory and processes exactly as simcuda
# clients hold them, contexts included, and after they die as long as
# SIMCUDA_RELEASE_DELAY_MS says.
. "$(dirname "$0")/lib.sh"
Q=$CLIENTS/nvml_query
CU=$CLIENTS/cuclient_linked
MiB=$((1 << 20))
GiB=$((1 << 30))
export SIMCUDA_DEVICES=8Gi,4Gi SIMCUDA_CONTEXT_BYTES=1Mi

# mem_line INDEX TOTAL USED: what "nvml_query mem INDEX" should print.
mem_line() {
	echo "mem $1 total=$2 used=$3 free=$(($2 - $3))"
}

# procs_line INDEX PID=BYTES...: what "nvml_query procs INDEX" should print.
procs_line() {
	local idx=$1; shift
	echo "procs $idx${*:+ }$(printf '%s\n' "$@" | sort -t= -k1,1n |
	    paste -sd' ')"
}

check_eq "the API's contract" "$("$Q" api)" "api ok"
check_eq "two devices" "$("$Q" count)" "count 2"
check_eq "idle devices" "$("$Q" mem 0 mem 1 procs 0 procs 1)" \
	"$(mem_line 0 $((8 * GiB)) 0; mem_line 1 $((4 * GiB)) 0
procs_line 0; procs_line 1)"

# Identity: the simulated driver's UUIDs, NVML's own indices.
check_eq "UUIDs as cuDeviceGetUuid gives them, in the same order" \
	"$("$Q" dev 0 dev 1 | awk '{ print $3 }')" \
	"$("$CLIENTS/sim_check_linked" list | awk '{ print $5 }')"
all=$("$Q" count dev 0 dev 1)
check_eq "CUDA_VISIBLE_DEVICES=1 changes no NVML index" \
	"$(CUDA_VISIBLE_DEVICES=1 "$Q" count dev 0 dev 1)" "$all"
check_eq "nor does an empty CUDA_VISIBLE_DEVICES" \
	"$(CUDA_VISIBLE_DEVICES= "$Q" count dev 0 dev 1)" "$all"
uuid1=$("$Q" dev 1 | awk '{ print $3 }')
check_eq "a device by its UUID" "$("$Q" uuid "$uuid1")" "uuid 1"
check_eq "in upper case too" \
	"$("$Q" uuid "GPU-$(echo "${uuid1#GPU-}" | tr a-f A-F)")" "uuid 1"
check_eq "an unknown UUID is NVML_ERROR_NOT_FOUND" \
	"$("$Q" uuid GPU-00000000-0000-0000-0000-000000000000)" "uuid err=6"
check_eq "so is a UUID prefix" \
	"$("$Q" uuid "$(echo "$uuid1" | cut -c1-12)")" "uuid err=6"

# Without a device nvmlInit fails unless told not to.
none=$SIMCUDA_STATE-none
check_eq "no device: NVML_ERROR_GPU_NOT_FOUND" \
	"$(SIMCUDA_STATE=$none SIMCUDA_DEVICES= "$Q" init 0)" "init err=28"
check_eq "unless NVML_INIT_FLAG_NO_GPUS" \
	"$(SIMCUDA_STATE=$none SIMCUDA_DEVICES= "$Q" init 1 count)" \
	"init ok
count 0"
rm -f "/dev/shm/simcuda-$none"

# A client holding 256Mi and its 1Mi context on device 1, its CUDA
# ordinal 0 (cuclient makes ordinal 0's context current first).
CUDA_VISIBLE_DEVICES=1 client_start a "$CU" alloc 256Mi hold
a=$((257 * MiB))
check_eq "device 1 has its allocation and context in use" \
	"$("$Q" mem 1)" "$(mem_line 1 $((4 * GiB)) $a)"
check_eq "device 0 has nothing in use" "$("$Q" mem 0)" \
	"$(mem_line 0 $((8 * GiB)) 0)"
check_eq "device 1 lists its pid and bytes" "$("$Q" procs 1)" \
	"$(procs_line 1 "$PID_a=$a")"
check_eq "device 0 lists nothing" "$("$Q" procs 0)" "$(procs_line 0)"
check_eq "cuMemGetInfo in another process agrees (its context aside)" \
	"$("$CU" dev 1 info)" "info free=$((4 * GiB - a - MiB)) total=$((4 * GiB))"

# One on device 0; one with a context on both, and 1Mi on device 1.
client_start b "$CU" alloc 100Mi hold
b=$((101 * MiB))
client_start c "$CU" dev 1 alloc 1Mi hold
c0=$MiB c1=$((2 * MiB))
check_eq "each device lists its processes with their bytes there" \
	"$("$Q" procs 0 procs 1)" \
	"$(procs_line 0 "$PID_b=$b" "$PID_c=$c0"
	procs_line 1 "$PID_a=$a" "$PID_c=$c1")"
check_eq "and counts their memory" "$("$Q" mem 0 mem 1)" \
	"$(mem_line 0 $((8 * GiB)) $((b + c0))
	mem_line 1 $((4 * GiB)) $((a + c1)))"

# NVML and the simulated driver in one process see the same machine.
out=$(CUDA_VISIBLE_DEVICES=1 "$Q" pid cuda 0 64Mi procs 1)
self=$(echo "$out" | awk '$1 == "pid" { print $2 }')
check_eq "a process's own memory, through libcuda in the same process" \
	"$(echo "$out" | sed 1d)" "cuda ok
$(procs_line 1 "$PID_a=$a" "$PID_c=$c1" "$self=$((65 * MiB))")"
check_eq "and none of it once that process has exited" "$("$Q" procs 1)" \
	"$(procs_line 1 "$PID_a=$a" "$PID_c=$c1")"

# Memory comes back when a process exits or is killed.
client_release a
check_eq "exited: gone from the list and the use" "$("$Q" procs 1 mem 1)" \
	"$(procs_line 1 "$PID_c=$c1"; mem_line 1 $((4 * GiB)) $c1)"
kill -KILL "$PID_b"
wait "$PID_b" 2>/dev/null
check_eq "killed: gone too" "$("$Q" procs 0 mem 0)" \
	"$(procs_line 0 "$PID_c=$c0"; mem_line 0 $((8 * GiB)) $c0)"

# With a release delay (issue 20), a killed process's memory, contexts and
# managed memory included, stays used after its death is noticed (by the
# procs query), held by no process NVML lists, until the delay has passed.
client_start d env SIMCUDA_RELEASE_DELAY_MS=2000 "$CU" alloc 32Mi \
	managed 32Mi hold
d=$((65 * MiB))
kill -KILL "$PID_d"
wait "$PID_d" 2>/dev/null
check_eq "killed with a release delay: not listed, still used" \
	"$("$Q" procs 0 mem 0)" \
	"$(procs_line 0 "$PID_c=$c0"; mem_line 0 $((8 * GiB)) $((c0 + d)))"
mem_is() { test "$("$Q" mem 0)" = "$(mem_line 0 $((8 * GiB)) "$1")"; }
wait_for "and free once the delay has passed" 10 mem_is "$c0"
client_release c
finish
