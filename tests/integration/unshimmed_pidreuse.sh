# A pid read once is not a process (issues 22 and 31): a process of uid
# 65534 without the shim is counted, then dies, and its pid is given to an
# unrelated root process while the driver still holds the dead one's
# memory (SIMCUDA_RELEASE_DELAY_MS). Another process without the shim then
# takes the group past its limit under unshimmed = kill: it is killed, and
# no signal reaches the process that has the dead one's pid, which is never
# taken for it. Run in a pid namespace of its own, where root may choose
# the next pid.
. "$(dirname "$0")/pidns_lib.sh"
# shellcheck disable=SC2154	# PID_* are bg's
. "$(dirname "$0")/lib.sh"
H=$TOP/tests/clients/hostile.py
C=$CLIENTS/cuclient_linked
nobody_setup
printf '[group cap]\nmatch = uid:65534\nlimit = 2Gi\nunshimmed = kill\n' \
	>"$TMP/gpufrac.conf"
daemon_start

bg dead env -u LD_PRELOAD SIMCUDA_RELEASE_DELAY_MS=60000 "${AS_NOBODY[@]}" \
	"$C" alloc 1Gi hold
wait_for "a process without the shim is counted" 10 state_is "$PID_dead" \
	unshimmed
kill -9 "$PID_dead"
wait "$PID_dead" 2>/dev/null
wait_for "once dead, its memory is releasing: the driver still holds it" 5 \
	state_is "$PID_dead" releasing
stranger=$("$PYTHON" "$H" stranger "$PID_dead" "$TMP/signalled")
[ "$stranger" = "$PID_dead" ] ||
	skip "could not give pid $PID_dead to another process (got $stranger)"

bg over env -u LD_PRELOAD "${AS_NOBODY[@]}" "$C" alloc 1536Mi hold
wait_for "one that takes the group past its limit is killed" 10 \
	has_event unshimmed-kill "$PID_over"
check "no signal reached the process that has the dead one's pid" \
	test ! -e "$TMP/signalled"
check "it is alive" kill -0 "$stranger"
check "it is never taken for a process without the shim" eval \
	"[ \"\$(ps_json \"[c for c in j['clients'] if c['pid'] == $stranger and c['state'] == 'unshimmed']\")\" = '[]' ]"
check "no kill event names its pid" eval \
	"! ctl events --json | grep -q '\"event\":\"unshimmed-kill\",\"pid\":$stranger,'"
kill -9 "$stranger" 2>/dev/null
finish
