# gpufracctl ps and allocs show a live client's usage, in tables and JSON.
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
daemon_start

GPUFRAC_MEMORY_LIMIT=2Gi client_start a preload "$C" alloc 256Mi \
	pitch 1000 1000 hold
pid=$PID_a
ps=$(ctl ps --json)
check_eq "ps lists the client" "$(echo "$ps" | json '[c["pid"] for c in j["clients"]]')" "[$pid]"
check_eq "ps shows its usage, a first lease of 4 MiB with it" \
	"$(echo "$ps" | json 'j["clients"][0]["devices"][0]["used_bytes"]')" \
	$((260 * 1048576 + 1024 * 1000))
check_eq "and that the lease is not allocated" \
	"$(echo "$ps" | json 'j["clients"][0]["devices"][0]["leased_bytes"]')" \
	$((4 * 1048576))
check_eq "ps shows its limit" \
	"$(echo "$ps" | json 'j["clients"][0]["devices"][0]["limit_bytes"]')" \
	$((2 << 30))
check_eq "ps shows its state" \
	"$(echo "$ps" | json 'j["clients"][0]["state"]')" running
check_eq "ps shows its uid" \
	"$(echo "$ps" | json 'j["clients"][0]["uid"]')" "$(id -u)"
uuid=$(echo "$ps" | json 'j["clients"][0]["devices"][0]["uuid"]')
check_eq "the device is the daemon's device" "$uuid" \
	"$(ctl status --json | json 'j["devices"][0]["uuid"]')"
check "ps prints a table with the pid and IEC sizes" \
	sh -c "'$GPUFRACCTL' -s '$GPUFRAC_SOCKET' ps | grep -E '^ *$pid .*(260\.9MiB +4(\.0)?MiB|256\.9MiB +0B) '"

allocs=$(ctl allocs "$pid" --json)
check_eq "allocs lists both allocations" \
	"$(echo "$allocs" | json 'sorted((a["kind"], a["size"]) for a in j["allocations"])')" \
	"[('mem', 268435456), ('pitch', 1024000)]"
check_eq "allocs names the pid" "$(echo "$allocs" | json 'j["pid"]')" "$pid"
check "allocs gives device pointers in hex" \
	sh -c "echo '$allocs' | grep -Eq '\"ptr\":\"0x[0-9a-f]+\"'"
check "allocs prints a table" \
	sh -c "'$GPUFRACCTL' -s '$GPUFRAC_SOCKET' allocs $pid | grep -q 256.0MiB"
ctl allocs 999999 >/dev/null 2>"$TMP/err"
check_eq "allocs of an unknown pid exits 1" $? 1
check "with one line saying why" grep -q 999999 "$TMP/err"
ctl bogus >/dev/null 2>&1
check_eq "an unknown command exits 2" $? 2

client_release a
wait_for "the client's charge is returned when it exits" 10 device_used_is 0
finish
