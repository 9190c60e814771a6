# The shim's side of the wait resolver and of what gpufracd says unasked,
# against a fake daemon (tests/clients/fake_gpufracd.py): a RESERVE answered
# WAIT holds back only its own thread; WAIT extends its reply deadline past
# 5 s; a daemon silent after a WAIT is given up on and rejoined (the
# allocation, never taken locally, fails); a limit
# pushed with seq 0 shows in cuMemGetInfo of a process that asks nothing;
# an unknown unsolicited message is ignored, a malformed one costs the
# connection, which is rejoined.
. "$(dirname "$0")/lib.sh"
FAKE=$TOP/tests/clients/fake_gpufracd.py
C=$CLIENTS/cuclient_linked
GiB=1073741824

# fake_start NAME SOCKET ARGS...: a fake daemon logging to $TMP/NAME.log.
fake_start() {
	local name=$1 sock=$2; shift 2
	"$PYTHON" "$FAKE" "$sock" "$@" >"$TMP/$name.log" 2>&1 &
	printf -v "FAKE_$name" %s $!
	wait_for "fake daemon $name listens" 10 grep -q '^ready' "$TMP/$name.log"
}
fake_ctl() { "$PYTHON" "$FAKE" --ctl "$@"; }

# bg NAME SOCKET CMD...: CMD preloaded in the background, talking to SOCKET;
# output in $TMP/NAME.out and .err, pid in $PID_NAME.
bg() {
	local name=$1 sock=$2; shift 2
	GPUFRAC_SOCKET=$sock env "LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM" "$@" \
	    </dev/null >"$TMP/$name.out" 2>"$TMP/$name.err" &
	printf -v "PID_$name" %s $!
}

fake_start main "$GPUFRAC_SOCKET" --wait-from 1Gi --limit 2Gi --capacity 4Gi
DAEMON_PID=$FAKE_main		# finish stops it
L=$TMP/main.log

# Two cases that take over 5 s each run meanwhile, on fakes of their own:
# a grant 6 s after WAIT{8 s}, and no answer at all after WAIT{300 ms}.
fake_start long "$TMP/long.sock" --wait-from 1Gi --wait-ms 8000 \
	--grant-after 6
fake_start mute "$TMP/mute.sock" --wait-from 1Gi --wait-ms 300
bg long "$TMP/long.sock" "$C" alloc 1Gi
GPUFRAC_REJOIN_TIMEOUT=0 bg mute "$TMP/mute.sock" "$C" alloc 1Gi hold info

# Thread A's RESERVE is queued; thread B allocates and frees meanwhile.
GPUFRAC_LOG=info bg t "$GPUFRAC_SOCKET" "$CLIENTS/threads_linked" 1Gi 1Mi
wait_for "A's RESERVE is answered WAIT" 10 \
	grep -q "RESERVE pid=$PID_t .* size=$GiB -> WAIT" "$L"
kill -USR1 "$PID_t"
wait_for "B allocates and frees while A waits" 20 grep -q '^B done' "$TMP/t.out"
check "B's FREE reached the daemon" grep -q "^FREE pid=$PID_t" "$L"
fake_ctl "$GPUFRAC_SOCKET" grant
wait_for "A's allocation returns once granted" 20 grep -q '^holding' "$TMP/t.out"
check_eq "B went ahead while A waited" "$(cat "$TMP/t.out")" "A allocating
B alloc ok
B free ok
B done
A alloc ok
A free ok
info free=$((2 * GiB)) total=$((2 * GiB))
holding"
check "A's grant is committed as reserved on the same connection" \
	grep -q "^COMMIT pid=$PID_t .* reserved=$GiB size=$GiB" "$L"
check_eq "which never looked lost" "$(grep -c "^HELLO pid=$PID_t" "$L")" 1

# A limit pushed unasked, while the process sits in sigwait.
fake_ctl "$GPUFRAC_SOCKET" limit 3Gi
wait_for "a limit pushed unasked is applied by a process asking nothing" 10 \
	grep -q 'device 0 .*: limit 3.0GiB' "$TMP/t.err"
kill -USR1 "$PID_t"
wait "$PID_t"
check_eq "cuMemGetInfo shows it" "$(tail -n 1 "$TMP/t.out")" \
	"info free=$((3 * GiB)) total=$((3 * GiB))"

# Unknown and malformed messages unasked.
GPUFRAC_LOG=debug client_start g preload "$C" alloc 1Mi hold info
fake_ctl "$GPUFRAC_SOCKET" unsolicited
fake_ctl "$GPUFRAC_SOCKET" limit 1Gi
wait_for "a limit pushed after an unknown message is applied" 10 \
	grep -q 'device 0 .*: limit 1.0GiB' "$TMP/g.err"
check "the unknown message was ignored" \
	grep -q 'ignoring an unsolicited OK' "$TMP/g.err"
check_eq "without losing the connection" \
	"$(grep -c "^HELLO pid=$PID_g" "$L")" 1
fake_ctl "$GPUFRAC_SOCKET" garbage
wait_for "a malformed message costs the connection; the allocation is re-registered" \
	10 grep -q "^COMMIT pid=$PID_g .* reserved=0 size=1048576" "$L"
check "saying why" grep -q 'malformed message' "$TMP/g.err"
client_release g
check_eq "the limit of the new connection holds" "$(tail -n 1 "$TMP/g.out")" \
	"info free=$((GiB - 1048576)) total=$GiB"

# WAIT{8 s}, GRANT after 6: the reply deadline was extended.
wait "$PID_long"
check_eq "a RESERVE queued for 6 s is granted" "$(cat "$TMP/long.out")" \
	"alloc ok"
check "and committed as reserved on its connection" \
	grep -q "^COMMIT pid=$PID_long .* reserved=$GiB size=$GiB" "$TMP/long.log"
check_eq "which never looked lost" "$(grep -c '^HELLO' "$TMP/long.log")" 1
check_eq "nothing said on stderr" "$(cat "$TMP/long.err")" ""

# WAIT{300 ms} and then nothing: given up on after 5.3 s, then rejoined.
# Registered, the process takes nothing the daemon did not grant: the
# allocation would wait for the rejoined daemon's answer, but
# GPUFRAC_REJOIN_TIMEOUT=0 says not to wait at all.
wait_for "a daemon silent after WAIT is given up on" 20 \
	grep -q '^holding' "$TMP/mute.out"
check_eq "and the allocation fails, never taken locally" \
	"$(head -n 1 "$TMP/mute.out")" "alloc err=2"
check "saying why" grep -q "no GRANT or DENY within 5 s of the end of a 300 ms wait" \
	"$TMP/mute.err"
check "and that it did not wait" grep -q \
	"did not come back within 0 ms; allocations fail until it does" \
	"$TMP/mute.err"
wait_for "the daemon is rejoined" 10 \
	eval "[ \"\$(grep -c '^HELLO' '$TMP/mute.log')\" = 2 ]"
check "and told of no allocation" eval "! grep -q '^COMMIT' '$TMP/mute.log'"
kill -USR1 "$PID_mute"
wait "$PID_mute"
check_eq "with the limit it states" "$(tail -n 1 "$TMP/mute.out")" \
	"info free=$((2 * GiB)) total=$((2 * GiB))"

for f in long mute; do
	pidvar=FAKE_$f
	kill -TERM "${!pidvar}"
	wait "${!pidvar}"
	check_eq "fake daemon $f exits cleanly" $? 0
done
finish
