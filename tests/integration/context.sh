# Each context's own device memory is charged to its process, measured by
# the daemon with NVML (usage less what the ledger charges it): it shows as
# a "context" record, counts toward the limit, and the process's
# cuMemGetInfo sees it as used. A restarted daemon takes the measure the
# last one left in the process's activity page: NVML cannot tell the
# allocations a process re-registers from its context, and sees nothing
# of a process swapped out; one that started with no daemon says in the
# page what the allocations it registers hold. A context made since the
# last look is measured as its process is swapped out: once out, NVML
# shows nothing of it.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_CONTEXT_BYTES=100Mi SIMCUDA_DEVICES=4Gi,4Gi
C=$CLIENTS/cuclient_linked
MiB=$((1 << 20))

daemon_start
check "the daemon measures contexts with NVML" \
	grep -q 'context memory measured with NVML' "$TMP/gpufracd.log"
client_start a preload "$C" alloc 1Gi hold
check_eq "the context is charged next to the allocation" \
	"$(ctl allocs "$PID_a" --json | json 'sorted((x["kind"], x["size"]) for x in j["allocations"])')" \
	"[('context', $((100 * MiB))), ('mem', $((1024 * MiB)))]"
check "the device is charged both" device_used_is $((1124 * MiB))
client_release a
wait_for "both go when the process exits" 10 device_used_is 0

check_eq "the context counts toward the limit, and as used" \
	"$(GPUFRAC_MEMORY_LIMIT=1Gi preload "$C" alloc 1Gi info alloc 900Mi)" \
	"alloc err=2
info free=$((924 * MiB)) total=$((1024 * MiB))
alloc ok"
wait_for "nothing is left charged" 10 device_used_is 0

client_start b preload "$C" alloc 64Mi dev 1 alloc 32Mi hold reset hold
check_eq "each device has its own context record" \
	"$(ctl allocs "$PID_b" --json | json 'sorted((x["kind"], x["size"]) for x in j["allocations"]), len({x["device"] for x in j["allocations"] if x["kind"] == "context"})')" \
	"([('context', $((100 * MiB))), ('context', $((100 * MiB))), ('mem', $((32 * MiB))), ('mem', $((64 * MiB)))], 2)"
wait_for "device 0 is charged its context and 64 MiB" 10 device_used_is \
	$((164 * MiB)) 0
wait_for "device 1 is charged its context and 32 MiB" 10 device_used_is \
	$((132 * MiB)) 1
# A context's end takes its own device's allocations, not another's.
kill -USR1 "$PID_b"
wait_for "b resets device 1's primary context" 10 grep -q '^reset ok' \
	"$TMP/b.out"
# mems_are PID LIST: PID's allocations (device, size), contexts aside.
mems_are() {
	[ "$(ctl allocs "$1" --json | json '[(x["device"], x["size"]) for x in j["allocations"] if x["kind"] == "mem"]')" = "$2" ]
}
dev0=$(ctl status --json | json "j['devices'][0]['uuid']")
wait_for "its allocation is given back, device 0's stays" 10 mems_are \
	"$PID_b" "[('$dev0', $((64 * MiB)))]"
client_release b
wait_for "nothing is left charged" 10 device_used_is 0

# host_is PID BYTES: what ps says PID holds out on the host.
host_is() {
	[ "$(ps_json "[c['devices'][0]['host_bytes'] for c in j['clients'] if c['pid'] == $1]")" = "[$2]" ]
}
# registered PID: its allocation is known to the daemon (re-registered).
registered() { ctl allocs "$1" --json | grep -q '"kind":"mem"'; }
restart() {
	kill -9 "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null
	daemon_start
}
client_start r preload "$C" alloc 1Gi fill hold check hold
restart
wait_for "a restarted daemon: r re-registers" 10 registered "$PID_r"
check "at once charged its allocation and its context, once each" \
	device_used_is $((1124 * MiB))
check "r is swapped out by hand, context and all" ctl swap out "$PID_r"
check "its host bytes count both" host_is "$PID_r" $((1124 * MiB))
# 1 GiB left free: r's allocation would fit, but not its context.
client_start b preload "$C" alloc $((2972 * MiB)) hold
restart
wait_for "r re-registers, out to host" 10 registered "$PID_r"
check "its host bytes count its context still" host_is "$PID_r" \
	$((1124 * MiB))
check "r is not brought back where it does not fit" state_is "$PID_r" \
	swapped
client_release b
wait_for "once b is gone, r comes back" 10 state_is "$PID_r" running
check "no restore was tried in vain" eval \
	"! ctl events --json | grep -q '\"pid\":$PID_r,.*restore failed'" ||
	{ ctl events | tail -8; grep -v 'grant pid' "$TMP/gpufracd.log" |
	    tail -15; }
kill -USR1 "$PID_r"
wait_for "r's data survived" 10 grep -q '^check ok' "$TMP/r.out"
client_release r

# A process that started while no daemon ran says what its allocations
# hold when it first registers them: NVML counts them already.
daemon_stop
client_start s preload "$C" alloc 1Gi hold
daemon_start
wait_for "s, started with no daemon, registers when one comes" 10 \
	registered "$PID_s"
check "at once charged its allocation and its context, once each" \
	device_used_is $((1124 * MiB))
client_release s

# Looks an hour apart; t's second context, 32 MiB, is below what a
# glance between two looks takes for a rise.
printf '[daemon]\nlook_interval = 1h\n' >"$TMP/gpufrac.conf"
restart
SIMCUDA_CONTEXT_BYTES=32Mi client_start t preload "$C" alloc 64Mi hold ctx \
	hold
kill -USR1 "$PID_t"
wait_for "t makes a second context" 10 eval \
	'[ "$(grep -c "^ctx ok\|^holding" "$TMP/t.out")" = 3 ]'
check "t is swapped out by hand" ctl swap out "$PID_t"
check "its host bytes count its allocation and both contexts" host_is \
	"$PID_t" $((128 * MiB))
finish
