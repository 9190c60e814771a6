# A cgroup move is read at the next look (issue 39, point 2): uid 65534,
# without the shim; group `killer` (a cgroup, 1 GiB, kill) and `counter`
# (another, 8 GiB, count). A process seen in counter's cgroup holding
# 3 GiB and moved into killer's is moved to `killer` with its memory
# (event `regrouped`) and killed there. The other way, the honest case:
# one seen in killer's cgroup at 512 MiB, moved to counter's, then grown
# to 1.5 GiB, within counter's 8 GiB, is counted there and left alone.
# shellcheck disable=SC2154	# PID_* are bg's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
export SIMCUDA_DEVICES=16Gi
MiB=$((1 << 20))

. "$(dirname "$0")/cgroup_lib.sh"
command -v setpriv >/dev/null || skip "no setpriv to run as nobody"
NAME=gpufrac-test-$$-identity
cgroups_make "$CG2/$NAME-killer" "$CG2/$NAME-counter"

nobody_setup
printf '[group killer]\nmatch = cgroup:/%s-killer\nlimit = 1Gi\nunshimmed = kill\n[group counter]\nmatch = cgroup:/%s-counter\nlimit = 8Gi\nunshimmed = count\n' \
	"$NAME" "$NAME" >"$TMP/gpufrac.conf"
daemon_start

# in_cgroup NAME WHICH CMD...: CMD as uid 65534 without the shim, in the
# cgroup of group WHICH.
in_cgroup() {
	bg "$1" "${NOBODY_ENV[@]}" env -u LD_PRELOAD sh -c "$IN_CG" \
	    "$CG2/$NAME-$2" "${AS_NOBODY[@]}" "${@:3}"
}
group_is() {
	[ "$(ps_json "[c['group'] for c in j['clients'] if c['pid'] == $1]")" = "['$2']" ]
}
move() { echo "$1" >"$CG2/$NAME-$2/cgroup.procs"; }

in_cgroup liar counter "$C" alloc 3Gi hold
in_cgroup honest killer "$C" alloc 512Mi hold alloc 1Gi hold
wait_for "3 GiB in counter's cgroup are counted in 'counter'" 10 \
	group_is "$PID_liar" counter
wait_for "512 MiB in killer's cgroup are counted in 'killer'" 10 \
	group_is "$PID_honest" killer

move "$PID_liar" killer
wait_for "the one moved into killer's cgroup is moved to 'killer'" 10 \
	has_event regrouped "$PID_liar" "from group 'counter' to 'killer'"
wait_for "and killed there, past its 1 GiB" 10 \
	has_event unshimmed-kill "$PID_liar"
check "by SIGKILL" gone_by_sigkill "$PID_liar"

move "$PID_honest" counter
wait_for "the one moved into counter's cgroup is moved to 'counter'" 10 \
	has_event regrouped "$PID_honest" "from group 'killer' to 'counter'"
kill -USR1 "$PID_honest"
wait_for "it grows to 1.5 GiB" 10 eval \
	"[ \"\$(grep -c '^holding' \"$TMP/honest.out\")\" = 2 ]"
wait_for "counted in 'counter'" 10 eval \
	"[ \"\$(group_field counter used_bytes)\" -ge $((1536 * MiB)) ]"
check "within counter's 8 GiB it is alive" kill -0 "$PID_honest"
check "and never killed" eval "! has_event unshimmed-kill $PID_honest"
check_eq "'killer' counts nothing" "$(group_field killer used_bytes)" 0
finish
