# The shim is lazy: a preloaded program that never uses CUDA is untouched and
# silent, with or without a daemon; GPUFRAC_DISABLE=1 passes everything
# through.
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked

# A listener that counts connections stands in for the daemon.
probe_start() {
	rm -f "$GPUFRAC_SOCKET"
	"$PYTHON" "$TOP/tests/clients/probe.py" "$GPUFRAC_SOCKET" >"$TMP/probe.out" &
	probe=$!
	wait_for "the probe listens" 10 test -S "$GPUFRAC_SOCKET"
}
# probe_stop: stop it; it writes the count to $TMP/probe.out. (Not in a
# command substitution: only this shell can wait for the probe.)
probe_stop() {
	kill -TERM "$probe"
	wait "$probe"
}
probe_count() { sed -n 's/^connections: //p' "$TMP/probe.out"; }

probe_start

out=$(preload sh -c 'echo hello; ls / >/dev/null' 2>"$TMP/err")
check_eq "a shell prints what it prints" "$out" hello
check_eq "and nothing else" "$(cat "$TMP/err")" ""
out=$(preload "$PYTHON" -c 'import ctypes; print(ctypes.CDLL("libc.so.6").getpid() > 0)' 2>"$TMP/err")
check_eq "a program using dlsym on other libraries works" "$out" True
check_eq "silently" "$(cat "$TMP/err")" ""
out=$(GPUFRAC_DISABLE=1 GPUFRAC_MEMORY_LIMIT=1Gi preload "$C" alloc 2Gi 2>&1)
check_eq "GPUFRAC_DISABLE=1 passes through" "$out" "alloc ok"

probe_stop
check_eq "none of them contacted the daemon" "$(probe_count)" 0

# The control: a program that uses CUDA does.
probe_start
preload "$C" alloc 1Mi >/dev/null 2>&1
probe_stop
check "a CUDA program contacts the daemon" test "$(probe_count)" -ge 1

rm -f "$GPUFRAC_SOCKET"
out=$(preload sh -c 'echo hello' 2>&1)
check_eq "without a daemon too" "$out" hello
finish
