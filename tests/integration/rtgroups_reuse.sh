# A run-time group is its cgroup's, not its path's (issue 39, point 9).
# Container A (3Gi, guarantee 1Gi) ends without its poststop; its cgroup
# is removed and made again at the same path for container B (512Mi),
# whose id differs: B's process is in B's group, and A's group has gone
# with its cgroup. Then B ends the same way and a cgroup with no door is
# made at the path: B's group goes within a look of the reaper, and a
# process there is in no job's group.
export SIMCUDA_DEVICES=8Gi
. "$(dirname "$0")/lib.sh"
HOOK=$BUILD/oci/gpufrac-oci-hook
C=$CLIENTS/cuclient_linked
PRE="LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM"
MiB=$((1 << 20))

[ "$(id -u)" = 0 ] || skip "not root: cgroups are made here"
[ -x "$HOOK" ] || skip "no $HOOK (nettle-dev, libjansson-dev)"
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$CG2" ] || skip "no cgroup2 file system is mounted"
CGPATH=/gpufrac-test-$$-reuse
CGDIR=$CG2$CGPATH
SLEEPER=
reuse_cleanup() {
	[ -n "$SLEEPER" ] && kill "$SLEEPER" 2>/dev/null && wait "$SLEEPER"
	[ -d "$CGDIR" ] && cgroup_remove "$CGDIR"
	cleanup
}
trap reuse_cleanup EXIT
mkdir "$CGDIR" 2>"$TMP/cg.err" ||
	skip "cannot make a cgroup under '$CG2': $(cat "$TMP/cg.err")"
rmdir "$CGDIR"

printf '[jobs]\nmax_guarantee = 1Gi\n' >"$TMP/gpufrac.conf"
daemon_start

# The container's bundle: its user is root, whom no [group] matches.
mkdir "$TMP/bundle"
echo '{"process": {"user": {"uid": 0, "gid": 0}}}' >"$TMP/bundle/config.json"
# container ID ANNOTATIONS: a fresh cgroup at the path with a process in
# it ($SLEEPER), given to the hook at createRuntime as container ID's.
container() {
	mkdir "$CGDIR"
	sh -c "$IN_CG" "$CGDIR" sleep 300 &
	SLEEPER=$!
	wait_for "its process is in the cgroup" 5 \
		grep -qx "$SLEEPER" "$CGDIR/cgroup.procs"
	[ -n "$1" ] || return 0
	printf '{"ociVersion": "1.0.2", "id": "%s", "status": "created", "pid": %s, "bundle": "%s", "annotations": {%s}}' \
	    "$1" "$SLEEPER" "$TMP/bundle" "$2" |
	    "$HOOK" -s "$GPUFRAC_SOCKET" createRuntime
}
# ended: the container's process is gone, and its cgroup, no poststop run.
ended() {
	kill "$SLEEPER"
	wait "$SLEEPER"
	SLEEPER=
	cgroup_remove "$CGDIR"
}
total_in_cgroup() { sh -c "$IN_CG" "$CGDIR" env "$PRE" "$C" total; }

container a '"gpufrac.io/memory": "3Gi", "gpufrac.io/guarantee": "1Gi"'
check_eq "container A gets its group" "$?:$(group_names)" "0:['default', 'oci-a']"
ended
container b '"gpufrac.io/memory": "512Mi"'
check_eq "container B, in a new cgroup at A's path, gets its own" $? 0
check_eq "A's group went with A's cgroup, guarantee and all" \
	"$(group_names)" "['default', 'oci-b']"
check_eq "B's process is held to B's 512Mi, not A's 3Gi" \
	"$(total_in_cgroup)" "total $((512 * MiB))"

ended
container '' ''
only_default() { [ "$(group_names)" = "['default']" ]; }
wait_for "a new cgroup at B's path with no door: B's group goes within a look" 5 \
	only_default
check_eq "and a process there is held by no job's group" \
	"$(total_in_cgroup)" "total $((8192 * MiB))"
ended
finish
