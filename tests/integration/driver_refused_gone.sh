# A client that dies as its RESERVE, one the driver refused it
# (GF_RESERVE_DRIVER_OOM), is read: the daemon stays up. Such a RESERVE
# has the driver looked at at once; the look finds what a process without
# the shim took, and tells every client of it; telling this one fails
# (its peer is gone). Its connection was closed there and then, and the
# RESERVE went on with it freed (the soak's SIGSEGV, in resolve_collision).
# gpufracd is stopped (SIGSTOP) while the RESERVE is queued, its sender
# exits and the other process allocates, so that one round sees them all.
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=64Mi
MiB=$((1 << 20))

daemon_start
uuid=$(ctl status --json | json 'j["devices"][0]["uuid"]')

# oom.py SOCKET UUID: a client of the device ("ready"); on a line on stdin,
# a RESERVE of 48 MiB the driver refused it, and it exits at once.
cat >"$TMP/oom.py" <<'EOF'
import socket, struct, sys
HDR = struct.Struct("<HHIII")
HELLO, DEVICE_OPEN, RESERVE = 1, 2, 3
KIND_MEM, DRIVER_OOM = 1, 0x2
def packet(type_, payload, seq):
    return HDR.pack(1, type_, HDR.size + len(payload), seq, 0) + payload
dev = bytes.fromhex(sys.argv[2].replace("GPU-", "").replace("-", ""))
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.settimeout(10)
s.send(packet(HELLO, struct.pack("<iIII16s", -2**31, 0xffffffff,
                                 0xffffffff, 0, b"9.9.9"), 1))
s.recv(4096)
s.send(packet(DEVICE_OPEN, dev + struct.pack("<IIQ", 0, 0, 0), 2))
s.recv(4096)
print("ready", flush=True)
sys.stdin.readline()
s.send(packet(RESERVE, dev + struct.pack("<QII", 48 << 20, KIND_MEM,
                                         DRIVER_OOM), 3))
print("sent", flush=True)
EOF
mkfifo "$TMP/o.in"
"$PYTHON" "$TMP/oom.py" "$GPUFRAC_SOCKET" "$uuid" <"$TMP/o.in" \
	>"$TMP/o.out" 2>"$TMP/o.err" &
PID_o=$!
exec 3>"$TMP/o.in"
wait_for "o has opened the device" 10 grep -q '^ready' "$TMP/o.out"

kill -STOP "$DAEMON_PID"
stopped() { [ "$(awk '{ print $3 }' "/proc/$DAEMON_PID/stat")" = T ]; }
wait_for "gpufracd is stopped" 10 stopped
echo go >&3
exec 3>&-
wait "$PID_o"
check_eq "o sent its RESERVE and exited" "$(tail -1 "$TMP/o.out")" sent
client_start x "$CLIENTS/cuclient_linked" alloc 32Mi hold
kill -CONT "$DAEMON_PID"

wait_for "gpufracd has taken x in, without the shim" 10 grep -q \
	"pid $PID_x (uid 0) holds 32.0MiB on device 0 without the shim" \
	"$TMP/gpufracd.log"
check "gpufracd is still up" kill -0 "$DAEMON_PID"
check "and serves" ctl status
# said LINE: the line of the log where it first says LINE.
said() { grep -n -m 1 "$1" "$TMP/gpufracd.log" | cut -d: -f1; }
check "o's connection closed once its RESERVE was answered, not before" \
	[ "$(said "deny pid $PID_o ")" -lt "$(said "client pid $PID_o left")" ]
client_release x
wait_for "nothing is charged once x has gone" 10 eval \
	"[ \"\$(ctl status --json | json \"j['devices'][0]['used_bytes']\")\" = 0 ]"
finish
