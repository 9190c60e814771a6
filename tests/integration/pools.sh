# Stream-ordered allocation through the shim: a pool's reserve is what is
# charged (kind "pool"): it grows with allocations, stays while freed
# memory is cached, and comes back when the pool releases it at a
# synchronisation (release threshold 0), on a trim; a pool that caches
# is no way around the limit, nor a pool grown past what was reserved
# for it: the rest is reserved before it is charged, or the growth undone.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
MiB=$((1 << 20))

# holds_n NAME N: NAME has printed "holding" N times.
holds_n() { [ "$(grep -c '^holding' "$TMP/$1.out")" = "$2" ]; }

daemon_start
client_start a preload "$C" async 3Mi hold freeasync hold sync hold \
	threshold 64Mi async 3Mi freeasync sync hold trim 0 hold
check_eq "the pool's reserve is charged (3 MiB asked, 4 MiB reserved)" \
	"$(ctl allocs "$PID_a" --json | json '[(x["kind"], x["size"]) for x in j["allocations"]]')" \
	"[('pool', $((4 * MiB)))]"
check "the device is charged 4 MiB" device_used_is $((4 * MiB))
kill -USR1 "$PID_a"
wait_for "freed into the pool" 10 holds_n a 2
check "cached by the pool: still charged" device_used_is $((4 * MiB))
kill -USR1 "$PID_a"
wait_for "a synchronisation releases it: the charge returns" 10 \
	device_used_is 0
kill -USR1 "$PID_a"
wait_for "with a high release threshold" 10 holds_n a 4
check "the synchronisation keeps it: still charged" device_used_is \
	$((4 * MiB))
kill -USR1 "$PID_a"
wait_for "a trim returns it" 10 device_used_is 0
kill -USR1 "$PID_a"
wait "$PID_a"

check_eq "beyond the limit, the pool may not grow" \
	"$(GPUFRAC_MEMORY_LIMIT=6Mi preload "$C" async 4Mi async 4Mi)" \
	"async ok
async err=2"
wait_for "nothing is left charged" 10 device_used_is 0

# Two chunks of 2 MiB, each with 0.5 MiB cached: room for 1 MiB in all,
# but not in one piece, so the driver grows the pool by a third chunk
# that no reservation asked for.
frag="async $((3 * MiB / 2)) async $((3 * MiB / 2)) async $MiB"
check_eq "a pool grown past its reservation, past the limit, is denied" \
	"$(GPUFRAC_MEMORY_LIMIT=5Mi preload "$C" $frag)" "async ok
async ok
async err=2"
check_eq "within the limit, the growth is reserved and granted" \
	"$(GPUFRAC_MEMORY_LIMIT=6Mi preload "$C" $frag)" "async ok
async ok
async ok"
check_eq "neither was believed past a limit" "$(events_of past-limit)" ""
check_eq "nor refused" "$(events_of refused)" ""
wait_for "nothing is left charged" 10 device_used_is 0
finish
