# Debian's python3-numba, unmodified, is held to its limit and sees it in
# get_memory_info().
. "$(dirname "$0")/lib.sh"
"$PYTHON" -c 'import numba' 2>/dev/null ||
	skip "python3-numba is not installed (make deps installs it)"
daemon_start

out=$(GPUFRAC_MEMORY_LIMIT=1Gi preload "$PYTHON" "$TOP/tests/clients/numba_limit.py" 2>"$TMP/err")
cat "$TMP/err"
check_eq "numba sees its limit as the total" "$(echo "$out" | sed -n 's/^total //p')" \
	$((1 << 30))
check_eq "and all of it free" "$(echo "$out" | sed -n 's/^free //p')" $((1 << 30))
check_eq "its data survives a round trip" \
	"$(echo "$out" | sed -n 's/^roundtrip //p')" ok
check "a request beyond the limit raises CUDA_ERROR_OUT_OF_MEMORY" \
	grep -qx oom <<<"$out"
check_eq "and leaves the 64 MiB array charged" \
	"$(echo "$out" | sed -n 's/^after //p')" $(((1 << 30) - (64 << 20)))
wait_for "everything is returned when it exits" 10 device_used_is 0
finish
