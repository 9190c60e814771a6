# A refused process is shown what it may take: nothing (issue 38 H). While
# the daemon refuses its connection (its uid's at max_connections_per_uid),
# its cuMemGetInfo and NVML's memory query say free 0, as every allocation
# fails; a process let in is shown the device again, and so is root's
# meanwhile.
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
GiB=$((1 << 30))
nobody_setup
printf '[daemon]\nmax_connections_per_uid = 4\n' >"$TMP/gpufrac.conf"
daemon_start

conns_hold 4
check_eq "uid 65534 holds its 4 connections" "$(cat "$TMP/conns.out")" \
	"ok 4 refused 0"
client_start b "${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" env \
	"LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM" "$C" info nvml alloc 16Mi hold \
	waitinfo $GiB
check_eq "refused, it is shown free 0 by cuMemGetInfo and NVML" \
	"$(head -n 3 "$TMP/b.out")" "info free=0 total=$((4 * GiB))
nvml free=0 total=$((4 * GiB))
alloc err=2"
check_eq "root's program is shown the device meanwhile" \
	"$(preload "$C" info nvml 2>&1)" "info free=$((4 * GiB)) total=$((4 * GiB))
nvml free=$((4 * GiB)) total=$((4 * GiB))"
conns_drop
wait_for "once its uid has room, the program is let in" 10 \
	eval 'ctl ps --json | grep -q "\"pid\":$PID_b,"'
client_release b
check_eq "let in, it is shown the device again" "$(sed -n 5p "$TMP/b.out")" \
	"info free=$((4 * GiB)) total=$((4 * GiB))"
finish
