# A client whose connection closes before its process exits (as every
# process's does: the socket closes in the kernel's exit, before the driver
# frees its memory) keeps its charge until the process has exited.
. "$(dirname "$0")/lib.sh"
daemon_start
uuid=$(ctl status --json | json 'j["devices"][0]["uuid"]')
GiB=$((1 << 30))

mkfifo "$TMP/in"
"$PYTHON" "$TOP/tests/clients/departing.py" "$GPUFRAC_SOCKET" "$uuid" $GiB \
	<"$TMP/in" >"$TMP/d.out" 2>"$TMP/d.err" &
pid=$!
exec 3>"$TMP/in"
wait_for "the client closes its connection" 10 grep -q '^closed' "$TMP/d.out"
wait_for "the daemon sees it hang up" 10 \
	grep -q "client pid $pid left; 1.0GiB returned once it has exited" \
	"$TMP/gpufracd.log"
check "ps still shows it, with its charge" \
	eval '[ "$(ctl ps --json | json "[(c[\"pid\"], c[\"state\"], c[\"devices\"][0][\"used_bytes\"]) for c in j[\"clients\"]]")" = "[($pid, '"'running'"', $GiB)]" ]'
check "the device is still charged" device_used_is $GiB

echo exit >&3
exec 3>&-
wait "$pid"
check_eq "the client exits cleanly" $? 0
wait_for "its charge comes back once it has exited" 10 device_used_is 0
check "ps no longer shows it" clients_are 0
check "the log says so" \
	grep -q "released pid $pid .*memory came back" "$TMP/gpufracd.log"
finish
