# Nothing a process names about itself buys time (issue 38, point 2):
# four processes of uid 65534, each with a file named libgpufrac.so
# loaded (not the shim) and this daemon's socket in its environment,
# take 3 GiB in turn in a 1 GiB group that says kill. Each is counted at
# the look that sees it and killed, never given a grace or left FOREIGN.
# A grace goes only to a process the daemon has reason to expect: one
# that ran before it started, in its first seconds; that one is counted
# in its group meanwhile, and has its grace once: freeing its memory and
# taking it again after the grace buys no more.
# shellcheck disable=SC2154	# PID_* are bg's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
export SIMCUDA_DEVICES=8Gi

nobody_setup
printf '[group cap]\nmatch = uid:65534\nlimit = 1Gi\nunshimmed = kill\n' \
	>"$TMP/gpufrac.conf"
daemon_start

mkdir -m 0755 "$TMP/fake"
cp /lib/x86_64-linux-gnu/libdl.so.2 "$TMP/fake/libgpufrac.so" 2>/dev/null ||
	skip "no libdl.so.2 to name libgpufrac.so"
FAKE=(env LD_PRELOAD="${SAN_RT:+$SAN_RT }$TMP/fake/libgpufrac.so" "${NOBODY_ENV[@]}"
	"${AS_NOBODY[@]}" "$C")

for i in 1 2 3 4; do
	bg "liar$i" "${FAKE[@]}" alloc 3Gi hold
	pidvar=PID_liar$i
	wait_for "liar $i holds 3 GiB" 10 allocated_or_killed "liar$i" \
		"${!pidvar}"
	wait_for "liar $i is taken in at once, said to have the shim loaded" 3 \
		has_event unshimmed "${!pidvar}" 'shim loaded, not connected'
	wait_for "liar $i is killed" 3 gone_by_sigkill "${!pidvar}"
done
check_eq "four kills, one each" \
	"$(ctl events --json | grep -c '"event":"unshimmed-kill"')" 4

# One that ran before the daemon started: a grace, once.
bg old "${FAKE[@]}" alloc 64Mi hold free hold alloc 3Gi hold
wait_for "an older process holds 64 MiB" 10 grep -q '^holding' "$TMP/old.out"
wait_for "counted, within its limit" 3 state_is "$PID_old" unshimmed
daemon_stop
daemon_start
wait_for "the restarted daemon counts it in its group at once" 3 \
	state_is "$PID_old" unshimmed
check "not FOREIGN" foreign_is 0
check "no event yet: it may be a client coming back" eval \
	"! has_event unshimmed $PID_old"
kill -USR1 "$PID_old"
wait_for "it frees its memory" 10 eval \
	"[ \"\$(grep -c '^holding' '$TMP/old.out')\" = 2 ]"
wait_for "and is no longer listed" 3 eval \
	"[ \"\$(ps_json \"[c for c in j['clients'] if c['pid'] == $PID_old]\")\" = '[]' ]"
uptime_past() { [ "$(ctl status --json | json "j['daemon']['uptime_ms']")" -ge "$1" ]; }
wait_for "its grace is over" 10 uptime_past 5500
kill -USR1 "$PID_old"
wait_for "it takes 3 GiB again" 10 allocated_or_killed old "$PID_old"
wait_for "it is killed at once: a missed look gave it no new grace" 3 \
	gone_by_sigkill "$PID_old"
finish
