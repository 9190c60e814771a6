# Honest programs are never taken for ones without the shim (issue 38,
# B): with no name-based grace, a shimmed process is known by its
# connection from before its first context, whose memory NVML lists at
# once (SIMCUDA_CONTEXT_BYTES). Sixteen shimmed programs of uid 65534
# start together in a group that says kill: eight allocate at once, eight
# make their context and wait two looks before allocating. Every one is
# a client before it allocates; none is counted unshimmed or killed.
# A context made before the device is opened is taken (foreign) until
# its process opens the device, then its own.
# shellcheck disable=SC2154	# PID_* are bg's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
PRE="${SAN_RT:+$SAN_RT }$SHIM"
export SIMCUDA_DEVICES=8Gi SIMCUDA_CONTEXT_BYTES=64Mi

nobody_setup
printf '[group cap]\nmatch = uid:65534\nlimit = 6Gi\nunshimmed = kill\n' \
	>"$TMP/gpufrac.conf"
daemon_start
uptime() { ctl status --json | json "j['daemon']['uptime_ms']"; }
uptime_past() { [ "$(uptime)" -ge "$1" ]; }
holding() { [ "$(grep -c '^holding' "$TMP/$1.out")" = "$2" ]; }
none_of() { [ "$(ctl events --json | grep -c "\"event\":\"$1\"")" = 0 ]; }

for i in 1 2 3 4 5 6 7 8; do
	bg "pause$i" env LD_PRELOAD="$PRE" "${NOBODY_ENV[@]}" \
		"${AS_NOBODY[@]}" "$C" dev 0 hold alloc 256Mi hold
	bg "rush$i" env LD_PRELOAD="$PRE" "${NOBODY_ENV[@]}" \
		"${AS_NOBODY[@]}" "$C" alloc 256Mi hold
done
for i in 1 2 3 4 5 6 7 8; do
	wait_for "pause$i has its context" 30 holding "pause$i" 1
	wait_for "rush$i has allocated" 30 holding "rush$i" 1
done
t=$(($(uptime) + 2500))
wait_for "two looks have seen the contexts" 10 uptime_past "$t"
check "all sixteen are clients, those not allocating yet too" clients_are 16
check "the contexts of those not allocating yet count as taken (foreign)" \
	foreign_is $((8 * 64 << 20))
for i in 1 2 3 4 5 6 7 8; do
	pidvar=PID_pause$i
	kill -USR1 "${!pidvar}"
done
for i in 1 2 3 4 5 6 7 8; do
	wait_for "pause$i has allocated" 30 holding "pause$i" 2
done
check "every allocation was granted" eval \
	"[ \"\$(cat '$TMP'/*.out | grep -c '^alloc ok')\" = 16 ]"
t=$(($(uptime) + 2500))
wait_for "two looks have seen them all" 10 uptime_past "$t"
check "none was taken for a process without the shim" none_of unshimmed
check "none was killed" none_of unshimmed-kill
check "once each has opened the device, nothing is foreign" foreign_is 0
for i in 1 2 3 4 5 6 7 8; do
	client_release "pause$i"
	client_release "rush$i"
done
finish
