# Looks nobody can time (issue 38, point 4): the daemon's looks at NVML's
# process list came 1000 ms after the last one, and a 2 MiB probe shows
# any user when (`gpufracctl ps` lists it at the look that saw it), so
# bursts of 3 GiB held 600 ms of every 1000 ms between two looks were
# never seen (20 of them; six of 500 ms here). Now the looks' waits are drawn at random and a glance at the
# device's used memory every ~100 ms looks at once when it rose past what
# the ledger explains: the same timed bursts, in a kill group of 1 GiB,
# are seen and killed. Honest shimmed programs allocating in bursts, one
# near its group's limit, are neither killed nor reported, and the
# ledger explains their bursts: only a new process's context, held
# before it connects, may call a look.
# shellcheck disable=SC2154	# PID_* are bg's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/burst_linked
PRE="${SAN_RT:+$SAN_RT }$SHIM"
# Contexts take memory before a program's first allocation, as on a GPU.
export SIMCUDA_DEVICES=8Gi SIMCUDA_CONTEXT_BYTES=128Mi

nobody_setup
printf '[daemon]\nlog_level = debug\n[group cap]\nmatch = uid:65534\nlimit = 1Gi\nunshimmed = kill\n' \
	>"$TMP/gpufrac.conf"
daemon_start

unexplained() { grep -c 'that the ledger does not explain' "$TMP/gpufracd.log"; }
ended_with() { wait "$1"; [ $? = "$2" ]; }

# Honest: bursts through the shim, within the limits.
bg near env LD_PRELOAD="$PRE" "${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" \
	"$C" 768Mi 100 200 15
bg big env LD_PRELOAD="$PRE" "$C" 3Gi 300 500 6
check "honest bursts near their group's limit all come through" \
	ended_with "$PID_near" 0
check "and the 3 GiB ones of another group" ended_with "$PID_big" 0
check_eq "every one of them" "$(tail -n 1 "$TMP/near.out") $(tail -n 1 "$TMP/big.out")" \
	"unseen 15 unseen 6"
check "no honest process is taken for one without the shim" eval \
	"! ctl events --json | grep -q '\"event\":\"unshimmed'"
# A context may be seen before its process connects, once per process;
# the 21 bursts are all explained.
check "nor looked at for their bursts" test "$(unexplained)" -le 2

# The timed attacker: a probe to learn when the looks come, then six
# 3 GiB bursts of 500 ms between them, in the kill group of 1 GiB. The
# look that first sees the probe says so in the decision log at once,
# where a follower started beforehand reads it (as `gpufracctl ps` would
# show, only sooner): the attacker's phase. Six, because each look came
# 1000 ms after the last one had ended: under load they drift from the
# phase learnt by up to 20 ms each.
ctl events --follow | { grep -m 1 -q 'no shim loaded'; touch "$TMP/phase"; } &
bg timed env -u LD_PRELOAD "${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" \
	"$C" 3Gi 500 1000 6 "$TMP/phase"
wait_for "the attacker holds its probe" 10 grep -q '^probe' "$TMP/timed.out"
wait_for "a look reports it" 5 test -e "$TMP/phase"
wait_for "bursts timed to the looks are seen, and killed" 10 \
	has_event unshimmed-kill "$PID_timed"
check "by SIGKILL, before its bursts were over" ended_with "$PID_timed" 137
finish
