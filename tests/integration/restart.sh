# After a daemon restart every shim reconnects by itself and re-registers its
# live allocations: nothing lost, nothing counted twice, limits still hold.
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
daemon_start

GPUFRAC_MEMORY_LIMIT=2Gi client_start a preload "$C" alloc 1Gi pitch 1000 1000 \
	hold alloc 512Mi alloc 1Gi info
used=$((1024 * 1048576 + 1024 * 1000))
check "charged before the restart" device_used_is $used

daemon_stop
daemon_start
# allocs_are PID N: the daemon knows N allocations of PID (contexts aside).
allocs_are() {
	[ "$(ctl allocs "$1" --json 2>/dev/null | json 'len([a for a in j["allocations"] if a["kind"] != "context"])')" = "$2" ]
}
wait_for "the client re-registers both allocations with the new daemon" 3 \
	allocs_are "$PID_a" 2
check "under its own pid" clients_are 1
# Its context (none here) was measured by the last daemon: NVML, which
# sees the re-registered allocations, is not asked again.
check "charged them once, at once" device_used_is $used

# Past the hold it allocates 512Mi (fits its 2Gi) and 1Gi (does not).
client_release a
check_eq "the limit still holds after the restart" \
	"$(sed 1,3d "$TMP/a.out")" "alloc ok
alloc err=2
info free=$(((2 << 30) - used - (512 << 20))) total=$((2 << 30))"
wait_for "and its charge is returned when it exits" 10 device_used_is 0
finish
