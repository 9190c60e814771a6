# Run-time groups (gpufracctl group set/rm) and one process's limit
# (gpufracctl limit): made, changed and removed while the daemon runs,
# applied at once to a running process, checked like [group] sections,
# kept over a restart and a reload, shadowed by a file group of the same
# name, refused to a user who is not an administrator.
# shellcheck disable=SC2154	# PID_* are client_start's
export SIMCUDA_DEVICES=4Gi
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
PRE="LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM"
conf=$TMP/gpufrac.conf
GiB=$((1 << 30)) MiB=$((1 << 20))

[ "$(id -u)" = 0 ] || skip "not root: the group's process runs as user nobody"
command -v setpriv >/dev/null || skip "no setpriv to run a process as nobody"
nobody_setup
CGDIR=
rt_cleanup() { [ -n "$CGDIR" ] && rmdir "$CGDIR"; cleanup; }
trap rt_cleanup EXIT
in_group() { [ "$(client_field "$1" group)" = "$2" ]; }	# PID NAME
printf '[daemon]\ndefault_limit = 100%%\n[group filed]\nmatch = uid:1\nlimit = 3Gi\nguarantee = 2Gi\n' >"$conf"
daemon_start

# A process of user nobody, in no group yet: 256Mi held, then on SIGUSR1
# 1Gi more and the total it sees.
client_start n "${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" env "$PRE" "$C" \
	alloc 256Mi hold alloc 1Gi total
check_eq "before: the default group's limit" "$(client_limit "$PID_n")" \
	$((4 * GiB))

out=$("${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" "$GPUFRACCTL" -s "$GPUFRAC_SOCKET" \
	group set tenants --match uid:65534 --limit 1Gi 2>&1)
check_eq "a user who is no administrator may not make a group" "$?:$out" \
	"1:gpufracctl: group set: permission denied (root only)"

# Root in a container (a pid namespace of its own, given the socket by
# CDI) is not the machine's root.
if out=$(unshare --pid --fork true 2>&1); then
	out=$(unshare --pid --fork "$GPUFRACCTL" -s "$GPUFRAC_SOCKET" \
		group set tenants --match uid:65534 --limit 1Gi 2>&1)
	check_eq "root in another pid namespace may not make a group" "$?:$out" \
		"1:gpufracctl: group set: permission denied (not from the daemon's pid namespace: a container's root is not the machine's)"
else
	echo "skipping the pid namespace case: unshare --pid: $out"
fi

ctl group set tenants --match uid:65534 --limit 1Gi --priority 3 \
	--resolver wait --wait-timeout 2s
check_eq "root makes a group" $? 0
wait_for "its running process joins it at once" 5 \
	in_group "$PID_n" tenants
check_eq "with the group's limit" "$(client_limit "$PID_n")" $GiB
check_eq "status shows the group as it was set, made at run time" \
	"$(ctl status --json | json "[(g['limit_bytes'], g['priority'], g['resolver'], g['runtime']) for g in j['groups'] if g['name'] == 'tenants'][0]")" \
	"($GiB, 3, 'wait', True)"
check_eq "and the files' groups as theirs" "$(group_field filed runtime)" \
	False
check "the table says where each group comes from" sh -c \
	"'$GPUFRACCTL' -s '$GPUFRAC_SOCKET' status | grep -Eq '^tenants .* run-time\$'"

ctl group set tenants --limit 1.5Gi
check_eq "a change without --match keeps the rules" \
	"$(client_field "$PID_n" group):$(client_limit "$PID_n")" \
	"tenants:$((3 * GiB / 2))"
check "and is saved in the state directory" grep -qx 'limit = 1610612736' \
	"$TMP/runtime-groups.conf"

# What a [group] section may not say, a run-time group may not either.
check_fails() {	# DESC WANT-ON-STDERR ARGS...
	local desc=$1 want=$2 out rc; shift 2
	out=$(ctl "$@" 2>&1); rc=$?
	case $rc:$out in
	1:*"$want"*) pass "$desc";;
	*) fail "$desc: exit $rc, '$out'";;
	esac
}
check_fails "a guarantee that does not fit is refused, naming the device and groups" \
	"add up to 5.0GiB, more than its 4.0GiB shareable capacity: big 3.0GiB, filed 2.0GiB" \
	group set big --match uid:7 --guarantee 3Gi
check_fails "a new group needs a rule" "group 'lone' is new: it needs a match rule" \
	group set lone --limit 1Gi
check_fails "a bad rule is named" "bad rule 'cgroup:relative'" \
	group set odd --match cgroup:relative
check_fails "a group of the files is changed in the files" \
	"group 'filed' is defined at $conf:3: change it there" \
	group set filed --limit 2Gi
check_fails "'default' is not a run-time group" "reserved" \
	group set default --match uid:9
check_fails "removing a group that is not there says so" \
	"no run-time group 'nope'" group rm nope
out=$(ctl group set x --limit 4GB 2>&1)
check_eq "a bad value is a usage error, said before asking" "$?:$out" \
	"2:gpufracctl: group set: bad limit '4GB' (expected a size such as 8Gi or a share such as 50%)"
# Zero, however written, is refused alike, as in gpufrac.conf.
for zero in 0 0Gi 0%; do
	out=$(ctl group set x --limit $zero 2>&1)
	check_eq "group set --limit $zero is refused" "$?:$out" \
		"2:gpufracctl: group set: bad limit '$zero' (a limit must be positive)"
	out=$(ctl limit "$PID_n" $zero 2>&1)
	check_eq "limit $zero is refused" "$?:$out" \
		"2:gpufracctl: limit: bad size '$zero' (a limit must be positive)"
done
check_eq "none of them is in force" "$(group_names)" \
	"['default', 'filed', 'tenants']"

# One process's limit.
ctl limit "$PID_n" 512Mi
check_eq "limit sets one process's limit" "$(client_limit "$PID_n")" \
	$((512 * MiB))
check_fails "never above what its group allows" \
	"more than its group 'tenants' allows (1.5GiB)" limit "$PID_n" 2Gi
check_fails "a pid that is no client" "no client with pid 999999" \
	limit 999999 1Gi
out=$("${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" "$GPUFRACCTL" -s "$GPUFRAC_SOCKET" \
	limit "$PID_n" 2Gi 2>&1)
check_eq "limit is for administrators" "$?" 1
ctl limit "$PID_n" 128Mi --device 0
check_eq "below what it holds: nothing is taken away" \
	"$(ps_json "[c['devices'][0]['used_bytes'] - c['devices'][0]['leased_bytes'] for c in j['clients'] if c['pid'] == $PID_n][0]"):$(client_limit "$PID_n")" \
	"$((256 * MiB)):$((128 * MiB))"

# Kept over a restart (SIGKILL: nothing is written at exit).
kill -KILL "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=
daemon_start
check_eq "after a restart the run-time group is there" \
	"$(group_field tenants limit_bytes)" $((3 * GiB / 2))
wait_for "and its process, reconnected, is in it" 10 \
	in_group "$PID_n" tenants

# A reload keeps them; a file group of the same name wins.
kill -HUP "$DAEMON_PID"
wait_for "a reload keeps the run-time groups" 5 \
	grep -q "configuration reloaded" "$TMP/gpufracd.log"
check_eq "tenants still there" "$(group_field tenants limit_bytes)" \
	$((3 * GiB / 2))
printf '[group tenants]\nmatch = uid:65534\nlimit = 768Mi\n' >>"$conf"
ctl reload
check_eq "a file group of the same name wins" \
	"$(group_field tenants limit_bytes)" $((768 * MiB))
check "and the conflict is logged" grep -q \
	"run-time group 'tenants' is shadowed by the group of the same name at $conf:7" \
	"$TMP/gpufracd.log"
ctl group rm tenants
check_eq "rm takes the shadowed run-time group away" \
	"$(grep -c '^\[group' "$TMP/runtime-groups.conf")" 0
printf '[daemon]\ndefault_limit = 100%%\n' >"$conf"
ctl reload

# A transient group (--cgroup, as the OCI hook and the Slurm plugin make
# them) goes when its cgroup does; one that names a cgroup by a plain rule
# stays.
cg_mount=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
CGDIR=
if [ -n "$cg_mount" ] && mkdir "$cg_mount/gpufrac-rt-$$" 2>/dev/null; then
	CGDIR=$cg_mount/gpufrac-rt-$$
	ctl group set eph --cgroup /gpufrac-rt-$$ --limit 1Gi
	check_eq "--cgroup matches the cgroup and all below it" \
		"$(grep -A1 '^\[group eph\]' "$TMP/runtime-groups.conf" | tail -n 1)" \
		"match = cgroup:/gpufrac-rt-$$ cgroup:/gpufrac-rt-$$/*"
	check "and makes it transient" grep -qx 'transient = yes' \
		"$TMP/runtime-groups.conf"
	ctl group set perm --match cgroup:/gpufrac-rt-none-$$ --limit 1Gi
	gone() { ! ctl status --json | grep -q "\"name\":\"$1\""; }
	check "it stays while its cgroup is there" test "$(group_field eph limit_bytes)" = $GiB
	rmdir "$CGDIR" && CGDIR=
	wait_for "once its cgroup is gone the daemon removes it" 10 gone eph
	check "and says so" grep -q "run-time group 'eph' removed: its cgroup is gone" \
		"$TMP/gpufracd.log"
	check "a group that is not transient stays" test "$(group_field perm limit_bytes)" = $GiB
	ctl group rm perm
else
	echo "skipping the transient group case: no writable cgroup2 mount"
fi

wait_for "with no group left its process is in 'default' again" 5 \
	in_group "$PID_n" default
client_release n
check_eq "and its next allocation is judged by that group's limit" \
	"$(tail -n 2 "$TMP/n.out" | tr '\n' ' ')" \
	"alloc ok total $((4 * GiB)) "
finish
