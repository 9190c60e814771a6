# A move in the daemon stops waiting for once the shim has committed to
# it, for swap_copy_coming.sh and swap_copy_failed_in.sh: client a holds 8
# allocations of 2 MiB (filled; "check" after its next USR1), is swapped
# out by copy at 10 MB/s, and asked back in against a 500 ms deadline, so
# that its move in (1.7 s) is taken as in while its bytes still come.
# slow_move_in [VAR=VALUE...] -- ARGS...: the variables a starts with
# (beside the slow bus), and its cuclient_linked arguments.
# shellcheck disable=SC2154	# PID_* are client_start's
slow_move_in() {
	local v conf=$TMP/gpufrac.conf
	local -a vars=(SIMCUDA_COPY_GBPS=0.01)

	printf '[daemon]\nswap_engine = copy\nswap_move_timeout = 60s\n' \
		>"$conf"
	daemon_start
	while [ "$1" != -- ]; do vars+=("$1"); shift; done
	shift
	for v in "${vars[@]}"; do export "${v?}"; done
	client_start a preload "$CLIENTS/cuclient_linked" "$@"
	for v in "${vars[@]}"; do unset "${v%%=*}"; done
	check "a is swapped out" ctl swap out "$PID_a"
	printf '[daemon]\nswap_engine = copy\nswap_move_timeout = 500ms\n' \
		>"$conf"
	check "the move deadline is made short" ctl reload
	kill -USR1 "$PID_a"
	wait_for "the daemon takes a's move in as done while it still comes" \
		20 grep -q "pid $PID_a: no MOVED .*coming back: taken as in" \
		"$TMP/gpufracd.log"
}
