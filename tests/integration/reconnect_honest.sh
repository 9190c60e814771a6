# An honest process whose connection the daemon closes (gpufracctl
# disconnect) reconnects and re-registers exactly what it was granted
# (issue 40, D): real shimmed programs holding plain allocations, ones
# drawn from a lease, a pool's (cuMemAllocAsync), VMM, managed memory and
# arrays, on two devices, each context's memory charged too; cut twice.
# None is refused, none believed past its limit, none killed, and
# the daemon's record of each after equals its record before. An unknown
# pid is said in one line, and only an administrator may disconnect.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=8Gi,8Gi SIMCUDA_CONTEXT_BYTES=8Mi
# The library says when it has re-registered (info).
export GPUFRAC_LOG=info
C=$CLIENTS/cuclient_linked
nobody_setup
printf '[daemon]\nlease_idle = 1h\n[group all]\nmatch = uid:0\nlimit = 4Gi\nunshimmed = kill\n' \
	>"$TMP/gpufrac.conf"
daemon_start

names="plain leased pool vmm managed arrays mixed twodev"
client_start plain preload "$C" alloc 256Mi hold alloc 1Mi
client_start leased preload "$C" alloc 1Mi many 3 1Mi hold alloc 1Mi
client_start pool preload "$C" async 64Mi hold alloc 1Mi
client_start vmm preload "$C" vmm 64Mi hold alloc 1Mi
client_start managed preload "$C" managed 32Mi hold alloc 1Mi
client_start arrays preload "$C" array 1024 1024 hold alloc 1Mi
client_start mixed preload "$C" alloc 256Mi many 3 1Mi async 16Mi \
	vmm 32Mi managed 8Mi array 512 512 alloc 3Mi hold alloc 1Mi
client_start twodev preload "$C" dev 1 alloc 256Mi many 3 1Mi async 8Mi \
	dev 0 alloc 8Mi many 3 1Mi hold alloc 1Mi

# used PID: what the daemon charges PID, all devices.
used() {
	ctl ps --json | json "sum(d['used_bytes'] for c in j['clients'] if c['pid'] == $1 for d in c['devices'])"
}
# connections PID: how many times PID has connected.
connections() { grep -c "client pid $1 (uid" "$TMP/gpufracd.log"; }
# reregistered NAME N: NAME's library has re-registered N times or more.
reregistered() { [ "$(grep -c "reconnected to gpufracd" "$TMP/$1.err")" -ge "$2" ]; }

for n in $names; do
	pid_var=PID_$n
	printf -v "BEFORE_$n" %s "$(used "${!pid_var}")"
done
# connected PID N: PID has connected N times or more.
connected() { [ "$(connections "$1")" -ge "$2" ]; }
for cut in 1 2; do
	for n in $names; do
		pid_var=PID_$n
		check "the daemon closes $n's connection ($cut)" \
		    ctl disconnect "${!pid_var}"
	done
	for n in $names; do
		pid_var=PID_$n; before_var=BEFORE_$n
		wait_for "$n connects again ($cut)" 20 connected \
		    "${!pid_var}" $((cut + 1))
		wait_for "$n re-registers ($cut)" 10 reregistered "$n" "$cut"
		check "$n lives ($cut)" kill -0 "${!pid_var}"
		check_eq "$n is charged what it was before ($cut)" \
		    "$(used "${!pid_var}")" "${!before_var}"
	done
done
check_eq "no re-registration is refused" "$(events_of refused)" ""
check_eq "none is believed past its limit" "$(events_of past-limit)" ""
out=$("${AS_NOBODY[@]}" "$GPUFRACCTL" -s "$GPUFRAC_SOCKET" disconnect \
	"$PID_plain" 2>&1)
check_eq "disconnecting is for administrators" "$out" \
	"gpufracctl: disconnect: permission denied (root only)"
check_eq "and plain kept its connection" "$(connections "$PID_plain")" 3
for n in $names; do
	pid_var=PID_$n
	client_release "$n"
	check_eq "$n allocates after" "$(tail -n 1 "$TMP/$n.out")" "alloc ok"
done

# --- an unknown pid ---------------------------------------------------
out=$(ctl disconnect 999999 2>&1); rc=$?
check_eq "disconnecting a pid that is no client fails" "$rc" 1
check_eq "and says so in one line" "$out" "gpufracctl: no client with pid 999999"
daemon_stop
finish
