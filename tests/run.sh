#!/bin/sh
# Run every unit test (cmocka) and integration test, each named with the
# seconds it took (what makes the suite long), then print one summary line.
# An integration test exits 0 (pass), 77 (skipped, having printed why) or
# anything else (fail). Run from the top of the tree by `make check`;
# `tests/run.sh NAME...` runs only the tests whose file name contains NAME.
# What was built is found in $BUILD (make passes it; default build/).
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-$PWD/build}
export BUILD
passed=0 failed=0 skipped=0 failures=""

selected() {
	[ $# -eq 0 ] && return 0
	for f; do case "$t" in *"$f"*) return 0;; esac; done
	return 1
}

run_one() {
	name=$1; shift
	out=$(mktemp)
	start=$(date +%s)
	"$@" >"$out" 2>&1
	rc=$?
	took="$(($(date +%s) - start)) s"
	case $rc in
	0)  passed=$((passed + 1)); echo "PASS  $name ($took)";;
	77) skipped=$((skipped + 1)); echo "SKIP  $name: $(tail -n 1 "$out")";;
	*)  failed=$((failed + 1)); failures="$failures $name"
	    echo "FAIL  $name (exit $rc, $took)"; sed 's/^/    | /' "$out";;
	esac
	rm -f "$out"
}

for t in "$BUILD"/tests/unit/test_*; do
	case $t in *.o|*.d) continue;; esac
	[ -x "$t" ] && selected "$@" && run_one "tests/unit/${t##*/}" "$t"
done
for t in tests/integration/*.sh; do
	case $t in */lib.sh|*_lib.sh) continue;; esac
	selected "$@" && run_one "$t" bash "$t"
done

[ -n "$failures" ] && echo "failed:$failures"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
