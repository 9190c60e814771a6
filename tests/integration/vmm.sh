# The virtual memory API through the shim: cuMemCreate is charged (kind
# "vmm"), reserving address space, mapping and setting access are not; the
# charge stays while the released handle is still mapped and goes with the
# last unmap, as the driver frees the memory; limits hold; a process that
# imports another's allocation is not charged for it.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
MiB=$((1 << 20))

daemon_start
client_start a preload "$C" vmm 4Mi hold vmmrelease hold vmmunmap hold
check_eq "cuMemCreate is charged, the reserve and the mapping are not" \
	"$(ctl allocs "$PID_a" --json | json '[(x["kind"], x["size"]) for x in j["allocations"]]')" \
	"[('vmm', $((4 * MiB)))]"
check "the device is charged 4 MiB" device_used_is $((4 * MiB))
kill -USR1 "$PID_a"
wait_for "the handle is released" 10 eval "[ \"\$(grep -c '^holding' $TMP/a.out)\" = 2 ]"
check "released but still mapped: still charged" device_used_is $((4 * MiB))
kill -USR1 "$PID_a"
wait_for "the last unmap returns the charge" 10 device_used_is 0
kill -USR1 "$PID_a"
wait "$PID_a"

check_eq "beyond the limit, cuMemCreate is refused" \
	"$(GPUFRAC_MEMORY_LIMIT=6Mi preload "$C" vmm 4Mi vmm 4Mi)" \
	"vmm ok
vmm err=2"
wait_for "nothing is left charged" 10 device_used_is 0

# Shared with another process: the importer is not charged.
client_start e preload "$C" vmmshare 4Mi hold
path=$(sed -n 's/^vmmshare ok //p' "$TMP/e.out")
client_start i preload "$C" vmmimport "$path" hold
check_eq "the importer maps it" "$(head -1 "$TMP/i.out")" "vmmimport ok"
check_eq "the importer is charged nothing" \
	"$(ctl ps --json | json "sum(d['used_bytes'] for c in j['clients'] if c['pid'] == $PID_i for d in c['devices'])")" 0
check "the device is charged the exporter's 4 MiB only" device_used_is \
	$((4 * MiB))
client_release i
client_release e
wait_for "nothing is left charged" 10 device_used_is 0
finish
