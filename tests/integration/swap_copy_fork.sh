# The copy engine across fork() (issue 33, point 8): a child is a new
# client whose engine starts afresh, though its parent's move thread ran
# (the child would wait for ever on a thread it does not have, and each
# swap of it hold every swap for swap_move_timeout); and a child forked
# while a move holds the engine's lock can still allocate and free.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=256Mi
C=$CLIENTS/cuclient_linked

# A deadline no move here comes near, even on a loaded machine or under a
# sanitizer (lib.sh): a move never answered is still given up, and said.
printf '[daemon]\nswap_engine = copy\nswap_move_timeout = %ss\n' \
	$((30 * SLOW)) >"$TMP/gpufrac.conf"
daemon_start

# child_of NAME: the pid its child printed.
child_of() { sed -n 's/^child //p' "$TMP/$1.out"; }

client_start a preload "$C" alloc 8Mi fill hold child alloc 4Mi fill hold \
	check
check "a is swapped out: its move thread runs" ctl swap out "$PID_a"
check "and in" ctl swap in "$PID_a"
kill -USR1 "$PID_a"
wait_for "a's child holds" 10 eval "[ \$(grep -c '^holding' $TMP/a.out) = 2 ]"
kid=$(child_of a)
check "the child is swapped out by its own move thread" ctl swap out "$kid"
check "by copy, not given up" has_event swap-out "$kid" "by copy in"
check "and in" ctl swap in "$kid"
kill -USR1 "$kid"
wait "$PID_a"
check_eq "the child's data came through" "$(tail -1 "$TMP/a.out")" "check ok"

# 16 MiB at 12.5 MB/s: a move of 1.3 s at least, its lock held meanwhile.
SIMCUDA_COPY_GBPS=0.0125 client_start b preload "$C" alloc 16Mi fill hold \
	child alloc 4Mi free hold
ctl swap out "$PID_b" >"$TMP/swap.out" 2>&1 &
swapper=$!
wait_for "b's move out has begun" 10 state_is "$PID_b" swapped
kill -USR1 "$PID_b"
# Deadlocked for good before: not left to hang the test.
kid=
wait_for "b's child, forked during the move, allocates and frees" 20 \
	grep -q '^free ok' "$TMP/b.out" && kid=$(child_of b)
wait "$swapper"
check_eq "b's move out went on" "$?" 0
check "b is brought back" ctl swap in "$PID_b"
if [ -n "$kid" ]; then kill -USR1 "$kid"; else pkill -9 -P "$PID_b"; fi
wait "$PID_b"
finish
