# With no daemon, a program neither crashes nor hangs: it runs within its
# own limit, enforced by the shim, and says so once on stderr.
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked

out=$(GPUFRAC_MEMORY_LIMIT=1Gi preload timeout 60 "$C" alloc 768Mi \
	alloc 512Mi info free alloc 256Mi 2>"$TMP/err")
check_eq "the limit is enforced locally" "$out" "alloc ok
alloc err=2
info free=268435456 total=1073741824
free ok
alloc ok"
check_eq "one line on stderr says so" "$(grep -c '^gpufrac: ' "$TMP/err")" 1
check "naming the socket" grep -q "$GPUFRAC_SOCKET" "$TMP/err"
out=$(preload timeout 60 "$C" alloc 3Gi 2>/dev/null)
check_eq "without a limit the whole device is usable" "$out" "alloc ok"
finish
