# make bench-share in miniature (bench/share -q: three tenants, bursts due
# over 1 s, all four ways): the last line is one JSON object with the
# four ways and their figures; static partitions fail the bursts over
# their share (every tenant peaks above a third of the device) and so do
# only part of the work; waiting for memory fails no allocation and does
# all of it; preempted tenants are swapped out, not killed. However it
# ends, the run leaves no process, directory or simulated device behind.
# With -r (the real driver) the simulated one stands in, bigger than the
# 16 GiB shared and partly held by a program without the shim: the
# daemons keep the rest back. Behaviour only: no figure is held to a
# target here.
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
# DRIVER: simulated or real; TOTAL, KEPT: the device's total and what a
# program without the shim holds; the device shared is 16 GiB.
json_checks() {
	"$PYTHON" -c '
import json, sys
driver, total, kept = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
j = json.loads(sys.stdin.read().splitlines()[-1])
GiB = 1 << 30
checks = [("the last line is JSON with the device, then the four ways",
    list(j) == ["driver", "gpu", "device_bytes", "gpu_total_bytes",
                "reserve_bytes", "kept_bytes",
                "static", "wait", "swap", "preempt"]),
    ("the driver is " + driver, j.get("driver") == driver),
    ("it names the GPU", j.get("gpu") == "simcuda device 0"),
    ("the device shared is 16 GiB, as the daemons said",
     j.get("device_bytes") == 16 * GiB),
    ("its total and what is held outside gpufrac are told",
     j.get("gpu_total_bytes") == total and j.get("kept_bytes") == kept),
    ("the daemons keep back the rest",
     j.get("reserve_bytes") == total - kept - 16 * GiB)]
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
' "$@"
}

# check_lines FILE: each line of json_checks a check.
check_lines() {
	while read -r ok desc; do
		if [ "$ok" = ok ]; then pass "$desc"; else fail "$desc"; fi
	done <"$1"
}

TMPDIR=$TMP "$SHARE" -q -s 7 >"$TMP/share.out" 2>"$TMP/share.err" &
pid=$!
wait "$pid"
rc=$?
check_eq "bench/share -q measures every way" "$rc" 0
[ "$rc" = 0 ] || cat "$TMP/share.err"
json_checks simulated $((16 << 30)) 0 <"$TMP/share.out" >"$TMP/checks" ||
	fail "the last line is JSON"
check_lines "$TMP/checks"
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

# --- -r: the real driver, the simulated one standing in ---------------------
# The environment's driver: lib.sh's simulated one, here 24 GiB, of which a
# program without the shim holds 2 GiB; reserve = 24 - 2 - 16 GiB.
export SIMCUDA_DEVICES=24Gi
client_start holder "$BUILD/tests/clients/cuclient_linked" alloc 2Gi hold
TMPDIR=$TMP "$SHARE" -r -q -s 7 >"$TMP/real.out" 2>"$TMP/real.err"
rc=$?
check_eq "bench/share -r measures every way" "$rc" 0
[ "$rc" = 0 ] || cat "$TMP/real.err"
json_checks real $((24 << 30)) $((2 << 30)) <"$TMP/real.out" \
    >"$TMP/checks" || fail "-r: the last line is JSON"
sed -i 's/^\(ok\|no\) /&-r: /' "$TMP/checks"
check_lines "$TMP/checks"
check "-r: the report says how the real device is shared" grep -q \
	'^sharing 16.0GiB of a real simcuda device 0 (24.0GiB; the daemons keep back 6.0GiB, 2.0GiB is held outside gpufrac)' \
	"$TMP/real.out"
client_release holder
check_eq "-r: nothing is left behind" "$(ls -d "$TMP"/gpufrac-share.* 2>/dev/null)" ""

# A device that cannot give 16 GiB: one line, before any tenant starts.
out=$(SIMCUDA_STATE=$SIMCUDA_STATE-small SIMCUDA_DEVICES=12Gi TMPDIR=$TMP \
    "$SHARE" -r -q 2>&1)
rc=$?
rm -f "/dev/shm/simcuda-$SIMCUDA_STATE-small"
check_eq "-r on a device too small fails with one line" "$rc:$out" \
	"1:share: simcuda device 0 has 12.0GiB, 0B of it held outside gpufrac: too small to share 16.0GiB of it"

finish
