# The shim's layers (shim/README, shim/layers): counted from the objects
# as built (tools/calls_up.py), no file calls a layer above its own but
# for the one known way: the hooks' gate starting the shim once
# (hooks_enter -> init_shim). Every file is in a layer. The counter
# itself is checked on the same objects with the layers turned upside
# down, where the calls down must all show as up.
. "$(dirname "$0")/lib.sh"
command -v nm >/dev/null || skip "no nm (binutils)"
count() { "$PYTHON" "$TOP/tools/calls_up.py" -v "$BUILD/shim" "$1"; }

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
finish
