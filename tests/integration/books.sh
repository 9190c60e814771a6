# The shim's books stay exact (issue 26): an allocation made by a signal
# handler that interrupts a hooked call is refused, never let through
# unseen; memory a context reset or destroy frees is given back at once,
# to the lease and to the daemon, with and without one, and a restarted
# daemon is told of nothing it freed.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=256Mi
C=$CLIENTS/cuclient_linked
MiB=$((1 << 20))

ps_of() {
	ctl ps --json | json "[d['$2'] for c in j['clients'] if c['pid'] == $1 for d in c['devices']][0]"
}

daemon_start

# --- a signal handler inside a hooked call ------------------------------
GPUFRAC_MEMORY_LIMIT=16Mi client_start s preload "$C" sigalloc 200 1Mi \
	many 100 1Mi hold
check_eq "a handler that interrupts a hooked call is refused its memory" \
	"$(sed -n 1p "$TMP/s.out")" "sigalloc 0 err=2"
check_eq "so the whole limit is left to the program" \
	"$(sed -n 2p "$TMP/s.out")" "many 16 err=2"
check_eq "and the daemon charges what the program holds" \
	"$(ps_of "$PID_s" used_bytes)" $((16 * MiB))
client_release s

# --- a primary context's reset gives its memory back ---------------------
rounds="many 10 1Mi reset many 10 2Mi reset many 10 3Mi reset many 10 4Mi"
want="many 10
reset ok
many 10
reset ok
many 10
reset ok
many 10"
# allocs_are PID N: the daemon knows N allocations of PID (contexts aside).
allocs_are() {
	[ "$(ctl allocs "$1" --json 2>/dev/null | json 'len([a for a in j["allocations"] if a["kind"] != "context"])')" = "$2" ]
}
# shellcheck disable=SC2086
GPUFRAC_LOG=info GPUFRAC_MEMORY_LIMIT=64Mi client_start r preload "$C" $rounds reset \
	pitch 1000 1000 array 1000 1000 hold
check_eq "each round after a reset has the whole limit" \
	"$(sed -n 1,7p "$TMP/r.out")" "$want"
check "after the last reset the daemon charges only what came after" \
	device_used_is $((1024 * 1000 + 4 * MiB))
check "and lists only that" allocs_are "$PID_r" 2
check "the log says what a reset gave back" \
	grep -q "a primary context ended: 40.0MiB in 10 allocations" \
	"$TMP/r.err"
# What the daemon's context-end events of PID say was given back, in order.
ctx_end_bytes() {
	ctl events --json | "$PYTHON" -c 'import json, sys
print([e["bytes"] for e in map(json.loads, sys.stdin)
    if e["event"] == "context-end" and e["pid"] == int(sys.argv[1])])' "$1"
}
check_eq "and so does a context-end event of the daemon, per reset" \
	"$(ctx_end_bytes "$PID_r")" \
	"[$((10 * MiB)), $((20 * MiB)), $((30 * MiB)), $((40 * MiB))]"
daemon_stop
daemon_start
wait_for "a restarted daemon is told of the live allocations" 3 \
	allocs_are "$PID_r" 2
check "and of nothing that the resets freed" \
	device_used_is $((1024 * 1000 + 4 * MiB))
client_release r

# --- without a daemon: the shim's own limit -----------------------------
# shellcheck disable=SC2086
got=$(GPUFRAC_SOCKET=$TMP/none.sock GPUFRAC_MEMORY_LIMIT=64Mi \
	preload "$C" $rounds 2>/dev/null)
check_eq "without a daemon each round has the whole limit too" "$got" "$want"

# --- a destroyed context's memory and arrays are given back --------------
GPUFRAC_MEMORY_LIMIT=64Mi client_start d preload "$C" alloc 4Mi ctx \
	many 10 4Mi array 1000 1000 ctxdestroy many 16 4Mi hold
check_eq "the memory of a destroyed context is the program's again" \
	"$(sed -n 2,6p "$TMP/d.out")" "ctx ok
many 10
array ok
ctxdestroy ok
many 15 err=2"
check "the daemon charges what is live" device_used_is $((64 * MiB))
client_release d

# --- a release that leaves its context active ----------------------------
# Retained twice (cuclient's own, and dev's): the first release leaves
# the context, and what it holds, as they are, without asking the driver
# of each allocation; the second ends it and gives them back.
GPUFRAC_MEMORY_LIMIT=64Mi client_start k preload "$C" dev 0 \
	many 100 64Ki queries release1 queries info release1 dev 0 info hold
check_eq "a release that leaves the context asks the driver nothing of it" \
	"$(sed -n 4p "$TMP/k.out")" "$(sed -n 2p "$TMP/k.out")"
check_eq "and leaves its memory charged" "$(sed -n 5p "$TMP/k.out")" \
	"info free=$((64 * MiB - 100 * 64 * 1024)) total=$((64 * MiB))"
check_eq "the last release gives it all back" "$(sed -n 6,7p "$TMP/k.out")" \
	"release1 ok
info free=$((64 * MiB)) total=$((64 * MiB))"
check "and the daemon charges nothing of it" device_used_is 0
client_release k

# --- a free while a context's end is in the driver ----------------------
# Thread B frees an allocation while thread A's cuCtxDestroy of its
# context is held inside the driver, after the shim has taken the
# context's allocations from its books: B's free waits for the end to
# settle. A destroy that fails puts them back, then B's free takes its
# own; one that ends the context gives them back, B's free then fails.
E=$CLIENTS/ctx_end_free_linked
for how in fail end; do
	GPUFRAC_MEMORY_LIMIT=64Mi client_start "$how" preload "$E" "$how" hold
	out=$TMP/$how.out
	if [ "$how" = fail ]; then calls="destroy err=201
free ok"; else calls="destroy ok
free err=1"; fi
	check_eq "a free beside a destroy that does ($how) waits for it" \
		"$(sed -n 2,4p "$out")" "alloc ok
$calls"
	check_eq "and the program is shown all its memory back ($how)" \
		"$(sed -n 5p "$out")" "$(sed -n 1p "$out")"
	check "and the daemon charges nothing of it ($how)" device_used_is 0
	client_release "$how"
done

finish
