# The fuzzer's seeds and every reproducer of a bug it found (fuzz/corpus,
# fuzz/regress; the decoder target's fuzz/corpus-decoder, with one valid
# message of each kind a peer sends, through that target; and the liar
# target's made-up inputs) replayed
# through the fuzz target (fuzz/harness.c) built
# without libFuzzer: each input runs a daemon on a simulated machine and
# must keep the ledger's invariants after every step, answer with valid
# messages only, leave nothing charged once every process has exited, and
# free what it allocated (the sanitizer build's LeakSanitizer).
. "$(dirname "$0")/lib.sh"
REPLAY=$BUILD/fuzz/replay
[ -x "$REPLAY" ] || skip "no $REPLAY (make $REPLAY)"

dirs="$TOP/fuzz/corpus"
[ -d "$TOP/fuzz/regress" ] && dirs="$dirs $TOP/fuzz/regress"
# shellcheck disable=SC2086
"$REPLAY" $dirs >"$TMP/replay.out" 2>"$TMP/replay.err"
rc=$?
check_eq "every input replays without a finding" "$rc" 0
[ "$rc" -eq 0 ] || cat "$TMP/replay.err"
n=$(find $dirs -maxdepth 1 -type f ! -name '.*' | wc -l)
check_eq "all $n of them" "$(cat "$TMP/replay.out")" "replayed $n inputs"
check "processes without connections among them (issue 38, I)" \
	test -f "$TOP/fuzz/corpus/bare-kill" -a \
	-f "$TOP/fuzz/regress/bare-pid-reused-same-device"

# The decoder target's seeds: one of each kind proto.h has a peer send
# (between its "shim -> daemon" and "daemon -> peer"), a conversation,
# the regressions.
D=$TOP/fuzz/corpus-decoder
kinds=$(sed -n '/shim -> daemon/,/daemon -> peer/s/^[[:space:]]*GF_MSG_\([A-Z_]*\).*/\1/p' \
    "$TOP/include/gpufrac/proto.h" | tr 'A-Z_' 'a-z-')
missing=
for k in $kinds; do
	[ -f "$D/msg-$k" ] || missing="$missing $k"
done
check_eq "a decoder seed for each of the $(echo "$kinds" | wc -w) kinds of message a peer sends" \
	"${missing:-none missing}" "none missing"
check "a conversation and the regressions" test -f "$D/conversation" -a \
	-f "$D/regress-commit-saturates"
FUZZ_TARGET=decoder "$REPLAY" "$D" >"$TMP/decoder.out" 2>"$TMP/decoder.err"
rc=$?
check_eq "each replays through the decoder target without a finding" "$rc" 0
[ "$rc" -eq 0 ] || cat "$TMP/decoder.err"
n=$(find "$D" -maxdepth 1 -type f ! -name '.*' 2>/dev/null | wc -l)
check_eq "all $n of them" "$(cat "$TMP/decoder.out")" "replayed $n inputs"

# The liar target, briefly (issue 32): 400 inputs made up from a fixed
# seed, every op a well-formed lie (fuzz/liars.c), beside an honest peer
# that must be granted its guarantee whatever they say.
# Then the reproducers of what it found (fuzz/regress-liar).
L=$TOP/fuzz/regress-liar
FUZZ_TARGET=liar "$REPLAY" -r 400 -s "${FUZZ_LIAR_SEED:-1}" "$L" \
	>"$TMP/liar.out" 2>"$TMP/liar.err"
rc=$?
check_eq "400 liars and the reproducers leave the honest peer its due and every tally bounded" \
	"$rc" 0
[ "$rc" -eq 0 ] || cat "$TMP/liar.err"
n=$(find "$L" -maxdepth 1 -type f ! -name '.*' | wc -l)
check_eq "all $((400 + n)) of them" "$(cat "$TMP/liar.out")" \
	"replayed $((400 + n)) inputs"

finish
