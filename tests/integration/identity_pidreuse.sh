# A pid is never taken for a process (issue 39, points 3 and 4), its
# reuse made certain by ns_last_pid in a pid namespace of the test's own.
#  3. H (uid 65532, no shim, 3 GiB; the driver gives its memory back 3 s
#     after it dies) exits, and an honest shimmed process takes its pid
#     and holds 512 MiB: H's charge goes once the driver has its memory
#     back, NVML listing the pid notwithstanding, and a 6 GiB request of
#     8 GiB is granted.
#  4. S, shimmed, of uid 65534 in `cap` (1 GiB, kill), holds 512 MiB and
#     dies (the driver keeps its memory a minute): a process of the same
#     user without the shim takes its pid and 3 GiB, and is counted and
#     killed. Honest beside it: S's 512 MiB stay charged while the driver
#     holds them, and a newcomer within the limit on the same pid is
#     counted, alive, in a row of its own in `ps --json`.
. "$(dirname "$0")/pidns_lib.sh"
# shellcheck disable=SC2154	# PID_* are bg's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
PRE="${SAN_RT:+$SAN_RT }$SHIM"
export SIMCUDA_DEVICES=8Gi
MiB=$((1 << 20))
nobody_setup
AS_65532=(setpriv --reuid=65532 --regid=65532 --clear-groups)
AS_65533=(setpriv --reuid=65533 --regid=65533 --clear-groups)
printf '[group cap]\nmatch = uid:65534\nlimit = 1Gi\nunshimmed = kill\n' \
	>"$TMP/gpufrac.conf"
daemon_start

# on_pid PID NAME CMD...: bg NAME CMD, its process given PID; tried
# again where a thread of another took the pid first, skipped at last.
on_pid() {
	local got=PID_$2 try
	for try in 1 2 3 4 5; do
		echo $(($1 - 1)) >/proc/sys/kernel/ns_last_pid
		bg "$2" "${@:3}"
		[ "${!got}" = "$1" ] && return
		kill -9 "${!got}"
		wait "${!got}" 2>/dev/null
	done
	skip "could not give pid $1 to $2 (got ${!got}, $try tries)"
}
holding() { grep -q '^holding' "$TMP/$1.out"; }
rows_of() { ps_json "sorted(c['state'] for c in j['clients'] if c['pid'] == $1)"; }

# --- 3: a departed process's charge does not follow its pid -------------
bg H "${NOBODY_ENV[@]}" env -u LD_PRELOAD SIMCUDA_RELEASE_DELAY_MS=3000 \
	"${AS_65532[@]}" "$C" alloc 3Gi hold
wait_for "H's 3 GiB without the shim are counted" 10 state_is "$PID_H" \
	unshimmed
kill -9 "$PID_H"
wait "$PID_H" 2>/dev/null
on_pid "$PID_H" new "${NOBODY_ENV[@]}" env LD_PRELOAD="$PRE" \
	"${AS_65533[@]}" "$C" alloc 512Mi hold
wait_for "an honest shimmed process on H's pid holds 512 MiB" 10 holding new
wait_for "H's charge goes once the driver has its memory back" 10 \
	device_used_is $((512 * MiB))
check_eq "an honest 6 GiB request is granted" \
	"$(preload "$C" alloc 6Gi)" "alloc ok"
kill -9 "$PID_new"
wait "$PID_new" 2>/dev/null
wait_for "the device is free again" 10 device_used_is 0

# --- 4: a process on a departed client's pid is counted ------------------
bg S "${NOBODY_ENV[@]}" env LD_PRELOAD="$PRE" \
	SIMCUDA_RELEASE_DELAY_MS=60000 "${AS_NOBODY[@]}" "$C" alloc 512Mi hold
wait_for "S, shimmed, holds 512 MiB in 'cap'" 10 holding S
kill -9 "$PID_S"
wait "$PID_S" 2>/dev/null
wait_for "S's memory is releasing: the driver keeps it" 10 \
	state_is "$PID_S" releasing
on_pid "$PID_S" N "${NOBODY_ENV[@]}" env -u LD_PRELOAD \
	"${AS_NOBODY[@]}" "$C" alloc 3Gi hold
wait_for "a process without the shim on S's pid, past 'cap', is killed" 10 \
	has_event unshimmed-kill "$PID_N"
check "by SIGKILL" gone_by_sigkill "$PID_N"
kill -9 "$PID_N" 2>/dev/null && wait "$PID_N" 2>/dev/null
check "S's 512 MiB stay charged while the driver holds them" \
	state_is "$PID_S" releasing
on_pid "$PID_S" N2 "${NOBODY_ENV[@]}" env -u LD_PRELOAD \
	"${AS_NOBODY[@]}" "$C" alloc 256Mi hold
wait_for "one within the limit on the same pid is counted, a row of its own" \
	10 eval "[ \"\$(rows_of $PID_S)\" = \"['releasing', 'unshimmed']\" ]"
check "and alive" kill -0 "$PID_N2"
check "'cap' counts both" eval \
	"[ \"\$(group_field cap used_bytes)\" -ge $((768 * MiB)) ]"
kill -9 "$PID_N2" 2>/dev/null
finish
