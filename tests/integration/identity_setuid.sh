# Who a process is is read again at each look (issue 39, point 1): a root
# process without the shim takes 3 GiB in `default`, where nothing is
# killed, then calls setresuid(65534), which makes it a process of `cap`
# (1 GiB, unshimmed = kill). It is moved to `cap` with its memory (event
# `regrouped`, naming both groups) and killed there. Honest beside it: one
# that does the same holding 512 MiB is moved, counted in `cap` and left
# alone; a shimmed client that changes its uid is moved too (its identity
# is not fixed at HELLO); a root process that stays root is left in
# `default`.
# shellcheck disable=SC2154	# PID_* are bg's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
PRE="${SAN_RT:+$SAN_RT }$SHIM"
export SIMCUDA_DEVICES=8Gi
MiB=$((1 << 20))
[ "$(id -u)" = 0 ] || skip "needs root to change a process's uid"

nobody_setup
printf '[group cap]\nmatch = uid:65534\nlimit = 1Gi\nunshimmed = kill\n' \
	>"$TMP/gpufrac.conf"
daemon_start

group_is() {
	[ "$(ps_json "[c['group'] for c in j['clients'] if c['pid'] == $1]")" = "['$2']" ]
}
holding() { grep -q '^holding' "$TMP/$1.out"; }

bg stays env -u LD_PRELOAD "$C" alloc 1Gi hold
bg liar "${NOBODY_ENV[@]}" env -u LD_PRELOAD "$C" alloc 3Gi hold setuid 65534 hold
bg honest "${NOBODY_ENV[@]}" env -u LD_PRELOAD "$C" alloc 512Mi hold setuid 65534 hold
bg shimmed "${NOBODY_ENV[@]}" env LD_PRELOAD="$PRE" "$C" alloc 256Mi hold setuid 65534 hold
for p in stays liar honest shimmed; do
	wait_for "$p holds its memory" 10 holding "$p"
done
pid_liar=$PID_liar pid_honest=$PID_honest pid_shimmed=$PID_shimmed
wait_for "root's 3 GiB without the shim is counted in 'default'" 10 \
	group_is "$pid_liar" default
wait_for "so is the honest one's" 10 group_is "$pid_honest" default
check "the shimmed client is in 'default'" group_is "$pid_shimmed" default

kill -USR1 "$pid_liar" "$pid_honest" "$pid_shimmed"
wait_for "the one holding 3 GiB, now uid 65534, is moved to 'cap'" 10 \
	has_event regrouped "$pid_liar" "from group 'default' to 'cap'"
wait_for "and killed there, past the group's 1 GiB" 10 \
	has_event unshimmed-kill "$pid_liar"
check "by SIGKILL" gone_by_sigkill "$pid_liar"

wait_for "the honest one is moved to 'cap' with its 512 MiB" 10 \
	group_is "$pid_honest" cap
wait_for "and the shimmed client too, its HELLO's identity read again" 10 \
	group_is "$pid_shimmed" cap
check "the event says both groups" \
	has_event regrouped "$pid_honest" "from group 'default' to 'cap'"
wait_for "'cap' counts their memory" 10 eval \
	"[ \"\$(group_field cap used_bytes)\" -ge $((768 * MiB)) ]"
check "the honest one, within 1 GiB, is alive" kill -0 "$pid_honest"
check "and never killed" eval "! has_event unshimmed-kill $pid_honest"
check "root's that stays root is in 'default' still" \
	group_is "$PID_stays" default
check "and never moved" eval "! has_event regrouped $PID_stays"
kill -9 "$PID_stays" "$pid_honest" "$pid_shimmed" 2>/dev/null
finish
