"""A client that closes its daemon connection while it still holds memory.

Usage: departing.py SOCKET UUID SIZE [RAW]. Says HELLO, opens device UUID
("GPU-..."), reserves and commits SIZE bytes, closes the socket, prints
"closed", then waits for a line on stdin before it exits: a process whose
connection closed before its exit, as every process's does during exit.
With RAW, after "closed" it takes RAW bytes from the driver (libcuda.so.1,
no shim) and prints "holding": a process that left its connection and
lives on, holding memory no grant covers.
"""
import ctypes
import sys

from wire import (COMMIT, DEVICE_INFO, DEVICE_OPEN, GRANT, HELLO, HELLO_OK,
                  HELLO_UNSET, RESERVE, commit_payload, connect, dev_of,
                  open_payload, packet, reserve_payload, type_of)


def ask(s, type_, payload, seq, want):
    s.send(packet(type_, payload, seq))
    got = type_of(s.recv(65536))
    if got != want:
        sys.exit("departing.py: got message type %d, want %d" % (got, want))


def hold_raw(size):
    cu = ctypes.CDLL("libcuda.so.1")
    ctx, ptr = ctypes.c_void_p(), ctypes.c_uint64()
    if (cu.cuInit(0) or cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) or
            cu.cuCtxSetCurrent(ctx) or
            cu.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(size))):
        sys.exit("departing.py: the driver refused %d bytes" % size)
    print("holding", flush=True)


def main():
    path, uuid, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
    dev = dev_of(uuid)
    s = connect(path)
    ask(s, HELLO, HELLO_UNSET, 1, HELLO_OK)
    ask(s, DEVICE_OPEN, open_payload(dev), 2, DEVICE_INFO)
    ask(s, RESERVE, reserve_payload(dev, size), 3, GRANT)
    s.send(packet(COMMIT, commit_payload(dev, 0x7f0000000000, size, size),
                  4))
    s.close()
    print("closed", flush=True)
    if len(sys.argv) > 4:
        hold_raw(int(sys.argv[4]))
    sys.stdin.readline()


main()
