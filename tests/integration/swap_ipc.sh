# Legacy IPC of the copy engine's memory (issue 21): the driver has no
# legacy handle for the VMM memory that backs allocations under
# swap_engine = copy, so the shim makes its own; another process under
# the shim opens it and shares the memory both ways; what is exported
# stays on the device when the exporter is swapped out. Other memory, and
# handles not the shim's, go to the driver untouched.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=64Mi
C=$CLIENTS/cuclient_linked
MiB=$((1 << 20))
conf=$TMP/gpufrac.conf

printf '[daemon]\nswap_engine = copy\n' >"$conf"
daemon_start

# a exports a backed allocation (one granule or more) and, once b has
# written its own pattern there (seed 1) while a was swapped out, reads it
# back: what another process maps stays on the device, in use.
client_start a preload "$C" alloc 4Mi fill ipcget "$TMP/h" hold \
	seed 1 check hold
check_eq "a has a handle for its backed memory" \
	"$(grep '^ipcget' "$TMP/a.out")" "ipcget ok"
client_start b preload "$C" ipcopen "$TMP/h" 4Mi check hold seed 1 fill \
	hold ipcclose hold
check_eq "b opens it and reads a's data" \
	"$(grep -E '^(ipcopen|check)' "$TMP/b.out")" "ipcopen ok
check ok"
check "the memory is a's only: the device holds 4 MiB" \
	device_used_is $((4 * MiB))
check "a, its exporter, is swapped out by copy all the same" \
	ctl swap out "$PID_a"
check "what b maps stayed on the device, and the event says so" \
	has_event swap-out "$PID_a" "1 stayed: 4.0MiB (ipc)"
kill -USR1 "$PID_b"
wait_for "b writes its pattern while a is out" 10 \
	grep -q '^fill ok' "$TMP/b.out"
check "a is back in" ctl swap in "$PID_a"
kill -USR1 "$PID_a"
wait_for "a reads again" 10 grep -q '^check' "$TMP/a.out"
check_eq "a sees what b wrote meanwhile" \
	"$(grep '^check' "$TMP/a.out")" "check ok"
wait_for "b holds again" 10 eval "[ \$(grep -c '^holding' $TMP/b.out) = 2 ]"
kill -USR1 "$PID_b"
wait_for "b closes it" 10 grep -q '^ipcclose' "$TMP/b.out"
check_eq "closing works" "$(grep '^ipcclose' "$TMP/b.out")" "ipcclose ok"
client_release b
client_release a
wait_for "nothing is left charged" 10 device_used_is 0

# A handle whose memory its exporter has freed opens to nothing.
client_start a preload "$C" alloc 4Mi ipcget "$TMP/h2" free hold
client_start b preload "$C" ipcopen "$TMP/h2" 4Mi hold
check_eq "a freed handle is CUDA_ERROR_INVALID_HANDLE" \
	"$(grep '^ipcopen' "$TMP/b.out")" "ipcopen err=400"
client_release b
client_release a

# Nor once its descriptor's number is reused by the next export (issue
# 33, point 2): the handle names that export, not the number.
client_start a preload "$C" alloc 4Mi fill ipcget "$TMP/h6" free \
	seed 1 alloc 4Mi fill ipcget "$TMP/h7" hold seed 1 check
client_start b preload "$C" ipcopen "$TMP/h6" 4Mi hold
check_eq "the stale handle opens nothing: CUDA_ERROR_INVALID_HANDLE" \
	"$(grep -E '^(ipcopen|check)' "$TMP/b.out")" "ipcopen err=400"
client_release b
client_start b preload "$C" ipcopen "$TMP/h7" 4Mi seed 1 check hold
check_eq "the new one opens the new allocation" \
	"$(grep -E '^(ipcopen|check)' "$TMP/b.out")" "ipcopen ok
check ok"
client_release b
client_release a
check_eq "whose data nobody overwrote" "$(tail -1 "$TMP/a.out")" "check ok"

# An importer that may not ptrace the exporter cannot take its
# descriptor: said once on stderr.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	nobody_setup
	client_start a preload "$C" alloc 4Mi ipcget "$TMP/h5" hold
	client_start n "${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" \
		env "LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM" "$C" \
		ipcopen "$TMP/h5" 4Mi hold
	check_eq "nobody may not open root's memory: CUDA_ERROR_MAP_FAILED" \
		"$(grep '^ipcopen' "$TMP/n.out")" "ipcopen err=205"
	check "it says why" grep -q \
		"^gpufrac: cannot take IPC memory of pid $PID_a: .*ptrace" \
		"$TMP/n.err"
	client_release n
	client_release a
else
	echo "# not root or no setpriv: the ptrace permission is not checked"
fi

# Memory the shim does not back, and handles not its own, are the
# driver's (the simulated one has no legacy IPC: not supported).
client_start a preload "$C" alloc 4Ki ipcget "$TMP/h3" hold
check_eq "a small allocation's handle is the driver's answer" \
	"$(grep '^ipcget' "$TMP/a.out")" "ipcget err=801"
printf '%0128d' 0 >"$TMP/h4"
client_start b preload "$C" ipcopen "$TMP/h4" 4Mi hold
check_eq "a handle not the shim's goes to the driver" \
	"$(grep '^ipcopen' "$TMP/b.out")" "ipcopen err=801"
client_release b
client_release a
finish
