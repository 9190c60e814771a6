# CUDA arrays and mipmap chains through the shim: charged at the size the
# driver really uses (asked of a deferred twin), listed by allocs as kind
# "array", held to the limit, returned when destroyed.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
MiB=$((1 << 20))

daemon_start
# 1000 x 1000 floats: 4000-byte rows padded to 4096, 2 MiB rounded: 4 MiB.
# 1024 x 1024 floats, 11 levels: 5.3 MiB of levels, 6 MiB rounded.
client_start a preload "$C" array 1000 1000 mipmap 1024 1024 11 hold freearrays hold
check_eq "the driver's sizes are charged, not the elements' bytes" \
	"$(ctl allocs "$PID_a" --json | json '[(x["kind"], x["size"]) for x in j["allocations"]]')" \
	"[('array', $((4 * MiB))), ('array', $((6 * MiB)))]"
check "the device is charged 10 MiB" device_used_is $((10 * MiB))
kill -USR1 "$PID_a"
wait_for "destroying them returns the charge" 10 device_used_is 0
kill -USR1 "$PID_a"
wait "$PID_a"

check_eq "an array beyond the limit is refused" \
	"$(GPUFRAC_MEMORY_LIMIT=5Mi preload "$C" array 1000 1000 array 1000 1000 info)" \
	"array ok
array err=2
info free=$((1 * MiB)) total=$((5 * MiB))"
wait_for "nothing is left charged" 10 device_used_is 0
finish
