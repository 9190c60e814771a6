# make demo tells the whole story, and each act's outcome is the one it
# announces: a waiter woken by the free, an idle tenant swapped out and
# back with its data intact, a preemption, a guarantee lent and taken
# back (the acts past the first need root: they tell tenants apart by gid).
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
check "4: batch borrows 4 GiB of serve's guarantee" has ' lend +[0-9]+ +batch .*4\.0GiB +borrowed from unused guarantees'
check "4: serve takes it back" has ' reclaim +[0-9]+ +serve '
check "4: batch's data survives" has "batch's data after giving the guarantee back: check ok"
finish
