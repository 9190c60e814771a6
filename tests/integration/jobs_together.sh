# A user's jobs together within their [group]: two containers of user
# 65534, each asking 1 GiB at its door, under [group users] (uid 65534,
# 1.5 GiB). The first holds 1 GiB; a second is refused 1 GiB (together
# 2 GiB, past the [group]'s limit) and shown as free only the 512 MiB
# their user has left; a third holds 512 MiB (together within it, the
# honest case). The bound outlives a reload (the job's
# owner is kept with its group), and the jobs' guarantees are shared out
# of their [group]'s, in the order the jobs came. Their processes without
# the shim are held to it together too: past it, the newest is killed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/oci_lib.sh"
MiB=$((1 << 20))
export SIMCUDA_DEVICES=8Gi

printf '[group users]\nmatch = uid:65534\nlimit = 1536Mi\nguarantee = 1Gi\nresolver = fail\nunshimmed = kill\n[jobs]\nmax_guarantee = 1Gi\n' \
	>"$TMP/gpufrac.conf"
daemon_start
nobody_setup
SPEC=$TMP/gpufrac.json
ctl cdi --shim "$SHIM" --hook "$HOOK" >"$SPEC"
export OCI_USER=65534:65534
JOB='{"gpufrac.io/memory": "1Gi", "gpufrac.io/guarantee": "768Mi"}'

# hold NAME SIZE DESC: a job of that user holding SIZE, its crun's pid
# in HELD; killed if it does not hold.
HELD=''
hold() {
	bundle "$1" "$SPEC" "$JOB" "$C" alloc "$2" hold
	crun_start "$1"
	HELD="$HELD $CRUN_PID"
	holding "$1" "$3"
}
# run NAME CMD...: a job of that user run to its end, its answer.
run() {
	bundle "$1" "$SPEC" "$JOB" "${@:2}"
	crun_run "$1"
	cat "$TMP/$1.out"
}
if hold first 1Gi "the first job holds 1 GiB"; then
	check_eq "a second is shown free what the first leaves their user" \
		"$(run shown "$C" info)" "info free=$((512 * MiB)) total=$((1024 * MiB))"
	check_eq "the second is refused 1 GiB: together past [group users]" \
		"$(run second "$C" alloc 1Gi)" "alloc err=2"
	wait_for "their groups go with their containers" 10 eval \
		"! group_names | grep -q -e oci-shown -e oci-second"
	hold third 512Mi "honest: a third holds 512 MiB beside the first, within [group users] together"
	check_eq "the first job keeps its guarantee" \
		"$(group_field oci-first guarantee_bytes)" $((768 * MiB))
	check_eq "a later one what its [group]'s has left" \
		"$(group_field oci-third guarantee_bytes)" $((256 * MiB))
	check_eq "the [group] keeps none for itself then" \
		"$(group_field users guarantee_bytes)" 0
	ctl reload >/dev/null
	check_eq "after a reload the bound still holds" \
		"$(run fourth "$C" alloc 1Mi)" "alloc err=2"
	for name in first third; do
		in_cgroup2 crun --root "$RUNROOT" kill "$name" USR1 \
		    >/dev/null 2>&1
	done
fi
for pid in $HELD; do
	wait "$pid"
	check "a holding job's container exits" [ $? = 0 ]
done

# Without the shim, where [group users] says unshimmed = kill: two jobs'
# processes, each within its job's 1 GiB, are past it together, and the
# newest goes.
bare_hold() {
	bundle "$1" "$SPEC" "$JOB" env -u LD_PRELOAD "$C" alloc 1Gi hold
	crun_start "$1"
	printf -v "CRUN_$1" %s "$CRUN_PID"
	holding "$1" "$2"
}
# shellcheck disable=SC2154	# CRUN_* are bare_hold's
if bare_hold older "a job's process without the shim holds 1 GiB"; then
	wait_for "a look counts it in its job's group" 10 eval \
		"[ \"\$(group_field oci-older used_bytes)\" = $((1024 * MiB)) ]"
	bare_hold newer "another job's holds 1 GiB"
	wait_for "the newer, past [group users] with the older, is killed" 10 \
		eval "ctl events --json | grep '\"event\":\"unshimmed-kill\"' |
		grep -q oci-newer" ||
	    in_cgroup2 crun --root "$RUNROOT" kill newer KILL >/dev/null 2>&1
	wait "$CRUN_newer"
	check "its container ends" [ $? -ne 0 ]
	check "the older, first within the [group], is not" eval \
		"! ctl events --json | grep '\"event\":\"unshimmed-kill\"' |
		grep -q oci-older"
	in_cgroup2 crun --root "$RUNROOT" kill older USR1 >/dev/null 2>&1
	wait "$CRUN_older"
	check "and its container exits as it is told" [ $? = 0 ]
fi
finish
