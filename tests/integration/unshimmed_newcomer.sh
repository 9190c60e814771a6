# The one who went over is the one who goes (issue 38, point 3): group
# team (uids 65533 and 65534, 4 GiB, kill). uid 65533 holds 3 GiB without
# the shim, within every limit; uid 65534 then takes 1.5 GiB without the
# shim. The newcomer, whose memory came last past the limit, is killed,
# not the larger process that was there first. And a group-mate's growth
# counts from the look that saw it grow: a process of 512 MiB growing by
# 1 GiB past the limit is killed, not the larger one (3 GiB) beside it.
# shellcheck disable=SC2154	# PID_* are bg's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
export SIMCUDA_DEVICES=8Gi

nobody_setup
printf '[group team]\nmatch = uid:65533 uid:65534\nlimit = 4Gi\nunshimmed = kill\n' \
	>"$TMP/gpufrac.conf"
daemon_start
alive() { kill -0 "$1" 2>/dev/null; }
# unshimmed NAME UID CMD...: a process of UID without the shim, run until
# it holds, then listed.
unshimmed() {
	local name=$1 uid=$2; shift 2
	bg "$name" env -u LD_PRELOAD "${NOBODY_ENV[@]}" \
		setpriv --reuid="$uid" --regid="$uid" --clear-groups "$C" "$@"
	local pidvar=PID_$name
	wait_for "$name holds its memory" 10 grep -q '^holding' "$TMP/$name.out"
	wait_for "$name is listed" 3 state_is "${!pidvar}" unshimmed
}

unshimmed first 65533 alloc 3Gi hold
bg newcomer env -u LD_PRELOAD "${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" "$C" \
	alloc 1536Mi hold
wait_for "the newcomer holds 1.5 GiB" 10 \
	allocated_or_killed newcomer "$PID_newcomer"
wait_for "the newcomer is killed" 3 gone_by_sigkill "$PID_newcomer"
check "for its group" has_event unshimmed-kill "$PID_newcomer" 'its group holds 4.5GiB'
check "the one that was there first, within the limit, is not" alive "$PID_first"
kill -USR1 "$PID_first"
wait "$PID_first"
wait_for "nothing is left charged" 10 device_used_is 0

# Growth counts from the look that saw it grow.
unshimmed grower 65533 alloc 512Mi hold alloc 1Gi hold
unshimmed steady 65534 alloc 3Gi hold
kill -USR1 "$PID_grower"
wait_for "the first grows to 1.5 GiB" 10 eval \
	"[ \"\$(grep -c '^holding' '$TMP/grower.out')\" = 2 ]"
wait_for "the grower, whose growth came last past the limit, is killed" 3 \
	gone_by_sigkill "$PID_grower"
check "the larger one, there before that growth, is not" alive "$PID_steady"
kill -USR1 "$PID_steady"
wait "$PID_steady"
finish
