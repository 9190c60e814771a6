# [group] sections with real processes in real cgroup v2 cgroups: a limit
# shared by a group's processes, cgroup: and uid: rules (first match wins),
# client_may_raise, group and priority in ps, per-group usage in status,
# guarantees that do not fit a device, and a reload that changes the limit
# of a process already running.
# shellcheck disable=SC2154	# PID_* are client_start's
export SIMCUDA_DEVICES=8Gi
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
PRE="LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM"
conf=$TMP/gpufrac.conf
GiB=$((1 << 30)) MiB=$((1 << 20))

nobody_setup

# The cgroup v2 hierarchy: its mount, and two cgroups of our own there,
# removed at exit once their processes have gone (extends lib.sh's
# cleanup).
CG='' CGROOT='' CG_WHY=''
cgroups_cleanup() {
	local d
	# shellcheck disable=SC2046
	kill -9 $(jobs -p) 2>/dev/null
	if [ -n "$CG" ]; then
		for d in "$CG/a" "$CG/b" "$CG"; do
			cgroup_remove "$d"
		done
	fi
	cleanup
}
trap cgroups_cleanup EXIT
cg_mount=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -z "$cg_mount" ]; then
	CG_WHY="no cgroup2 file system is mounted"
elif ! mkdir "$cg_mount/gpufrac-test-$$" 2>"$TMP/cg.err"; then
	CG_WHY="cannot create a cgroup under '$cg_mount': $(cat "$TMP/cg.err")"
else
	CG=$cg_mount/gpufrac-test-$$
	mkdir "$CG/a" "$CG/b" 2>"$TMP/cg.err" ||
	    CG_WHY="cannot create a cgroup under '$CG': $(cat "$TMP/cg.err")"
fi

if [ -n "$CG" ] && [ -z "$CG_WHY" ]; then
	line=$(sh -c "$IN_CG" "$CG/a" grep '^0::' /proc/self/cgroup 2>"$TMP/cg.err")
	case $line in
	0::/*/a) CGROOT=${line#0::}; CGROOT=${CGROOT%/a};;
	*)	CG_WHY="cannot move a process into '$CG/a': $(cat "$TMP/cg.err")";;
	esac
fi
[ -n "$CGROOT" ] || echo "skipping the cgroup cases: $CG_WHY"
NOBODY=
if [ "$(id -u)" != 0 ]; then
	echo "skipping the uid cases: not root"
elif ! command -v setpriv >/dev/null; then
	echo "skipping the uid cases: no setpriv"
else
	NOBODY=1
fi

# --- guarantees that do not fit: the daemon refuses to start ------------
printf '[group x]\nmatch = uid:1\nguarantee = 5Gi\n[group y]\nmatch = uid:2\nguarantee = 4Gi\n' >"$TMP/big.conf"
out=$("$GPUFRACD" -n -c "$TMP/big.conf" 2>&1)
check_eq "-n checks only the files: guarantees need the devices" \
	"$?:$out" "0:configuration OK"
"$GPUFRACD" -f -s "$TMP/big.sock" -c "$TMP/big.conf" 2>"$TMP/big.err"
check_eq "gpufracd refuses guarantees beyond a device's capacity" $? 1
check "with one line naming the device and the groups" grep -Eq \
	"guarantees on GPU-[0-9a-f-]+ \(device 0\) add up to 9\.0GiB, more than its 8\.0GiB shareable capacity: x 5\.0GiB, y 4\.0GiB" \
	"$TMP/big.err"
check "and no socket is left" test ! -e "$TMP/big.sock"

# --- the daemon with three groups ---------------------------------------
write_conf() {	# shared_limit nobodies_limit
	{
		printf '[daemon]\ndefault_limit = 100%%\n'
		if [ -n "$CGROOT" ]; then
			printf '[group shared]\nmatch = cgroup:%s/a\n' "$CGROOT"
			printf 'limit = %s\nguarantee = 512Mi\npriority = 5\n' "$1"
			# '*' crosses '/'; a/ matched the section above first
			printf '[group rest]\nmatch = cgroup:%s/*\n' "$CGROOT"
			printf 'limit = 1Gi\npriority = 2\nclient_may_raise = yes\n'
		fi
		printf '[group nobodies]\nmatch = uid:65534\nlimit = %s\n' "$2"
		printf 'priority = -3\n'
	} >"$conf"
}
write_conf 2Gi 768Mi
daemon_start

check_eq "status lists every group, members or not" "$(group_names)" \
	"$(if [ -n "$CGROOT" ]; then echo "['default', 'nobodies', 'rest', 'shared']"; else echo "['default', 'nobodies']"; fi)"

if [ -n "$CGROOT" ]; then
	# Two processes in one cgroup share their group's 2Gi.
	client_start a sh -c "$IN_CG" "$CG/a" env "$PRE" "$C" alloc 1536Mi hold
	client_start b sh -c "$IN_CG" "$CG/a" env "$PRE" "$C" alloc 1Gi \
		alloc 512Mi hold
	check_eq "the first takes 1.5Gi of the group's 2Gi" \
		"$(head -n 1 "$TMP/a.out")" "alloc ok"
	check_eq "the second is denied beyond the shared limit, not beyond its own" \
		"$(head -n 2 "$TMP/b.out" | tr '\n' ' ')" "alloc err=2 alloc ok "
	check_eq "ps shows their group" \
		"$(client_field "$PID_a" group) $(client_field "$PID_b" group)" \
		"shared shared"
	check_eq "and its priority" "$(client_field "$PID_a" priority)" 5
	check_eq "each may use up to the group's limit" \
		"$(client_limit "$PID_b")" $((2 * GiB))
	check "ps prints the group in its table" \
		sh -c "'$GPUFRACCTL' -s '$GPUFRAC_SOCKET' ps | grep -Eq '^ *$PID_a +[0-9]+ +shared +5 '"
	check_eq "status shows the group's usage" "$(group_field shared used_bytes)" \
		$((2 * GiB))
	check_eq "its members" "$(group_field shared clients)" 2
	check_eq "its limit and guarantee" \
		"$(group_field shared limit_bytes) $(group_field shared guarantee_bytes)" \
		"$((2 * GiB)) $((512 * MiB))"
	check_eq "an empty group shows no usage" "$(group_field rest used_bytes)" 0

	# client_may_raise: a process's own request is its limit.
	check_eq "a group's own limit holds a process that asks for nothing" \
		"$(sh -c "$IN_CG" "$CG/b" env "$PRE" "$C" total alloc 1Gi alloc 1)" \
		"total $GiB
alloc ok
alloc err=2"
	check_eq "with client_may_raise, one that asks for more gets it" \
		"$(GPUFRAC_MEMORY_LIMIT=3Gi sh -c "$IN_CG" "$CG/b" env "$PRE" "$C" total alloc 2Gi)" \
		"total $((3 * GiB))
alloc ok"
	client_release a
	client_release b
fi

if [ -n "$NOBODY" ]; then
	client_start n "${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" env "$PRE" "$C" total \
		alloc 512Mi alloc 512Mi hold
	check_eq "a uid: rule sets the limit of another user's process" \
		"$(head -n 3 "$TMP/n.out" | tr '\n' ' ')" \
		"total $((768 * MiB)) alloc ok alloc err=2 "
	check_eq "ps shows its uid, group and priority" \
		"$(client_field "$PID_n" uid) $(client_field "$PID_n" group) $(client_field "$PID_n" priority)" \
		"65534 nobodies -3"
	client_release n
	if [ -n "$CGROOT" ]; then
		check_eq "the first section that matches wins" \
			"$("${NOBODY_ENV[@]}" sh -c "$IN_CG" "$CG/b" "${AS_NOBODY[@]}" env "$PRE" "$C" total)" \
			"total $GiB"
	fi

	# A reload changes the limit of a process that is running.
	client_start d "${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" env "$PRE" "$C" alloc 256Mi \
		hold alloc 512Mi info
	check_eq "before the reload" "$(client_limit "$PID_d")" $((768 * MiB))
	write_conf 2Gi 512Mi
	kill -HUP "$DAEMON_PID"
	wait_for "after SIGHUP the running process has the new limit" 10 \
		limit_is "$PID_d" $((512 * MiB))
	check_eq "status shows the group's new limit" \
		"$(group_field nobodies limit_bytes)" $((512 * MiB))
	client_release d
	check_eq "its next allocation is judged by the new limit" \
		"$(tail -n 2 "$TMP/d.out" | head -n 1)" "alloc err=2"
	check_eq "and the program sees it (DEVICE_INFO pushed with seq 0)" \
		"$(tail -n 1 "$TMP/d.out")" \
		"info free=$((256 * MiB)) total=$((512 * MiB))"
fi

# A bad reload keeps the groups in force.
printf '[group x]\nmatch = uid:1\nguarantee = 5Gi\n[group y]\nmatch = uid:2\nguarantee = 4Gi\n' >"$conf"
kill -HUP "$DAEMON_PID"
wait_for "a reload with guarantees beyond a device is refused" 10 \
	grep -q "guarantees on GPU-.* add up to 9.0GiB" "$TMP/gpufracd.log"
check_eq "and the old groups stay" "$(group_names)" \
	"$(if [ -n "$CGROOT" ]; then echo "['default', 'nobodies', 'rest', 'shared']"; else echo "['default', 'nobodies']"; fi)"

if [ -z "$CGROOT" ] && [ -z "$NOBODY" ]; then
	daemon_stop
	[ "$CHECKS_FAILED" -eq 0 ] || finish
	skip "only the start-up check could run: $CG_WHY; the uid cases need root and setpriv"
fi
finish
