# A move in that fails after the daemon took it as in past its deadline:
# the shim turns the page's mark back to out (activity.h), and the
# daemon, asked again to bring the process in, takes it as out and moves
# it in anew, never clearing the mark while the memory is still on host.
# The move in is slow (8 allocations of 2 MiB at 10 MB/s: 1.7 s), its
# deadline short (swap_move_timeout 500ms, reloaded once the move out is
# done), and its last copy fails (the process's 16th across the bus: 8
# out, then 8 in). swap_copy_coming.sh is the same move in, succeeding.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slow_move_in_lib.sh"
export SIMCUDA_DEVICES=64Mi

slow_move_in SIMCUDA_FAIL_BUS_COPY=16 -- many 8 2Mi fill hold check hold
wait_for "a's call goes on once its memory is back" 30 \
	grep -q '^check' "$TMP/a.out"
check_eq "a's call never reached memory still on host: intact" \
	"$(grep '^check' "$TMP/a.out")" "check ok"
check_eq "a's failed move in was taken as out, then moved in anew" \
	"$(events_of swap-in | wc -l)" 2
check_eq "the daemon has a running, its 16 MiB on the device, none on host" \
	"$(ps_json "[(c['state'], (lambda d: (d['used_bytes'] - d['leased_bytes'], d['host_bytes']))(c['devices'][0])) for c in j['clients'] if c['pid'] == $PID_a]")" \
	"[('running', (16777216, 0))]"
client_release a
finish
