# A process that dies as the copy engine's move of it starts: the daemon
# stays up. Its MOVE cannot be sent (the socket's peer is gone), so the
# move is to end, failed, at the end of the loop's round; the same round
# then sees the socket close and, the process dead and no NVML to wait
# for, drops the client and its move at once. The daemon crashed (a use
# after free of the move, then a double free) when the end came after.
# The window is made deterministic: gpufracd is stopped (SIGSTOP) while an
# admin's SWAP_REQ and the process's death queue up, in that order, for
# one round.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=64Mi
MiB=$((1 << 20))

# No NVML: a departing process's charge goes when it exits, not when the
# driver's look sees its memory back (the look would keep it a while).
mkdir "$TMP/nonvml"
ln -s "$BUILD/tests/simcuda/libcuda.so.1" "$TMP/nonvml/libcuda.so.1"
printf '[daemon]\nswap_engine = copy\n' >"$TMP/gpufrac.conf"
LD_LIBRARY_PATH=$TMP/nonvml daemon_start
check "gpufracd runs without NVML" \
	grep -q "cannot load 'libnvidia-ml.so.1'" "$TMP/gpufracd.log"
uuid=$(ctl status --json | json 'j["devices"][0]["uuid"]')

# swap.py SOCKET: connected (its connection accepted: "connected"), then
# for each PID read on stdin send SWAP_REQ out ("sent": it is in the
# daemon's socket) and print OK or ERROR and its message.
cat >"$TMP/swap.py" <<'EOF'
import socket, struct, sys
SWAP_REQ, ERROR, OK, SWAP_OUT = 37, 68, 81, 1
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.settimeout(10)
def swap(pid, seq):
    s.send(struct.pack("<HHIIIII", 1, SWAP_REQ, 24, seq, 0, pid, SWAP_OUT))
    print("sent", flush=True)
    r = s.recv(4096)
    type_ = struct.unpack_from("<HHIII", r)[1]
    if type_ == ERROR:
        return "ERROR " + r[20:140].split(b"\0")[0].decode()
    return "OK" if type_ == OK else "type %d" % type_
swap(0x7ffffff0, 1)     # no such pid: its answer says it is accepted
print("connected", flush=True)
for seq, line in enumerate(sys.stdin, 2):
    print(swap(int(line), seq), flush=True)
EOF

mkfifo "$TMP/m.in" "$TMP/s.in"
"$PYTHON" "$TOP/tests/clients/mute_mover.py" "$GPUFRAC_SOCKET" "$uuid" \
	$((8 * MiB)) <"$TMP/m.in" >"$TMP/m.out" 2>"$TMP/m.err" &
PID_m=$!
exec 3>"$TMP/m.in"
wait_for "m holds 8 MiB, and says it moves its own memory" 10 \
	grep -q '^ready' "$TMP/m.out"
"$PYTHON" "$TMP/swap.py" "$GPUFRAC_SOCKET" <"$TMP/s.in" >"$TMP/s.out" \
	2>"$TMP/s.err" &
exec 4>"$TMP/s.in"
wait_for "the admin's connection is accepted" 10 \
	grep -q '^connected' "$TMP/s.out"

kill -STOP "$DAEMON_PID"
stopped() { [ "$(awk '{ print $3 }' "/proc/$DAEMON_PID/stat")" = T ]; }
wait_for "gpufracd is stopped" 10 stopped
echo "$PID_m" >&4
wait_for "the SWAP_REQ is in the daemon's socket before m dies" 10 eval \
	"[ \$(grep -c '^sent' $TMP/s.out) = 2 ]"
kill -KILL "$PID_m"
wait "$PID_m" 2>/dev/null
kill -CONT "$DAEMON_PID"
wait_for "the admin is answered" 10 eval \
	"[ \$(wc -l <$TMP/s.out) -ge 4 ]"
check_eq "it is told the swap did not happen: m left" \
	"$(sed -n 4p "$TMP/s.out")" "ERROR pid $PID_m has left"
check "gpufracd is still up" kill -0 "$DAEMON_PID"
check "and serves" ctl status
check_eq "m's 8 MiB are back" "$(ctl status --json | \
	json "j['devices'][0]['used_bytes']")" 0
exec 4>&-
finish
