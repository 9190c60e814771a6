# No way out (issue 31): a process that holds device memory without the
# shim is still its group's. For each way out -- GPUFRAC_DISABLE=1, no
# LD_PRELOAD, a GPUFRAC_SOCKET that leads nowhere -- a process of uid 65534
# in a uid group of 2 GiB takes 3 GiB: ps lists it as unshimmed with
# NVML's bytes, its group and the device count them (not FOREIGN), an
# event says what it lacks, the metric counts it, and a member of the
# group under the shim is refused, or waits until it is gone. A daemon
# restarted while such a process runs finds it at its first look. The
# simulated NVML lists processes without the shim as the real one does.
# shellcheck disable=SC2154	# PID_* are bg's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
PRE="${SAN_RT:+$SAN_RT }$SHIM"
GiB=$((1 << 30))
export SIMCUDA_DEVICES=8Gi

nobody_setup
command -v curl >/dev/null || skip "curl is not installed"
MPORT=$("$PYTHON" "$TOP/tests/clients/metrics_probe.py" freeport 1)
printf '[daemon]\nmetrics_listen = 127.0.0.1:%s\n' "$MPORT" >"$TMP/gpufrac.conf"
printf '[group cap]\nmatch = uid:65534\nlimit = 2Gi\nresolver = fail\n[group waiting]\nmatch = uid:65533\nlimit = 2Gi\nresolver = wait\nwait_timeout = 30s\n' \
	>>"$TMP/gpufrac.conf"
daemon_start
AS_OTHER=(setpriv --reuid=65533 --regid=65533 --clear-groups)

gone() { [ "$(ps_json "[c for c in j['clients'] if c['pid'] == $1]")" = "[]" ]; }
group_used_is() { [ "$(group_field "$1" used_bytes)" = "$2" ]; }

# way NAME CMD...: run CMD (3 GiB, as uid 65534, holding) and check that
# it is counted; its pid in PID_NAME.
way() {
	local name=$1 why=$2; shift 2
	bg "$name" "${NOBODY_ENV[@]}" "$@" "${AS_NOBODY[@]}" "$C" alloc 3Gi hold
	local pidvar=PID_$name
	local pid=${!pidvar}
	wait_for "$name: it holds its memory" 10 grep -q '^holding' \
		"$TMP/$name.out"
	check "$name: NVML lists it by its pid, with its bytes, as the real one" \
		eval "'$CLIENTS/nvml_query' procs 0 | grep -q ' $pid=$((3 * GiB))'"
	wait_for "$name: ps lists it as unshimmed" 5 state_is "$pid" unshimmed
	check_eq "$name: with NVML's bytes" "$(used_of "$pid")" "[$((3 * GiB))]"
	check_eq "$name: in the uid's group" \
		"$(client_field "$pid" group)" cap
	check "$name: counted in its group" group_used_is cap $((3 * GiB))
	check_eq "$name: and in the device, not as foreign" \
		"$(ctl status --json | json "(j['devices'][0]['used_bytes'], j['devices'][0]['foreign_bytes'])")" \
		"($((3 * GiB)), 0)"
	check "$name: an event says it has no shim, and why" \
		has_event unshimmed "$pid" "$why"
	check_eq "$name: a member of its group under the shim is refused" \
		"$("${NOBODY_ENV[@]}" env LD_PRELOAD="$PRE" "${AS_NOBODY[@]}" \
		"$C" alloc 1Gi 2>/dev/null)" "alloc err=2"
	kill -USR1 "$pid"
	wait "$pid"
	wait_for "$name: once it has exited, it is gone" 10 gone "$pid"
	check "$name: nothing is left charged" group_used_is cap 0
}
way disable 'shim disabled' env LD_PRELOAD="$PRE" GPUFRAC_DISABLE=1
way nopreload 'no shim loaded' env -u LD_PRELOAD
way nowhere "another socket '$TMP/nowhere.sock'" env LD_PRELOAD="$PRE" \
	GPUFRAC_SOCKET="$TMP/nowhere.sock"

# The json of ps, and the metric of a group's unshimmed bytes.
bg m env -u LD_PRELOAD "${AS_NOBODY[@]}" "$C" alloc 1Gi hold
wait_for "a third is listed" 5 state_is "$PID_m" unshimmed
check "ps --json says its state" eval \
	"ctl ps --json | grep -q '\"state\":\"unshimmed\"'"
check "ps says it" eval "ctl ps | grep -q ' unshimmed '"
check "the metric of its group's unshimmed bytes counts it" eval \
	"curl -sf http://127.0.0.1:$MPORT/metrics |
	grep -q '^gpufrac_group_unshimmed_bytes{group=\"cap\",.*} $GiB\$'"

# A daemon restarted while it runs finds it.
daemon_stop
daemon_start
wait_for "a restarted daemon finds it at its first look" 5 \
	state_is "$PID_m" unshimmed
check "counted in its group again" group_used_is cap $((1 * GiB))
kill -USR1 "$PID_m"
wait "$PID_m"

# A member that waits: served once the process without the shim is gone.
bg o env -u LD_PRELOAD "${AS_OTHER[@]}" "$C" alloc 2Gi hold
wait_for "a process of the waiting group is listed" 5 state_is "$PID_o" \
	unshimmed
bg w env LD_PRELOAD="$PRE" "${AS_OTHER[@]}" "$C" alloc 1Gi
wait_for "a member under the shim waits for its group's room" 10 \
	state_is "$PID_w" waiting
kill -USR1 "$PID_o"
wait "$PID_o"
wait "$PID_w"
check_eq "and is served once it has gone" "$(cat "$TMP/w.out")" "alloc ok"
finish
