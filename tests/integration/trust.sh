# The daemon believes no client's word that it could check (issue 32): a
# charge asked for without a RESERVE (a forged re-registration, a COMMIT
# that says it was reserved, a LEASE_RESTORE after the registration) is
# refused past the client's limits unless NVML shows the process holding
# (on a live daemon, past what it was granted: refused, issue 40)
# it, with an event naming pid and uid, and the connection closed; an
# honest re-registration past a limit lowered meanwhile is believed, said
# in an event (believed as granted, where the earlier daemon's record
# says so); and a process the daemon refuses (its uid's connections at
# their cap) has every allocation refused until it is let in.
. "$(dirname "$0")/lib.sh"
H=$TOP/tests/clients/hostile.py
C=$CLIENTS/cuclient_linked
nobody_setup
printf '[daemon]\ndefault_limit = 25%%\nmax_connections_per_uid = 256\n' \
	>"$TMP/gpufrac.conf"
daemon_start
uuid=$(ctl status --json | json 'j["devices"][0]["uuid"]')

# --- a forged charge, from uid 65534: refused, the device left alone ------
n=0
for how in rereg unreserved late-lease; do
	n=$((n + 1))
	# What a RESERVE of its own was granted stays until it exits.
	own=0
	[ $how = late-lease ] && own=$((1 << 20))
	exec 3> >("$PYTHON" "$H" forge "$GPUFRAC_SOCKET" "$uuid" $how \
	    $((4 << 30)) nobody >"$TMP/forge.$how" 2>&1)
	wait_for "a $how of 4 GiB by uid 65534 is answered" 10 \
		grep -q . "$TMP/forge.$how"
	check_eq "a $how of 4 GiB past its 1 GiB limit is refused" \
		"$(cat "$TMP/forge.$how")" CLOSED
	check_eq "an event names its pid and uid ($how)" \
		"$(events_of refused | grep -c 'uid 65534')" $n
	check "nothing of it is charged ($how)" device_used_is $own
	check_eq "root's program is granted 256 MiB meanwhile ($how)" \
		"$(preload "$C" alloc 256Mi 2>&1)" "alloc ok"
	exec 3>&-
	wait_for "its charge goes as it exits ($how)" 10 device_used_is 0
done
# On a live daemon nothing was granted to a new connection's process:
# no word past that is believed, within its limits or not (issue 40).
check "the event says why" eval 'events_of refused | grep -q "COMMIT of 4.0GiB past what it was granted"'
check "a lease restored after a RESERVE is refused as such" \
	eval 'events_of refused | grep -q "LEASE_RESTORE of 4294967296 bytes after its registration"'
check_eq "within its limit too, its word is not taken on a live daemon" \
	"$("$PYTHON" "$H" overcharge "$GPUFRAC_SOCKET" "$uuid" commit \
	$((512 << 20)))" CLOSED

# --- an honest re-registration past a limit lowered meanwhile --------------
# Its lease (4 MiB, 1 MiB drawn) kept: no second without use takes it back.
printf '[daemon]\ndefault_limit = 100%%\nmax_connections_per_uid = 256\nlease_idle = 1h\n' \
	>"$TMP/gpufrac.conf"
check "reload: default_limit 100%" ctl reload
client_start a preload "$C" alloc 2Gi alloc 1Mi hold alloc 64Mi
leased_is() { [ "$(ctl status --json | json "j['devices'][0]['leased_bytes']")" = "$1" ]; }
check "it holds 2 GiB and 1 MiB of a lease of 4 MiB" eval \
	'device_used_is $(((2 << 30) + (1 << 20))) && leased_is $((3 << 20))'

daemon_stop
printf '[daemon]\ndefault_limit = 25%%\nmax_connections_per_uid = 256\nlease_idle = 1h\n' \
	>"$TMP/gpufrac.conf"
daemon_start
# (Before it connects the daemon counts it as a process without the shim.)
reregistered() { state_is "$PID_a" running &&
    device_used_is $(((2 << 30) + (1 << 20))); }
wait_for "it re-registers its 2 GiB and 1 MiB drawn from its lease with a daemon that allows it 1 GiB" 10 \
	reregistered
# Its earlier daemon's record says it was granted all of it: believed
# as granted, past its limit now, as after `gpufracctl limit`
# (trust_out.sh has a daemon that left no record: NVML is asked).
check_eq "believed as its earlier daemon granted it, not weighed past its limit" \
	"$(events_of past-limit | wc -l)" 0
check "its lease is not lent again: the 3 MiB it had not drawn are back" \
	leased_is 0
check_eq "and nothing of its word refused" "$(events_of refused | wc -l)" 0
client_release a
check_eq "and it is held to its limit from then on" \
	"$(sed -n 4p "$TMP/a.out")" "alloc err=2"

# --- a refused connection fails closed ------------------------------------
conns_hold 256
check_eq "all 256 are served" "$(cat "$TMP/conns.out")" "ok 256 refused 0"
"${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" env \
	"LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM" "$C" alloc 3Gi hold alloc 512Mi \
	</dev/null >"$TMP/b.out" 2>"$TMP/b.err" &
PID_b=$!
wait_for "its next program is refused a connection" 20 \
	grep -q '^holding' "$TMP/b.out"
check_eq "and its 3 GiB under a 1 GiB limit is refused, not granted" \
	"$(head -n 1 "$TMP/b.out")" "alloc err=2"
check_eq "one line on its stderr says why" "$(cat "$TMP/b.err")" \
	"gpufrac: daemon at '$GPUFRAC_SOCKET' refused this process: uid 65534 has 256 connections to gpufracd, its max_connections_per_uid; allocations fail until it lets this process in"
conns_drop
wait_for "once its uid has room, the program is let in" 10 \
	eval 'ctl ps --json | grep -q "\"pid\":$PID_b,"'
client_release b
check_eq "and its next allocation is asked for, and granted" \
	"$(sed -n 3p "$TMP/b.out")" "alloc ok"
check "saying so" grep -q "lets this process in: allocations are asked for again" "$TMP/b.err"
finish
