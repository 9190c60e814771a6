# The daemon remembers what it granted across a lost connection (issue
# 40, A and C): a process's re-registration is believed up to what its
# earlier connection was granted, never further, whatever NVML shows.
# Laundering: a process of uid 65534 takes 3 GiB through the driver in
# a 1 GiB group that says kill, then says HELLO and re-registers it as a
# shim does after a restart: refused, and killed as unshimmed. Beside
# it, a process whose connection is lost re-registers exactly what it
# was granted: believed, its connection kept, even when its next
# connection is lost too before it re-registers. One that took more
# while it was away has that much refused and is killed for it. A
# process granted nothing that restores a lease is refused as well,
# however far within its limits, and a lease restored counts against
# what was granted as the allocations re-registered before it do. One
# the daemon judged to hold memory without the shim was granted nothing
# by a restarted daemon too, however far within its limits.
# (The connection is closed from the client's side: the daemon sees the
# same, a connection lost while its process lives.)
# shellcheck disable=SC2154	# PID_* are bg's
. "$(dirname "$0")/lib.sh"
L=$TOP/tests/clients/launder.py
export SIMCUDA_DEVICES=8Gi
"$PYTHON" -c 'import ctypes' 2>/dev/null || skip "no python3 ctypes"

nobody_setup
MPORT=$("$PYTHON" "$TOP/tests/clients/metrics_probe.py" freeport 1)
printf '[daemon]\nmetrics_listen = 127.0.0.1:%s\nlease_idle = 1h\n[group cap]\nmatch = uid:65534\nlimit = 1Gi\nunshimmed = kill\n[group honest]\nmatch = uid:65533\nlimit = 1Gi\nunshimmed = kill\n[group other]\nmatch = uid:65532\nlimit = 1Gi\nunshimmed = kill\n' \
	"$MPORT" >"$TMP/gpufrac.conf"
daemon_start
uuid=$(ctl status --json | json 'j["devices"][0]["uuid"]')
as() { setpriv --reuid="$1" --regid="$1" --clear-groups "${@:2}"; }
# launder NAME UID ARGS...: launder.py ARGS as UID, stdin a fifo ($TMP/NAME.in).
launder() {
	mkfifo "$TMP/$1.in"
	"${NOBODY_ENV[@]}" ${SAN_RT:+LD_PRELOAD=$SAN_RT} setpriv \
	    --reuid="$2" --regid="$2" --clear-groups "$PYTHON" "$L" "${@:3}" \
	    <"$TMP/$1.in" >"$TMP/$1.out" 2>"$TMP/$1.err" &
	printf -v "PID_$1" %s $!
	exec {fd}>"$TMP/$1.in"
	printf -v "FD_$1" %s "$fd"
}
said() { grep -q "^$2" "$TMP/$1.out"; }
refused_for() {
	events_of refused | grep -q "refused pid $1 (uid $2): COMMIT of $3 past what it was granted"
}

# --- laundering on a live daemon ----------------------------------------
launder liar 65534 take "$GPUFRAC_SOCKET" "$uuid" $((3 << 30))
# The daemon may look between its taking and its HELLO: killed at once,
# it never speaks.
wait_for "the liar's re-registration of 3 GiB is answered, or it is killed first" \
	10 eval "said liar rereg || ! kill -0 $PID_liar"
if said liar rereg; then
	check_eq "it is refused, its connection closed" \
	    "$(cat "$TMP/liar.out")" "rereg CLOSED"
	check "an event names its pid, uid and why" refused_for "$PID_liar" \
	    65534 3.0GiB
fi
check "nothing says it was believed past its limit" \
	eval '! events_of past-limit | grep -q .'
wait_for "it is killed as unshimmed, its group past its limit" 15 \
	gone_by_sigkill "$PID_liar"
check "counted unshimmed, in its group" has_event unshimmed "$PID_liar" \
	'"group":"cap","device":"[^"]*","bytes":3221225472,'
check "and killed past its limit" has_event unshimmed-kill "$PID_liar" \
	'holds 3.0GiB, past its limit 1.0GiB'
check "and the metric counted it" eval "curl -sf http://127.0.0.1:$MPORT/metrics |
	grep -q '^gpufrac_unshimmed_total{group=\"cap\"} [1-9]'"

# --- the same, told as a lease restored -----------------------------------
launder lessee 65532 lease "$GPUFRAC_SOCKET" "$uuid" $((512 << 20))
wait_for "a lease restored by a process granted nothing is answered" 10 \
	said lessee lease
check_eq "refused, within its limits too" "$(cat "$TMP/lessee.out")" \
	"lease CLOSED"
check "an event says so" eval "events_of refused | grep -q \
	'refused pid $PID_lessee (uid 65532): LEASE_RESTORE of 512.0MiB past what it was granted'"

# --- a lost connection: exactly what was granted is believed ------------
launder honest 65533 cut "$GPUFRAC_SOCKET" "$uuid" $((512 << 20)) 0
wait_for "the honest process's connection is lost" 10 said honest cut
left() { grep -q "client pid $1 left" "$TMP/gpufracd.log"; }
wait_for "the daemon has seen it go" 10 left "$PID_honest"
charged_ge() { [ "$(ctl status --json | json "j['devices'][0]['used_bytes']")" -ge "$1" ]; }
check "its grant stays charged while it lives" charged_ge $((512 << 20))
echo >&"$FD_honest"
wait_for "its re-registration is answered" 10 said honest rereg
check_eq "what it was granted is believed, its connection kept" \
	"$(cat "$TMP/honest.out")" "$(printf 'cut\nrereg DEVICE_INFO')"

# --- lost again before it re-registered: its grant is still whole -------
launder recut 65533 cut "$GPUFRAC_SOCKET" "$uuid" $((512 << 20)) 0 1
wait_for "a process's connection is lost" 10 said recut cut
wait_for "the daemon has seen it go" 10 left "$PID_recut"
echo >&"$FD_recut"
wait_for "its next connection is lost before it re-registers" 10 said recut recut
wait_for "the daemon has seen that go" 10 eval \
	"[ \"\$(grep -c 'client pid $PID_recut left' '$TMP/gpufracd.log')\" = 2 ]"
echo >&"$FD_recut"
wait_for "its re-registration is answered" 10 said recut rereg
check_eq "what it was granted is believed" "$(cat "$TMP/recut.out")" \
	"$(printf 'cut\nrecut\nrereg DEVICE_INFO')"

# --- its lease restored counts against its grant: nothing believed twice -
launder leased 65532 cutleased "$GPUFRAC_SOCKET" "$uuid" $((64 << 20)) \
	$((2 << 20))
wait_for "a leased process's connection is lost" 10 said leased cut
wait_for "the daemon has seen it go" 10 left "$PID_leased"
echo >&"$FD_leased"
wait_for "its re-registrations are answered" 10 said leased more
check_eq "its allocation and its lease are believed, 2 MiB more are not" \
	"$(cat "$TMP/leased.out")" \
	"$(printf 'cut\nrereg DEVICE_INFO\nlease DEVICE_INFO\nmore CLOSED')"

# --- a lost connection, and more taken meanwhile: that much refused -----
launder more 65534 cut "$GPUFRAC_SOCKET" "$uuid" $((512 << 20)) $((768 << 20))
wait_for "the other process's connection is lost" 10 said more cut
wait_for "the daemon has seen it go" 10 left "$PID_more"
echo >&"$FD_more"
wait_for "its re-registrations are answered" 10 said more more
check_eq "what it was granted is believed, what it took besides is not" \
	"$(cat "$TMP/more.out")" "$(printf 'cut\nrereg DEVICE_INFO\nmore CLOSED')"
check "an event says so" refused_for "$PID_more" 65534 768.0MiB
wait_for "it is killed as unshimmed, its group past its limit" 15 \
	gone_by_sigkill "$PID_more"
check "nothing was believed past a limit" \
	eval '! events_of past-limit | grep -q .'
for p in "$PID_honest" "$PID_recut"; do
	check "the honest ones live on ($p)" kill -0 "$p"
	check "and are counted as connected ($p)" state_is "$p" running
done

# --- judged without the shim, then the daemon restarted -------------------
launder late 65532 take "$GPUFRAC_SOCKET" "$uuid" $((256 << 20)) later
wait_for "a process takes 256 MiB without the shim" 10 said late took
wait_for "and is judged to hold memory without it" 10 \
	has_event unshimmed "$PID_late"
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
daemon_start
echo >&"$FD_late"
wait_for "its re-registration to the new daemon is answered" 10 said late rereg
check_eq "refused, within its limits too" "$(cat "$TMP/late.out")" \
	"$(printf 'took\nrereg CLOSED')"
check "an event says so" refused_for "$PID_late" 65532 256.0MiB
finish
