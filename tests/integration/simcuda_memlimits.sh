# The simulated driver's memory limits per cgroup (driver r615's
# nvmlDeviceSetMemoryLimits_v1 and nvmlDeviceGetMemoryLimits_v1), without
# gpufrac: absent unless SIMCUDA_MEMLIMITS=1, as in a driver before r615;
# with it, a cgroup's hard limit holds for every process of its subtree
# (no shim here), counting them all, and cuMemGetInfo shows the limit;
# setting needs root, reading does not, MIG is refused; a cgroup never
# limited, or cleared, reads NOT_FOUND.
. "$(dirname "$0")/lib.sh"
Q=$CLIENTS/nvml_query
CU=$CLIENTS/cuclient_linked
MiB=$((1 << 20))
GiB=$((1 << 30))
export SIMCUDA_DEVICES=4Gi,4Gi

. "$(dirname "$0")/cgroup_lib.sh"
CG=$CG2/gpufrac-test-$$-walls
cgroups_make "$CG" "$CG/a" "$CG/b"


check_eq "a driver before r615 has neither function" \
	"$("$Q" limset 0 "$CG" 0 "$GiB" limget 0 "$CG")" \
	"limset absent
limget absent"

export SIMCUDA_MEMLIMITS=1
check_eq "a cgroup never limited reads NOT_FOUND" "$("$Q" limget 0 "$CG")" \
	"limget err=6"
check_eq "a soft limit above the hard one is refused" \
	"$("$Q" limset 0 "$CG" "$GiB" $((512 * MiB)))" "limset err=2"
check_eq "a directory that is not there is NOT_FOUND" \
	"$("$Q" limset 0 "$CG/none" 0 "$GiB")" "limset err=6"
nobody_setup
check_eq "setting needs root" \
	"$("${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" "$Q" limset 0 "$CG" 0 "$GiB")" \
	"limset err=4"
check_eq "a GPU in MIG mode says so and refuses them" \
	"$(SIMCUDA_MIG=1 "$Q" limset 0 "$CG" 0 "$GiB" limget 0 "$CG")" \
	"limset err=3
limget err=6"
check_eq "root sets soft 512 MiB, hard 1 GiB" \
	"$("$Q" limset 0 "$CG" $((512 * MiB)) "$GiB")" "limset ok"
check_eq "anyone reads it" \
	"$("${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" "$Q" limget 0 "$CG")" \
	"limget soft=$((512 * MiB)) hard=$GiB used=0"

# Two processes in two children of the limited cgroup: the nearest
# limited ancestor's limit holds for both together.
client_start one sh -c "$IN_CG" "$CG/a" "$CU" -p linked info alloc $((768 * MiB)) hold
check_eq "cuMemGetInfo in the cgroup shows the hard limit" \
	"$(head -n 2 "$TMP/one.out")" "info free=$GiB total=$GiB
alloc ok"
check_eq "what the cgroup holds is read back" "$("$Q" limget 0 "$CG")" \
	"limget soft=$((512 * MiB)) hard=$GiB used=$((768 * MiB))"
check_eq "past the hard limit, out of memory, counting the other process" \
	"$(sh -c "$IN_CG" "$CG/b" "$CU" -p linked info alloc $((512 * MiB)) \
	    alloc $((256 * MiB)) info)" \
	"info free=$((256 * MiB)) total=$GiB
alloc err=2
alloc ok
info free=0 total=$GiB"
check_eq "outside the cgroup, the device's room" \
	"$("$CU" -p linked info alloc $((2 * GiB)))" \
	"info free=$((4 * GiB - 768 * MiB)) total=$((4 * GiB))
alloc ok"
check_eq "a limit is the device's own: the other device is not limited" \
	"$(sh -c "$IN_CG" "$CG/b" "$CU" -p linked dev 1 info alloc $((2 * GiB)))" \
	"info free=$((4 * GiB)) total=$((4 * GiB))
alloc ok"

check_eq "cleared (soft 0, hard max)" "$("$Q" limset 0 "$CG" 0 max \
	limget 0 "$CG")" "limset ok
limget err=6"
check_eq "then the cgroup has the device's room" \
	"$(sh -c "$IN_CG" "$CG/b" "$CU" -p linked alloc $((2 * GiB)))" "alloc ok"
client_release one
finish
