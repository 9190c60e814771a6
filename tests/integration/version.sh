# Versions: gpufracd and gpufracctl say theirs; each client's libgpufrac
# release shows in ps (an older shim's, which says none, as null); a HELLO
# of another protocol version is refused with an ERROR naming the one the
# daemon speaks, and the daemon carries on; a shim refused so by a daemon
# of another protocol says it once on stderr and runs on, its allocations
# refused until a daemon lets it in, asking again.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
HELLO=$TOP/tests/clients/hello.py
FAKE=$TOP/tests/clients/fake_gpufracd.py
VERSION=$(sed -n 's/^VERSION *= *//p' "$TOP/Makefile")
PROTO=$(sed -n 's/^#define GF_PROTO_VERSION[[:space:]]*//p' \
	"$TOP/include/gpufrac/proto.h")
OTHER=$((PROTO + 1))
ERR_VERSION=9

check_eq "gpufracd -V" "$("$GPUFRACD" -V)" "gpufracd $VERSION"
check_eq "gpufracd --version" "$("$GPUFRACD" --version)" "gpufracd $VERSION"
check_eq "gpufracctl -V" "$("$GPUFRACCTL" -V)" "gpufracctl $VERSION"
check_eq "gpufracctl --version" "$("$GPUFRACCTL" --version)" \
	"gpufracctl $VERSION"

daemon_start
client_start a preload "$C" alloc 256Mi hold
check_eq "ps --json shows the shim's release" \
	"$(client_field "$PID_a" version)" "$VERSION"
check "so does the ps table" \
	sh -c "'$GPUFRACCTL' -s '$GPUFRAC_SOCKET' ps | grep -Eq '^ *$PID_a .* $VERSION\$'"

# A shim from before HELLO carried its release: served, release unknown.
mkfifo "$TMP/old.in"
"$PYTHON" "$HELLO" "$GPUFRAC_SOCKET" "$PROTO" --first <"$TMP/old.in" \
	>"$TMP/old.out" 2>&1 &
pid_old=$!
exec 3>"$TMP/old.in"
wait_for "a HELLO of the first size is answered HELLO_OK" 10 \
	grep -q "^HELLO_OK pid=$pid_old\$" "$TMP/old.out"
check_eq "ps --json shows its release as null" \
	"$(client_field "$pid_old" version)" None
exec 3>&-
wait "$pid_old"

# A client of another protocol version: refused, in the daemon's version.
check_eq "a HELLO of protocol $OTHER is refused, and the connection closed" \
	"$("$PYTHON" "$HELLO" "$GPUFRAC_SOCKET" "$OTHER")" \
	"ERROR proto=$PROTO code=$ERR_VERSION msg=gpufracd $VERSION speaks protocol $PROTO only: use the libgpufrac.so installed with it
closed"
check_eq "so is one of protocol 0" \
	"$("$PYTHON" "$HELLO" "$GPUFRAC_SOCKET" 0 | cut -d' ' -f1-3)" \
	"ERROR proto=$PROTO code=$ERR_VERSION
closed"
check "the daemon logs the refusal" \
	grep -q "refused pid [0-9]*: it speaks protocol $OTHER, gpufracd $VERSION speaks $PROTO" \
	"$TMP/gpufracd.log"
check "the daemon still answers" ctl status
check_eq "and still serves its client" \
	"$(client_field "$PID_a" version)" "$VERSION"
client_release a

# The shim against a daemon of another protocol: one line, then on, every
# allocation refused: a daemon that says no is an answer, not an absence.
FSOCK=$TMP/fake.sock
"$PYTHON" "$FAKE" "$FSOCK" --proto "$OTHER" >"$TMP/fake.log" 2>&1 &
pid_fake=$!
wait_for "the fake daemon of protocol $OTHER listens" 10 \
	grep -q '^ready' "$TMP/fake.log"
GPUFRAC_SOCKET=$FSOCK GPUFRAC_MEMORY_LIMIT=1Gi \
	client_start b preload "$C" alloc 768Mi hold alloc 512Mi
refusals() { [ "$(grep -c "^HELLO pid=$PID_b refused" "$TMP/fake.log")" -ge "$1" ]; }
wait_for "the shim is refused" 10 refusals 1
wait_for "and asks again, as when no daemon is reachable" 10 refusals 2
client_release b
check_eq "the program exits 0" $? 0
check_eq "the program runs on, refused every allocation (issue 32)" \
	"$(cat "$TMP/b.out")" "alloc err=2
holding
alloc err=2"
check_eq "one line on its stderr says why" "$(cat "$TMP/b.err")" \
	"gpufrac: daemon at '$FSOCK' speaks protocol $OTHER, this libgpufrac $VERSION speaks $PROTO: fake gpufracd speaks protocol $OTHER only; allocations fail until it lets this process in"
kill -TERM "$pid_fake"
wait "$pid_fake"
finish
