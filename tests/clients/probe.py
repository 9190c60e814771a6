"""Listen on a SOCK_SEQPACKET Unix socket and count who connects.

Usage: probe.py SOCKET. Accepts connections and closes them at once; on
SIGTERM prints "connections: N" and exits.
"""
import signal
import socket
import sys

count = 0


def done(signum, frame):
    global count
    # Connections still in the backlog were made: count them too.
    s.setblocking(False)
    try:
        while True:
            s.accept()[0].close()
            count += 1
    except BlockingIOError:
        pass
    print("connections: %d" % count, flush=True)
    sys.exit(0)


signal.signal(signal.SIGTERM, done)
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1])
s.listen(16)
while True:
    c, _ = s.accept()
    count += 1
    c.close()
