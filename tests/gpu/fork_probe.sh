#!/usr/bin/env bash
# fork() on a real driver, and the shim across it: fork_probe.py run bare,
# then preloaded under a daemon of its own. What the bare driver told each
# process (see fork_probe.py) is printed as FIGURE lines, measured, never
# asserted: fork_child_NAME (the child forked after cuInit), and
# fork_grandchild_cuInit, fork_before_NAME (a launcher's child, forked
# before), fork_parent_NAME; fork_shim_child_client says whether the
# daemon listed the child while it lived (1) or not (0). Checked, under the
# shim: each process was told exactly what the bare driver told it (the
# shim passes the driver's answers on), the parent's allocations as the
# daemon has them are the same before the fork, while the child lives and
# after it exited, and the child holds none. Exits 0, 77 (no GPU, said) or
# 1 (the line before says why). Run from a built tree:
#   tests/gpu/fork_probe.sh         on the real GPU (run.sh runs it)
#   tests/gpu/fork_probe.sh --sim   on the simulated driver: checks this
#                                   script and the probe without a GPU
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
here=$top/tests/gpu
unset GPUFRAC_MEMORY_LIMIT GPUFRAC_DISABLE
gpu_or_sim fork_probe 1Gi "$@"

"$python" "$here/fork_probe.py" >"$tmp/bare.json" ||
    { echo "fork_probe: the bare probe failed: $(cat "$tmp/bare.json")"; exit 1; }
daemon_start >/dev/null || exit 1
LD_PRELOAD="$build/shim/libgpufrac.so" "$python" "$here/fork_probe.py" \
    --ctl "$GPUFRACCTL" >"$tmp/shim.json" ||
    { echo "fork_probe: the probe under the shim failed: $(cat "$tmp/shim.json")"; exit 1; }
daemon_stop
echo "bare: $(cat "$tmp/bare.json")"
echo "shim: $(cat "$tmp/shim.json")"
"$python" - "$tmp/bare.json" "$tmp/shim.json" <<'PY'
import json, sys
bare, shim = (json.load(open(f)) for f in sys.argv[1:])
for who in ("before", "child", "grandchild", "parent"):
    for name, rc in sorted(bare[who].items()):
        print("FIGURE fork_%s_%s %d" % (who, name, rc))
seen = shim["allocs"]
me, kid = str(shim["pid"]), str(shim["child_pid"])
print("FIGURE fork_shim_child_client %d" % (seen["child_alive"][kid] is not None))
bad = []
for who in ("before", "child", "grandchild", "parent"):
    if shim[who] != bare[who]:
        bad.append("%s told %s under the shim, %s bare" % (who, shim[who], bare[who]))
mine = seen["before_fork"][me]
if not mine or 64 << 20 not in mine:
    bad.append("the parent's 64 MiB is not charged: %s" % mine)
for when in ("child_alive", "child_gone"):
    if seen[when][me] != mine:
        bad.append("the parent's allocations %s: %s, before the fork %s"
                   % (when, seen[when][me], mine))
    if seen[when][kid]:
        bad.append("the child holds %s (%s)" % (seen[when][kid], when))
for b in bad:
    print("fork_probe: " + b)
sys.exit(1 if bad else 0)
PY
