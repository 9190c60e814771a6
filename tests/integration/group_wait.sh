# Waiting on a group's shared limit: a request that fits its own limit and
# its group's, but not what its group-mates hold now, queues under wait,
# swap and preempt (shown waiting, a "group limit" wait event) and is
# granted by a group-mate's free itself; it times out like a device wait;
# one larger than the group's limit, or a group whose resolver is fail, is
# refused at once; and a group-limit waiter holds back no other group's
# request for the device, whatever its priority.
# shellcheck disable=SC2154	# PID_* are client_start's and bg's
export SIMCUDA_DEVICES=4Gi
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
PRE="LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM"
conf=$TMP/gpufrac.conf

[ "$(id -u)" = 0 ] || skip "not root: the group's processes run as nobody"
command -v setpriv >/dev/null || skip "no setpriv to run a process as nobody"
nobody_setup
AS=("${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" env "$PRE" "$C")

write_conf() {	# RESOLVER TIMEOUT
	cat >"$conf" <<-CONF
	[daemon]
	default_resolver = wait
	[group team]
	match = uid:65534
	limit = 1Gi
	priority = 10
	resolver = $1
	wait_timeout = $2
	CONF
}

for resolver in wait swap preempt; do
	write_conf "$resolver" 60s
	if [ -z "$DAEMON_PID" ]; then daemon_start; else ctl reload; fi
	client_start a "${AS[@]}" alloc 768Mi hold
	bg b "${AS[@]}" alloc 512Mi
	wait_for "$resolver: the group-mate's request waits" 10 \
		state_is "$PID_b" waiting
	check "$resolver: its wait event says why" has_event wait "$PID_b" \
		'"reason":"group limit: queued for up to 60000 ms"'
	check_eq "$resolver: nothing returned while A holds the group's memory" \
		"$(cat "$TMP/b.out")" ""
	client_release a
	wait_for "$resolver: A's exit grants it" 10 \
		grep -q '^alloc ok' "$TMP/b.out"
	wait "$PID_b"
	check "$resolver: with a wake event" has_event wake "$PID_b"
	check "$resolver: nobody was swapped or preempted for it" sh -c \
		"! '$GPUFRACCTL' -s '$GPUFRAC_SOCKET' events --json | grep -Eq '\"event\":\"(swap-out|preempt|kill)\"'"
done

# A group-limit waiter of priority 10 holds back no request of another
# group (default, priority 0) that fits the device.
client_start a "${AS[@]}" alloc 768Mi hold
bg b "${AS[@]}" alloc 512Mi
wait_for "B waits on its group" 10 state_is "$PID_b" waiting
check_eq "a lower-priority process of another group is served past it" \
	"$(env "$PRE" "$C" alloc 2Gi)" "alloc ok"
client_release a
wait_for "B is served" 10 grep -q '^alloc ok' "$TMP/b.out"
wait "$PID_b"

# Beyond the group's limit by itself: at once, whatever the resolver.
client_start a "${AS[@]}" alloc 512Mi hold
out=$("${AS[@]}" alloc 1536Mi)
check_eq "a request beyond the group's limit is refused at once" "$out" \
	"alloc err=2"
check "by its own limit, which is the group's" sh -c \
	"'$GPUFRACCTL' -s '$GPUFRAC_SOCKET' events --json | grep '\"event\":\"deny\"' | grep -q '\"bytes\":1610612736,.*own limit'"

# A timeout like a device wait's.
write_conf wait 500ms
ctl reload
bg t "${AS[@]}" alloc 768Mi
wait_for "the waiter is refused after its wait_timeout" 10 \
	grep -q '^alloc err=2' "$TMP/t.out"
wait "$PID_t"
check "with a timeout event that names the group's limit" \
	has_event timeout "$PID_t" "its group's limit stayed full"

# resolver = fail: at once, as before.
write_conf fail 60s
ctl reload
check_eq "resolver fail: refused at once" "$("${AS[@]}" alloc 768Mi)" \
	"alloc err=2"
client_release a
finish
