# NVML says who holds memory, whatever the maps say (issue 38, point 1):
# uid 65534 runs a program linked against libcuda.so.1 that is a symlink
# to drv.so in its own directory, so that its maps name no libcuda, and
# holds 3 GiB in a 1 GiB group that says kill. It is taken in at the look
# that sees it (never FOREIGN), and killed. Beside it, an honest process
# of the group under the shim, within the limit, is left alone.
# shellcheck disable=SC2154	# PID_* are bg's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
PRE="${SAN_RT:+$SAN_RT }$SHIM"
export SIMCUDA_DEVICES=8Gi

nobody_setup
printf '[group cap]\nmatch = uid:65534\nlimit = 1Gi\nunshimmed = kill\n' \
	>"$TMP/gpufrac.conf"
daemon_start

mkdir -m 0755 "$TMP/drv"
cp "$BUILD/tests/simcuda/libcuda.so.1" "$TMP/drv/drv.so"
ln -s drv.so "$TMP/drv/libcuda.so.1"

bg honest env LD_PRELOAD="$PRE" "${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" \
	"$C" alloc 512Mi hold
wait_for "an honest member of the group holds 512 MiB" 10 \
	grep -q '^holding' "$TMP/honest.out"
bg renamed env -u LD_PRELOAD LD_LIBRARY_PATH="$TMP/drv" \
	"${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" "$C" dev 0 hold alloc 3Gi hold
wait_for "the renamed driver's program has its context" 10 \
	grep -q '^holding' "$TMP/renamed.out"
check "its maps name no libcuda" eval \
	"grep -q '/drv/drv.so' /proc/$PID_renamed/maps &&
	! grep -q '/libcuda.so' /proc/$PID_renamed/maps"
kill -USR1 "$PID_renamed"
wait_for "it holds 3 GiB" 10 allocated_or_killed renamed "$PID_renamed"
wait_for "it is taken for a process without the shim" 3 \
	has_event unshimmed "$PID_renamed" 'no shim loaded'
wait_for "and killed, past its group's limit" 3 \
	has_event unshimmed-kill "$PID_renamed"
wait_for "by SIGKILL" 3 gone_by_sigkill "$PID_renamed"
check "no byte of it was FOREIGN" foreign_is 0
check "the honest one is not killed" kill -0 "$PID_honest"
check "nor taken for one without the shim" eval \
	"! has_event unshimmed $PID_honest"
kill -USR1 "$PID_honest"
wait "$PID_honest"
finish
