# The engine of host swap per group (issue 21: swap_engine per daemon and
# per group): a group's processes are moved by its engine, the others by
# [daemon]'s, and gpufracctl status says which group swaps how.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=64Mi
C=$CLIENTS/cuclient_linked
[ "$(id -u)" = 0 ] || skip "not root: the other group's process runs as nobody"
command -v setpriv >/dev/null || skip "no setpriv to run a process as nobody"
nobody_setup

printf '[daemon]\nswap_engine = checkpoint\n[group movers]\nmatch = uid:65534\nswap_engine = copy\n' \
	>"$TMP/gpufrac.conf"
daemon_start
check_eq "status --json says each group's engine" \
	"$(ctl status --json | json 'sorted((g["name"], g["swap_engine"]) for g in j["groups"])')" \
	"[('default', 'checkpoint'), ('movers', 'copy')]"
check "and the table too" eval \
	"ctl status | grep -Eq '^movers .* copy +[0-9]+ +config\$'"
client_start n "${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" env \
	"LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM" "$C" alloc 8Mi fill hold check \
	hold
client_start r preload "$C" alloc 8Mi fill hold check hold
check_eq "n is a mover, r is not" \
	"$(client_field "$PID_n" group) $(client_field "$PID_r" group)" \
	"movers default"
check "n is swapped out" ctl swap out "$PID_n"
check "by copy, its group's engine" has_event swap-out "$PID_n" "by copy"
check "r is swapped out" ctl swap out "$PID_r"
check "by checkpoint, the daemon's" has_event swap-out "$PID_r" \
	"by checkpoint"
printf '[daemon]\nswap_engine = copy\n[group movers]\nmatch = uid:65534\nswap_engine = checkpoint\n' \
	>"$TMP/gpufrac.conf"
check "each group is reloaded to the other engine while out" ctl reload
check "both come back" eval "ctl swap in $PID_n && ctl swap in $PID_r"
check "n by copy, the way it went out" has_event swap-in "$PID_n" "by copy"
check "r by checkpoint, the way it went out" has_event swap-in "$PID_r" \
	"by checkpoint"
kill -USR1 "$PID_n" "$PID_r"
wait_for "their data are intact" 20 eval \
	"grep -q '^check ok' $TMP/n.out && grep -q '^check ok' $TMP/r.out"
kill -USR1 "$PID_n" "$PID_r"
wait "$PID_n" "$PID_r"
finish
