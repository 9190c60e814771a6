# What a process is shown free is what it may take (issue 25): in a group
# that shares a limit, a member's cuMemGetInfo, cuDeviceTotalMem and NVML
# agree on its total (its limit) and its free (what the group's other
# members leave of it, its own unused lease counted); allocating that at
# once succeeds under resolver fail; and when a group-mate frees, the
# daemon tells the member unasked, so that its free grows back without a
# request of its own. Memory held by a program without the shim counts
# too.
# shellcheck disable=SC2154	# PID_* are client_start's
export SIMCUDA_DEVICES=1Gi
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
Q=$CLIENTS/nvml_query
PRE="LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM"
MiB=$((1 << 20))

[ "$(id -u)" = 0 ] || skip "not root: the group's processes run as nobody"
command -v setpriv >/dev/null || skip "no setpriv to run a process as nobody"
nobody_setup
AS=("${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" env "$PRE")

# line_has N RE: line N of b's output matches RE.
line_has() { sed -n "$1p" "$TMP/b.out" | grep -q "$2"; }

cat >"$TMP/gpufrac.conf" <<CONF
[group team]
match = uid:65534
limit = 256Mi
resolver = fail
CONF
daemon_start

# --- a group-mate holds 192 MiB of the group's 256 ----------------------
client_start a "${AS[@]}" "$C" alloc 192Mi hold free hold
client_start b "${AS[@]}" "$C" info total nvml alloc 1Mi info nvml \
	allocfree hold free free waitinfo 255Mi nvml allocfree hold
check_eq "a member is shown what the group leaves it, of its own limit" \
	"$(sed -n 1p "$TMP/b.out")" "info free=$((64 * MiB)) total=$((256 * MiB))"
check_eq "cuDeviceTotalMem says the same total" \
	"$(sed -n 2p "$TMP/b.out")" "total $((256 * MiB))"
check_eq "and NVML, in the same process, the same" \
	"$(sed -n 3p "$TMP/b.out")" "nvml free=$((64 * MiB)) total=$((256 * MiB))"
check_eq "what it holds itself comes off; its unused lease does not" \
	"$(sed -n 5,6p "$TMP/b.out" | tr '\n' ' ')" \
	"info free=$((63 * MiB)) total=$((256 * MiB)) nvml free=$((63 * MiB)) total=$((256 * MiB)) "
check_eq "allocating what it is shown free succeeds under resolver fail" \
	"$(sed -n 7p "$TMP/b.out")" "allocfree ok $((63 * MiB))"
check_eq "a management process of the group (nvidia-smi) sees the group" \
	"$("${AS[@]}" "$Q" mem 0)" \
	"mem 0 total=$((256 * MiB)) used=$((256 * MiB)) free=0"

# --- the group-mate frees: the member's free grows back unasked ---------
kill -USR1 "$PID_b"	# b frees what it holds, then waits for its free
wait_for "b frees its own" 10 grep -q '^free ok' "$TMP/b.out"
kill -USR1 "$PID_a"	# a frees its 192 MiB
wait_for "a frees" 10 grep -q '^free ok' "$TMP/a.out"
wait_for "b looks again" 20 line_has 13 '^allocfree'
check_eq "b's free grew back without a request of its own" \
	"$(sed -n 11p "$TMP/b.out")" "info free=$((256 * MiB)) total=$((256 * MiB))"
check_eq "and NVML's with it" \
	"$(sed -n 12p "$TMP/b.out")" "nvml free=$((256 * MiB)) total=$((256 * MiB))"
check_eq "all of which it may allocate at once" \
	"$(sed -n 13p "$TMP/b.out")" "allocfree ok $((256 * MiB))"
client_release b
client_release a

# --- memory gpufrac does not know ----------------------------------------
client_start f env "$C" alloc 768Mi hold
check_eq "a process of the default group is shown what a program without the shim leaves" \
	"$(preload "$C" info nvml allocfree | tr '\n' ' ')" \
	"info free=$((256 * MiB)) total=$((1024 * MiB)) nvml free=$((256 * MiB)) total=$((1024 * MiB)) allocfree ok $((256 * MiB)) "
client_release f
finish
