# The chaos soak, short (make soak runs a minute of it; tests/soak/soak.c
# says what it does): 32 clients of every allocation kind in two groups,
# killed and replaced, the daemon restarted by SIGTERM and SIGKILL,
# reloaded, asked to swap clients; the ledger equals each client's own
# count and the driver's state, to the byte, at quiet points and at the
# end; each client's record the same after a SIGKILL and a start at a
# quiet point, clients out to host or not; no waiter stuck, no crash, no
# sanitizer report.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] ||
	skip "the soak needs root: its clients run under the gids of two groups"

TMPDIR=$TMP SOAK_SECONDS=${SOAK_SECONDS:-20} SOAK_SWAP=${SOAK_SWAP:-all} \
	"$BUILD/tests/soak/soak" \
	>"$TMP/soak.out" 2>"$TMP/soak.err"
rc=$?
cat "$TMP/soak.out"
[ "$rc" = 0 ] || cat "$TMP/soak.err"
check_eq "the soak passes" "$rc" 0

# field NAME: a member of the soak's last line, its JSON summary.
field() { tail -n 1 "$TMP/soak.out" | json "j['$1']" 2>/dev/null; }
check_eq "no charge is lost" "$(field lost_bytes)" 0
check_eq "the ledger equals the driver" "$(field ledger_vs_driver_bytes)" 0
check_eq "gpufracd never crashed" "$(field daemon_crashes)" 0
check_eq "no waiter was stuck" "$(field stuck_waiters)" 0
check "32 clients at a time" [ "$(field clients)" -ge 32 ]
check "they worked" [ "$(field ops)" -gt 1000 ]
check "clients were killed" [ "$(field kills)" -gt 0 ]
check "gpufracd was restarted both ways" [ "$(field restarts)" -ge 2 ]
check "and reloaded" [ "$(field reloads)" -gt 0 ]
check "there were quiet points to compare at" [ "$(field quiet_points)" -ge 3 ]
check "at one, gpufracd was killed and started again, the records compared" \
	[ "$(field restarts_quiet)" -ge 1 ]
finish
