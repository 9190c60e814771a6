# Malformed, truncated, oversized, unknown and out-of-order messages close
# that connection only; the daemon keeps serving everybody else.
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
daemon_start

GPUFRAC_MEMORY_LIMIT=2Gi client_start a preload "$C" alloc 1Gi hold alloc 512Mi
"$PYTHON" "$TOP/tests/clients/garbage.py" "$GPUFRAC_SOCKET" >"$TMP/garbage.out" 2>&1
check "every bad message closed its connection" \
	grep -q '^closed [0-9]* of [0-9]*$' "$TMP/garbage.out"
check_eq "every one of them" \
	"$(sed -n 's/^closed \([0-9]*\) of \([0-9]*\)$/\1=\2/p' "$TMP/garbage.out" |
	   awk -F= '{ print ($1 == $2) }')" 1
check "a good query on a new connection is answered" \
	grep -q '^status answered$' "$TMP/garbage.out"
check "the daemon is still running" kill -0 "$DAEMON_PID"
check "it still answers queries" device_used_is $((1 << 30))
client_release a
check_eq "the existing client still works" "$(tail -n 1 "$TMP/a.out")" "alloc ok"
finish
