# A process without the shim inside a container (issue 31): a container
# run by crun without gpufrac's CDI edits (no shim, no socket: a shell
# that did not inherit the hook's environment, as an ssh session into the
# container is) takes 3 GiB. The daemon, which sees it by the pid the
# initial namespace gives it, attributes it to the group that matches the
# container's cgroup, not to its uid's (root: group default), and a
# process under the shim in that cgroup is refused what the group's limit
# no longer holds. A container annotated gpufrac.io/unshimmed: kill, or
# any annotated one where [jobs] says unshimmed = kill, or whose user's
# [group] says it (issue 39), has such a process killed past its group's
# limit; a container of that user asking more than its [group]'s limit is
# refused at its door.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oci_lib.sh"
PRE="${SAN_RT:+$SAN_RT }$SHIM"
GiB=$((1 << 30))
export SIMCUDA_DEVICES=8Gi

CGPATH=/gpufrac-test-$$-box
printf '[group box]\nmatch = cgroup:%s\nlimit = 2Gi\nresolver = fail\n' \
	"$CGPATH" >"$TMP/gpufrac.conf"
daemon_start

bundle box '' '{}' "$C" alloc 3Gi hold
crun_start box
if holding box "the container's process runs, without the shim"; then
	wait_for "ps lists it as unshimmed" 5 eval \
		"[ \"\$(ps_json \"[c['state'] for c in j['clients']]\")\" = \"['unshimmed']\" ]"
	pid=$(ps_json "j['clients'][0]['pid']")
	check_eq "by the pid of the initial namespace, with its cgroup" \
		"$(sed -n 's/^0:://p' "/proc/$pid/cgroup")" "$CGPATH"
	check_eq "attributed to the container's group" \
		"$(client_field "$pid" group)" box
	check_eq "counted in it" "$(group_field box used_bytes)" $((3 * GiB))
	check_eq "a process under the shim in its cgroup is refused" \
		"$(echo $BASHPID >"$CG2$CGPATH/cgroup.procs" &&
		env LD_PRELOAD="$PRE" "$C" alloc 1Gi 2>/dev/null)" \
		"alloc err=2"
	kill -USR1 "$pid"
fi
wait "$CRUN_PID"
check "the container exits" [ $? = 0 ]

# A job's group: the hook makes it from the annotations; a process of the
# container that did not inherit the shim's environment (env -u) holds 2
# GiB against the 1 GiB of gpufrac.io/memory.
SPEC=$TMP/gpufrac.json
"$GPUFRACCTL" -s "$GPUFRAC_SOCKET" cdi --shim "$SHIM" --hook "$HOOK" >"$SPEC"
# killed NAME ANNOTATIONS DESC: such a container's process is killed.
killed() {
	bundle "$1" "$SPEC" "$2" env -u LD_PRELOAD "$C" alloc 2Gi hold
	crun_start "$1"
	wait_for "$3" 10 eval "ctl events --json |
		grep '\"event\":\"unshimmed-kill\"' | grep -q 'oci-$1'" ||
	    in_cgroup2 crun --root "$RUNROOT" kill "$1" KILL >/dev/null 2>&1
	wait "$CRUN_PID"
	check "$1: its container ends, its process killed" [ $? -ne 0 ]
}
killed asks '{"gpufrac.io/memory": "1Gi", "gpufrac.io/unshimmed": "kill"}' \
	"a container that asks gpufrac.io/unshimmed: kill has it killed"
daemon_stop
printf '[jobs]\nunshimmed = kill\n' >"$TMP/gpufrac.conf"
daemon_start
killed site '{"gpufrac.io/memory": "1Gi"}' \
	"where [jobs] says unshimmed = kill, any job's group kills it"

# A job's door narrows, never widens (issue 39, point 10): the container's
# group is bounded by the [group] its user's processes would match without
# it, at least its unshimmed = kill, at most its limit.
daemon_stop
printf '[daemon]\nunshimmed = count\n[group users]\nmatch = uid:65534\nlimit = 1Gi\nunshimmed = kill\n' \
	>"$TMP/gpufrac.conf"
daemon_start
nobody_setup
OCI_USER=65534:65534 killed narrow \
	'{"gpufrac.io/memory": "1Gi", "gpufrac.io/unshimmed": "count"}' \
	"a container of user 65534 asking unshimmed=count has its 2 GiB process killed, as its [group] says"
OCI_USER=65534:65534 bundle wide "$SPEC" '{"gpufrac.io/memory": "2Gi"}' \
	sh -c 'echo started'
crun_run wide
check "a container of user 65534 asking 2Gi is refused at its door" \
	test $? -ne 0
check_eq "saying why in one line" "$(grep -v "was already gone" "$TMP/wide.hook")" \
	"gpufrac-oci-hook: cannot create group 'oci-wide' for container 'wide': limit 2.0GiB is above [group users] limit 1.0GiB"
check "its program never ran" test ! -s "$TMP/wide.out"
# honest: root matches no [group]; its container gets what it asks
bundle root "$SPEC" '{"gpufrac.io/memory": "2Gi"}' "$C" total
crun_run root
check_eq "a container of root asking 2Gi runs with it" \
	"$?:$(cat "$TMP/root.out")" "0:total $((2 * GiB))"
finish
