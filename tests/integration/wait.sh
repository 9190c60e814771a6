# The wait resolver with real processes: a request that does not fit waits
# (shown as waiting in ps) until memory is freed, then is granted without
# any polling; a wait_timeout denies it with CUDA_ERROR_OUT_OF_MEMORY and a
# timeout event; a request that could never fit is denied at once; among
# waiters, the higher priority is served first whatever the arrival order.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
PRE="LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM"
conf=$TMP/gpufrac.conf

nobody_setup

printf '[daemon]\ndefault_resolver = wait\nwait_timeout = 60s\n' >"$conf"
daemon_start

# --- a waiter is served by the free itself ------------------------------
client_start a preload "$C" alloc 3Gi hold
bg b env "$PRE" "$C" alloc 2Gi
wait_for "B is shown waiting" 10 state_is "$PID_b" waiting
check "B has a wait event" has_event wait "$PID_b"
check_eq "B's allocation has not returned while A holds" \
	"$(cat "$TMP/b.out")" ""
client_release a
wait_for "B's allocation returns once A is gone" 10 \
	grep -q '^alloc ok' "$TMP/b.out"
wait "$PID_b"
check "B has a wake event" has_event wake "$PID_b"

# --- never fits: denied at once ------------------------------------------
out=$(env "$PRE" "$C" alloc 5Gi 2>&1)
check_eq "a request beyond the device is denied at once" "$out" \
	"alloc err=2"

# --- wait_timeout ---------------------------------------------------------
printf '[daemon]\ndefault_resolver = wait\nwait_timeout = 1s\n' >"$conf"
check "reload with wait_timeout = 1s" ctl reload
client_start a preload "$C" alloc 3Gi hold
bg t env "$PRE" "$C" alloc 2Gi
wait_for "T is denied after its timeout" 10 \
	grep -q '^alloc err=2' "$TMP/t.out"
wait "$PID_t"
check "T has a timeout event" has_event timeout "$PID_t"
client_release a

# --- priority: the higher one first, though it came second ---------------
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	echo "skipping the priority case: not root, or no setpriv"
else
	cat >"$conf" <<-'CONF'
	[daemon]
	default_resolver = wait
	wait_timeout = 60s
	[group hi]
	match = uid:65534
	limit = 100%
	priority = 10
	resolver = wait
	CONF
	check "reload with group hi" ctl reload
	client_start a preload "$C" alloc 2Gi hold
	client_start a2 preload "$C" alloc 1Gi hold
	bg lo env "$PRE" "$C" alloc 2Gi hold
	wait_for "lo waits" 10 state_is "$PID_lo" waiting
	bg hi "${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" env "$PRE" "$C" alloc 2Gi hold
	wait_for "hi waits" 10 state_is "$PID_hi" waiting
	client_release a
	wait_for "hi, of higher priority, is served" 10 \
		grep -q '^alloc ok' "$TMP/hi.out"
	check_eq "lo is still waiting" "$(cat "$TMP/lo.out")" ""
	check "ps shows lo waiting, hi running" \
		eval 'state_is "$PID_lo" waiting && state_is "$PID_hi" running'
	kill -USR1 "$PID_hi"
	wait "$PID_hi"
	wait_for "lo is served once hi is gone" 10 \
		grep -q '^alloc ok' "$TMP/lo.out"
	kill -USR1 "$PID_lo"
	wait "$PID_lo"
	client_release a2
fi
finish
