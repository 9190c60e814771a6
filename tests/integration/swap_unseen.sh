# Host swap and the driver calls no hook sees: a thread of a swapped-out
# process that calls the driver through its private export table waits
# in the driver's checkpoint lock, where the shim cannot gate it; the
# shim's stall thread sees it wait there and asks for swap-in, and the
# swap-in event says why. A swapped-out process whose threads sit still,
# the driver's own helper thread among them, stays out.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked

# The simulated driver runs a helper thread of its own, as the real one.
export SIMCUDA_HELPER_THREAD=1
printf '[daemon]\nwait_timeout = 20s\n' >"$TMP/gpufrac.conf"
daemon_start

# --- a thread that calls the driver unseen brings its process back --------
GPUFRAC_LOG=debug client_start v preload "$C" alloc 1Gi fill hold \
	unhooked check hold
check "v is swapped out by hand" ctl swap out "$PID_v"
wait_for "its shim watches its threads while it is out" 10 \
	grep -q "watching .* threads for one that waits in the driver unseen" \
	"$TMP/v.err"
kill -USR1 "$PID_v"
# Stuck for good without the stall thread: not left to hang the test.
wait_for "its unhooked driver call returns" 20 \
	grep -q '^unhooked ok' "$TMP/v.out" || kill -9 "$PID_v"
check "v runs again" state_is "$PID_v" running
check "the swap-in event says why" has_event swap-in "$PID_v" \
	"a thread waits in the driver unseen in pid $PID_v"
check "the shim said which thread" grep -q \
	"thread [0-9]* waits in the driver unseen while this process is swapped out" \
	"$TMP/v.err"
wait_for "its data is intact" 10 grep -q '^check ok' "$TMP/v.out"
kill -USR1 "$PID_v" 2>/dev/null
wait "$PID_v"
check "nothing was printed to stdout but the client's own lines" eval \
	"! grep -qv '^\\(holding\\|alloc ok\\|fill ok\\|unhooked ok\\|check ok\\)$' $TMP/v.out"

# --- threads that sit still leave it out ------------------------------------
GPUFRAC_LOG=debug client_start i preload "$C" alloc 1Gi fill hold check
check "i is swapped out by hand" ctl swap out "$PID_i"
# The driver's helper waits elsewhere once the process is locked, as the
# real driver's threads do: five looks, each verdict made on two.
wait_for "its shim has looked at its threads, the driver's helper too" 10 \
	grep -q "no thread waits in the driver unseen after 5 looks" \
	"$TMP/i.err"
check "i stays out" state_is "$PID_i" swapped
check "no swap-in event" eval "! has_event swap-in $PID_i"
check "an admin brings it back" ctl swap in "$PID_i"
client_release i
check_eq "its data came through" "$(tail -1 "$TMP/i.out")" "check ok"

daemon_stop
finish
