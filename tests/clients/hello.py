"""Say HELLO to gpufracd in a given protocol version, print what it answers.

Usage: hello.py SOCKET PROTO [VERSION | --first]
Sends one HELLO whose header carries protocol version PROTO and whose
payload names the libgpufrac release VERSION (default "9.9.9"), or, with
--first, a HELLO of the size it had before it carried a release, as
older shims send it. Prints the answer as one line:
  HELLO_OK pid=N
  ERROR proto=V code=N msg=TEXT      (V: the header's protocol version)
then "closed" once the daemon hangs up. After HELLO_OK it stays connected
until a line (or end of file) comes on stdin. Exits 1 when no answer comes
within 10 s.
"""
import socket
import struct
import sys

HDR = struct.Struct("<HHIII")          # version, type, len, seq, zero
HELLO, HELLO_OK, ERROR = 1, 64, 68
ERROR_LEN = 232                          # code, msg[224], zero


def hello(proto, release):
    payload = struct.pack("<iIII", -2**31, 0xffffffff, 0xffffffff, 0)
    if release is not None:
        payload += release.encode().ljust(16, b"\0")[:15] + b"\0"
    return HDR.pack(proto, HELLO, HDR.size + len(payload), 7, 0) + payload


def answer(reply):
    proto, type_, length, seq, _ = HDR.unpack_from(reply)
    body = reply[HDR.size:length]
    if seq != 7:
        return "reply to seq %d, not 7" % seq
    if type_ == HELLO_OK:
        return "HELLO_OK pid=%d" % struct.unpack_from("<I", body)[0]
    if type_ == ERROR and len(body) == ERROR_LEN:
        code = struct.unpack_from("<I", body)[0]
        msg = body[4:4 + 224].split(b"\0")[0].decode(errors="replace")
        return "ERROR proto=%d code=%d msg=%s" % (proto, code, msg)
    return "type %d, %d bytes" % (type_, len(body))


def main(argv):
    if len(argv) not in (2, 3):
        sys.exit(__doc__)
    path, proto = argv[0], int(argv[1])
    release = "9.9.9" if len(argv) == 2 else argv[2]
    if release == "--first":
        release = None
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    s.settimeout(10)
    s.send(hello(proto, release))
    try:
        reply = s.recv(4096)
    except socket.timeout:
        print("no answer", flush=True)
        sys.exit(1)
    if not reply:
        print("closed", flush=True)
        return
    line = answer(reply)
    print(line, flush=True)
    if line.startswith("HELLO_OK"):
        sys.stdin.readline()
        return
    try:
        if s.recv(4096) == b"":
            print("closed", flush=True)
    except socket.timeout:
        print("still open", flush=True)


main(sys.argv[1:])
