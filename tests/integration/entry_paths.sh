# Every way a program reaches the driver's memory functions is limited: the
# linked symbols, dlsym (both glibc versions), cuGetProcAddress v1 and v2
# (v2 also with the per-thread default stream flag).
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
daemon_start

script="alloc 768Mi alloc 512Mi info total free alloc 256Mi verify freeall"
want="alloc ok
alloc err=2
info free=268435456 total=1073741824
total 1073741824
free ok
alloc ok
verify ok
freeall ok"
for path in linked dlsym dlsym-old procaddr procaddr1 procaddr-self \
    procaddr-ptds; do
	# shellcheck disable=SC2086
	got=$(GPUFRAC_MEMORY_LIMIT=1Gi preload "$C" -p $path $script 2>&1)
	check_eq "$path: 1Gi limit holds" "$got" "$want"
	# The same program without the shim sees the whole 4Gi device.
	# shellcheck disable=SC2086
	got=$("$C" -p $path alloc 768Mi alloc 512Mi 2>&1)
	check_eq "$path: unlimited without the shim" "$got" "alloc ok
alloc ok"
done

# Pitched and managed memory count against the same limit.
got=$(GPUFRAC_MEMORY_LIMIT=1Gi preload "$C" -p dlsym alloc 1000Mi \
	pitch 32Mi 1 managed 32Mi pitch 1000 1000 managed 1Mi info 2>&1)
check_eq "pitch and managed memory are limited" "$got" "alloc ok
pitch err=2
managed err=2
pitch ok 1024
managed ok
info free=$(((1 << 30) - 1000 * 1048576 - 1024 * 1000 - 1048576)) total=1073741824"
wait_for "every client gone from the ledger" 10 clients_are 0
finish
