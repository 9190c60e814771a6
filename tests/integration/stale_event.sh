# An event of a descriptor closed earlier in the same round of the event
# loop is not taken for one of its number opened since: a process's exit
# does not close the connection of a newcomer that took its numbers.
# gpufracd is stopped (SIGSTOP) while, in this order, a's connection
# closes, b connects, and a exits; one round then sees a's hang-up (its
# socket and pidfd closed), b's connection (given the numbers a's had),
# then a's exit, which closed b's connection ("its process has exited,
# another keeps its socket") before the loop knew its events by
# registration.
. "$(dirname "$0")/lib.sh"

daemon_start

# peer.py SOCKET: one line per command on stdin: connect (and print
# "connected"), ask (SWAP_REQ of no process: print "answered", or
# "closed" when the daemon closed the connection), close, exit.
cat >"$TMP/peer.py" <<'EOF'
import socket, struct, sys
SWAP_REQ, SWAP_OUT = 37, 1
s = None
for seq, line in enumerate(sys.stdin, 1):
    cmd = line.split()[0]
    if cmd == "connect":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(sys.argv[1])
        s.settimeout(10)
        print("connected", flush=True)
    elif cmd == "ask":
        try:
            s.send(struct.pack("<HHIIIII", 1, SWAP_REQ, 24, seq, 0,
                               0x7ffffff0, SWAP_OUT))
            print("answered" if s.recv(4096) else "closed", flush=True)
        except OSError:
            print("closed", flush=True)
    elif cmd == "close":
        s.close()
        print("closed it", flush=True)
    elif cmd == "exit":
        break
EOF
peer_start() {
	mkfifo "$TMP/$1.in"
	"$PYTHON" "$TMP/peer.py" "$GPUFRAC_SOCKET" <"$TMP/$1.in" \
	    >"$TMP/$1.out" 2>"$TMP/$1.err" &
	eval "PID_$1=\$!"
}
said() { grep -qx "$2" "$TMP/$1.out"; }

peer_start a
exec 3>"$TMP/a.in"
echo connect >&3
echo ask >&3
wait_for "a's connection is accepted" 10 said a answered

kill -STOP "$DAEMON_PID"
stopped() { [ "$(awk '{ print $3 }' "/proc/$DAEMON_PID/stat")" = T ]; }
wait_for "gpufracd is stopped" 10 stopped
echo close >&3
wait_for "a has closed its connection" 10 said a "closed it"
peer_start b
exec 4>"$TMP/b.in"
echo connect >&4
wait_for "b has connected" 10 said b connected
echo exit >&3
exec 3>&-
wait "$PID_a"
kill -CONT "$DAEMON_PID"

echo ask >&4
wait_for "b is answered, or closed" 10 eval \
	"[ \$(wc -l <$TMP/b.out) -ge 2 ]"
check_eq "b's connection stays open" "$(sed -n 2p "$TMP/b.out")" answered
check "gpufracd did not take a's exit for b's" eval \
	"! grep -q 'another keeps its socket' $TMP/gpufracd.log"
echo exit >&4
exec 4>&-
wait "$PID_b"
finish
