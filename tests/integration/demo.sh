# make demo tells the whole story, and each act's outcome is the one it
# announces: a waiter woken by the free, an idle tenant swapped out and
# back with its data intact, a preemption, a guarantee lent and taken
# back (the acts past the first need root: they tell tenants apart by gid).
# Its opening says the driver is simulated at an H200's rates, and the
# swaps' figures are within reach of those rates: below twice them, which
# an unlimited simulator (715827.88 GB/s) is far above. No lower bound: a
# loaded machine may be slower.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "not root: the demo's group acts need setpriv"
command -v setpriv >/dev/null || skip "no setpriv"
out=$(SAN_RT=$SAN_RT "$TOP/tools/demo.sh" 2>&1)
check_eq "the demo runs to its end" $? 0
has() { printf '%s\n' "$out" | grep -Eq "$1"; }
check "1: the waiter is woken by the free" has ' wake +[0-9]+ +default .*memory came back: granted'
check "2: the idle tenant is swapped out for the burst" has ' swap-out +[0-9]+ +default .*for pid'
check "2: and comes back when it fits, its data intact" has "idle tenant's data after the round trip: check ok"
check "3: the notebook is preempted for the trainer" has " preempt +[0-9]+ +notebooks .*SIGTERM, for pid [0-9]+ of group 'train'"
check "4: batch borrows 512 MiB of serve's guarantee" has ' lend +[0-9]+ +batch .*512\.0MiB +borrowed from unused guarantees'
check "4: serve takes it back" has ' reclaim +[0-9]+ +serve '
check "4: batch's data survives" has "batch's data after giving the guarantee back: check ok"
check "its opening says the driver is simulated" has 'gpufracd shares .*are simulated'
check "and that the rates are an H200's" has '^memory moves at the rates an H200 showed'

# rates DIRECTION: the GB/s of each swap that way, one a line.
rates() {
	printf '%s\n' "$out" | grep -E " swap-$1 .* by checkpoint in [0-9]+ ms, [0-9.]+ GB/s" |
	    sed -E 's|.*, ([0-9.]+) GB/s$|\1|'
}
# below RATES MAX: every rate (there are some) is below MAX.
below() { [ -n "$1" ] && awk -v max="$2" '$1 >= max { bad = 1 } END { exit bad }' <<<"$1"; }
check_eq "2 and 4: two swaps out and two in" \
	"$(rates out | wc -l) $(rates in | wc -l)" "2 2"
check "swaps out are below 4 GB/s (checkpoint 2 GB/s): $(rates out | tr '\n' ' ')" \
	below "$(rates out)" 4
check "swaps in are below 11 GB/s (restore 5.5 GB/s): $(rates in | tr '\n' ' ')" \
	below "$(rates in)" 11
finish
