# The configuration: -n checks it, limits come from it, and SIGHUP re-reads
# it, keeping the old one when the new one is bad.
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
conf=$TMP/gpufrac.conf

printf '[daemon]\ndefault_limit = 50%%\n' >"$conf"
out=$("$GPUFRACD" -n -c "$conf" 2>&1)
check_eq "-n accepts a good file" "$?:$out" "0:configuration OK"
printf '[daemon]\ndefault_limit = 50%%\nlog_level = loud\n' >"$TMP/bad.conf"
out=$("$GPUFRACD" -n -c "$TMP/bad.conf" 2>&1)
check_eq "-n rejects a bad file with exit 1" "$?" 1
check "and names the file and line" sh -c "echo '$out' | grep -q '^$TMP/bad.conf:3: '"
check "the example configuration is valid" "$GPUFRACD" -n -c "$TOP/etc/gpufrac.conf"
printf '[daemon]\nlease_idle = 50ms\n' >"$TMP/short.conf"
check_eq "a lease_idle too short to draw from is refused on its line" \
	"$("$GPUFRACD" -n -c "$TMP/short.conf" 2>&1)" \
	"$TMP/short.conf:2: bad duration for 'lease_idle': '50ms' (at least 100ms: a lease needs time to be drawn from)"

daemon_start
check_eq "default_limit caps a client that asks for more" \
	"$(GPUFRAC_MEMORY_LIMIT=100% preload "$C" total)" "total $((2 << 30))"
check_eq "a client may ask for less" \
	"$(GPUFRAC_MEMORY_LIMIT=1Gi preload "$C" total)" "total $((1 << 30))"
check_eq "and is held to it" \
	"$(GPUFRAC_MEMORY_LIMIT=1Gi preload "$C" alloc 768Mi alloc 512Mi)" \
	"alloc ok
alloc err=2"

# A bad reload is reported and changes nothing.
printf '[daemon]\ndefault_limit = 25%%\nbogus_key = 1\n' >"$conf"
kill -HUP "$DAEMON_PID"
wait_for "a bad reload is logged with its line" 10 \
	grep -q "$conf:3: " "$TMP/gpufracd.log"
check "the daemon survives it" kill -0 "$DAEMON_PID"
check_eq "the old configuration stays" "$(preload "$C" total)" \
	"total $((2 << 30))"

# A good reload applies to new clients.
printf '[daemon]\ndefault_limit = 25%%\n' >"$conf"
kill -HUP "$DAEMON_PID"
limit_is_1g() { [ "$(preload "$C" total)" = "total $((1 << 30))" ]; }
wait_for "a good reload applies" 10 limit_is_1g

# [device] reserve keeps memory back from sharing.
printf '[daemon]\ndefault_limit = 100%%\n[device 0]\nreserve = 1Gi\n' >"$conf"
kill -HUP "$DAEMON_PID"
capacity_is_3g() {
	[ "$(ctl status --json | json 'j["devices"][0]["capacity_bytes"]')" = $((3 << 30)) ]
}
wait_for "reserve shrinks the shareable capacity" 10 capacity_is_3g
check_eq "a client sees the shareable total" "$(preload "$C" total)" \
	"total $((3 << 30))"
check_eq "and cannot take the reserve" \
	"$(preload "$C" alloc 3Gi alloc 512Mi)" "alloc ok
alloc err=2"
finish
