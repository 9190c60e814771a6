# Shared set-up for the tests that drive liars of their own making,
# mute_mover.py (grants_restart.sh, granted_moves.sh): sourced after
# lib.sh, once the daemon runs and $uuid names its device 0.
#   liar NAME SIZE    start one, granted SIZE bytes; pid in $PID_NAME,
#                     its stdin a fifo held open in $FD_NAME
#   say NAME LINE     tell it LINE
#   said NAME WORD N  its output has N lines starting with WORD
MM=$TOP/tests/clients/mute_mover.py
# shellcheck disable=SC2154	# uuid is the includer's

liar() {
	mkfifo "$TMP/$1.in"
	"$PYTHON" "$MM" "$GPUFRAC_SOCKET" "$uuid" "$2" <"$TMP/$1.in" \
	    >"$TMP/$1.out" 2>"$TMP/$1.err" &
	printf -v "PID_$1" %s $!
	eval "exec {FD_$1}>\"$TMP/$1.in\""
	wait_for "liar $1 is granted $2 bytes" 10 grep -q '^ready' "$TMP/$1.out"
}
say() { local fd=FD_$1; echo "$2" >&"${!fd}"; }
said() { [ "$(grep -c "^$2" "$TMP/$1.out")" = "$3" ]; }
