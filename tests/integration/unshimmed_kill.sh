# unshimmed = kill (issue 31, B): a process without the shim that takes
# its group past the group's limit, or itself past its own, is killed
# through its pidfd at the look that sees it (event unshimmed-kill); one
# within its limits never is, nor one of a group that says count, nor
# root's in the group "default". A preemptor of higher priority takes an
# unshimmed process as a victim (it cannot be swapped: killed). A process
# that ran before a restarted daemon and has not connected to it
# (stopped) is given 5 s to (its memory counted in its group meanwhile,
# never foreign), then held like the others.
# shellcheck disable=SC2154	# PID_* are bg's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
PRE="${SAN_RT:+$SAN_RT }$SHIM"
export SIMCUDA_DEVICES=8Gi

nobody_setup
as() { setpriv --reuid="$1" --regid="$1" --clear-groups "${@:2}"; }
printf '[daemon]\ndefault_limit = 1Gi\nunshimmed = kill\n[group cap]\nmatch = uid:65534\nlimit = 2Gi\n[group counted]\nmatch = uid:65533\nlimit = 1Gi\nunshimmed = count\n' \
	>"$TMP/gpufrac.conf"
daemon_start

# unshimmed NAME UID SIZE [doomed]: a process of UID without the shim
# holding SIZE, listed as unshimmed (unless doomed: killed at first sight).
unshimmed() {
	bg "$1" env -u LD_PRELOAD "${NOBODY_ENV[@]}" \
		setpriv --reuid="$2" --regid="$2" --clear-groups \
		"$C" alloc "$3" hold
	local pidvar=PID_$1
	if [ $# -gt 3 ]; then
		wait_for "$1 has allocated" 10 allocated "$1" "${!pidvar}"
		return
	fi
	wait_for "$1 holds $3" 10 grep -q '^holding' "$TMP/$1.out"
	wait_for "$1 is listed" 5 state_is "${!pidvar}" unshimmed
}
allocated() {
	grep -q '^alloc ok' "$TMP/$1.out" || has_event unshimmed-kill "$2"
}
killed_by_signal() { wait "$1"; [ $? = 137 ]; }
alive() { kill -0 "$1" 2>/dev/null; }

unshimmed within 65534 1Gi
unshimmed counted 65533 3Gi
unshimmed root 0 2Gi
# 1 GiB more than the group's 2 GiB: the largest goes.
unshimmed over 65534 2Gi doomed
wait_for "one that takes its group past its limit is killed within 3 s" 3 \
	has_event unshimmed-kill "$PID_over" 'its group holds 3.0GiB, past its limit 2.0GiB'
check "by SIGKILL" killed_by_signal "$PID_over"
wait_for "its memory goes back the departed processes' way" 10 \
	has_event released "$PID_over"
check "one within the limits is not killed" alive "$PID_within"
check "it is still counted" state_is "$PID_within" unshimmed
check "a group that says count keeps its own past its limit" \
	alive "$PID_counted"
check "root's in the group default is counted" state_is "$PID_root" \
	unshimmed
check "and never killed, past its limit of 1 GiB too" alive "$PID_root"
# Past its own limit (default: 1 GiB each), not root's.
unshimmed own 65532 2Gi doomed
wait_for "one past its own limit is killed within 3 s" 3 \
	has_event unshimmed-kill "$PID_own" 'the process holds 2.0GiB, past its limit 1.0GiB'
check "by SIGKILL" killed_by_signal "$PID_own"
check "root's is alive still" alive "$PID_root"
check "no other was killed" eval \
	"[ \"\$(ctl events --json | grep -c '\"event\":\"unshimmed-kill\"')\" = 2 ]"
kill -USR1 "$PID_within" "$PID_counted" "$PID_root"
wait "$PID_within" "$PID_counted" "$PID_root"
wait_for "nothing is left charged" 10 device_used_is 0

# A victim for a preemptor: swap cannot take it, kill does.
daemon_stop
printf '[group low]\nmatch = uid:65534\non_preempt = swap\nkill_grace = 1s\n[group high]\nmatch = uid:0\npriority = 10\nresolver = preempt\nwait_timeout = 30s\n' \
	>"$TMP/gpufrac.conf"
daemon_start
unshimmed victim 65534 7Gi
check_eq "a preemptor of higher priority is granted" \
	"$(env LD_PRELOAD="$PRE" "$C" alloc 4Gi)" "alloc ok"
check "its victim, which cannot be swapped, was killed" \
	has_event fallback "$PID_victim" 'cannot be swapped'
check "through the preemption" has_event preempt "$PID_victim"
check "it is gone" eval "! alive $PID_victim"

# A client of the daemon, past a limit lowered while the daemon was down,
# that has not connected to the new one yet.
daemon_stop
printf '[group cap]\nmatch = uid:65534\nlimit = 4Gi\n' >"$TMP/gpufrac.conf"
daemon_start
bg late env LD_PRELOAD="$PRE" "${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" \
	"$C" alloc 2Gi hold
wait_for "a client holds 2 GiB" 10 grep -q '^holding' "$TMP/late.out"
kill -STOP "$PID_late"
daemon_stop
printf '[group cap]\nmatch = uid:65534\nlimit = 1Gi\nunshimmed = kill\n' \
	>"$TMP/gpufrac.conf"
daemon_start
wait_for "the restarted daemon counts it in its group while it may connect" 3 \
	state_is "$PID_late" unshimmed
check "not killed at the looks of its first 5 s" alive "$PID_late"
check "nor said to be without the shim" eval \
	"! has_event unshimmed $PID_late"
check "its memory binds its group" eval \
	"[ \"\$(group_field cap used_bytes)\" -ge $((2 << 30)) ]"
check "never as foreign" foreign_is 0
wait_for "then it is, for not connecting, and held like the others" 10 \
	has_event unshimmed "$PID_late" 'shim loaded, not connected'
wait_for "killed past its lowered limit" 3 \
	has_event unshimmed-kill "$PID_late"
finish
