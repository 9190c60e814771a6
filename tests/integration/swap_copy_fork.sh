# The copy engine across fork(). On a real driver a child forked after its
# parent started CUDA may not use it (CUDA_ERROR_NOT_INITIALIZED): it never
# holds device memory, so it is never moved, and what this test once showed,
# such a child swapped out and in by its own move thread, cannot happen
# there. What can: a child forked after its parent's move thread ran, or
# during a move (the engine's lock held), calls the driver through the
# shim, and must be told the driver's error at once, never waiting on a
# thread or a lock of its parent's that it does not have, nor on its
# parent's connection (a VMM allocation names its device: the shim reserves
# it before the driver refuses); and the parent's engine moves the parent
# on after the fork.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=256Mi
C=$CLIENTS/cuclient_linked

# A deadline no move here comes near, even on a loaded machine or under a
# sanitizer (lib.sh): a move never answered is still given up, and said.
printf '[daemon]\nswap_engine = copy\nswap_move_timeout = %ss\n' \
	$((30 * SLOW)) >"$TMP/gpufrac.conf"
daemon_start

# child_of NAME: the pid its child printed. moves_out PID: how many times
# the daemon moved PID out by copy.
child_of() { sed -n 's/^child //p' "$TMP/$1.out"; }
moves_out() {
	ctl events --json | grep "\"event\":\"swap-out\",\"pid\":$1," |
	    grep -c "by copy in"
}

# Each parent sits at its limit: a charge of its child's on its connection
# would be refused there.
GPUFRAC_MEMORY_LIMIT=8Mi client_start a preload "$C" alloc 8Mi fill hold \
	fork vmm 2Mi hold check
check "a is swapped out: its move thread runs" ctl swap out "$PID_a"
check "and in" ctl swap in "$PID_a"
kill -USR1 "$PID_a"
wait_for "a forks, and holds again" 10 \
	eval "[ \$(grep -c '^holding' $TMP/a.out) = 2 ]"
check_eq "its child, forked after the moves, is refused by the driver" \
	"$(sed -n '/^holding/,/^holding/p' "$TMP/a.out" | sed -n 2p)" "vmm err=3"
check "a is swapped out after the fork" ctl swap out "$PID_a"
check_eq "by copy, its engine working on" "$(moves_out "$PID_a")" 2
check "and in" ctl swap in "$PID_a"
kill -USR1 "$PID_a"
wait "$PID_a"
check_eq "a's data came through" "$(tail -1 "$TMP/a.out")" "check ok"

# 16 MiB at 12.5 MB/s: a move of 1.3 s at least, its lock held meanwhile.
GPUFRAC_MEMORY_LIMIT=16Mi SIMCUDA_COPY_GBPS=0.0125 client_start b preload "$C" alloc 16Mi fill hold \
	child alloc 4Mi vmm 2Mi free hold
ctl swap out "$PID_b" >"$TMP/swap.out" 2>&1 &
swapper=$!
wait_for "b's move out has begun" 10 state_is "$PID_b" swapped
kill -USR1 "$PID_b"
# Deadlocked for good before: not left to hang the test.
kid=
wait_for "b's child, forked during the move, is refused at once" 20 \
	grep -q '^free err=3' "$TMP/b.out" && kid=$(child_of b)
check_eq "its allocations too, and its free of b's memory" \
	"$(sed -n '/^child /,$p' "$TMP/b.out" | sed -n 2,4p)" "alloc err=3
vmm err=3
free err=3"
wait "$swapper"
check_eq "b's move out went on" "$?" 0
check "b is brought back" ctl swap in "$PID_b"
if [ -n "$kid" ]; then kill -USR1 "$kid"; else pkill -9 -P "$PID_b"; fi
wait "$PID_b"
finish
