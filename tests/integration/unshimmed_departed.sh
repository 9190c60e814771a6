# A connection lost is no shield (issue 38, A and B): uid 65534 says
# HELLO, is granted 512 MiB, closes its connection and lives on, taking
# 3 GiB from the driver behind the daemon's back, in a 1 GiB group that
# says kill. Its grants are kept for the grace a lost connection is
# given (5 s, counted in its group); then it is a process without the
# shim like any other, charged what NVML shows, and killed.
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=8Gi
GiB=$((1 << 30))

nobody_setup
printf '[group cap]\nmatch = uid:65534\nlimit = 1Gi\nunshimmed = kill\n' \
	>"$TMP/gpufrac.conf"
daemon_start
uuid=$(ctl status --json | json 'j["devices"][0]["uuid"]')
mkfifo -m 0666 "$TMP/in"
# A sanitized driver needs its runtime first in python; CPython's own
# allocations at exit are not ours to report.
PY_ENV=(env "ASAN_OPTIONS=${ASAN_OPTIONS/$TMP\/san/$TMP/nobody/san}:detect_leaks=0")
[ -n "$SAN_RT" ] && PY_ENV+=("LD_PRELOAD=$SAN_RT")
"${NOBODY_ENV[@]}" "${PY_ENV[@]}" "${AS_NOBODY[@]}" "$PYTHON" \
	"$TOP/tests/clients/departing.py" "$GPUFRAC_SOCKET" "$uuid" \
	$((GiB / 2)) $((3 * GiB)) <"$TMP/in" >"$TMP/d.out" 2>"$TMP/d.err" &
pid=$!
exec 3>"$TMP/in"
wait_for "it closes its connection" 10 grep -q '^closed' "$TMP/d.out"
wait_for "and holds 3 GiB of the driver's" 10 grep -q '^holding' "$TMP/d.out"
check "its grant is kept meanwhile, in its group" eval \
	"[ \"\$(group_field cap used_bytes)\" -ge $((GiB / 2)) ]"
wait_for "after its grace it is taken for a process without the shim" 8 \
	has_event unshimmed "$pid"
wait_for "charged what NVML shows, and killed" 3 \
	has_event unshimmed-kill "$pid" 'holds 3.0GiB'
exec 3>&-
wait "$pid"
check_eq "by SIGKILL" $? 137
finish
