# A client that dies, even by SIGKILL, has its whole charge returned.
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
daemon_start

client_start a preload "$C" alloc 1Gi alloc 1Gi managed 512Mi hold
check "the daemon charges the device" device_used_is $((2560 << 20))
kill -KILL "$PID_a"
wait "$PID_a" 2>/dev/null
wait_for "SIGKILL returns the whole charge" 10 device_used_is 0
check "and the client is gone" clients_are 0

# The memory is really free again: another process takes the whole device.
got=$(preload "$C" alloc 4Gi 2>&1)
check_eq "a new client gets the whole device" "$got" "alloc ok"
finish
