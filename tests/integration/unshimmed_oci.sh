# A process without the shim inside a container (issue 31): a container
# run by crun without gpufrac's CDI edits (no shim, no socket: a shell
# that did not inherit the hook's environment, as an ssh session into the
# container is) takes 3 GiB. The daemon, which sees it by the pid the
# initial namespace gives it, attributes it to the group that matches the
# container's cgroup, not to its uid's (root: group default), and a
# process under the shim in that cgroup is refused what the group's limit
# no longer holds. A container annotated gpufrac.io/unshimmed: kill, or
# any annotated one where [jobs] says unshimmed = kill, has such a process
# killed past its group's limit.
. "$(dirname "$0")/lib.sh"
HOOK=$BUILD/oci/gpufrac-oci-hook
mkdir "$TMP/run"	# the socket's directory, which the CDI spec mounts
export GPUFRAC_SOCKET=$TMP/run/gpufrac.sock
. "$(dirname "$0")/oci_lib.sh"
C=$CLIENTS/cuclient_linked
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
		grep '\"event\":\"unshimmed-kill\"' | grep -q 'oci-$1'"
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
finish
