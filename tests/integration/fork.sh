# A forked child never speaks on its parent's connection: it registers as a
# client of its own, and the parent's charge is untouched.
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
daemon_start

# The parent sits at its 1Gi limit; a child charged to the parent would be
# refused, a child on its own connection has its own 1Gi.
out=$(GPUFRAC_MEMORY_LIMIT=1Gi preload "$C" alloc 1Gi fork alloc 512Mi \
	alloc 1Mi info 2>&1)
check_eq "the child is its own client, the parent keeps its charge" "$out" \
	"alloc ok
alloc ok
alloc err=2
info free=0 total=1073741824"
wait_for "everything is returned" 10 device_used_is 0
finish
