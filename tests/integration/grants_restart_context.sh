# A process out to host when its daemon is killed keeps its whole record
# across the restart, its context memory too: the grants' file carries
# the context the daemon measured, so the next daemon does not take it
# from the process's page (which may not say it yet, and is the
# process's to write): here the page says nothing of it. Out to host,
# NVML shows nothing of the process either. The processes on the device
# beside it keep their records as well.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=512Mi SIMCUDA_CONTEXT_BYTES=3Mi
C=$CLIENTS/cuclient_linked
printf '[daemon]\nswap_engine = checkpoint\nlease_idle = 1h\n' >"$TMP/gpufrac.conf"
daemon_start
# records: each client's pid, state, and per device its used, host and
# limit bytes, one line each, by pid.
records() {
	ctl ps --json | json '"\n".join(" ".join([str(c["pid"]), c["state"]] +
	    ["%d:%d:%d" % (d["used_bytes"], d["host_bytes"], d["limit_bytes"])
	    for d in c["devices"]])
	    for c in sorted(j["clients"], key=lambda c: c["pid"]))'
}
field() { ps_json "[c for c in j['clients'] if c['pid'] == $1][0]$2"; }
ctx_is() { [ "$(ctl allocs "$1" --json | json 'sum(x["size"] for x in j["allocations"] if x["kind"] == "context")')" = $((3 << 20)) ]; }

client_start a preload "$C" alloc 64Mi fill hold check
client_start b preload "$C" alloc 400Mi hold
wait_for "a's context is measured" 10 ctx_is "$PID_a"
wait_for "b's context is measured" 10 ctx_is "$PID_b"
check "a is swapped out by checkpoint" ctl swap out "$PID_a"
wait_for "a is out" 10 eval '[ "$(field "$PID_a" "['"'"'state'"'"']")" = swapped ]'
# f takes the room a left: a stays out across the restart.
client_start f preload "$C" alloc 64Mi hold
before=$(records)

kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
DAEMON_PID=
# a's page, the process's to write, no longer says its context (as a
# page whose measure was never written, or a process that says less).
unsay_context() {
	"$PYTHON" - "$1" <<-'PY'
	import mmap, os, sys
	d = "/proc/%s/fd" % sys.argv[1]
	for n in os.listdir(d):
	    if "gpufrac-activity" in os.readlink(os.path.join(d, n)):
	        fd = os.open(os.path.join(d, n), os.O_RDWR)
	        m = mmap.mmap(fd, 4096)
	        m[64 + 24:64 + 32] = bytes(8)	# lease[0].context
	        m.close()
	        sys.exit(0)
	sys.exit(1)
	PY
}
check "a's page no longer says its context" unsay_context "$PID_a"
daemon_start
same() { [ "$(records)" = "$before" ]; }
wait_for "each record after the restart equals its record before" 10 same
check "a's context is charged as before" ctx_is "$PID_a"
check_eq "nothing said unrecorded" "$(events_of unrecorded | wc -l)" 0
client_release f
client_release b
client_release a
check_eq "a's data intact" "$(tail -n 1 "$TMP/a.out")" "check ok"
finish
