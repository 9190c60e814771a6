# The driver's walls are journalled (issue 38 E, point 5): before gpufracd
# sets a wall it writes it to its own file in state_dir, so that a daemon
# killed with walls in force leaves none behind for good. Started again
# with a configuration that no longer has the group, it clears the
# cgroup's wall (an allocation of 1.5 GiB there succeeds, and status says
# so); with one that still has it, the wall stays.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
Q=$CLIENTS/nvml_query
CU=$CLIENTS/cuclient_linked
conf=$TMP/gpufrac.conf
MiB=$((1 << 20))
GiB=$((1 << 30))

. "$(dirname "$0")/cgroup_lib.sh"
NAME=gpufrac-test-$$-journal
CG=$CG2/$NAME
cgroups_make "$CG"
export SIMCUDA_MEMLIMITS=1
mkdir -m 0700 "$TMP/state"
J=$TMP/state/driver-walls

limits() { "$Q" limget 0 "$CG"; }
dlim() { ctl status | grep -A9 'driver limits' | grep -e 'driver limits' -e '^  wall'; }
alloc_in_cg() {
	sh -c "$IN_CG" "$CG" env -u LD_PRELOAD "$CU" -p linked alloc $((1536 * MiB))
}
daemon_kill() {
	kill -KILL "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
}
walled_conf() {
	printf '[daemon]\nstate_dir = %s\n[group walled]\nmatch = cgroup:/%s\nlimit = 1Gi\nguarantee = 512Mi\n' \
	    "$TMP/state" "$NAME" >"$conf"
}
unwalled_conf() {
	printf '[daemon]\nstate_dir = %s\n[group byuid]\nmatch = uid:65534\nlimit = 1Gi\n' \
	    "$TMP/state" >"$conf"
}

walled_conf
daemon_start
check_eq "the cgroup has its wall" "$(limits)" \
	"limget soft=$((512 * MiB)) hard=$GiB used=0"
check_eq "journalled in state_dir, the daemon's own file" \
	"$(stat -c '%u %a' "$J") $(grep -c " $CG\$" "$J")" "0 600 1"

# --- killed, restarted with the same group: the wall stays -------------
daemon_kill
daemon_start
check_eq "restarted with the group, the wall is still in force" \
	"$(limits)" "limget soft=$((512 * MiB)) hard=$GiB used=0"
check_eq "status lists it, read back from the driver" "$(dlim)" \
	"device 0: driver limits: on (1 group)
  wall of group 'walled' on '$CG': hard 1.0GiB, soft 512.0MiB, used 0B"
check_eq "--json too" "$(ctl status --json |
	json "[(w['cgroup'], w['group'], w['hard_bytes']) for w in j['devices'][0]['driver_limits']['walls']]")" \
	"[('$CG', 'walled', $GiB)]"
check_eq "and 1.5 GiB in the cgroup is refused by the driver" \
	"$(alloc_in_cg)" "alloc err=2"

# --- killed, restarted without it: the wall goes --------------------------
daemon_kill
check_eq "a killed daemon leaves its wall" "$(limits)" \
	"limget soft=$((512 * MiB)) hard=$GiB used=0"
unwalled_conf
daemon_start
check_eq "restarted without the group, the cgroup loses its wall" \
	"$(limits)" "limget err=6"
check_eq "so 1.5 GiB there is granted" "$(alloc_in_cg)" "alloc ok"
check_eq "status tells the truth: no wall" "$(dlim)" \
	"device 0: driver limits: on (0 groups)"
check_eq "and the journal holds nothing" "$(grep -c '^GPU-' "$J")" 0
check "the daemon said so" grep -q \
	"driver limit of '$CG' on device 0 cleared" "$TMP/gpufracd.log"

# --- a clean stop clears its walls, and the journal says so --------------
walled_conf
ctl reload
check_eq "set again by a reload" "$(limits)" \
	"limget soft=$((512 * MiB)) hard=$GiB used=0"
daemon_stop
check_eq "cleared at a clean stop" "$(limits)" "limget err=6"
check_eq "the journal empty" "$(grep -c '^GPU-' "$J")" 0
finish
