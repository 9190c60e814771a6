#!/usr/bin/env bash
# What the GPU's driver is and whether it has memory limits per cgroup
# (r615's nvmlDeviceSetMemoryLimits_v1, issue 31 C), as the running
# daemon found them: reported as figures, never asserted (no machine here
# has such a driver yet):
#   FIGURE driver_version "580.65.06"   nvidia-smi's word
#   FIGURE driver_limits {"available":false,"groups":0,"reason":"..."}
#                                      gpufracctl status --json, device 0
# Where they are on, a run-time group of 1 GiB for a cgroup made here, and
# a program without the shim in it (cuclient_linked) asking for 1.5 GiB:
#   FIGURE driver_wall "held"          the driver refused it ("not held":
#                                      it did not; "unknown": no cgroup2)
# Run by run.sh against step 1's daemon: its $GPUFRAC_SOCKET and
# $GPUFRACCTL (lib.sh's, exported), so lib.sh is not sourced again.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
python=${PYTHON:-python3}
version=$(timeout 20 nvidia-smi --query-gpu=driver_version \
    --format=csv,noheader 2>/dev/null | head -n 1)
echo "driver version: ${version:-unknown}"
echo "FIGURE driver_version \"${version:-unknown}\""
"$GPUFRACCTL" status | grep 'driver limits'
limits=$("$GPUFRACCTL" status --json | "$python" -c \
    'import json, sys; d = json.load(sys.stdin)["devices"]
print(json.dumps(d[0].get("driver_limits") if d else None,
                 separators=(",", ":")))') || exit 1
echo "FIGURE driver_limits $limits"
case $limits in *'"available":true'*) ;; *) exit 0;; esac

# The wall, tried.
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
name=gpufrac-gpu-$$-wall
if [ -z "$cg2" ] || ! mkdir "$cg2/$name"; then
	echo "FIGURE driver_wall \"unknown\""
	exit 0
fi
"$GPUFRACCTL" group set gpu-wall --cgroup "/$name" --limit 1Gi
# shellcheck disable=SC2016
out=$(env -u LD_PRELOAD sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' \
    "$cg2/$name" "$build/tests/clients/cuclient_linked" -p linked info \
    alloc 1536Mi 2>&1)
echo "$out"
"$GPUFRACCTL" group rm gpu-wall
rmdir "$cg2/$name"
case $out in
*'alloc err=2'*) echo "FIGURE driver_wall \"held\"";;
*)	echo "FIGURE driver_wall \"not held\"";;
esac
