# The driver's walls (issue 31 C): where the driver has memory limits per
# cgroup (r615; the simulated one with SIMCUDA_MEMLIMITS=1), a group that
# names a cgroup gets its limit as the driver's hard limit and its
# guarantee as soft, on the cgroup's directory: a process in it without
# the shim (no LD_PRELOAD, or GPUFRAC_DISABLE=1) gets out of memory from
# the driver itself at the group's limit and sees the limit in
# cuMemGetInfo. The wall changes at once with a reload or a run-time
# group change, and is cleared when its group goes and when the daemon
# stops. A uid group gets none; a wall that cannot be set is an event,
# never a failed start. `gpufracctl status` says per device whether
# driver limits are on, and why not: no such function, not root, MIG.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
Q=$CLIENTS/nvml_query
CU=$CLIENTS/cuclient_linked
PRE="LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM"
conf=$TMP/gpufrac.conf
MiB=$((1 << 20))
GiB=$((1 << 30))

. "$(dirname "$0")/cgroup_lib.sh"
command -v setpriv >/dev/null || skip "no setpriv to run as nobody"
NAME=gpufrac-test-$$-walls
CG=$CG2/$NAME
RT=$CG2/$NAME-rt
cgroups_make "$CG" "$RT"

# limits DIR: the driver's limits of cgroup DIR on device 0.
limits() { SIMCUDA_MEMLIMITS=1 "$Q" limget 0 "$1"; }
# dlim FIELD: status --json's driver_limits FIELD of device 0.
dlim() { ctl status --json | json "j['devices'][0]['driver_limits']['$1']"; }

write_conf() {	# LIMIT
	cat >"$conf" <<EOF
[group walled]
match = cgroup:/$NAME
limit = $1
guarantee = 512Mi
[group ghost]
match = cgroup:/$NAME-none
limit = 1Gi
[group byuid]
match = uid:65534
limit = 1Gi
EOF
}
write_conf 1Gi

# A driver before r615.
daemon_start
check_eq "without the functions, status says driver limits are off, and why" \
	"$(ctl status | grep 'driver limits')" \
	"device 0: driver limits: off: no such function in this driver"
check_eq "and so does --json" \
	"$(dlim available) $(dlim groups) $(dlim reason)" \
	"False 0 no such function in this driver"
check_eq "no wall is set" "$(limits "$CG")" "limget err=6"
check_eq "an unshimmed process in the cgroup takes past the group's limit" \
	"$(sh -c "$IN_CG" "$CG" "$CU" -p linked alloc $((1536 * MiB)))" "alloc ok"
daemon_stop

# Run as a user who may not set them.
nobody_setup
mkdir -m 0777 "$TMP/nobody/run"
cp "$conf" "$TMP/nobody/gpufrac.conf"
chmod 0644 "$TMP/nobody/gpufrac.conf"
SIMCUDA_MEMLIMITS=1 "${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" "$GPUFRACD" -f \
	-s "$TMP/nobody/run/sock" -c "$TMP/nobody/gpufrac.conf" \
	2>>"$TMP/nobody.log" &
NOBODY_PID=$!
wait_for "a daemon of user nobody starts" 10 \
	"$GPUFRACCTL" -s "$TMP/nobody/run/sock" status
check_eq "which says: not root" "$("$GPUFRACCTL" -s "$TMP/nobody/run/sock" \
	status | grep 'driver limits')" "device 0: driver limits: off: not root"
kill -TERM "$NOBODY_PID"
wait "$NOBODY_PID"

# A GPU in MIG mode, which the driver's limits refuse.
SIMCUDA_MEMLIMITS=1 SIMCUDA_MIG=1 daemon_start
check_eq "in MIG mode, they are off: MIG" \
	"$(ctl status | grep 'driver limits')" "device 0: driver limits: off: MIG"
check_eq "and no wall is set" "$(limits "$CG")" "limget err=6"
daemon_stop

export SIMCUDA_MEMLIMITS=1
daemon_start
check_eq "with them, on for the one group with a cgroup that is there" \
	"$(ctl status | grep 'driver limits')" \
	"device 0: driver limits: on (1 group)"
check_eq "--json too" "$(dlim available) $(dlim groups)" "True 1"
check_eq "the cgroup's wall: hard the group's limit, soft its guarantee" \
	"$(limits "$CG")" "limget soft=$((512 * MiB)) hard=$GiB used=0"
check "a cgroup that is not there is an event, and the daemon runs" sh -c \
	"'$GPUFRACCTL' -s '$GPUFRAC_SOCKET' events | grep driver-limit |
	    grep -q \"group 'ghost': cannot set the driver's limit of '$CG-none'\""

check_eq "without LD_PRELOAD, the driver itself stops it at the limit" \
	"$(sh -c "$IN_CG" "$CG" env -u LD_PRELOAD "$CU" -p linked info \
	    alloc $((768 * MiB)) alloc $((512 * MiB)))" \
	"info free=$GiB total=$GiB
alloc ok
alloc err=2"
check_eq "with the shim disabled, the same" \
	"$(sh -c "$IN_CG" "$CG" env "$PRE" GPUFRAC_DISABLE=1 "$CU" -p linked \
	    alloc $((768 * MiB)) alloc $((512 * MiB)))" "alloc ok
alloc err=2"
client_start held sh -c "$IN_CG" "$CG" env -u LD_PRELOAD "$CU" -p linked \
	alloc $((768 * MiB)) hold
check_eq "the wall holds the cgroup's processes together" \
	"$(sh -c "$IN_CG" "$CG" env -u LD_PRELOAD "$CU" -p linked info \
	    alloc $((512 * MiB)))" \
	"info free=$((256 * MiB)) total=$GiB
alloc err=2"
client_release held
check_eq "a uid group gets no wall: its unshimmed process is not stopped" \
	"$("${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" env -u LD_PRELOAD "$CU" \
	    -p linked alloc $((1536 * MiB)))" "alloc ok"

write_conf 2Gi
ctl reload
check_eq "a reload that raises the limit raises the wall at once" \
	"$(limits "$CG")" "limget soft=$((512 * MiB)) hard=$((2 * GiB)) used=0"
check_eq "so the process in it may take more" \
	"$(sh -c "$IN_CG" "$CG" env -u LD_PRELOAD "$CU" -p linked alloc $((1536 * MiB)))" \
	"alloc ok"

ctl group set job --cgroup "/$NAME-rt" --limit 1Gi
check_eq "a run-time group's cgroup gets its wall" "$(limits "$RT")" \
	"limget soft=0 hard=$GiB used=0"
check_eq "status counts it" "$(ctl status | grep 'driver limits')" \
	"device 0: driver limits: on (2 groups)"
ctl group set job --cgroup "/$NAME-rt" --limit 512Mi
check_eq "changed at once with the group" "$(limits "$RT")" \
	"limget soft=0 hard=$((512 * MiB)) used=0"
check_eq "and held at once" \
	"$(sh -c "$IN_CG" "$RT" env -u LD_PRELOAD "$CU" -p linked alloc $((768 * MiB)))" \
	"alloc err=2"
ctl group rm job
check_eq "cleared when the group goes" "$(limits "$RT")" "limget err=6"

printf '[group byuid]\nmatch = uid:65534\nlimit = 1Gi\n' >"$conf"
ctl reload
check_eq "cleared when a reload removes its group" "$(limits "$CG")" \
	"limget err=6"
check_eq "none left" "$(ctl status | grep 'driver limits')" \
	"device 0: driver limits: on (0 groups)"

write_conf 1Gi
ctl reload
check_eq "set again" "$(limits "$CG")" \
	"limget soft=$((512 * MiB)) hard=$GiB used=0"
daemon_stop
check_eq "cleared when the daemon stops" "$(limits "$CG")" "limget err=6"
finish
