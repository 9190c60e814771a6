"""A client that says it can move its own memory, and then does not.

Usage: mute_mover.py SOCKET UUID SIZE [commit]
Says HELLO with an activity page that claims the copy engine
(GF_ACT_COPY), opens device UUID, reserves and commits SIZE bytes, prints
"ready". It never answers a MOVE out by itself: it prints
"move DIR ID" for each MOVE (DIR: out or in) and, with "commit", marks
the page's swapped mark committed for that MOVE as the shim does past
its point of no return (include/gpufrac/activity.h), and still does not
answer. A MOVE in is answered at once, as done. Lines on stdin:
  page          print "swapped N", the page's mark
  moved ID      send the MOVED out for ID that never came, late
  failed [ID]   send the MOVED out for ID (the last MOVE out's if none)
                saying the move failed; prints "failed"
  keep KEPT     say from now on, in every MOVED, that it keeps KEPT bytes
                of pinned host memory, and never answer a drop request
  lie DIR KEPT N  send N MOVEDs no MOVE asked for (DIR: out or drop),
                each saying it keeps KEPT bytes of host memory (issue 32)
  mark          mark the page's swapped mark committed out, unasked (a
                liar's page that says the copy engine left it out)
  rejoin SIZE   as a shim after a daemon restart: a new connection with
                the same page, the device opened, SIZE bytes re-registered
                at the same address (COMMIT, reserved 0); prints
                "rejoined", or "closed" when the daemon refused it
  commit SIZE   SIZE bytes more, at another address, re-registered on this
                connection (COMMIT, reserved 0); prints "committed", or
                "closed" when the daemon refused it
  touch         as a shim whose connection is lost while it registers: a
                new connection with the same page, the device opened, then
                closed before anything is re-registered; prints "touched"
  swapin        ask to come back in (SWAP_IN, as a shim's call does);
                prints "swapin ANSWER" as the answer comes (OK, ERROR)
  deaf          never answer a MOVE in from now on; prints "deaf"
  hangup        close the connection, as a process whose connection is
                lost while it lives on (its page kept); prints "hung up"
  exit          leave
The connection closed by the daemon prints "closed"; stdin is still read.
"""
import fcntl
import mmap
import os
import select
import socket
import struct
import sys

from wire import (COMMIT, DEVICE_INFO, DEVICE_OPEN, ERROR, GRANT, HDR, HELLO,
                  HELLO_OK, HELLO_UNSET, MOVE, MOVED, NAMES, OK, RESERVE,
                  commit_payload, connect, dev_of, open_payload, packet,
                  reserve_payload, type_of)
from wire import SWAP_IN as SWAP_IN_MSG

CUDA_ERROR_OUT_OF_MEMORY = 2
SWAP_OUT, SWAP_IN, SWAP_DROP = 1, 2, 3
MAGIC, PAGE_VERSION, PAGE_SIZE = 0x67664163, 3, 4096
ACT_COPY = 0x2
SWAPPED_AT, COMMITTED = 24, 0x80000000   # gf_activity.swapped


def ask(s, type_, payload, seq, want, fds=()):
    socket.send_fds(s, [packet(type_, payload, seq)], list(fds))
    reply = s.recv(4096)
    got = type_of(reply)
    if got != want:
        sys.exit("mute_mover.py: got message type %d, want %d" % (got, want))


def page_make():
    fd = os.memfd_create("mute-activity", os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, PAGE_SIZE)
    fcntl_seals(fd)
    m = mmap.mmap(fd, PAGE_SIZE)
    struct.pack_into("<II", m, 0, MAGIC, PAGE_VERSION)
    struct.pack_into("<I", m, 20, ACT_COPY)              # flags
    return fd, m


def fcntl_seals(fd):
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK |
                fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)


def moved(s, direction, id_, size, kept=0, result=0):
    # direction, result, moved, duration_us, stayed[8], nstayed, id, what,
    # kept, pinned
    body = struct.pack("<IIQQ8QII64sQQ", direction, result, size, 1000,
                       *([0] * 8), 0, id_, b"", kept, 0)
    s.send(packet(MOVED, body, 0))


def join(path, dev, fd):
    s = connect(path)
    ask(s, HELLO, HELLO_UNSET + struct.pack("16s", b"9.9.9"), 1, HELLO_OK,
        [fd])
    ask(s, DEVICE_OPEN, open_payload(dev), 2, DEVICE_INFO)
    return s


def unasked_commit(s, dev, ptr, size):
    """A COMMIT of size at ptr with nothing reserved; whether the daemon
    kept the connection (its answer to a DEVICE_OPEN after it came)."""
    s.send(packet(COMMIT, commit_payload(dev, ptr, 0, size), 3))
    try:
        s.send(packet(DEVICE_OPEN, open_payload(dev), 4))
        m = s.recv(4096)
    except OSError:
        m = b""
    while m and type_of(m) != DEVICE_INFO:
        direction, id_ = struct.unpack_from("<II", m + bytes(8), HDR.size)
        if type_of(m) == MOVE and direction == SWAP_IN:
            print("move in %d" % id_, flush=True)   # answered as main() does
            moved(s, SWAP_IN, id_, size)
        m = s.recv(4096)
    return m != b""


def rejoin(path, dev, fd, size):
    s = join(path, dev, fd)
    kept = unasked_commit(s, dev, 0x7f0000000000, size)
    print("rejoined" if kept else "closed", flush=True)
    return s if kept else None


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    path, uuid, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
    commit = len(sys.argv) == 5 and sys.argv[4] == "commit"
    dev = dev_of(uuid)
    fd, page = page_make()
    s = join(path, dev, fd)
    ask(s, RESERVE, reserve_payload(dev, size), 3, GRANT)
    s.send(packet(COMMIT, commit_payload(dev, 0x7f0000000000, size, size),
                  4))
    print("ready", flush=True)
    last = keep = deaf = 0
    while True:
        ready, _, _ = select.select([s, sys.stdin] if s else [sys.stdin],
                                    [], [])
        if s in ready:
            m = s.recv(4096)
            if not m:
                print("closed", flush=True)
                s = None
                continue
            type_ = type_of(m)
            if type_ in (OK, ERROR) and HDR.unpack_from(m)[3] == 9:
                print("swapin", NAMES[type_], flush=True)
            if type_ != MOVE:
                continue
            direction, id_ = struct.unpack_from("<II", m, HDR.size)
            print("move %s %d" % ({SWAP_OUT: "out", SWAP_IN: "in",
                                   SWAP_DROP: "drop"}.get(direction, "?"),
                                  id_), flush=True)
            if direction == SWAP_IN and not deaf:
                moved(s, SWAP_IN, id_, size, keep)
            elif direction == SWAP_OUT:
                last = id_
                if commit:
                    struct.pack_into("<I", page, SWAPPED_AT,
                                     id_ | COMMITTED)
        if sys.stdin in ready:
            line = sys.stdin.readline().split()
            if not line or line[0] == "exit":
                return
            if line[0] == "page":
                print("swapped %d" % struct.unpack_from("<I", page,
                                                        SWAPPED_AT)[0],
                      flush=True)
            elif line[0] == "lie":
                for _ in range(int(line[3])):
                    moved(s, SWAP_OUT if line[1] == "out" else SWAP_DROP,
                          0x3ffffff0, 0, int(line[2]))
                print("lied", flush=True)
            elif line[0] == "moved":
                moved(s, SWAP_OUT, int(line[1]) if len(line) > 1 else last,
                      size, keep)
            elif line[0] == "failed":
                moved(s, SWAP_OUT, int(line[1]) if len(line) > 1 else last,
                      0, keep, CUDA_ERROR_OUT_OF_MEMORY)
                print("failed", flush=True)
            elif line[0] == "touch":
                if s:
                    s.close()
                join(path, dev, fd).close()
                s = None
                print("touched", flush=True)
            elif line[0] == "mark":
                struct.pack_into("<I", page, SWAPPED_AT, 1 | COMMITTED)
                print("marked", flush=True)
            elif line[0] == "commit" and s:
                kept = unasked_commit(s, dev, 0x7f0100000000, int(line[1]))
                print("committed" if kept else "closed", flush=True)
                s = s if kept else None
            elif line[0] == "rejoin":
                if s:
                    s.close()
                s = rejoin(path, dev, fd, int(line[1]))
            elif line[0] == "swapin" and s:
                s.send(packet(SWAP_IN_MSG, struct.pack("<II", 0, 0), 9))
            elif line[0] == "hangup":
                if s:
                    s.close()
                s = None
                print("hung up", flush=True)
            elif line[0] == "deaf":
                deaf = 1
                print("deaf", flush=True)
            elif line[0] == "keep":
                keep = int(line[1])
                print("keeping", flush=True)


main()
