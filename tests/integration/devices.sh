# Per-device limits follow the process's own ordinals, whatever
# CUDA_VISIBLE_DEVICES does, and the daemon tells devices apart by UUID.
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=4Gi,8Gi
C=$CLIENTS/cuclient_linked
daemon_start

check_eq "the daemon sees both devices" \
	"$(ctl status --json | json '[d["total_bytes"] for d in j["devices"]]')" \
	"[$((4 << 30)), $((8 << 30))]"
out=$(GPUFRAC_MEMORY_LIMIT=0=1Gi,1=2Gi preload "$C" total dev 1 total \
	alloc 2Gi alloc 1Mi)
check_eq "each device has its own limit" "$out" "total $((1 << 30))
total $((2 << 30))
alloc ok
alloc err=2"
# Reordered: the 8Gi device is now ordinal 0.
out=$(CUDA_VISIBLE_DEVICES=1,0 GPUFRAC_MEMORY_LIMIT=0=3Gi,1=1Gi preload "$C" \
	total alloc 3Gi dev 1 total alloc 2Gi)
check_eq "limits follow the reordered ordinals" "$out" "total $((3 << 30))
alloc ok
total $((1 << 30))
alloc err=2"
CUDA_VISIBLE_DEVICES=1 GPUFRAC_MEMORY_LIMIT=50% client_start a preload "$C" \
	total alloc 3Gi hold
check_eq "a percentage is of the device the process sees" \
	"$(head -n 2 "$TMP/a.out")" "total $((4 << 30))
alloc ok"
uuid1=$(ctl status --json | json 'j["devices"][1]["uuid"]')
check_eq "the charge lands on the right physical device" \
	"$(ctl ps --json | json 'j["clients"][0]["devices"][0]["uuid"]')" "$uuid1"
check "device 0 is untouched" device_used_is 0 0
check "device 1 holds it" device_used_is $((3 << 30)) 1
client_release a
finish
