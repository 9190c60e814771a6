# A daemon short of descriptors refuses, and the shim fails closed (issue
# 38 G, point 7). gpufracd started with RLIMIT_NOFILE 256 sizes its caps on
# it and says so: uid 65534 asking for 253 connections gets 42 of them, the
# rest refused, and a root program in a 1 GiB group is still let in and
# held to its limit (before: never accepted, it took 3 GiB "on the last
# known limit"). Root's own connections past the reserve, with no
# descriptor left, are refused, not left in the backlog. And a process a
# restarted daemon refuses draws nothing from the lease an earlier daemon
# lent it.
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
H=$TOP/tests/clients/hostile.py
nobody_setup
command -v prlimit >/dev/null || skip "no prlimit"
printf '#!/bin/sh\nexec prlimit --nofile=256:256 %s "$@"\n' "$GPUFRACD" \
	>"$TMP/gpufracd-256"
chmod +x "$TMP/gpufracd-256"
cat >"$TMP/gpufrac.conf" <<'CONF'
[daemon]
max_connections_per_uid = 256
lease_idle = 1h
[group one]
match = uid:0
limit = 1Gi
CONF
REAL_GPUFRACD=$GPUFRACD
GPUFRACD=$TMP/gpufracd-256 daemon_start
check "it says what it chose" grep -q "connections: 96 for 256 descriptors: 42 of one uid, 84 of all but root and admin_group, 12 kept for these" \
	"$TMP/gpufracd.log"

conns_hold 253
check_eq "uid 65534 gets 42 connections of the 253 it asks for" \
	"$(cat "$TMP/conns.out")" "ok 42 refused 211"
check_eq "a root program in a 1 GiB group is let in, and refused 3 GiB" \
	"$(preload "$C" alloc 3Gi 2>&1)" "alloc err=2"
check_eq "and granted 512 MiB" "$(preload "$C" alloc 512Mi 2>&1)" "alloc ok"
"$PYTHON" "$H" conns "$GPUFRAC_SOCKET" 200 root <"$TMP/conns.in" \
	>"$TMP/rootconns.out" &
wait_for "root opens 200 connections" 30 grep -q '^ok' "$TMP/rootconns.out"
check "past the descriptors, root's are refused, not left waiting" \
	grep -q "^ok [0-9]* refused [1-9]" "$TMP/rootconns.out"
check "saying why" grep -q \
	"no file descriptor left for this connection" "$TMP/gpufracd.log"
conns_drop
wait_for "the daemon has room again" 10 \
	eval '[ "$(preload "$C" alloc 512Mi 2>&1)" = "alloc ok" ]'
daemon_stop

# --- a refused process draws nothing from an old lease -------------------
printf '[daemon]\nmax_connections_per_uid = 4\nlease_idle = 1h\n' \
	>"$TMP/gpufrac.conf"
GPUFRACD=$REAL_GPUFRACD daemon_start
client_start b "${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" env \
	"LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM" "$C" alloc 1Mi hold alloc 2Mi
check "it holds 1 MiB of a lease" eval \
	'[ "$(ctl status --json | json "j[\"devices\"][0][\"leased_bytes\"]")" -ge $((2 << 20)) ]'
kill -STOP "$PID_b"
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
DAEMON_PID=
GPUFRACD=$REAL_GPUFRACD daemon_start
conns_hold 4
kill -CONT "$PID_b"
wait_for "the restarted daemon refuses it" 20 \
	grep -q "allocations fail until it lets this process in" "$TMP/b.err"
client_release b
check_eq "its 2 MiB are refused, not drawn from the old lease" \
	"$(sed -n 3p "$TMP/b.out")" "alloc err=2"
conns_drop
finish
