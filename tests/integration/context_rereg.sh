# A process re-registering what it was granted, after its connection was
# cut, is not measured for its context between opening its device and
# charging its allocations again: NVML counts them already, and a look in
# between would take them for its context and charge them twice. The
# look is made to land there: the process waits, opened, until the
# daemon has seen a process without the shim grow, which only a look
# shows.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
MiB=$((1 << 20))
printf '[daemon]\nlook_interval = 100ms\n' >"$TMP/gpufrac.conf"
daemon_start
# charges_of PID: its allocations' kinds and sizes.
charges_of() {
	ctl allocs "$1" --json | json 'sorted((x["kind"], x["size"]) for x in j["allocations"])'
}
uuid=$(ctl status --json | json 'j["devices"][0]["uuid"]')
# u, a process without the shim, grows when told: only a look shows it.
client_start u "$C" alloc 64Mi hold alloc 64Mi hold
wait_for "the daemon counts u, unshimmed" 10 has_event unshimmed "$PID_u"
mkfifo "$TMP/p.in"
# (A sanitized simulated driver, loaded by ctypes, needs its runtime.)
env ${SAN_RT:+LD_PRELOAD=$SAN_RT} "$PYTHON" "$TOP/tests/clients/launder.py" paused "$GPUFRAC_SOCKET" "$uuid" \
	$((512 * MiB)) <"$TMP/p.in" >"$TMP/p.out" 2>"$TMP/p.err" &
PID_p=$!
exec {p_fd}>"$TMP/p.in"
wait_for "p is granted 512 MiB, and its connection is cut" 10 \
	grep -q '^cut' "$TMP/p.out"
echo >&"$p_fd"
wait_for "p connects again and opens its device" 10 \
	grep -q '^opened' "$TMP/p.out"
kill -USR1 "$PID_u"
wait_for "a look has seen u grow since" 10 eval \
	"[ \"\$(used_of $PID_u)\" = \"[$((128 * MiB))]\" ]"
check_eq "that look took nothing of p's 512 MiB for its context" \
	"$(charges_of "$PID_p")" "[]"
echo >&"$p_fd"
wait_for "p re-registers them" 10 grep -q '^rereg' "$TMP/p.out"
check_eq "believed" "$(sed -n 3p "$TMP/p.out")" "rereg DEVICE_INFO"
check_eq "p is charged its 512 MiB once" "$(charges_of "$PID_p")" \
	"[('mem', $((512 * MiB)))]"
client_release u
kill "$PID_p"
exec {p_fd}>&-
finish
