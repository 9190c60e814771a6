# The simulated driver's checkpoint API (cuCheckpointProcess*): a
# controller locks, checkpoints, restores and unlocks a target process;
# with SIMCUDA_NO_CHECKPOINT=1 the API is absent.
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/sim_checkpoint_linked

export SIMCUDA_DEVICES=64Mi
check "the checkpoint API works across processes" "$C"
check "SIMCUDA_NO_CHECKPOINT=1 hides it" env SIMCUDA_NO_CHECKPOINT=1 "$C" absent
check_eq "nothing is left charged" \
	"$("$CLIENTS/sim_check_linked" take $((64 << 20)) 0)" "ok"
finish
