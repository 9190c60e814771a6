# gpufrac-oci-hook under a real OCI runtime, crun: containers get the
# edits of `gpufracctl cdi` (shim, socket directory, LD_PRELOAD,
# GPUFRAC_SOCKET, the createRuntime and poststop hooks) as a CDI-aware
# engine would add them. A container annotated gpufrac.io/memory runs in a
# group of its own, matched by its cgroup, and is held to the annotation;
# the group is gone once the container has exited, also when the hooks
# are given no arguments (the stage from the state). A bad annotation, a
# daemon that refuses the group or one that is not there keep the
# container from starting; a container without the annotation runs with
# no group made; and the group of a container that failed to start, for
# which crun runs no poststop, goes once its cgroup is gone. What an
# annotation may ask is capped by gpufrac.conf's [jobs] (issue 27): over a
# cap the container is refused, or capped; a container whose id spells
# another's derived group name gets a group of its own (its hash nettle's); a group made for
# another cgroup is not replaced, and one replaced is replaced whole.
# Where the driver has memory limits per cgroup, a container's group has
# the driver's wall, which holds a program without the shim in it.
. "$(dirname "$0")/lib.sh"
HOOK=$BUILD/oci/gpufrac-oci-hook	# oci_lib.sh's, for a check before it
MiB=$((1 << 20))

# Derived names' SHA-256 is nettle's, not one written here (oci/hook.c);
# test_oci_group checks its digests.
check "the hook takes SHA-256 from nettle" \
	sh -c "ldd '$HOOK' | grep -q 'libnettle\.so'"

. "$(dirname "$0")/oci_lib.sh"

# release: let the only client go on past "hold".
# (A process that has exited may still be listed, releasing, until the
# driver has its memory back.)
release() { kill -USR1 "$(ps_json '[c["pid"] for c in j["clients"] if c["state"] != "releasing"][0]')"; }

# What annotations may ask for: a little above the defaults.
jobs_conf() {
	printf '[jobs]\nmax_priority = 3\nmax_guarantee = 6Gi\n%s' "$1" \
	    >"$TMP/gpufrac.conf"
}
jobs_conf ''
daemon_start

# --- the CDI spec -----------------------------------------------------------
SPEC=$TMP/gpufrac.json
"$GPUFRACCTL" -s "$GPUFRAC_SOCKET" cdi --shim "$SHIM" --hook "$HOOK" >"$SPEC"
check_eq "gpufracctl cdi prints a spec" $? 0
[ -s "$SPEC" ] || finish	# nothing below can run without it
check "which is valid JSON" "$PYTHON" -m json.tool "$SPEC" /dev/null
check_eq "of kind gpufrac.io/gpu, cdiVersion 0.6.0, device all" \
	"$(json '(j["kind"], j["cdiVersion"], [d["name"] for d in j["devices"]])' <"$SPEC")" \
	"('gpufrac.io/gpu', '0.6.0', ['all'])"
check_eq "its hooks run gpufrac-oci-hook at createRuntime and poststop" \
	"$(json '[(h["hookName"], h["path"], h["args"], h["env"]) for h in j["devices"][0]["containerEdits"]["hooks"]]' <"$SPEC")" \
	"[('createRuntime', '$HOOK', ['gpufrac-oci-hook', 'createRuntime'], ['GPUFRAC_SOCKET=$GPUFRAC_SOCKET']), ('poststop', '$HOOK', ['gpufrac-oci-hook', 'poststop'], ['GPUFRAC_SOCKET=$GPUFRAC_SOCKET'])]"
check_eq "it preloads the shim and names the socket" \
	"$(json 'j["devices"][0]["containerEdits"]["env"]' <"$SPEC")" \
	"['LD_PRELOAD=$SHIM', 'GPUFRAC_SOCKET=$GPUFRAC_SOCKET']"
check_eq "it mounts the shim and the socket's directory read-only" \
	"$(json '[(m["hostPath"], m["containerPath"], m["options"][0]) for m in j["devices"][0]["containerEdits"]["mounts"]]' <"$SPEC")" \
	"[('$SHIM', '$SHIM', 'ro'), ('$TMP/run', '$TMP/run', 'ro')]"

oci_groups() { group_names | tr -d "[]' " | tr , '\n' | grep '^oci[-.]'; }
no_oci_group() { ! oci_groups >/dev/null; }

# --- a container annotated gpufrac.io/memory ------------------------------
Q=gf-$$-quota
bundle "$Q" "$SPEC" '{"gpufrac.io/memory": "64Mi", "gpufrac.io/priority": "3"}' \
	"$C" total alloc 65Mi alloc 48Mi alloc 32Mi alloc 16Mi hold
crun_start "$Q"
if holding "$Q" "the annotated container's client runs"; then
	check_eq "it is held to its annotation: 64Mi in all, 65Mi refused, 48Mi+16Mi granted, 32Mi more refused" \
		"$(head -n 5 "$TMP/$Q.out" | tr '\n' ' ')" \
		"total $((64 * MiB)) alloc err=2 alloc ok alloc err=2 alloc ok "
	check_eq "ps shows it in the container's group" \
		"$(ps_json '[(c["group"], c["priority"]) for c in j["clients"]]')" \
		"[('oci-$Q', 3)]"
	pid=$(ps_json 'j["clients"][0]["pid"]')
	check_eq "where the kernel's cgroup of the process put it: the container's" \
		"$(grep '^0::' "/proc/$pid/cgroup")" "0::/gpufrac-test-$$-$Q"
	check_eq "status shows the group, its limit and its use" \
		"$(group_field "oci-$Q" limit_bytes) $(group_field "oci-$Q" used_bytes) $(group_field "oci-$Q" clients)" \
		"$((64 * MiB)) $((64 * MiB)) 1"
	release
fi
wait "$CRUN_PID"
check_eq "the container exits 0" $? 0
check "with nothing said by its hooks" test ! -s "$TMP/$Q.hook"
check "its group is gone once it has exited" no_oci_group
# A departed process stays, releasing, until the driver has its memory
# back; release, next, must not find it first.
wait_for "so are its process and its charge" 10 clients_are 0

# --- hooks given no arguments: the stage comes from the state's status ----
A=gf-$$-noargs
HOOK_ARGS=none bundle "$A" "$SPEC" '{"gpufrac.io/memory": "32Mi"}' \
	"$C" total hold
check_eq "a container's hooks may be given no arguments" \
	"$(json '[(s, [h.get("args") for h in j["hooks"][s]]) for s in sorted(j["hooks"])]' \
	    <"$TMP/$A/config.json")" \
	"[('createRuntime', [None]), ('poststop', [None])]"
crun_start "$A"
if holding "$A" "a container whose hooks have no arguments runs"; then
	check_eq "its createRuntime hook made its group" \
		"$(ps_json '[c["group"] for c in j["clients"]]')" "['oci-$A']"
	check_eq "and it is held to its annotation" \
		"$(head -n 1 "$TMP/$A.out")" "total $((32 * MiB))"
	release
fi
wait "$CRUN_PID"
check_eq "it exits 0" $? 0
check "with nothing said by its hooks" test ! -s "$TMP/$A.hook"
check "its poststop hook removed the group" grep -q \
	"removed run-time group 'oci-$A'" "$TMP/gpufracd.log"
check "so it is gone" no_oci_group
wait_for "and so is its process" 10 clients_are 0

# --- a container without the annotation -----------------------------------
N=gf-$$-none
bundle "$N" "$SPEC" '{"io.example/other": "1"}' "$C" total alloc 1Gi hold
crun_start "$N"
if holding "$N" "a container without the annotation runs"; then
	check_eq "under the daemon's defaults" \
		"$(head -n 2 "$TMP/$N.out" | tr '\n' ' ')" \
		"total $((4096 * MiB)) alloc ok "
	check_eq "in the default group" \
		"$(ps_json '[c["group"] for c in j["clients"]]')" "['default']"
	check "and no group is made for it" no_oci_group
	# NVML names processes as the initial pid namespace does, as the
	# daemon does: a container's memory is its client's, not foreign.
	check_eq "its memory is not counted twice, as foreign" \
		"$(ctl status --json | json 'j["devices"][0]["foreign_bytes"]')" 0
	check_eq "NVML on the host lists it by its host pid, with its memory" \
		"$("$CLIENTS/nvml_query" procs 0)" \
		"procs 0 $(ps_json 'j["clients"][0]["pid"]')=$((1024 * MiB))"
	release
fi
wait "$CRUN_PID"
check_eq "it exits 0" $? 0
check "with nothing said by its hooks" test ! -s "$TMP/$N.hook"
wait_for "its process is gone" 10 clients_are 0

# --- a group removed by hand before the container stops --------------------
R=gf-$$-rm
bundle "$R" "$SPEC" '{"gpufrac.io/memory": "32Mi"}' "$C" total hold
crun_start "$R"
if holding "$R" "another annotated container runs"; then
	check "its group can be removed by hand" ctl group rm "oci-$R"
	release
fi
wait "$CRUN_PID"
check_eq "then the container still stops cleanly" $? 0
check_eq "its poststop hook says there was nothing to remove" \
	"$(cat "$TMP/$R.hook")" \
	"gpufrac-oci-hook: group 'oci-$R' of container '$R' was already gone"

# --- a container that fails to start: crun runs no poststop ---------------
F=gf-$$-fail
bundle "$F" "$SPEC" '{"gpufrac.io/memory": "32Mi", "gpufrac.io/guarantee": "32Mi"}' \
	/nonexistent/program
crun_run "$F"
check "a container whose program does not exist fails" test $? -ne 0
check "after its createRuntime hook made its group" grep -q \
	"set run-time group 'oci-$F'" "$TMP/gpufracd.log"
wait_for "the daemon removes the group crun left, once the cgroup is gone" \
	10 grep -q "run-time group 'oci-$F' removed: its cgroup is gone" \
	"$TMP/gpufracd.log"
check "so no group is left" no_oci_group

# --- containers that must not start -----------------------------------------
# refused NAME ANNOTATIONS SPEC LINE: the container does not run: crun
# fails at its createRuntime hook, which said one line starting with LINE.
refused() {
	local said
	bundle "$1" "$3" "$2" sh -c 'echo started'
	crun_run "$1"
	check "$1: crun refuses to run it" test $? -ne 0
	check "$1: at its createRuntime hook" \
		grep -qF "error executing hook \`$HOOK\`" "$TMP/$1.err"
	# poststop may follow, finding no group to remove
	said=$(grep -v "was already gone" "$TMP/$1.hook")
	check_eq "$1: which said why, in one line" \
		"$(printf '%s\n' "$said" | wc -l):${said:0:${#4}}" "1:$4"
	check "$1: its program never ran" test ! -s "$TMP/$1.out"
	check "$1: no group is left" no_oci_group
	check "$1: nor a container" \
		test -z "$(in_cgroup2 crun --root "$RUNROOT" list -q 2>/dev/null | grep -x "$1")"
	check "$1: nor its cgroup" test ! -d "$CG2/gpufrac-test-$$-$1"
}
B=gf-$$-bad
refused "$B" '{"gpufrac.io/memory": "4GB-ish"}' "$SPEC" \
	"gpufrac-oci-hook: container '$B': annotation 'gpufrac.io/memory': bad limit '4GB-ish' (expected a size such as 8Gi or a share such as 50%)"
B=gf-$$-badres
refused "$B" '{"gpufrac.io/memory": "1Gi", "gpufrac.io/resolver": "bogus"}' "$SPEC" \
	"gpufrac-oci-hook: container '$B': annotation 'gpufrac.io/resolver': bad resolver 'bogus' (expected fail, wait, preempt or swap)"
B=gf-$$-typo
refused "$B" '{"gpufrac.io/memory": "1Gi", "gpufrac.io/memroy": "1Gi"}' "$SPEC" \
	"gpufrac-oci-hook: container '$B': unknown annotation 'gpufrac.io/memroy' (expected memory, guarantee, priority, resolver or unshimmed)"
# the daemon's refusal: a guarantee beyond the 4Gi device
B=gf-$$-big
refused "$B" '{"gpufrac.io/memory": "5Gi", "gpufrac.io/guarantee": "5Gi"}' "$SPEC" \
	"gpufrac-oci-hook: cannot create group 'oci-$B' for container '$B': guarantees on GPU-"
# over the caps of [jobs]
B=gf-$$-prio
refused "$B" '{"gpufrac.io/memory": "1Gi", "gpufrac.io/priority": "2147483647"}' "$SPEC" \
	"gpufrac-oci-hook: cannot create group 'oci-$B' for container '$B': priority 2147483647 is above [jobs] max_priority 3"
B=gf-$$-preempt
refused "$B" '{"gpufrac.io/memory": "1Gi", "gpufrac.io/resolver": "preempt"}' "$SPEC" \
	"gpufrac-oci-hook: cannot create group 'oci-$B' for container '$B': resolver 'preempt' is not in [jobs] resolvers (fail wait)"
B=gf-$$-hog
refused "$B" '{"gpufrac.io/memory": "7Gi", "gpufrac.io/guarantee": "7Gi"}' "$SPEC" \
	"gpufrac-oci-hook: cannot create group 'oci-$B' for container '$B': guarantee 7.0GiB is above [jobs] max_guarantee 6.0GiB"
# no daemon on the socket the spec names
mkdir "$TMP/gone"
"$GPUFRACCTL" -s "$TMP/gone/gpufrac.sock" cdi --shim "$SHIM" --hook "$HOOK" \
	>"$TMP/gone.json"
B=gf-$$-gone
refused "$B" '{"gpufrac.io/memory": "1Gi"}' "$TMP/gone.json" \
	"gpufrac-oci-hook: cannot create group 'oci-$B' for container '$B': cannot connect to '$TMP/gone/gpufrac.sock': "

# --- a group made for another cgroup is not taken ------------------------
V=gf-$$-taken
ctl group set "oci-$V" --match "cgroup:/elsewhere-$$" --limit 1Gi --priority 2
bundle "$V" "$SPEC" '{"gpufrac.io/memory": "32Mi"}' sh -c 'echo started'
crun_run "$V"
check "a container whose group name is another cgroup's is refused" \
	test $? -ne 0
check_eq "saying so in one line" "$(grep -v 'was already gone' "$TMP/$V.hook")" \
	"gpufrac-oci-hook: cannot create group 'oci-$V' for container '$V': group 'oci-$V' exists for other processes (cgroup:/elsewhere-$$): refusing to replace it"
check "its program never ran" test ! -s "$TMP/$V.out"
check_eq "the other group is as it was" \
	"$(group_field "oci-$V" limit_bytes) $(group_field "oci-$V" priority)" \
	"$((1024 * MiB)) 2"
ctl group rm "oci-$V"

# --- an id chosen to spell another container's derived name ----------------
L=gf-$$-a-container-id-longer-than-27
bundle "$L" "$SPEC" '{"gpufrac.io/memory": "48Mi"}' "$C" total hold
crun_start "$L"
LPID=$CRUN_PID
if holding "$L" "a container with a long id runs"; then
	lgroup=$(oci_groups)
	X=${lgroup#oci?}
	bundle "$X" "$SPEC" '{"gpufrac.io/memory": "16Mi"}' sh -c 'echo started'
	crun_run "$X"
	check_eq "a container whose id is the long one's derived name, less 'oci-', runs" \
		"$?:$(cat "$TMP/$X.out")" "0:started"
	check_eq "in a group of its own, gone with it: the long one's is intact" \
		"$(oci_groups | tr '\n' ' ')" "$lgroup "
	check_eq "with its limit and its process" \
		"$(group_field "$lgroup" limit_bytes) $(group_field "$lgroup" clients)" \
		"$((48 * MiB)) 1"
	release
fi
wait "$LPID"
check_eq "the long one exits 0" $? 0

# --- over_cap = cap; a group replaced is replaced whole -------------------
jobs_conf 'over_cap = cap
resolvers = fail wait swap
'
check "the daemon takes over_cap = cap" ctl reload
K=gf-$$-capped
bundle "$K" "$SPEC" '{"gpufrac.io/memory": "64Mi", "gpufrac.io/priority": "9", "gpufrac.io/resolver": "swap"}' \
	"$C" total hold
crun_start "$K"
if holding "$K" "a container over max_priority runs, capped"; then
	check_eq "at max_priority, with the resolver it asked for" \
		"$(group_field "oci-$K" priority) $(group_field "oci-$K" resolver)" "3 swap"
	check "the daemon says what it capped" grep -q \
		"group 'oci-$K': priority 9 capped to 3 (\[jobs\] max_priority)" \
		"$TMP/gpufracd.log"
	# the hook again for the same container, fed its state by hand,
	# naming only its memory: nothing of the old settings is kept
	kpid=$(ps_json "[c['pid'] for c in j['clients'] if c['group'] == 'oci-$K'][0]")
	printf '{"ociVersion": "1.0.2", "id": "%s", "status": "created", "pid": %s, "bundle": "%s", "annotations": {"gpufrac.io/memory": "32Mi"}}' \
	    "$K" "$kpid" "$TMP/$K" | "$HOOK" -s "$GPUFRAC_SOCKET" createRuntime
	check_eq "the hook sets the group again" $? 0
	check_eq "replaced whole: its limit, the default priority and resolver" \
		"$(group_field "oci-$K" limit_bytes) $(group_field "oci-$K" priority) $(group_field "oci-$K" resolver)" \
		"$((32 * MiB)) 0 fail"
	release
fi
wait "$CRUN_PID"
check_eq "it exits 0" $? 0
check "its group is gone" no_oci_group

# --- the driver's walls (issue 31 C) ----------------------------------------
# Where the driver has memory limits per cgroup (SIMCUDA_MEMLIMITS=1 for
# the daemon), a container's group has the driver's wall: a process in it
# without the shim is held to the annotation by the driver itself.
daemon_stop
SIMCUDA_MEMLIMITS=1 daemon_start
W=gf-$$-wall
bundle "$W" "$SPEC" '{"gpufrac.io/memory": "64Mi"}' \
	env -u LD_PRELOAD "$C" info alloc 48Mi alloc 32Mi alloc 16Mi hold
crun_start "$W"
if holding "$W" "a container's program without the shim runs"; then
	check_eq "the driver holds it to the annotation: it sees 64Mi, 32Mi more than 48Mi is refused, 16Mi is not" \
		"$(head -n 4 "$TMP/$W.out" | tr '\n' ' ')" \
		"info free=$((64 * MiB)) total=$((64 * MiB)) alloc ok alloc err=2 alloc ok "
	check_eq "status says the driver holds one group" \
		"$(ctl status | grep 'driver limits')" \
		"device 0: driver limits: on (1 group)"
	in_cgroup2 crun --root "$RUNROOT" kill "$W" USR1
fi
wait "$CRUN_PID"
check_eq "it exits 0" $? 0
check "its group is gone" no_oci_group
check_eq "and with it the wall" "$(ctl status | grep 'driver limits')" \
	"device 0: driver limits: on (0 groups)"

finish
