# The simulated driver's checkpoint API (cuCheckpointProcess*): a
# controller locks, checkpoints, restores and unlocks a target process;
# with SIMCUDA_NO_CHECKPOINT=1 the API is absent; with SIMCUDA_CKPT_GBPS
# it takes the time moving the target's memory would (a restore at
# SIMCUDA_CKPT_IN_GBPS where that is set), with
# SIMCUDA_COPY_GBPS so do copies between pinned host memory and the device,
# and with SIMCUDA_PIN_GBPS pinning host memory takes the time it would.
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/sim_checkpoint_linked

export SIMCUDA_DEVICES=64Mi
check "the checkpoint API works across processes" "$C"
check "SIMCUDA_NO_CHECKPOINT=1 hides it" env SIMCUDA_NO_CHECKPOINT=1 "$C" absent
check "SIMCUDA_CKPT_GBPS=0.1: checkpoint and restore take the time" "$C" rate
check "SIMCUDA_CKPT_IN_GBPS=0.1: restore takes the time alone" "$C" ratein
check "SIMCUDA_COPY_GBPS=0.1: pinned copies take the time" "$C" copyrate
check "SIMCUDA_PIN_GBPS=0.1: pinning host memory takes the time" "$C" pinrate
check_eq "a bad SIMCUDA_PIN_GBPS is said, and the rate unlimited" \
	"$(SIMCUDA_PIN_GBPS=-1 "$CLIENTS/sim_check_linked" take 512 0 2>&1)" \
	"simcuda: bad SIMCUDA_PIN_GBPS '-1': unlimited
ok"
check_eq "a bad SIMCUDA_COPY_GBPS is said, and the rate unlimited" \
	"$(SIMCUDA_COPY_GBPS=fast "$CLIENTS/sim_check_linked" take 512 0 2>&1)" \
	"simcuda: bad SIMCUDA_COPY_GBPS 'fast': unlimited
ok"
check_eq "a bad SIMCUDA_CKPT_GBPS is said, and the rate unlimited" \
	"$(SIMCUDA_CKPT_GBPS=0 "$CLIENTS/sim_check_linked" take 512 0 2>&1)" \
	"simcuda: bad SIMCUDA_CKPT_GBPS '0': unlimited
ok"
check_eq "nothing is left charged" \
	"$("$CLIENTS/sim_check_linked" take $((64 << 20)) 0)" "ok"
finish
