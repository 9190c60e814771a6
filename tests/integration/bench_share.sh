# make bench-share in miniature (bench/share -q: three tenants, bursts due
# over 1 s, all four ways): the last line is one JSON object with the
# four ways and their figures; static partitions fail the bursts over
# their share (every tenant peaks above a third of the device) and so do
# only part of the work; waiting for memory fails no allocation and does
# all of it; preempted tenants are swapped out, not killed. However it
# ends, the run leaves no process, directory or simulated device behind.
# Behaviour only: no figure is held to a target here.
. "$(dirname "$0")/lib.sh"
SHARE=$BUILD/bench/share

[ "$(id -u)" = 0 ] ||
	skip "needs root: the preempt way tells its tenants apart by gid"
[ -x "$SHARE" ] && [ -x "$BUILD/bench/share_tenant" ] ||
	skip "bench/share is not built (make bench/share bench/share_tenant)"

# left_behind PID: what the run of share PID left: its directory, its
# simulated device, processes of its simulated device.
left_behind() {
	ls -d "$TMP"/gpufrac-share.* 2>/dev/null
	ls "/dev/shm/simcuda-gfshare-$1" 2>/dev/null
	grep -lz "^SIMCUDA_STATE=gfshare-$1\$" /proc/[0-9]*/environ 2>/dev/null
}

# The checks of the JSON line (j), in one Python: "ok DESC" or "no DESC".
json_checks() {
	"$PYTHON" -c '
import json, sys
j = json.loads(sys.stdin.read().splitlines()[-1])
checks = [("the last line is JSON with the four ways, in order",
    list(j) == ["static", "wait", "swap", "preempt"])]
for name in ("static", "wait", "swap", "preempt"):
    w = j.get(name, {})
    checks += [
        (name + ": idle memory is a share of the device",
         isinstance(w.get("idle_pct"), (int, float)) and
         0 <= w["idle_pct"] <= 100),
        (name + ": counts and times are numbers, none negative",
         all(isinstance(w.get(k), (int, float)) and w[k] >= 0
             for k in ("oom", "makespan_s", "waited_s", "swaps",
                       "swap_bytes"))),
        (name + ": its tenants ran", (w.get("makespan_s") or 0) > 0)]
s, wt, p = j.get("static", {}), j.get("wait", {}), j.get("preempt", {})
checks += [
    ("static: bursts over a tenant share fail",
     s.get("oom", 0) >= 3 and s.get("done_pct", 100) < 100),
    ("static: nothing is swapped", s.get("swaps") == 0),
    ("wait: no allocation fails, all the work is done",
     wt.get("oom") == 0 and wt.get("done_pct") == 100),
    ("preempt: victims are swapped out, never killed", p.get("kills") == 0)]
for desc, ok in checks:
    print(("ok " if ok else "no ") + desc)
'
}

TMPDIR=$TMP "$SHARE" -q -s 7 >"$TMP/share.out" 2>"$TMP/share.err" &
pid=$!
wait "$pid"
rc=$?
check_eq "bench/share -q measures every way" "$rc" 0
[ "$rc" = 0 ] || cat "$TMP/share.err"
json_checks <"$TMP/share.out" >"$TMP/checks" ||
	fail "the last line is JSON"
while read -r ok desc; do
	if [ "$ok" = ok ]; then pass "$desc"; else fail "$desc"; fi
done <"$TMP/checks"
check "the table comes before the JSON" grep -q '^static  *equal limits' \
	"$TMP/share.out"
check_eq "nothing is left behind" "$(left_behind "$pid")" ""

# --- interrupted while the tenants run --------------------------------------
TMPDIR=$TMP "$SHARE" -q >"$TMP/int.out" 2>"$TMP/int.err" &
pid=$!
wait_for "a second run starts its tenants" 20 \
	eval "ls '$TMP'/gpufrac-share.*/tenant-2.err"
kill -INT "$pid"
wait "$pid"
rc=$?
check "interrupted, it says so and fails" eval \
	"[ $rc -ne 0 ] && grep -q 'interrupted' '$TMP/int.err'"
check_eq "interrupted, nothing is left behind" "$(left_behind "$pid")" ""

finish
