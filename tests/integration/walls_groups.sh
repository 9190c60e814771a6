# The driver's walls match the groups (issue 39 C), on the simulated
# driver's walls (SIMCUDA_MEMLIMITS=1):
# 5. The driver counts a cgroup's whole subtree against its wall, inner
#    walls included; the daemon's groups are disjoint. An outer group's
#    wall is its limit plus the inner groups' limits, so that what the
#    inner group holds never takes the outer's room. A sibling whose
#    path merely starts with the same name is not inside it.
# 6. A cgroup whose processes a group before its own may hold (by uid,
#    gid or a pattern) gets no wall: it would be the wrong group's. An
#    earlier group naming another cgroup does not shadow it.
# 7. The driver keys walls by directory: a cgroup made again at the same
#    path has none. Each look reads every wall back and sets it again,
#    a reload does too, and status counts only the walls the driver holds.
# shellcheck disable=SC2154	# PID_* are client_start's
export SIMCUDA_DEVICES=8Gi
. "$(dirname "$0")/lib.sh"
CU=$CLIENTS/cuclient_linked
PRE="LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM"
conf=$TMP/gpufrac.conf
MiB=$((1 << 20))
GiB=$((1 << 30))

. "$(dirname "$0")/cgroup_lib.sh"
command -v setpriv >/dev/null || skip "no setpriv to run as nobody"
NAME=gpufrac-test-$$-wg
OUT=$CG2/$NAME			# outer, with IN inside it
IN=$OUT/in
SIDE=$CG2/$NAME-side		# a sibling: its name starts as OUT's
W=$CG2/$NAME-w			# walled, or shadowed
cgroups_make "$OUT" "$IN" "$SIDE" "$W"
export SIMCUDA_MEMLIMITS=1
mkdir -m 0700 "$TMP/state"

# limits DIR: the driver's limits of cgroup DIR on device 0.
limits() { "$CLIENTS/nvml_query" limget 0 "$1"; }
# unshimmed DIR ARGS: cuclient without the shim, in cgroup DIR.
unshimmed() { local d=$1; shift; sh -c "$IN_CG" "$d" env -u LD_PRELOAD \
	"$CU" -p linked "$@"; }
driver_groups() { ctl status | grep 'driver limits'; }

# 5. Nested cgroups.
cat >"$conf" <<EOF
[daemon]
state_dir = $TMP/state
[group outer]
match = cgroup:/$NAME
limit = 1Gi
[group inner]
match = cgroup:/$NAME/in
limit = 4Gi
guarantee = 512Mi
[group side]
match = cgroup:/$NAME-side
limit = 1Gi
EOF
daemon_start
# sh execs the client: client_release signals the client itself.
client_start inner sh -c "$IN_CG" "$IN" env -u LD_PRELOAD "$CU" -p linked \
	alloc $((2 * GiB)) hold
wait_for "the inner group's process holds 2GiB" 10 sh -c \
	"'$CLIENTS/nvml_query' limget 0 '$IN' | grep -q 'used=$((2 * GiB))'"
check_eq "the simulated driver counts the subtree against the outer wall" \
	"$(limits "$OUT" | sed 's/.*used=/used=/')" "used=$((2 * GiB))"
check_eq "the outer wall is its limit plus the inner group's" \
	"$(limits "$OUT")" \
	"limget soft=$((512 * MiB)) hard=$((5 * GiB)) used=$((2 * GiB))"
check_eq "so the outer group's first 256MiB without the shim is taken" \
	"$(unshimmed "$OUT" alloc $((256 * MiB)))" "alloc ok"
check_eq "and with the shim" \
	"$(sh -c "$IN_CG" "$OUT" env "$PRE" "$CU" -p linked \
	    alloc $((256 * MiB)))" "alloc ok"
check_eq "the inner wall is its own group's" "$(limits "$IN")" \
	"limget soft=$((512 * MiB)) hard=$((4 * GiB)) used=$((2 * GiB))"
check_eq "and still holds the inner group at its limit" \
	"$(unshimmed "$IN" alloc $((2560 * MiB)))" "alloc err=2"
check_eq "a sibling named alike is not inside: its wall is its own" \
	"$(limits "$SIDE")" "limget soft=0 hard=$GiB used=0"
client_release inner
daemon_stop

# 6. A uid group first: it may hold the cgroup's processes.
nobody_setup
cat >"$conf" <<EOF
[daemon]
state_dir = $TMP/state
[group byuid]
match = uid:65534
limit = 4Gi
[group walled]
match = cgroup:/$NAME-w
limit = 1Gi
EOF
daemon_start
check_eq "a cgroup a uid group before its own may hold gets no wall" \
	"$(limits "$W")" "limget err=6"
check "and the log says why, naming both groups" grep -q \
	"group 'walled': no driver limit on cgroup '/$NAME-w': group 'byuid' comes first" \
	"$TMP/gpufracd.log"
check_eq "a byuid process in it takes the 2GiB its group allows, unshimmed" \
	"$(sh -c "$IN_CG" "$W" "${AS_NOBODY[@]}" env -u LD_PRELOAD "$CU" \
	    -p linked alloc $((2 * GiB)))" "alloc ok"
check_eq "and with the shim" \
	"$(sh -c "$IN_CG" "$W" "${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" env \
	    "$PRE" "$CU" -p linked alloc $((2 * GiB)))" "alloc ok"
check_eq "status counts no wall" "$(driver_groups)" \
	"device 0: driver limits: on (0 groups)"
cat >"$conf" <<EOF
[daemon]
state_dir = $TMP/state
[group side]
match = cgroup:/$NAME-side
limit = 4Gi
[group walled]
match = cgroup:/$NAME-w
limit = 1Gi
[group byuid]
match = uid:65534
limit = 4Gi
EOF
ctl reload
check_eq "after another cgroup's group and before the uid group, it has it" \
	"$(limits "$W")" "limget soft=0 hard=$GiB used=0"

# 7. The cgroup made again at its path. While it is gone (no look can
# set its wall again), status counts only the wall the driver holds.
rmdir "$W"
check_eq "a cgroup gone is not counted, and the daemon runs" \
	"$(driver_groups)" "device 0: driver limits: on (1 group)"
mkdir "$W"
wait_for "the next look sets it again" 10 sh -c \
	"'$CLIENTS/nvml_query' limget 0 '$W' | grep -q 'hard=$GiB'"
check_eq "counted again" "$(driver_groups)" \
	"device 0: driver limits: on (2 groups)"
check_eq "so 3GiB without the shim is refused by the driver" \
	"$(unshimmed "$W" alloc $((3 * GiB)))" "alloc err=2"
check "an event says it was set again" sh -c \
	"'$GPUFRACCTL' -s '$GPUFRAC_SOCKET' events | grep -q \
	    \"group 'walled': the driver's limit of '$W' was not as set: set again\""
check_eq "a wall the driver holds as set is left alone by the same look" \
	"$(ctl events | grep -c "limit of '$SIDE' was not as set")" "0"
check_eq "the journal names its directory once" \
	"$(grep -c "$W\$" "$TMP/state/driver-walls")" "1"
rmdir "$W" && mkdir "$W"
ctl reload
check_eq "a reload sets it again at once" "$(limits "$W")" \
	"limget soft=0 hard=$GiB used=0"
finish
