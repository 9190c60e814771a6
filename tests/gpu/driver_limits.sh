#!/usr/bin/env bash
# What the GPU's driver is and whether it has memory limits per cgroup
# (r615's nvmlDeviceSetMemoryLimits_v1, issue 31 C), as the running
# daemon found them: reported as figures, never asserted (no machine here
# has such a driver yet):
#   FIGURE driver_version "580.65.06"   nvidia-smi's word
#   FIGURE driver_limits {"available":false,"groups":0,"reason":"..."}
#                                      gpufracctl status --json, device 0
# Run by run.sh against step 1's daemon: its $GPUFRAC_SOCKET and
# $GPUFRACCTL (lib.sh's, exported), so lib.sh is not sourced again.
set -u
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
