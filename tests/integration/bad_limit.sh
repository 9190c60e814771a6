# A bad GPUFRAC_MEMORY_LIMIT stops the job at its first allocation, with
# one line saying why, instead of handing a typo everything its group may
# hold (the default limit is the whole device): the process asks for a
# limit of 0 bytes, which the daemon enforces and ps shows, and which the
# shim enforces by itself when there is no daemon.
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked

daemon_start
for bad in 4GB -1 150% 0 0Gi 0%; do
	out=$(GPUFRAC_MEMORY_LIMIT=$bad preload "$C" alloc 1Mi info \
	    2>"$TMP/err")
	check_eq "'$bad': the allocation is refused, no memory is shown" \
		"$out" "alloc err=2
info free=0 total=0"
	check_eq "'$bad': one line says why and what follows" \
		"$(grep -c "^gpufrac: bad GPUFRAC_MEMORY_LIMIT '$bad': .*; no device memory is given until it is fixed$" "$TMP/err")" 1
done
check_eq "a good value is untouched" \
	"$(GPUFRAC_MEMORY_LIMIT=1Gi preload "$C" alloc 1Mi)" "alloc ok"

GPUFRAC_MEMORY_LIMIT=4GB client_start typo preload "$C" alloc 1Mi hold
check_eq "ps shows the operator its limit of 0" "$(client_limit "$PID_typo")" 0
client_release typo
daemon_stop

check_eq "with no daemon the shim refuses it by itself" \
	"$(GPUFRAC_MEMORY_LIMIT=4GB preload "$C" alloc 1Mi 2>/dev/null)" \
	"alloc err=2"
finish
