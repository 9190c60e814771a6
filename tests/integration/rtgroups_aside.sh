# A saved run-time group that no longer fits never keeps gpufracd from
# starting (issue 27): a 100% guarantee saved by a container, then a
# configured group with a guarantee of its own. The group is set aside,
# logged, shown by status as set aside, kept in the state file for the
# next start; `group rm` removes it, `group set` sets it anew.
export SIMCUDA_DEVICES=4Gi
. "$(dirname "$0")/lib.sh"
conf=$TMP/gpufrac.conf
state=$TMP/runtime-groups.conf
GiB=$((1 << 30))

printf '[daemon]\ndefault_limit = 100%%\n' >"$conf"
daemon_start
check "a run-time group may take every byte as its guarantee" \
	ctl group set hog --match uid:2 --guarantee 100%
check "beside another that fits anything" \
	ctl group set small --match uid:3 --limit 1Gi
daemon_stop

# The administrator now guarantees 10% to a group of the files.
printf '[daemon]\ndefault_limit = 100%%\n[group filed]\nmatch = uid:1\nguarantee = 10%%\n' >"$conf"
daemon_start
check "gpufracd starts all the same" kill -0 "$DAEMON_PID"
check "and says which group it set aside, and why" grep -q \
	"run-time group 'hog' set aside: it does not fit with the configuration: .*guarantees" \
	"$TMP/gpufracd.log"
check_eq "status shows it set aside, the others in force" \
	"$(ctl status --json | json "sorted((g['name'], g['runtime'], g['set_aside']) for g in j['groups'] if g['name'] != 'default')")" \
	"[('filed', False, False), ('hog', True, True), ('small', True, False)]"
check "as the table does" sh -c "'$GPUFRACCTL' -s '$GPUFRAC_SOCKET' status | grep -q '^hog .*set aside\$'"
check_eq "the filed group has its guarantee" \
	"$(group_field filed guarantee_bytes)" $((4 * GiB / 10))
check "a change to another group keeps it in the state file" \
	ctl group set small --limit 2Gi
check_eq "which still holds both" \
	"$(grep -c '^\[group \(hog\|small\)\]' "$state")" 2

daemon_stop
daemon_start
check "the next start sets it aside again" \
	test "$(grep -c "run-time group 'hog' set aside" "$TMP/gpufracd.log")" -eq 2
check "set again, it is set anew: its old guarantee is not kept" \
	ctl group set hog --match uid:2 --limit 1Gi
check_eq "and it is in force" \
	"$(ctl status --json | json "[(g['set_aside'], g['guarantee_bytes'], g['limit_bytes']) for g in j['groups'] if g['name'] == 'hog'][0]")" \
	"(False, 0, $GiB)"
check_eq "once in the state file" "$(grep -c '^\[group hog\]' "$state")" 1

# Removed while set aside: gone from the state file.
check "a group given a guarantee again" \
	ctl group set hog --guarantee 1Gi
daemon_stop
printf '[daemon]\ndefault_limit = 100%%\n[group filed]\nmatch = uid:1\nguarantee = 80%%\n' >"$conf"
daemon_start
check "is set aside at the next start" grep -q \
	"run-time group 'hog' set aside.*guarantee" "$TMP/gpufracd.log"
check "group rm removes it" ctl group rm hog
check "from the state file" sh -c "! grep -q '^\[group hog\]' '$state'"
check_eq "and from status" \
	"$(ctl status --json | json "[g['name'] for g in j['groups'] if g['name'] == 'hog']")" "[]"
check "the others stay" grep -q '^\[group small\]' "$state"
finish
