# NVML's memory queries through the shim (nvidia-smi inside a limited
# process or container): the total is the limit (the group's, for a group
# that shares one), free what is left of it, never more than the device
# has free, used the rest; pynvml's dlsym path gets the same. Its process
# listings keep the group's processes.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
Q=$CLIENTS/nvml_query
GiB=$((1 << 30))
MiB=$((1 << 20))

printf '[group shared]\nmatch = uid:65534\nlimit = 2Gi\n' >"$TMP/gpufrac.conf"
daemon_start
nobody_setup
check_eq "without the shim, NVML shows the device" "$("$Q" mem 0)" \
	"mem 0 total=$((4 * GiB)) used=0 free=$((4 * GiB))"
check_eq "a process's own limit" "$(GPUFRAC_MEMORY_LIMIT=1Gi preload "$Q" mem 0)" \
	"mem 0 total=$GiB used=0 free=$GiB"
client_start a preload "$C" alloc 3584Mi hold
check_eq "never more free than the device has; used is the rest" \
	"$(GPUFRAC_MEMORY_LIMIT=1Gi preload "$Q" mem 0)" \
	"mem 0 total=$GiB used=$((512 * MiB)) free=$((512 * MiB))"
client_release a
client_start b "${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" env \
	"LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM" "$C" alloc 1536Mi hold
check_eq "in a group: its limit, and what its processes hold" \
	"$("${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" env \
	    "LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM" "$Q" mem 0)" \
	"mem 0 total=$((2 * GiB)) used=$((1536 * MiB)) free=$((512 * MiB))"
check_eq "pynvml's way (ctypes, dlsym) sees the same" \
	"$(GPUFRAC_MEMORY_LIMIT=1Gi preload "$PYTHON" -c '
import ctypes
nv = ctypes.CDLL("libnvidia-ml.so.1")
class Mem(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]
h = ctypes.c_void_p()
m = Mem()
assert nv.nvmlInit_v2() == 0
assert nv.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h)) == 0
assert nv.nvmlDeviceGetMemoryInfo(h, ctypes.byref(m)) == 0
print(m.total, m.used, m.free)')" "$GiB 0 $GiB"
client_start r preload "$C" alloc 256Mi hold
# The query client also checks that the list is as long as NVML's size
# probe said; a list the shim reduced is shorter, so only its line counts.
procs_of() { "$@" "$Q" procs 0 | grep '^procs' | sed 's/=[0-9]*//g'; }
check_eq "NVML lists every process without the shim" \
	"$(procs_of env)" "$(printf 'procs 0 %s\n' \
	    "$(printf '%s\n' "$PID_b" "$PID_r" | sort -n | tr '\n' ' ' |
	    sed 's/ $//')")"
check_eq "in a group, its processes only" \
	"$(procs_of "${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" env \
	    "LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM")" "procs 0 $PID_b"
check_eq "in the default group, the process itself only" \
	"$(procs_of env "LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM")" "procs 0"
client_release r
client_release b
finish
