"""A process that takes device memory through the driver and then tells
gpufracd it holds it (issue 40): one process does both, so that NVML
lists the very pid that speaks. Libcuda is NUMBA_CUDA_DRIVER's (the
simulated driver). Each prints one line per answer, then sleeps until
killed.

  launder.py take SOCK UUID SIZE [later]
      take SIZE through the driver without asking, then HELLO, open UUID
      and re-register it (COMMIT with reserved 0); print "rereg ANSWER"
      (the answer to a DEVICE_OPEN sent after it: CLOSED when the daemon
      refused the charge and closed the connection); with later, print
      "took" once it holds SIZE and speak only at a line on stdin
  launder.py lease SOCK UUID SIZE
      the same, told as a lease restored (LEASE_RESTORE of SIZE, no page:
      all of it drawn); print "lease ANSWER"
  launder.py cut SOCK UUID SIZE MORE [RECUTS]
      HELLO, open UUID, RESERVE and take SIZE (granted), take MORE besides
      without asking; close the connection and print "cut"; RECUTS times,
      at a line on stdin, connect again, open UUID and close at once,
      before re-registering anything, and print "recut"; at a line on
      stdin connect again, re-register SIZE and print "rereg ANSWER",
      then (MORE > 0) re-register MORE too and print "more ANSWER"
  launder.py overlap SOCK UUID SIZE
      HELLO, open UUID, RESERVE and take SIZE (granted); then, that
      connection still open, connect again, HELLO, open UUID and
      re-register SIZE; print "rereg ANSWER", then "first ANSWER" (the
      first connection's answer to a DEVICE_OPEN: CLOSED once the daemon
      has closed it for the second)
  launder.py cutleased SOCK UUID SIZE MORE
      the same with an activity page, its RESERVE asking for a lease;
      after "rereg", restore the lease the page says (all of it undrawn)
      and print "lease ANSWER"
  launder.py paused SOCK UUID SIZE
      HELLO with an activity page, open UUID, RESERVE and take SIZE
      (granted); write in the page that its allocations hold SIZE, as a
      shim does before it registers them; close the connection and print
      "cut"; at a line on stdin connect again, open UUID and print
      "opened"; at another, re-register SIZE and print "rereg ANSWER"
"""
import ctypes
import fcntl
import os
import socket
import struct
import sys
import time

from wire import (COMMIT, DEVICE_OPEN, HELLO, HELLO_UNSET, LEASE_RESTORE,
                  NAMES, RESERVE, commit_payload, connect, dev_of,
                  open_payload, packet, reserve_payload, restore_payload,
                  type_of)

BASE = 0x7f0000000000


def ask(s, type_, payload, seq):
    """The answer to a message: its type's name, CLOSED if the connection
    closes first. What the daemon pushes unasked (seq 0: a DEVICE_INFO as
    what the others hold moves) is no answer."""
    try:
        s.send(packet(type_, payload, seq))
        while True:
            r = s.recv(65536)
            if not r:
                return "CLOSED"
            _, t, _, rseq, _ = struct.unpack("<HHIII", r[:16])
            if rseq == seq:
                return NAMES.get(t, "?")
    except (ConnectionResetError, BrokenPipeError):
        return "CLOSED"


def page():
    """An activity page, as a shim passes it with HELLO: leases need one."""
    fd = os.memfd_create("gpufrac-activity", os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, 4096)
    os.pwrite(fd, struct.pack("<II", 0x67664163, 3), 0)
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL)
    return fd


def opened(path, dev, fd=None):
    s = connect(path)
    if fd is None:
        assert ask(s, HELLO, HELLO_UNSET, 1) == "HELLO_OK"
    else:
        socket.send_fds(s, [packet(HELLO, HELLO_UNSET, 1)], [fd])
        assert NAMES.get(type_of(s.recv(65536))) == "HELLO_OK"
    assert ask(s, DEVICE_OPEN, open_payload(dev), 2) == "DEVICE_INFO"
    return s


def rereg(s, dev, ptr, size, seq):
    """A COMMIT with reserved 0, then whether the connection lives."""
    s.send(packet(COMMIT, commit_payload(dev, ptr, 0, size), seq))
    return ask(s, DEVICE_OPEN, open_payload(dev), seq + 1)


def restore(s, dev, size, seq):
    """A LEASE_RESTORE, then whether the connection lives."""
    s.send(packet(LEASE_RESTORE, restore_payload(dev, size), seq))
    return ask(s, DEVICE_OPEN, open_payload(dev), seq + 1)


class Driver:
    def __init__(self):
        self.cu = ctypes.CDLL(os.environ["NUMBA_CUDA_DRIVER"])
        d, ctx = ctypes.c_int(), ctypes.c_void_p()
        assert self.cu.cuInit(0) == 0
        assert self.cu.cuDeviceGet(ctypes.byref(d), 0) == 0
        assert self.cu.cuCtxCreate_v2(ctypes.byref(ctx), 0, d) == 0

    def take(self, size):
        p = ctypes.c_uint64()
        rc = self.cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(size))
        assert rc == 0, "cuMemAlloc_v2 %d" % rc


def hold():
    while True:
        time.sleep(1000)


def take(path, uuid, size, later=False):
    Driver().take(size)
    if later:
        print("took", flush=True)
        sys.stdin.readline()
    dev = dev_of(uuid)
    print("rereg", rereg(opened(path, dev), dev, BASE, size, 3), flush=True)
    hold()


def lease(path, uuid, size):
    Driver().take(size)
    dev = dev_of(uuid)
    print("lease", restore(opened(path, dev), dev, size, 3), flush=True)
    hold()


def granted(path, dev, drv, size, fd=None, lease=None):
    """A connection that RESERVEs SIZE (a lease with a page fd, unless
    lease says otherwise), drv takes it, and COMMITs it."""
    s = opened(path, dev, fd)
    if lease is None:
        lease = fd is not None
    assert ask(s, RESERVE, reserve_payload(dev, size, int(lease)),
               3) == "GRANT"
    drv.take(size)
    s.send(packet(COMMIT, commit_payload(dev, BASE, size, size), 4))
    assert ask(s, DEVICE_OPEN, open_payload(dev), 5) == "DEVICE_INFO"
    return s


def cut(path, uuid, size, more, recuts, leased=False):
    drv = Driver()
    dev = dev_of(uuid)
    fd = page() if leased else None
    s = granted(path, dev, drv, size, fd)
    if more > 0:
        drv.take(more)
    s.close()
    print("cut", flush=True)
    for _ in range(recuts):
        sys.stdin.readline()
        opened(path, dev).close()
        print("recut", flush=True)
    sys.stdin.readline()
    s = opened(path, dev, fd)
    print("rereg", rereg(s, dev, BASE, size, 3), flush=True)
    if leased:
        total = struct.unpack("<Q", os.pread(fd, 8, 64 + 8))[0]
        print("lease", restore(s, dev, total, 5), flush=True)
    if more > 0:
        print("more", rereg(s, dev, BASE + size, more, 7), flush=True)
    hold()


def paused(path, uuid, size):
    drv = Driver()
    dev = dev_of(uuid)
    fd = page()
    s = granted(path, dev, drv, size, fd, lease=False)
    os.pwrite(fd, struct.pack("<Q", size), 64 + 32)     # lease[0].held
    s.close()
    print("cut", flush=True)
    sys.stdin.readline()
    s = opened(path, dev, fd)
    print("opened", flush=True)
    sys.stdin.readline()
    print("rereg", rereg(s, dev, BASE, size, 3), flush=True)
    hold()


def overlap(path, uuid, size):
    drv = Driver()
    dev = dev_of(uuid)
    first = granted(path, dev, drv, size)
    s = opened(path, dev)
    print("rereg", rereg(s, dev, BASE, size, 3), flush=True)
    print("first", ask(first, DEVICE_OPEN, open_payload(dev), 6), flush=True)
    hold()


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "take":
        take(args[0], args[1], int(args[2]), args[3:4] == ["later"])
    elif cmd == "lease":
        lease(args[0], args[1], int(args[2]))
    elif cmd == "paused":
        paused(args[0], args[1], int(args[2]))
    elif cmd == "overlap":
        overlap(args[0], args[1], int(args[2]))
    elif cmd in ("cut", "cutleased"):
        cut(args[0], args[1], int(args[2]), int(args[3]),
            int(args[4]) if len(args) > 4 else 0, cmd == "cutleased")
    else:
        sys.exit("launder.py: unknown command " + cmd)


main()
