# A client that lies in MOVED (issue 32, point 3): MOVED, and its answers
# to a drop request, are believed only when asked. One that speaks the
# protocol itself and says, unasked, that it keeps 2^62 bytes of pinned
# host memory does not refuse others' swaps under swap_host_limit; one
# near 2^64 does not wrap the tally to let a swap pass the limit; a
# flood of them is counted in a metric and said a few times a second at
# most, not once each. One that says it keeps more than it had to move
# is held to what it had; asked to give it back, it holds up others'
# swaps for swap_move_timeout at most, whether it never answers or says
# it keeps it still.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=64Mi
C=$CLIENTS/cuclient_linked
MiB=$((1 << 20))
MPORT=$("$PYTHON" "$TOP/tests/clients/metrics_probe.py" freeport 1)
printf '[daemon]\nswap_engine = copy\nswap_host_limit = 16Mi\nswap_move_timeout = 2s\nmetrics_listen = 127.0.0.1:%s\n' \
	"$MPORT" >"$TMP/gpufrac.conf"
daemon_start
uuid=$(ctl status --json | json 'j["devices"][0]["uuid"]')
ignored() {
	curl -sf "http://127.0.0.1:$MPORT/metrics" |
	    awk '$1 == "gpufrac_moved_ignored_total" { print $2 }'
}

mkfifo "$TMP/l.in"
"$PYTHON" "$TOP/tests/clients/mute_mover.py" "$GPUFRAC_SOCKET" "$uuid" \
	$((4 * MiB)) <"$TMP/l.in" >"$TMP/l.out" 2>"$TMP/l.err" &
PID_l=$!
exec 3>"$TMP/l.in"
wait_for "the liar holds 4 MiB" 10 grep -q '^ready' "$TMP/l.out"

echo "lie out $((1 << 62)) 1" >&3
wait_for "it says, unasked, that it keeps 2^62 bytes" 10 \
	eval "[ \$(grep -c '^lied' $TMP/l.out) = 1 ]"
client_start a preload "$C" alloc 8Mi fill hold check
check "a's 8 MiB swap is not refused for the liar's word" \
	ctl swap out "$PID_a"
check "a comes back" ctl swap in "$PID_a"
client_release a
check_eq "intact" "$(tail -1 "$TMP/a.out")" "check ok"

echo "lie out 18446744073684385792 1" >&3
wait_for "it says, unasked, that it keeps 2^64 - 24 MiB bytes" 10 \
	eval "[ \$(grep -c '^lied' $TMP/l.out) = 2 ]"
client_start b preload "$C" alloc 32Mi hold
check "b's 32 MiB swap still would pass the 16 MiB limit: refused" eval \
	"! ctl swap out $PID_b 2>$TMP/b.swap"
check "the refusal says so" grep -q "would pass swap_host_limit 16.0MiB" \
	"$TMP/b.swap"
client_release b

echo "lie drop $((1 << 62)) 100" >&3
wait_for "then 100 unasked answers to a drop request" 10 \
	eval "[ \$(grep -c '^lied' $TMP/l.out) = 3 ]"
wait_for "the metric counts all 102" 10 eval '[ "$(ignored)" = 102 ]'
check "the log said them a few times at most" eval \
	"[ \$(grep -c 'a MOVED no move waits for' $TMP/gpufracd.log) -le 5 ]"

# --- a keeper that says it keeps more, and never gives it back ----------
host() { ctl status --json | json "j['swap']['$1']"; }
echo "keep $((64 * MiB))" >&3
wait_for "the liar says from now on that it keeps 64 MiB" 10 \
	grep -q '^keeping' "$TMP/l.out"
ctl swap out "$PID_l" >"$TMP/l.swap" 2>&1 &
swapper=$!
wait_for "the liar is asked to move out" 10 grep -q '^move out' "$TMP/l.out"
echo "moved $(sed -n 's/^move out //p' "$TMP/l.out" | tail -1)" >&3
wait "$swapper"
check_eq "it answers in time" "$?" 0
check "and is brought back" ctl swap in "$PID_l"
check_eq "what it keeps is bounded by what it had to move, 4 MiB" \
	"$(host host_kept_bytes)" $((4 * MiB))
# A pitched allocation of 13 MiB: no lease rounds its footprint.
client_start c preload "$C" pitch 4096 3328 hold
check "c's 13 MiB beside them would pass the limit: they are asked back" \
	eval "! ctl swap out $PID_c 2>$TMP/c.swap"
check "the refusal says so" grep -q "of kept pinned memory asked back" \
	"$TMP/c.swap"
wait_for "never given back, past swap_move_timeout they count for nothing" \
	10 ctl swap out "$PID_c"
client_release c
echo exit >&3
finish
