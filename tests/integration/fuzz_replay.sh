# The fuzzer's seeds and every reproducer of a bug it found (fuzz/corpus,
# fuzz/regress) replayed through the fuzz target (fuzz/harness.c) built
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

finish
