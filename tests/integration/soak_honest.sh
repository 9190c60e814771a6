# The honest soak, brief (make soak runs a minute of it; tests/soak/soak.c
# says what it does): 8 clients of every kind (plain, pitch, managed,
# pools trimmed and synchronised, VMM, arrays, IPC, graphs) in one group
# near its limit, nothing going wrong around them. No charge of theirs is
# refused or believed past a limit (a pool's growth is reserved before it
# is committed), no connection is closed, the driver never refuses a
# grant, and every out-of-memory they see is one the ledger denied.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] ||
	skip "the soak needs root: its clients run under the gid of a group"

TMPDIR=$TMP SOAK_MODE=honest SOAK_SECONDS=${SOAK_SECONDS:-4} \
	"$BUILD/tests/soak/soak" >"$TMP/soak.out" 2>"$TMP/soak.err"
rc=$?
cat "$TMP/soak.out"
[ "$rc" = 0 ] || cat "$TMP/soak.err"
check_eq "the honest soak passes" "$rc" 0

# field NAME: a member of the soak's last line, its JSON summary.
field() { tail -n 1 "$TMP/soak.out" | json "j['$1']" 2>/dev/null; }
check_eq "it was the honest one" "$(field mode)" honest
check_eq "no charge refused" "$(field refusals)" 0
check_eq "none believed past a limit" "$(field past_limit)" 0
check_eq "no connection closed" "$(field disconnections)" 0
check_eq "no grant refused by the driver" "$(field driver_oom)" 0
check_eq "each out-of-memory denied by the ledger" "$(field denied)" \
	"$(field ledger_denied)"
check "near its limit: some were denied" [ "$(field denied)" -gt 0 ]
check_eq "no charge is lost" "$(field lost_bytes)" 0
check_eq "the ledger equals the driver" "$(field ledger_vs_driver_bytes)" 0
check "they worked" [ "$(field ops)" -gt 1000 ]
finish
