# fork() as real programs use it. A child forked after its parent started
# CUDA (a data loader's worker) may not use the driver: the real one
# answers CUDA_ERROR_NOT_INITIALIZED (3), and the shim passes that through.
# The child never speaks on its parent's connection, never gives back or
# charges its parent's memory, nor does its exit. A child forked before its
# parent's first CUDA use (a launcher preloaded with the shim) is a client
# of its own, charged as itself, and the launcher is none.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
daemon_start

# used_of PID: what the daemon charges PID on device 0. pids: its clients.
used_of() {
	ps_json "[c['devices'][0]['used_bytes'] for c in j['clients'] if c['pid'] == $1][0]"
}
pids() { ps_json "sorted(c['pid'] for c in j['clients'])"; }

# The parent sits at its 1Gi limit: a free of its memory by the child, or a
# charge of the child's on its connection (refused there), would show. The
# VMM one names its device: the shim reserves before the driver refuses.
GPUFRAC_MEMORY_LIMIT=1Gi client_start a preload "$C" alloc 1Gi \
	fork init fork alloc 512Mi fork vmm 2Mi fork free fork info \
	alloc 1Mi info hold
check_eq "the children are refused by the driver, the parent is untouched" \
	"$(cat "$TMP/a.out")" "alloc ok
init err=3
alloc err=3
vmm err=3
free err=3
info err=3
alloc err=2
info free=0 total=1073741824
holding"
wait_for "the parent is the only client" 10 \
	eval '[ "$(pids)" = "[$PID_a]" ]'
check_eq "its 1 GiB charged, after its children's exits" "$(used_of "$PID_a")" \
	1073741824
client_release a
wait_for "everything is returned" 10 device_used_is 0

# A launcher forks before any CUDA use: its child has a limit of its own.
GPUFRAC_MEMORY_LIMIT=1Gi client_start l preload "$C" launch alloc 1Gi \
	alloc 1Mi info hold
kid=$(sed -n 's/^child //p' "$TMP/l.out")
check_eq "the launcher's child is a client of its own, at its own limit" \
	"$(sed 1d "$TMP/l.out")" "alloc ok
alloc err=2
info free=0 total=1073741824
holding"
check_eq "charged as itself; the launcher is no client" "$(pids):$(used_of "$kid")" \
	"[$kid]:1073741824"
kill -USR1 "$kid"
wait "$PID_l"
wait_for "everything is returned" 10 device_used_is 0
finish
