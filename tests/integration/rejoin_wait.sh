# A process that has registered with gpufracd takes nothing the daemon
# did not grant while its daemon is away (issue 40): an allocation that
# needs the daemon waits for it to come back, then is asked of it; past
# GPUFRAC_REJOIN_TIMEOUT it fails with CUDA_ERROR_OUT_OF_MEMORY, said
# once. A process that never reached a daemon still goes by its last
# known limit, and a freed allocation is let go at once, daemon or not.
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
daemon_start

# Registered; then its daemon stops. 300 ms is all it may wait.
GPUFRAC_REJOIN_TIMEOUT=300ms client_start late preload "$C" alloc 64Mi \
	hold free alloc 256Mi hold alloc 256Mi
# Registered; its daemon stops, and is back before the wait ends.
GPUFRAC_REJOIN_TIMEOUT=1h client_start back preload "$C" alloc 64Mi \
	hold alloc 256Mi hold
daemon_stop

# late frees its 64 MiB (local) and asks for 256 MiB, which no daemon grants.
kill -USR1 "$PID_late"
wait_for "late's allocation returns" 10 \
	eval "[ \"\$(grep -c '^holding' '$TMP/late.out')\" = 2 ]"
check_eq "its free went on, its allocation failed" \
	"$(sed -n 3,4p "$TMP/late.out")" "free ok
alloc err=2"
check "saying so once" grep -q \
	"gpufracd at '$GPUFRAC_SOCKET' did not come back within 300 ms; allocations fail until it does" \
	"$TMP/late.err"
check_eq "never deciding alone" "$(grep -c 'locally' "$TMP/late.err")" 0

# back asks for 256 MiB while no daemon is there: it waits.
kill -USR1 "$PID_back"
daemon_start
wait_for "back's allocation returns once the daemon is back" 20 \
	eval "[ \"\$(grep -c '^holding' '$TMP/back.out')\" = 2 ]"
check_eq "granted" "$(sed -n 3p "$TMP/back.out")" "alloc ok"
# The new daemon's grant, not a charge re-registered on the shim's word.
granted_back() {
	ctl events --json | grep "\"event\":\"grant\",\"pid\":$PID_back," |
	    grep -q '"bytes":268435456,'
}
check "which it asked once rejoined" granted_back
client_release back

# late, rejoined, allocates again as the daemon says.
kill -USR1 "$PID_late"
wait "$PID_late"
check_eq "late allocates once its daemon is back" \
	"$(tail -n 1 "$TMP/late.out")" "alloc ok"

# Never registered: the daemon was never there. The last known limit.
out=$(GPUFRAC_SOCKET=$TMP/none.sock GPUFRAC_MEMORY_LIMIT=1Gi \
	preload "$C" alloc 512Mi alloc 1Gi 2>"$TMP/none.err")
check_eq "a process that never reached a daemon decides locally" "$out" \
	"alloc ok
alloc err=2"
check "and says so" grep -q "enforcing the last known limit locally" \
	"$TMP/none.err"
finish
