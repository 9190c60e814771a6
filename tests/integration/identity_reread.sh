# Who a process is is read again at each reload and before a preemption
# takes a victim, not only at the driver's looks (issue 39, A). The looks
# are made rare (look_interval = 1h) so that only the reload, or the
# preemption, can notice that a shimmed root process (group safe,
# priority 20) became uid 65534 (group cheap, priority 0, kill):
#  - a reload moves "mover" to cheap (event regrouped, both groups named);
#  - a request of uid 65533 (group boss, priority 10, preempt) that does
#    not fit takes "victim", root's until its setuid and now cheap's, as
#    its victim: it is moved to cheap first, then preempted, and the
#    request is granted. Without that re-read the victim would still be
#    safe's, above boss, and the request refused.
# shellcheck disable=SC2154	# PID_* are bg's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
PRE="${SAN_RT:+$SAN_RT }$SHIM"
export SIMCUDA_DEVICES=8Gi
[ "$(id -u)" = 0 ] || skip "needs root to change a process's uid"

nobody_setup
printf '[daemon]\nlook_interval = 1h\n[group safe]\nmatch = uid:0\npriority = 20\n[group cheap]\nmatch = uid:65534\npriority = 0\non_preempt = kill\nkill_grace = 1s\n[group boss]\nmatch = uid:65533\npriority = 10\nresolver = preempt\n' \
	>"$TMP/gpufrac.conf"
daemon_start

group_is() {
	[ "$(ps_json "[c['group'] for c in j['clients'] if c['pid'] == $1]")" = "['$2']" ]
}
# holds NAME N: NAME's program has said "holding" N times.
holds() { [ "$(grep -c '^holding' "$TMP/$1.out")" -ge "$2" ]; }

bg mover env LD_PRELOAD="$PRE" "$C" alloc 1Gi hold setuid 65534 hold
bg victim env LD_PRELOAD="$PRE" "$C" alloc 5Gi hold setuid 65534 hold
wait_for "mover holds 1 GiB" 10 holds mover 1
wait_for "victim holds 5 GiB" 10 holds victim 1
check "both are root's, in safe" eval \
	"group_is $PID_mover safe && group_is $PID_victim safe"

# --- a reload reads who each is again -------------------------------------
kill -USR1 "$PID_mover"
wait_for "mover calls setresuid(65534)" 10 holds mover 2
check "no look has read it yet: still in safe" group_is "$PID_mover" safe
ctl reload >/dev/null
check "the reload moves it to cheap" group_is "$PID_mover" cheap
check "and says so, naming both groups" \
	has_event regrouped "$PID_mover" "from group 'safe' to 'cheap'"
check "victim, still root, stays in safe" group_is "$PID_victim" safe

# --- so does a preemption, before it takes a victim -----------------------
kill -USR1 "$PID_victim"
wait_for "victim calls setresuid(65534)" 10 holds victim 2
check "no look has read it yet: still in safe" group_is "$PID_victim" safe
check_eq "uid 65533's 4 GiB, past what is free, is granted" \
	"$("${NOBODY_ENV[@]}" setpriv --reuid=65533 --regid=65533 \
	    --clear-groups env LD_PRELOAD="$PRE" "$C" alloc 4Gi 2>/dev/null)" \
	"alloc ok"
check "victim was moved to cheap before it was chosen" \
	has_event regrouped "$PID_victim" "from group 'safe' to 'cheap'"
check "then preempted" has_event preempt "$PID_victim"
kill -9 "$PID_mover" "$PID_victim" 2>/dev/null
finish
