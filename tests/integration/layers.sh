# The shim's and the daemon's layers (shim/README and shim/layers,
# daemon/README and daemon/layers): counted from the objects
# as built (tools/calls_up.py), no file calls a layer above its own but
# for the known ways: the hooks' gate starting the shim once
# (hooks_enter -> init_shim), and the daemon's five that daemon/README
# names. Every file is in a layer. The counter
# itself is checked on the same objects with the layers turned upside
# down, where the calls down must all show as up.
. "$(dirname "$0")/lib.sh"
command -v nm >/dev/null || skip "no nm (binutils)"
count() { "$PYTHON" "$TOP/tools/calls_up.py" -v "$BUILD/${2:-shim}" "$1"; }

count "$TOP/shim/layers" >"$TMP/layers.out"
grep '^  up: ' "$TMP/layers.out" |
    grep -v -e '^  up: hooks_enter (hooks) -> init (init): init_shim$' \
    >"$TMP/up.out"
check_eq "no call runs up the shim's layers" "$(cat "$TMP/up.out")" ""
check_eq "every file is in a layer" \
    "$(grep '^in no layer' "$TMP/layers.out")" ""

# The honest counter: upside down, the layers' calls down are all up.
tac "$TOP/shim/layers" | grep -v '^#' >"$TMP/reversed"
total=$(sed -n 's/^\([0-9]*\) references between files, .*/\1/p' \
    "$TMP/layers.out")
check "the counter sees the calls between files" test "${total:-0}" -gt 100
check "upside down, the calls down show as up" \
    grep -q '^  up: hooks_mem (hooks) -> client (client): client_commit$' \
    <(count "$TMP/reversed")
# The daemon: no call runs up but the five daemon/README names, and no
# file calls another layer's in a circle through the life cycle.
count "$TOP/daemon/layers" daemon >"$TMP/daemon.out"
grep '^  up: ' "$TMP/daemon.out" | grep -v \
    -e '^  up: adminctl (messages) -> arbiter (lifecycle): arbiter_\(reload\|group_set\|group_rm\)$' \
    -e '^  up: reap (policy) -> arbiter (lifecycle): arbiter_group_rm$' \
    -e '^  up: config_daemon (pure) -> metrics_addr (machine): metrics_addr_parse$' \
    >"$TMP/daemon_up.out"
check_eq "no call runs up the daemon's layers" "$(cat "$TMP/daemon_up.out")" ""
check_eq "every daemon file is in a layer" \
    "$(grep '^in no layer' "$TMP/daemon.out")" ""
check_eq "no policy file records a decision through the arbiter" \
    "$(grep -c ' -> arbiter (lifecycle): arbiter_event' "$TMP/daemon.out")" 0
finish
