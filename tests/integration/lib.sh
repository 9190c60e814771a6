# Shared set-up for integration tests: sourced, never run.
#
# Gives each test a private temporary directory, a private simulated GPU
# (SIMCUDA_STATE), a private daemon socket, and helpers:
#   daemon_start [ARGS]   start gpufracd -f on $GPUFRAC_SOCKET (config
#                         $TMP/gpufrac.conf if it exists), wait until it serves
#   daemon_stop           SIGTERM it and wait for it to exit
#   preload CMD...        run CMD with libgpufrac.so preloaded
#   ctl ARGS...           run gpufracctl against the test daemon
#   check DESC CMD...     CMD must succeed
#   check_eq DESC GOT WANT
#   wait_for DESC SECS CMD...   poll CMD until it succeeds; fail after SECS
#                         (SLOW times SECS under a sanitizer, below)
#   skip REASON           exit 77 with the reason
#   finish                exit 0 if every check passed, 1 otherwise
# GPUFRAC_TEST_KEEP=1 keeps the directory of a test that failed a check
# (the daemon's log, each client's output) and prints its path.
set -u
# bash: the helpers use printf -v and indirect expansion.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
# What make built (make check passes BUILD; default build/).
BUILD=${BUILD:-$TOP/build}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpufrac-test.XXXXXX")
SHIM=$BUILD/shim/libgpufrac.so
GPUFRACD=$BUILD/daemon/gpufracd
GPUFRACCTL=$BUILD/tools/gpufracctl
# Built clients; the Python ones stay in the source tree ($TOP/tests/clients).
CLIENTS=$BUILD/tests/clients
PYTHON=${PYTHON:-/usr/bin/python3}
export LD_LIBRARY_PATH=$BUILD/tests/simcuda
export SIMCUDA_STATE=gftest-$$-$(basename "$0" .sh)
export SIMCUDA_DEVICES=${SIMCUDA_DEVICES:-4Gi}
export GPUFRAC_SOCKET=$TMP/gpufrac.sock
export NUMBA_CUDA_DRIVER=$BUILD/tests/simcuda/libcuda.so.1
unset GPUFRAC_MEMORY_LIMIT GPUFRAC_DISABLE GPUFRAC_LOG CUDA_VISIBLE_DEVICES

# A preloaded shim built with a sanitizer needs the sanitizer's runtime
# loaded first in programs that were not built with it (sh, python).
# Sanitized programs are slower, ThreadSanitizer's many times (it checks
# each byte a copy moves: the simulated device's memory is the host's):
# the waits here are SLOW times longer, and a test scales by it the
# deadlines it gives the daemon (swap_move_timeout, wait_timeout).
SAN_RT=
SLOW=1
case ${SANITIZE:-} in
address) SAN_RT=$(${CC:-cc} -print-file-name=libasan.so) SLOW=3;;
thread)	 SAN_RT=$(${CC:-cc} -print-file-name=libtsan.so) SLOW=10;;
esac
# Every sanitizer report, from any process, lands in $TMP/san.PID; finish
# fails the test when there is one. A child forked by a threaded program may
# start threads (the shim's watcher): TSan allows it with die_after_fork=0.
export ASAN_OPTIONS=log_path=$TMP/san:abort_on_error=0
export UBSAN_OPTIONS=log_path=$TMP/san:print_stacktrace=1
export TSAN_OPTIONS=log_path=$TMP/san:die_after_fork=0

CHECKS_FAILED=0
DAEMON_PID=

cleanup() {
	# shellcheck disable=SC2046
	kill -9 $(jobs -p) 2>/dev/null
	[ -n "$DAEMON_PID" ] && kill -9 "$DAEMON_PID" 2>/dev/null
	if [ -n "${GPUFRAC_TEST_KEEP:-}" ] && [ "$CHECKS_FAILED" -ne 0 ]; then
		echo "kept: $TMP"
	else
		rm -rf "$TMP"
	fi
	rm -f "/dev/shm/simcuda-$SIMCUDA_STATE"
}
trap cleanup EXIT

pass() { echo "ok - $1"; }
fail() { echo "not ok - $1"; CHECKS_FAILED=$((CHECKS_FAILED + 1)); }

check() {
	desc=$1; shift
	if "$@"; then pass "$desc"; else fail "$desc"; fi
}

check_eq() {
	if [ "$2" = "$3" ]; then pass "$1"
	else fail "$1: got '$2', want '$3'"; fi
}

wait_for() {
	desc=$1 secs=$(($2 * SLOW)); shift 2
	deadline=$(($(date +%s) + secs))
	until "$@" >/dev/null 2>&1; do
		if [ "$(date +%s)" -ge "$deadline" ]; then
			fail "$desc (not within ${secs}s)"
			return 1
		fi
		sleep 0.02
	done
	pass "$desc"
}

skip() { echo "$1"; exit 77; }

finish() {
	local report
	daemon_stop
	[ -d "$TMP/nobody" ] && mv "$TMP"/nobody/san.* "$TMP"/ 2>/dev/null
	for report in "$TMP"/san.*; do
		[ -e "$report" ] || continue
		fail "sanitizer report $(basename "$report")"
		cat "$report"
	done
	[ "$CHECKS_FAILED" -eq 0 ] && exit 0
	echo "$CHECKS_FAILED check(s) failed"
	exit 1
}

preload() {
	# CPython's own allocations at exit are not ours to report.
	if [ "$1" = "$PYTHON" ]; then
		ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 \
		    LD_PRELOAD="${SAN_RT:+$SAN_RT }$SHIM" "$@"
	else
		LD_PRELOAD="${SAN_RT:+$SAN_RT }$SHIM" "$@"
	fi
}

ctl() { "$GPUFRACCTL" -s "$GPUFRAC_SOCKET" "$@"; }

daemon_start() {
	local conf=
	[ -f "$TMP/gpufrac.conf" ] && conf="-c $TMP/gpufrac.conf"
	# shellcheck disable=SC2086
	"$GPUFRACD" -f -s "$GPUFRAC_SOCKET" $conf "$@" 2>>"$TMP/gpufracd.log" &
	DAEMON_PID=$!
	deadline=$(($(date +%s) + 10 * SLOW))
	until ctl status >/dev/null 2>&1; do
		if ! kill -0 "$DAEMON_PID" 2>/dev/null ||
		    [ "$(date +%s)" -ge "$deadline" ]; then
			echo "gpufracd did not start:"; cat "$TMP/gpufracd.log"
			exit 1
		fi
		sleep 0.02
	done
}

daemon_stop() {
	[ -n "$DAEMON_PID" ] || return 0
	kill -TERM "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	check_eq "gpufracd exits cleanly on SIGTERM" $? 0
	DAEMON_PID=
}

# client_start NAME CMD...: run CMD in the background and wait until it
# prints "holding" (cuclient's hold command, which then waits for SIGUSR1);
# output in $TMP/NAME.out and .err, pid in $PID_NAME.
client_start() {
	local name=$1; shift
	# Run preloaded programs directly, not through the shell function, so
	# that $! is the program's own pid.
	[ "$1" = preload ] && { shift; set -- env "LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM" "$@"; }
	"$@" </dev/null >"$TMP/$name.out" 2>"$TMP/$name.err" &
	printf -v "PID_$name" %s $!
	wait_for "$name reaches hold" 20 grep -q '^holding' "$TMP/$name.out"
}

# client_release NAME: let it go on past "hold" and wait for it to exit.
client_release() {
	local pidvar=PID_$1
	kill -USR1 "${!pidvar}"
	wait "${!pidvar}"
}

# json EXPR: evaluate a Python expression over the JSON on stdin (as j).
json() {
	"$PYTHON" -c 'import json,sys; j=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"
}

# ps_json EXPR: EXPR over `ps --json`. group_field NAME FIELD: a group's
# FIELD in `status --json` (its first device's row). client_field PID
# FIELD, client_limit PID: from ps. limit_is PID BYTES. used_of PID: what
# ps says PID holds on device 0, as a list ([] when ps does not list it).
# group_names: the sorted names of the groups status lists.
ps_json() { ctl ps --json | json "$1"; }
group_field() {
	ctl status --json | json "[g['$2'] for g in j['groups'] if g['name'] == '$1'][0]"
}
client_field() {
	ps_json "[c['$2'] for c in j['clients'] if c['pid'] == $1][0]"
}
client_limit() {
	ps_json "[c['devices'][0]['limit_bytes'] for c in j['clients'] if c['pid'] == $1][0]"
}
limit_is() { [ "$(client_limit "$1")" = "$2" ]; }
used_of() {
	ps_json "[c['devices'][0]['used_bytes'] for c in j['clients'] if c['pid'] == $1]"
}
group_names() { ctl status --json | json 'sorted(set(g["name"] for g in j["groups"]))'; }

# bg NAME CMD...: CMD in the background, output in $TMP/NAME.out, pid in
# $PID_NAME (the program's own: env and setpriv exec it).
bg() {
	local name=$1; shift
	"$@" </dev/null >"$TMP/$name.out" 2>"$TMP/$name.err" &
	printf -v "PID_$name" %s $!
}

# state_is PID STATE: gpufracctl ps shows the process in STATE.
state_is() {
	[ "$(ctl ps --json | json "[c['state'] for c in j['clients'] if c['pid'] == $1]")" = "['$2']" ]
}

# has_event KIND PID [TEXT]: the decision log has such an event (whose
# line has TEXT).
has_event() {
	ctl events --json | grep "\"event\":\"$1\",\"pid\":$2," |
	    grep -q -- "${3:-}"
}

# sh -c "$IN_CG" DIR CMD...: run CMD inside cgroup DIR (its own pid moves
# in, then it becomes the program, so that $! is the program's pid).
# shellcheck disable=SC2016
IN_CG='echo $$ > "$0/cgroup.procs" && exec "$@"'

# cgroup_remove DIR: rmdir a cgroup once its processes have left (killed
# ones take a moment); says so when it cannot.
cgroup_remove() {
	for _ in $(seq 100); do
		rmdir "$1" 2>/dev/null || [ ! -d "$1" ] && break
		sleep 0.05
	done
	[ -d "$1" ] && echo "cannot remove cgroup '$1'"
}

# clients_are N: the daemon lists exactly N clients.
clients_are() {
	[ "$(ctl ps --json | json 'len(j["clients"])')" = "$1" ]
}

# device_used_is BYTES [INDEX]: the daemon's charge on a device for what
# is allocated: leased bytes not allocated yet aside.
device_used_is() {
	[ "$(ctl status --json | json "(lambda d: d['used_bytes'] - d['leased_bytes'])(j['devices'][${2:-0}])")" = "$1" ]
}

# gone_by_sigkill PID: PID, the test's child, has gone, by SIGKILL; never
# waits for a live one (poll it with wait_for). foreign_is BYTES: the
# daemon counts BYTES foreign on device 0.
gone_by_sigkill() {
	kill -0 "$1" 2>/dev/null && return 1
	wait "$1"
	[ $? = 137 ]
}
# allocated_or_killed NAME PID: NAME's program printed "alloc ok", or
# was killed for it before it could (the look may come first).
allocated_or_killed() {
	grep -q '^alloc ok' "$TMP/$1.out" || has_event unshimmed-kill "$2"
}
foreign_is() {
	[ "$(ctl status --json | json "j['devices'][0]['foreign_bytes']")" = "$1" ]
}

# events_of KIND: the reasons of the events of that kind, a line each.
events_of() {
	ctl events --json | "$PYTHON" -c 'import json, sys
for e in map(json.loads, sys.stdin):
    if e["event"] == sys.argv[1]:
        print(e["reason"])' "$1"
}

# conns_hold N: uid 65534 opens N connections to the daemon and keeps
# them (tests/clients/hostile.py conns) until conns_drop; $CONNS_PID is
# its pid, and $TMP/conns.out says "ok SERVED refused REFUSED".
conns_hold() {
	mkfifo "$TMP/conns.in"
	"$PYTHON" "$TOP/tests/clients/hostile.py" conns "$GPUFRAC_SOCKET" "$1" \
	    <"$TMP/conns.in" >"$TMP/conns.out" &
	CONNS_PID=$!
	exec 9>"$TMP/conns.in"
	wait_for "uid 65534 opens $1 connections" 30 \
	    grep -q '^ok' "$TMP/conns.out"
}
conns_drop() {
	echo >&9
	exec 9>&-
	wait "$CONNS_PID"
	rm -f "$TMP/conns.in"
}

# nobody_setup: let processes of user nobody reach the socket and leave
# their sanitizer reports where finish looks. Then run one as
# "${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" CMD...
nobody_setup() {
	chmod 0755 "$TMP"
	mkdir -m 1777 "$TMP/nobody"
	NOBODY_ENV=(env "ASAN_OPTIONS=${ASAN_OPTIONS/$TMP\/san/$TMP/nobody/san}"
	    "UBSAN_OPTIONS=${UBSAN_OPTIONS/$TMP\/san/$TMP/nobody/san}"
	    "TSAN_OPTIONS=${TSAN_OPTIONS/$TMP\/san/$TMP/nobody/san}")
	AS_NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
}
