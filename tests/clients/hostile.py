"""What a hostile neighbour does to gpufracd (issue 22), one command each.

  hostile.py hold SOCK UUID SIZE
      as uid 65534: HELLO, reserve and commit SIZE bytes, fork a child that
      keeps the connection, print the child's pid, and exit (the child
      sleeps until killed)
  hostile.py stranger PID FILE
      as root, in a pid namespace of our own (root may write ns_last_pid):
      fork a process given pid PID that writes FILE if it is ever sent a
      signal; print its pid and leave it running
  hostile.py reserve SOCK UUID SIZE
      HELLO and RESERVE SIZE bytes; print the reply's type (GRANT, WAIT,
      DENY), and after a WAIT the next one within 10 s
  hostile.py conns SOCK N [root]
      as uid 65534 (or as root, staying so): open N connections and say
      HELLO on each, each from a process of its own (the daemon keeps
      one connection per process: a process's HELLO closes its earlier
      connection); print how many got HELLO_OK and how many were
      refused, then wait on stdin
  hostile.py commits SOCK UUID N
      HELLO, open UUID, RESERVE N times 4 KiB and commit N allocations of
      4 KiB from it; print "committed N" once the daemon has answered a
      DEVICE_OPEN sent after them, then wait on stdin
  hostile.py overcharge SOCK UUID commit|lease SIZE
      HELLO, open UUID, re-register SIZE bytes (COMMIT with reserved 0, or
      LEASE_RESTORE), then DEVICE_OPEN again; print the answer to it
      (CLOSED when the daemon refused the charge and closed the connection)
  hostile.py forge SOCK UUID HOW SIZE [nobody]
      a client's word that would change what others get (issue 32): HELLO,
      open UUID, then HOW: "rereg" a COMMIT of SIZE with reserved 0 (a
      re-registration), "unreserved" a COMMIT of SIZE that says it was
      reserved with no RESERVE made, "late-lease" a RESERVE of 1 MiB then
      a LEASE_RESTORE of SIZE; then DEVICE_OPEN again and print the
      answer (CLOSED when the daemon refused and closed the connection);
      then wait on stdin, the connection kept (as uid 65534 with nobody)
  hostile.py noread SOCK N
      as uid 65534: send N STATUS requests and never read a reply; sleep
      until killed
"""
import os
import signal
import socket
import sys
import time

from wire import (COMMIT, DEVICE_OPEN, HELLO, HELLO_UNSET, LEASE_RESTORE,
                  NAMES, RESERVE, STATUS_REQ, commit_payload, connect,
                  dev_of, open_payload, packet, reserve_payload,
                  restore_payload, type_of)

NOBODY = 65534
BASE = 0x7f0000000000   # the address committed


def reply(s):
    r = s.recv(65536)
    if not r:
        return "CLOSED"
    t = type_of(r)
    return NAMES.get(t, str(t))


def ask(s, type_, payload, seq):
    s.send(packet(type_, payload, seq))
    return reply(s)


def hello(s):
    return ask(s, HELLO, HELLO_UNSET, 1)


def opened(path, uuid):
    s = connect(path)
    assert hello(s) == "HELLO_OK"
    dev = dev_of(uuid)
    assert ask(s, DEVICE_OPEN, open_payload(dev), 2) == "DEVICE_INFO"
    return s, dev


def nobody():
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def hold(path, uuid, size):
    nobody()
    s, dev = opened(path, uuid)
    assert ask(s, RESERVE, reserve_payload(dev, size), 3) == "GRANT"
    s.send(packet(COMMIT, commit_payload(dev, BASE, size, size), 4))
    pid = os.fork()
    if pid == 0:
        null = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        while True:
            time.sleep(1000)
    print(pid, flush=True)


def stranger(want, path):
    def note(sig, frame):
        with open(path, "a") as f:
            f.write("signal %d\n" % sig)
    r, w = os.pipe()
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write(str(want - 1))
    pid = os.fork()
    if pid == 0:
        os.close(r)
        # Let $(...) end: the stranger keeps no pipe of its caller's.
        null = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1,
                    signal.SIGHUP):
            signal.signal(sig, note)
        os.write(w, b"x")
        os.close(w)
        while True:
            time.sleep(1000)
    os.close(w)
    os.read(r, 1)
    print(pid, flush=True)


def reserve(path, uuid, size):
    s, dev = opened(path, uuid)
    got = ask(s, RESERVE, reserve_payload(dev, size), 3)
    if got == "WAIT":
        try:
            got += " " + reply(s)
        except socket.timeout:
            got += " nothing"
    print(got, flush=True)


def held_conn(path, said, release):
    """In a child: connect, say HELLO, write whether it was let in on
    said, and keep the connection until release reads end of file."""
    got = "CLOSED"
    try:
        s = connect(path)
        got = hello(s)
    except OSError:
        pass    # refused, reset, or no descriptor left: not let in
    os.write(said, b"1" if got == "HELLO_OK" else b"0")
    os.read(release, 1)
    os._exit(0)


def conns(path, n, who="nobody"):
    if who == "nobody":
        nobody()
    said_r, said_w = os.pipe()
    release_r, release_w = os.pipe()
    ok, refused = 0, 0
    for _ in range(n):
        if os.fork() == 0:
            os.close(release_w)
            held_conn(path, said_w, release_r)
        if os.read(said_r, 1) == b"1":
            ok += 1
        else:
            refused += 1
    print("ok %d refused %d" % (ok, refused), flush=True)
    sys.stdin.readline()
    os.close(release_w)
    for _ in range(n):
        os.wait()


def commits(path, uuid, n):
    s, dev = opened(path, uuid)
    # Reserved first: a COMMIT no reserve covers is refused.
    assert ask(s, RESERVE, reserve_payload(dev, n * 4096), 3) == "GRANT"
    batch = []
    for i in range(n):
        batch.append(packet(COMMIT, commit_payload(dev, BASE + i * 4096,
                                                   4096, 4096), 10))
        if len(batch) == 1024:
            for p in batch:
                s.send(p)
            batch = []
    for p in batch:
        s.send(p)
    s.settimeout(120)
    assert ask(s, DEVICE_OPEN, open_payload(dev), 11) == "DEVICE_INFO"
    print("committed %d" % n, flush=True)
    sys.stdin.readline()


def overcharge(path, uuid, kind, size):
    s, dev = opened(path, uuid)
    if kind == "commit":
        s.send(packet(COMMIT, commit_payload(dev, BASE, 0, size), 3))
    else:
        s.send(packet(LEASE_RESTORE, restore_payload(dev, size), 3))
    try:
        got = ask(s, DEVICE_OPEN, open_payload(dev), 4)
    except (ConnectionResetError, BrokenPipeError):
        got = "CLOSED"
    print(got, flush=True)


def forge(path, uuid, how, size, as_nobody):
    if as_nobody:
        nobody()
    s, dev = opened(path, uuid)
    if how == "rereg":
        s.send(packet(COMMIT, commit_payload(dev, BASE, 0, size), 3))
    elif how == "unreserved":
        s.send(packet(COMMIT, commit_payload(dev, BASE, size, size), 3))
    elif how == "late-lease":
        assert ask(s, RESERVE, reserve_payload(dev, 1 << 20), 3) == "GRANT"
        s.send(packet(LEASE_RESTORE, restore_payload(dev, size), 4))
    else:
        sys.exit("hostile.py: unknown forgery " + how)
    try:
        got = ask(s, DEVICE_OPEN, open_payload(dev), 5)
    except (ConnectionResetError, BrokenPipeError):
        got = "CLOSED"
    print(got, flush=True)
    sys.stdin.readline()


def noread(path, n):
    nobody()
    s = connect(path)
    s.settimeout(1)
    sent = 0
    while sent < n:
        try:
            s.send(packet(STATUS_REQ, b"", sent + 1))
            sent += 1
        except socket.timeout:
            continue
        except (BrokenPipeError, ConnectionResetError):
            break
    print("sent %d" % sent, flush=True)
    time.sleep(600)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "hold":
        hold(args[0], args[1], int(args[2]))
    elif cmd == "stranger":
        stranger(int(args[0]), args[1])
    elif cmd == "reserve":
        reserve(args[0], args[1], int(args[2]))
    elif cmd == "conns":
        conns(args[0], int(args[1]), *args[2:3])
    elif cmd == "commits":
        commits(args[0], args[1], int(args[2]))
    elif cmd == "overcharge":
        overcharge(args[0], args[1], args[2], int(args[3]))
    elif cmd == "forge":
        forge(args[0], args[1], args[2], int(args[3]),
              len(args) > 4 and args[4] == "nobody")
    elif cmd == "noread":
        noread(args[0], int(args[1]))
    else:
        sys.exit("hostile.py: unknown command " + cmd)


main()
