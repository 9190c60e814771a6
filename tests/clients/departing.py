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
import socket
import struct
import sys

VERSION = 1
HELLO, DEVICE_OPEN, RESERVE, COMMIT = 1, 2, 3, 4
HELLO_OK, DEVICE_INFO, GRANT = 64, 65, 66
KIND_MEM = 1


def packet(type_, payload, seq):
    return struct.pack("<HHIII", VERSION, type_, 16 + len(payload), seq,
                       0) + payload


def ask(s, type_, payload, seq, want):
    s.send(packet(type_, payload, seq))
    reply = s.recv(65536)
    got = struct.unpack("<HHIII", reply[:16])[1]
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
    dev = bytes.fromhex(uuid.replace("GPU-", "").replace("-", ""))
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    s.settimeout(10)
    ask(s, HELLO, struct.pack("<iIII", -2**31, 0xffffffff, 0xffffffff, 0),
        1, HELLO_OK)
    ask(s, DEVICE_OPEN, dev + struct.pack("<IIQ", 0, 0, 0), 2, DEVICE_INFO)
    ask(s, RESERVE, dev + struct.pack("<QII", size, KIND_MEM, 0), 3, GRANT)
    s.send(packet(COMMIT, dev + struct.pack("<QQQII", 0x7f0000000000, size,
                                            size, KIND_MEM, 0), 4))
    s.close()
    print("closed", flush=True)
    if len(sys.argv) > 4:
        hold_raw(int(sys.argv[4]))
    sys.stdin.readline()


main()
