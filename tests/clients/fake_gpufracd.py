"""A stand-in for gpufracd that speaks just enough protocol to test the shim.

Usage:
  fake_gpufracd.py SOCKET [--limit N] [--capacity N] [--wait-from N]
                   [--wait-ms MS] [--grant-after SECONDS] [--proto V]
  fake_gpufracd.py --ctl SOCKET COMMAND...

The first form serves the shim's side of the conversation on SOCKET
(SOCK_SEQPACKET): HELLO -> HELLO_OK, DEVICE_OPEN -> DEVICE_INFO (every
device exists, with the given limit and capacity), RESERVE -> GRANT, or,
for a request of at least --wait-from bytes, WAIT{--wait-ms} and then GRANT
when told to (or by itself --grant-after seconds later); COMMIT, ROLLBACK
and FREE are only logged. With --proto V, a daemon of another protocol
version: every HELLO gets an ERROR (GF_ERR_VERSION) whose header carries
V, and the connection is closed. It logs one line per event on stdout
("ready" once it listens) and exits 0 on SIGTERM.

The second form sends it one command on SOCKET.ctl and returns when it has
been carried out:
  grant          GRANT every queued RESERVE
  deny           DENY every queued RESERVE
  limit N        make N the limit and push it (DEVICE_INFO, seq 0) to every
                 client for every device it opened
  unsolicited    push a message of a type the shim does not expect unasked
                 (OK, seq 0) to every client
  garbage        send every client a malformed packet (wrong version)
Sizes are bytes or Ki/Mi/Gi multiples.
"""
import os
import selectors
import signal
import socket
import struct
import sys
import time

VERSION = 1
HDR = struct.Struct("<HHIII")          # version, type, len, seq, zero
HELLO, DEVICE_OPEN, RESERVE, COMMIT, ROLLBACK, FREE = 1, 2, 3, 4, 5, 6
HELLO_OK, DEVICE_INFO, GRANT, DENY, ERROR, WAIT, OK = \
    64, 65, 66, 67, 68, 76, 81
NAMES = {HELLO: "HELLO", DEVICE_OPEN: "DEVICE_OPEN", RESERVE: "RESERVE",
         COMMIT: "COMMIT", ROLLBACK: "ROLLBACK", FREE: "FREE"}
# Sizes each type may have: HELLO's first, then with the shim's release.
PAYLOAD = {HELLO: (16, 32), DEVICE_OPEN: (32,), RESERVE: (32,),
           COMMIT: (48,), ROLLBACK: (24,), FREE: (8,)}
ERR_VERSION = 9
OOM = 2                                 # CUDA_ERROR_OUT_OF_MEMORY
DENY_DEVICE_FULL = 2
UNITS = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}


def size(s):
    for unit, mult in UNITS.items():
        if s.endswith(unit):
            return int(s[:-len(unit)]) * mult
    return int(s)


def packet(type_, seq, payload=b"", version=VERSION):
    return HDR.pack(version, type_, HDR.size + len(payload), seq, 0) + payload


def log(*words):
    print(*words, flush=True)


class Client:
    def __init__(self, sock):
        self.sock = sock
        self.pid = struct.unpack("3i", sock.getsockopt(
            socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]
        self.devices = set()            # UUIDs it opened
        self.used = 0

    def send(self, type_, seq, payload=b""):
        try:
            self.sock.send(packet(type_, seq, payload))
        except OSError:
            pass                        # it went away: noticed on read

    def device_info(self, seq, uuid, limit, capacity):
        self.send(DEVICE_INFO, seq,
                  uuid + struct.pack("<QQQQQQ", limit, capacity, self.used, 0,
                                         limit, self.used))


class Fake:
    def __init__(self, path, opts):
        self.path = path
        self.limit = opts["limit"]
        self.capacity = opts["capacity"]
        self.wait_from = opts["wait_from"]
        self.wait_ms = opts["wait_ms"]
        self.grant_after = opts["grant_after"]
        self.proto = int(opts["proto"])
        self.clients = {}               # socket -> Client
        self.queued = []                # (Client, seq, size, deadline)
        self.sel = selectors.DefaultSelector()
        self.listener = self.listen(path, socket.SOCK_SEQPACKET)
        self.ctl = self.listen(path + ".ctl", socket.SOCK_STREAM)

    def listen(self, path, kind):
        if os.path.exists(path):
            os.unlink(path)
        s = socket.socket(socket.AF_UNIX, kind)
        s.bind(path)
        s.listen(16)
        self.sel.register(s, selectors.EVENT_READ)
        return s

    def run(self):
        log("ready")
        while True:
            timeout = None
            if self.queued and self.grant_after is not None:
                timeout = max(0, min(q[3] for q in self.queued) - time.time())
            for key, _ in self.sel.select(timeout):
                s = key.fileobj
                if s is self.listener:
                    self.accept()
                elif s is self.ctl:
                    self.control()
                else:
                    self.receive(self.clients[s])
            now = time.time()
            due = [q for q in self.queued if q[3] is not None and q[3] <= now]
            self.answer(due, GRANT)

    def accept(self):
        s, _ = self.listener.accept()
        self.clients[s] = Client(s)
        self.sel.register(s, selectors.EVENT_READ)

    def drop(self, c):
        log("closed pid=%d" % c.pid)
        self.sel.unregister(c.sock)
        del self.clients[c.sock]
        self.queued = [q for q in self.queued if q[0] is not c]
        c.sock.close()

    def receive(self, c):
        try:
            data = c.sock.recv(4096)
        except OSError:
            data = b""
        if len(data) < HDR.size:
            self.drop(c)
            return
        version, type_, length, seq, zero = HDR.unpack_from(data)
        body = data[HDR.size:]
        if (version != VERSION or length != len(data) or zero != 0 or
                len(body) not in PAYLOAD.get(type_, ())):
            log("bad packet from pid=%d" % c.pid)
            self.drop(c)
            return
        getattr(self, "on_" + NAMES[type_].lower())(c, seq, body)

    def on_hello(self, c, seq, body):
        if self.proto != VERSION:
            msg = b"fake gpufracd speaks protocol %d only" % self.proto
            c.sock.send(packet(ERROR, seq, struct.pack("<I", ERR_VERSION) +
                               msg.ljust(224, b"\0") + bytes(4),
                               version=self.proto))
            log("HELLO pid=%d refused" % c.pid)
            self.drop(c)
            return
        log("HELLO pid=%d" % c.pid)
        c.send(HELLO_OK, seq, struct.pack("<II", c.pid, 0))

    def on_device_open(self, c, seq, body):
        uuid = body[:16]
        c.devices.add(uuid)
        log("DEVICE_OPEN pid=%d" % c.pid)
        c.device_info(seq, uuid, self.limit, self.capacity)

    def on_reserve(self, c, seq, body):
        (size_,) = struct.unpack_from("<Q", body, 16)
        if self.wait_from is not None and size_ >= self.wait_from:
            deadline = None
            if self.grant_after is not None:
                deadline = time.time() + self.grant_after
            self.queued.append((c, seq, size_, deadline))
            c.send(WAIT, seq, struct.pack("<II", self.wait_ms, 0))
            log("RESERVE pid=%d seq=%d size=%d -> WAIT" % (c.pid, seq, size_))
            return
        c.used += size_
        c.send(GRANT, seq, struct.pack("<QQQ", c.used, self.limit, 0))
        log("RESERVE pid=%d seq=%d size=%d -> GRANT" % (c.pid, seq, size_))

    def on_commit(self, c, seq, body):
        ptr, reserved, size_ = struct.unpack_from("<QQQ", body, 16)
        if reserved == 0:
            c.used += size_
        log("COMMIT pid=%d ptr=%#x reserved=%d size=%d" %
            (c.pid, ptr, reserved, size_))

    def on_rollback(self, c, seq, body):
        (size_,) = struct.unpack_from("<Q", body, 16)
        c.used -= size_
        log("ROLLBACK pid=%d size=%d" % (c.pid, size_))

    def on_free(self, c, seq, body):
        (ptr,) = struct.unpack("<Q", body)
        log("FREE pid=%d ptr=%#x" % (c.pid, ptr))

    def answer(self, queued, type_):
        for q in queued:
            c, seq, size_, _ = q
            self.queued.remove(q)
            if type_ == GRANT:
                c.used += size_
                c.send(GRANT, seq, struct.pack("<QQQ", c.used, self.limit, 0))
            else:
                c.send(DENY, seq, struct.pack("<IIQQ", OOM, DENY_DEVICE_FULL,
                                              c.used, self.limit))
            log("%s pid=%d seq=%d" % ("GRANT" if type_ == GRANT else "DENY",
                                      c.pid, seq))

    def control(self):
        s, _ = self.ctl.accept()
        with s:
            words = s.makefile().readline().split()
            if words == ["grant"]:
                self.answer(list(self.queued), GRANT)
            elif words == ["deny"]:
                self.answer(list(self.queued), DENY)
            elif len(words) == 2 and words[0] == "limit":
                self.limit = size(words[1])
                for c in self.clients.values():
                    for uuid in c.devices:
                        c.device_info(0, uuid, self.limit, self.capacity)
                log("pushed limit=%d" % self.limit)
            elif words == ["unsolicited"]:
                for c in self.clients.values():
                    c.send(OK, 0)
                log("pushed OK")
            elif words == ["garbage"]:
                for c in self.clients.values():
                    c.sock.send(packet(OK, 0, version=VERSION + 1))
                log("pushed garbage")
            else:
                s.sendall(b"unknown command\n")
                return
            s.sendall(b"ok\n")


def control(path, words):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path + ".ctl")
        s.sendall((" ".join(words) + "\n").encode())
        reply = s.makefile().readline().strip()
    if reply != "ok":
        sys.exit("fake_gpufracd: %s" % reply)


def main(argv):
    if len(argv) >= 3 and argv[0] == "--ctl":
        control(argv[1], argv[2:])
        return
    if not argv:
        sys.exit(__doc__)
    opts = {"limit": 2 << 30, "capacity": 4 << 30, "wait_from": None,
            "wait_ms": 30000, "grant_after": None, "proto": VERSION}
    args = iter(argv[1:])
    for a in args:
        key = a.lstrip("-").replace("-", "_")
        if key not in opts:
            sys.exit("fake_gpufracd: unknown option %s" % a)
        v = next(args)
        opts[key] = float(v) if key == "grant_after" else size(v)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    Fake(argv[0], opts).run()


if __name__ == "__main__":
    main(sys.argv[1:])
