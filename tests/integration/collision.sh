# Two processes within their limits that do not both fit the device: the
# later request fails at once (the fail resolver).
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
daemon_start

GPUFRAC_MEMORY_LIMIT=3Gi client_start a preload "$C" alloc 3Gi hold
check_eq "a request that does not fit the device fails" \
	"$(GPUFRAC_MEMORY_LIMIT=3Gi preload "$C" alloc 2Gi info)" \
	"alloc err=2
info free=$((1 << 30)) total=$((3 << 30))"
check_eq "one that fits succeeds" \
	"$(GPUFRAC_MEMORY_LIMIT=3Gi preload "$C" alloc 1Gi)" "alloc ok"
client_release a
wait_for "everything is returned" 10 device_used_is 0
finish
