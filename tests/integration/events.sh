# The decision log: a grant and a denial show up in `gpufracctl events`
# with their pid, size and kind, and `events --follow` receives a decision
# made after it started.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
GiB=$((1 << 30))

# has_event FILE KIND PID BYTES [REASON]: FILE (JSON Lines) has that event.
has_event() {
	"$PYTHON" - "$@" <<'PY'
import json, sys
path, kind, pid, size = sys.argv[1:5]
reason = sys.argv[5] if len(sys.argv) > 5 else None
for line in open(path):
    e = json.loads(line)
    if (e["event"] == kind and e["pid"] == int(pid) and
            e["bytes"] == int(size) and
            (reason is None or reason in e["reason"])):
        sys.exit(0)
sys.exit(1)
PY
}

daemon_start

PRE="LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM"
# env, not the preload function, so that $! is the program's pid.
env "$PRE" "$C" alloc 1Gi >"$TMP/a.out" 2>&1 &
pid_a=$!
wait "$pid_a"
check_eq "A's allocation is granted" "$(cat "$TMP/a.out")" "alloc ok"
env "$PRE" "$C" alloc 5Gi >"$TMP/b.out" 2>&1 &
pid_b=$!
wait "$pid_b"
check_eq "B's allocation beyond its limit is denied" "$(cat "$TMP/b.out")" \
	"alloc err=2"

ctl events --json >"$TMP/events.json"
check "events lists A's grant" has_event "$TMP/events.json" grant "$pid_a" $GiB
check "events lists B's denial, own limit" \
	has_event "$TMP/events.json" deny "$pid_b" $((5 * GiB)) "own limit"
# A release (A's memory back after it exited) is of the whole process.
check "every line is an object with a device, or of a whole process" \
	"$PYTHON" -c '
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    assert e["device"] is None and e["event"] == "released" or \
        e["device"].startswith("GPU-"), e
' "$TMP/events.json"

# Following: the backlog first, then what happens afterwards.
ctl events --follow --json >"$TMP/follow.json" 2>"$TMP/follow.err" &
follow=$!
wait_for "the follower prints the backlog" 10 \
	has_event "$TMP/follow.json" deny "$pid_b" $((5 * GiB))
client_start c preload "$C" alloc 2Gi hold
wait_for "the follower receives C's grant" 10 \
	has_event "$TMP/follow.json" grant "$PID_c" $((2 * GiB))
client_release c
check "the follower is still there" kill -0 "$follow"
kill "$follow"
wait "$follow" 2>/dev/null
# A grant after the follower left reaches nobody, and harms nothing.
env "$PRE" "$C" alloc 1Gi >"$TMP/d.out" 2>&1
check_eq "the daemon goes on after the follower left" "$(cat "$TMP/d.out")" \
	"alloc ok"
finish
