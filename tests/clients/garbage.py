"""Send gpufracd one bad packet per connection and check it hangs up.

Usage: garbage.py SOCKET. Prints "closed N of M" (M bad packets, N of them
made the daemon close the connection within 5 s) and "status answered" when
a well-formed query on a fresh connection still gets its reply.
"""
import os
import socket
import struct
import sys

VERSION = 1
HELLO, RESERVE, COMMIT, FREE, STATUS_REQ, ERROR, STATUS = 1, 3, 4, 6, 32, 68, 69
HELLO_LEN, RESERVE_LEN = 16, 32


def packet(type_, payload=b"", version=VERSION, length=None, zero=0, seq=1):
    if length is None:
        length = 16 + len(payload)
    return struct.pack("<HHIII", version, type_, length, seq, zero) + payload


def hello():
    return packet(HELLO, struct.pack("<iIII", -2**31, 0xffffffff, 0xffffffff, 0))


CASES = {
    "empty packet": [b""],
    "one byte": [b"\x01"],
    "truncated header": [packet(STATUS_REQ)[:15]],
    "wrong version": [packet(STATUS_REQ, version=2)],
    "length mismatch": [packet(STATUS_REQ, length=20)],
    "reserved field set": [packet(STATUS_REQ, zero=7)],
    "unknown type": [packet(999)],
    "payload one byte short": [hello(), packet(RESERVE, bytes(RESERVE_LEN - 1))],
    "payload one byte long": [hello(), packet(RESERVE, bytes(RESERVE_LEN + 1))],
    "oversized packet": [packet(STATUS_REQ, bytes(4096))],
    "reserve before hello": [packet(RESERVE, bytes(RESERVE_LEN))],
    "hello twice": [hello(), hello()],
    "a reply type sent to the daemon": [packet(ERROR, bytes(128))],
    "random bytes": [os.urandom(200)],
    # The daemon's own "context" records (1 << 60 | device).
    "free of a daemon record": [hello(), packet(FREE, struct.pack("<Q", 1 << 60))],
    "commit of a daemon record": [hello(), packet(
        COMMIT, bytes(16) + struct.pack("<QQQII", 1 << 60 | 1, 0, 4096, 1, 0))],
}


def closed_after(path, packets):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    s.settimeout(5)
    try:
        for p in packets:
            s.send(p)
        while True:
            if s.recv(65536) == b"":
                return True
    except (socket.timeout, TimeoutError):
        return False
    except (BrokenPipeError, ConnectionResetError):
        return True
    finally:
        s.close()


def main():
    path = sys.argv[1]
    closed = 0
    for name, packets in CASES.items():
        if closed_after(path, packets):
            closed += 1
        else:
            print("still open after: " + name)
    print("closed %d of %d" % (closed, len(CASES)))
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    s.settimeout(5)
    s.send(packet(STATUS_REQ))
    reply = s.recv(65536)
    if struct.unpack("<HHIII", reply[:16])[1] == STATUS:
        print("status answered")


main()
