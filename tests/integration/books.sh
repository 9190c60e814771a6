# The shim's books stay exact (issue 26): an allocation made by a signal
# handler that interrupts a hooked call is refused, never let through
# unseen; memory a context reset or destroy frees is given back at once,
# to the lease and to the daemon, with and without one.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=256Mi
C=$CLIENTS/cuclient_linked
MiB=$((1 << 20))

ps_of() {
	ctl ps --json | json "[d['$2'] for c in j['clients'] if c['pid'] == $1 for d in c['devices']][0]"
}

daemon_start

# --- a signal handler inside a hooked call ------------------------------
GPUFRAC_MEMORY_LIMIT=16Mi client_start s preload "$C" sigalloc 200 1Mi \
	many 100 1Mi hold
check_eq "a handler that interrupts a hooked call is refused its memory" \
	"$(sed -n 1p "$TMP/s.out")" "sigalloc 0 err=2"
check_eq "so the whole limit is left to the program" \
	"$(sed -n 2p "$TMP/s.out")" "many 16 err=2"
check_eq "and the daemon charges what the program holds" \
	"$(ps_of "$PID_s" used_bytes)" $((16 * MiB))
client_release s

finish
