#!/bin/sh
# make fuzz: fuzz/run.sh FUZZER SECONDS WORKDIR, once for each target
# (FUZZ_TARGET in the environment: fuzz/harness.c)
#
# Runs the libFuzzer target for SECONDS on a scratch copy of fuzz/corpus
# and fuzz/regress (WORKDIR/corpus: the tree's corpus is never written;
# what the run found stays there), its findings in WORKDIR/artifacts and
# its output in WORKDIR/fuzz.log (followed on stderr). A crash does not
# end the run: libFuzzer starts again on the corpus grown so far, until
# the time is up or MAX_CRASHES were found (fork mode does the same, at a
# far lower rate of inputs on two cores). Then the coverage of the corpus
# it ended with, per file. The last line is {"execs":N,"crashes":M}; the
# exit status is 1 when there was a crash.
set -u
cd "$(dirname "$0")/.." || exit 1
fuzzer=$1 seconds=$2 work=$3
MAX_CRASHES=10

rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts" || exit 1
# FUZZ_CORPORA: where the seeds are (the decoder's inputs are another
# format: make fuzz gives it fuzz/corpus-decoder).
for dir in ${FUZZ_CORPORA-fuzz/corpus fuzz/regress}; do
	[ -d "$dir" ] && find "$dir" -maxdepth 1 -type f ! -name '.*' \
	    -exec cp {} "$work/corpus/" \;
done

# Findings: crashes, and leaks, timeouts and running out of memory.
crashes() {
	find "$work/artifacts" -name 'crash-*' -o -name 'leak-*' \
	    -o -name 'timeout-*' -o -name 'oom-*' | wc -l
}

# A slow input (10 s) is a hang; leaks are looked for after each input.
end=$(($(date +%s) + seconds))
: >"$work/fuzz.log"
runs=0
while left=$((end - $(date +%s))); [ "$left" -gt 0 ]; do
	before=$(crashes)
	{ "$fuzzer" -max_total_time="$left" -timeout=10 -max_len=4096 \
	    -print_final_stats=1 -dict=fuzz/gpufracd.dict \
	    -artifact_prefix="$work/artifacts/" "$work/corpus" 2>&1
	  echo $? >"$work/rc"; } | tee -a "$work/fuzz.log" >&2
	runs=$((runs + 1))
	# 0: the time is up; else a finding (or a fuzzer that cannot run).
	[ "$(cat "$work/rc")" -eq 0 ] && break
	[ "$(crashes)" -gt "$before" ] || break
	[ "$(crashes)" -lt "$MAX_CRASHES" ] || break
done
execs=$(awk '/^stat::number_of_executed_units:/ { n += $2 } END { print n + 0 }' \
    "$work/fuzz.log")
crashes=$(crashes)

# Coverage: the corpus it ended with, run once more (no mutation).
"$fuzzer" -runs=0 -print_coverage=1 "$work/corpus" >"$work/coverage.txt" 2>&1
echo "fuzz: $runs run(s) of libFuzzer in $seconds s; log $work/fuzz.log"
sed -n 's/^#[0-9]*[[:space:]]*INITED cov: \([0-9]*\) ft: \([0-9]*\) corp: \([0-9]*\).*/fuzz: corpus of \3 inputs: \1 edges, \2 features/p' \
    "$work/coverage.txt"
# Edges count the sanitizers' checks too: a file's whole is more than its
# branches.
awk '/^(UN)?COVERED_FUNC:/ {
	split($5, e, "/")
	n = split($7, p, "/"); f = p[n - 1] "/" p[n]; sub(/:[0-9]+$/, "", f)
	cov[f] += e[1]; all[f] += e[2]; fns[f]++; hit[f] += $1 == "COVERED_FUNC:"
}
END {
	for (f in all) {
		printf "fuzz:   %-30s %3d/%-3d functions %5d/%-5d edges\n", f,
		    hit[f], fns[f], cov[f], all[f]
		c += cov[f]; t += all[f]; h += hit[f]; n += fns[f]
	}
	printf "fuzz: daemon/ and common/: %d of %d functions, %d of %d " \
	    "edges\n", h, n, c, t
}' "$work/coverage.txt" | sort -k2
[ "$crashes" -gt 0 ] && echo "fuzz: $crashes finding(s) in $work/artifacts" \
    "(replay one: $(dirname "$fuzzer")/replay -v FILE)"
printf '{"execs":%s,"crashes":%s}\n' "$execs" "$crashes"
[ "$crashes" -eq 0 ]
