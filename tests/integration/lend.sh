# Guarantees lent, not idle: memory a group is guaranteed and does not use
# is lent to the groups that can give it back (on_preempt kill or swap),
# with a lend event and status showing how much is lent and to whom; when
# the owner asks within its guarantee it is taken back at once, whatever
# the priorities and the owner's resolver (the borrower swapped out or
# killed, the owner's request queued meanwhile, a reclaim event). A group
# with on_preempt = none never borrows; lend_guarantees = no keeps every
# guarantee back; a reload that shrinks a lent guarantee takes nothing.
# shellcheck disable=SC2154	# PID_* are client_start's and bg's
export SIMCUDA_DEVICES=4Gi
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
PRE="LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM"
conf=$TMP/gpufrac.conf
GiB=$((1 << 30))

[ "$(id -u)" = 0 ] || skip "not root: the groups are told apart by gid"
command -v setpriv >/dev/null || skip "no setpriv to change a process's gid"
nobody_setup
# Identities, matched by gid: the owner of a guarantee, a borrower that is
# swapped out, one that never borrows; root's own processes (gid 0) are in
# 'default', which is killed when preempted.
OWNER=("${NOBODY_ENV[@]}" setpriv --reuid=65534 --regid=65534 --clear-groups env "$PRE" "$C")
SWAPPER=("${NOBODY_ENV[@]}" setpriv --reuid=65534 --regid=100 --clear-groups env "$PRE" "$C")
KEEPER=(setpriv --regid=50 --clear-groups env "$PRE" "$C")
KILLED=(env "$PRE" "$C")

write_conf() {	# LEND OWNER-GUARANTEE
	cat >"$conf" <<-CONF
	[daemon]
	lend_guarantees = $1
	wait_timeout = 20s
	[group owner]
	match = gid:65534
	guarantee = $2
	priority = -5
	resolver = fail
	[group swapper]
	match = gid:100
	priority = 10
	on_preempt = swap
	[group keeper]
	match = gid:50
	on_preempt = none
	CONF
}
lent_is() { [ "$(ctl status --json | json "j['devices'][0]['lent_bytes']")" = "$1" ]; }
borrowed() { group_field "$1" borrowed_bytes; }

write_conf yes 2Gi
daemon_start

# --- lent to a group that can give it back (kill) ------------------------
client_start k "${KILLED[@]}" alloc 3Gi hold
check_eq "a borrower gets 1Gi of the owner's unused 2Gi guarantee" \
	"$(head -n 1 "$TMP/k.out")" "alloc ok"
check "a lend event says so" has_event lend "$PID_k" '"bytes":1073741824,'
check "status: 1Gi lent on the device" lent_is $GiB
check_eq "and to whom" "$(borrowed default):$(borrowed owner)" "$GiB:0"
check "the table shows it" sh -c \
	"'$GPUFRACCTL' -s '$GPUFRAC_SOCKET' status | grep -Eq '^default .* 1\.0GiB +0 +fail'"

# --- taken back at once: the borrower is killed, whatever the priority --
bg o "${OWNER[@]}" alloc 1536Mi hold
wait_for "the owner's request within its guarantee is granted" 20 \
	grep -q '^alloc ok' "$TMP/o.out"
wait "$PID_k"
check_eq "the borrower was stopped by SIGTERM" $? $((128 + 15))
check "a reclaim event names the owner" has_event reclaim "$PID_o"
check "a preempt event names the borrower" has_event preempt "$PID_k"
check "nothing is lent now" lent_is 0
kill -USR1 "$PID_o"; wait "$PID_o"

# --- lent to a group that is swapped out, then comes back intact --------
client_start s "${SWAPPER[@]}" alloc 3Gi fill hold check
check "status: 1Gi lent to the swapper" lent_is $GiB
check_eq "borrowed by it" "$(borrowed swapper)" $GiB
bg o "${OWNER[@]}" alloc 2Gi hold
wait_for "the owner, of lower priority, takes its guarantee back" 20 \
	grep -q '^alloc ok' "$TMP/o.out"
check "the borrower was swapped out, not killed" state_is "$PID_s" swapped
check "a swap-out event" has_event swap-out "$PID_s"
kill -USR1 "$PID_o"; wait "$PID_o"
wait_for "the owner gone, the borrower comes back" 20 state_is "$PID_s" running
client_release s
check_eq "with its data intact" "$(tail -n 1 "$TMP/s.out")" "check ok"

# --- on_preempt = none never borrows --------------------------------------
check_eq "a group that cannot give memory back does not borrow" \
	"$("${KEEPER[@]}" alloc 3Gi)" "alloc err=2"
check "nothing lent" lent_is 0

# --- lend_guarantees = no -------------------------------------------------
write_conf no 2Gi
ctl reload
check_eq "with lend_guarantees = no nobody borrows" \
	"$("${KILLED[@]}" alloc 3Gi)" "alloc err=2"

# --- a reload that shrinks a lent guarantee takes nothing ----------------
write_conf yes 2Gi
ctl reload
client_start k "${KILLED[@]}" alloc 3Gi hold
check "1Gi lent again" lent_is $GiB
write_conf yes 512Mi
ctl reload
check "the smaller guarantee is not lent at all" lent_is 0
check "the borrower keeps what it holds" state_is "$PID_k" running
client_release k
finish
