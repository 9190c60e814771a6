# A pid read once is not a process (issue 22): a client of uid 65534
# charges 3 GiB, forks a child that keeps its connection, and exits; its
# pid is given to an unrelated root process. The dead client's charge must
# go (it has exited, whoever keeps its socket), the child must not speak
# for it, and a root job of higher priority under resolver = preempt must
# be granted without any signal reaching the unrelated process. Run in a
# pid namespace of its own, where root may choose the next pid.
. "$(dirname "$0")/pidns_lib.sh"
. "$(dirname "$0")/lib.sh"
H=$TOP/tests/clients/hostile.py
GiB=$((1 << 30))
nobody_setup
printf '[group low]\nmatch = uid:65534\npriority = 0\non_preempt = kill\nkill_grace = 1s\n[group high]\nmatch = uid:0\npriority = 10\nresolver = preempt\n' \
	>"$TMP/gpufrac.conf"
daemon_start
uuid=$(ctl status --json | json 'j["devices"][0]["uuid"]')

"$PYTHON" "$H" hold "$GPUFRAC_SOCKET" "$uuid" $((3 * GiB)) >"$TMP/hold.out" &
victim=$!
wait "$victim"
check_eq "the client charges 3 GiB, forks and exits" $? 0
child=$(cat "$TMP/hold.out")
check "its child lives on with the connection" kill -0 "$child"
wait_for "the dead client's charge goes though its child keeps the socket" \
	10 device_used_is 0
check "ps shows no client of the dead pid" \
	eval '[ "$(ctl ps --json | json "[c for c in j[\"clients\"] if c[\"pid\"] == $victim]")" = "[]" ]'
check "the log says why its connection closed" \
	grep -q "pid $victim: its process has exited, another keeps its socket" \
	"$TMP/gpufracd.log"

# The same pid, now an unrelated root process.
stranger=$("$PYTHON" "$H" stranger "$victim" "$TMP/signalled")
[ "$stranger" = "$victim" ] ||
	skip "could not give pid $victim to another process (got $stranger)"
check_eq "a root job of higher priority is granted at once" \
	"$("$PYTHON" "$H" reserve "$GPUFRAC_SOCKET" "$uuid" $((3 * GiB)))" \
	GRANT
check "no signal reached the process that has the pid now" \
	test ! -e "$TMP/signalled"
check "it is alive" kill -0 "$stranger"
check "no preempt or kill event names the pid" \
	eval '! ctl events --json | grep -Eq "\"event\":\"(preempt|kill)\""'
kill -9 "$child" "$stranger" 2>/dev/null
finish
