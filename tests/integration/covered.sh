# No honest path sends a charge that no reservation covers: where the
# driver takes more than was reserved, the shim reserves the rest before
# the commit. The copy engine backs a process's first allocation in whole
# granules (2 MiB here), which it learns of only once that allocation is
# reserved: 62 MiB and a byte take 64 MiB, past a 63 MiB limit. Denied
# by the ledger, not believed past the limit (a past-limit event) as a
# re-registration would be; 61 MiB, whose 62 fit, is granted without a
# word. (Pools: tests/integration/soak_honest.sh.)
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=256Mi
C=$CLIENTS/cuclient_linked
printf '[daemon]\ndefault_limit = 63Mi\nswap_engine = copy\n' \
	>"$TMP/gpufrac.conf"
daemon_start

check_eq "61 MiB, backed in 62, is granted" \
	"$(preload "$C" alloc 61Mi 2>&1)" "alloc ok"
check_eq "62 MiB and a byte, backed in 64, is denied" \
	"$(preload "$C" alloc $(((62 << 20) + 1)) 2>&1)" "alloc err=2"
check_eq "neither was believed past the limit" "$(events_of past-limit)" ""
check_eq "nor refused" "$(events_of refused)" ""
check "the denial is the ledger's" eval \
	'[ "$(events_of deny | grep -c .)" = 1 ]'
check "nothing is left charged" device_used_is 0
daemon_stop
finish
