"""gpufracd's wire protocol as the test clients speak it, raw
(include/gpufrac/proto.h): the header, the message types they send and
read, and the payloads they all send alike. Imported by the clients
beside it (a script's own folder is on Python's path)."""
import socket
import struct

VERSION = 1
HDR = struct.Struct("<HHIII")           # version, type, len, seq, zero
HELLO, DEVICE_OPEN, RESERVE, COMMIT = 1, 2, 3, 4
SWAP_IN, LEASE_RESTORE, MOVED = 7, 9, 11
STATUS_REQ = 32
HELLO_OK, DEVICE_INFO, GRANT, DENY, ERROR, WAIT, OK, MOVE = \
    64, 65, 66, 67, 68, 75, 81, 82
NAMES = {HELLO_OK: "HELLO_OK", DEVICE_INFO: "DEVICE_INFO", GRANT: "GRANT",
         DENY: "DENY", ERROR: "ERROR", WAIT: "WAIT", OK: "OK"}
KIND_MEM = 1
# HELLO asking nothing of its own (priority, resolver, wait timeout unset),
# as a shim too old to say its release does.
HELLO_UNSET = struct.pack("<iIII", -2**31, 0xffffffff, 0xffffffff, 0)


def packet(type_, payload, seq):
    """A message: the header, then payload."""
    return HDR.pack(VERSION, type_, HDR.size + len(payload), seq,
                    0) + payload


def type_of(message):
    """The type of a message read."""
    return HDR.unpack_from(message)[1]


def dev_of(uuid):
    """A device's UUID on the wire, from its "GPU-..." form."""
    return bytes.fromhex(uuid.replace("GPU-", "").replace("-", ""))


def open_payload(dev):
    """DEVICE_OPEN's payload: dev, asking for no limit of its own."""
    return dev + struct.pack("<IIQ", 0, 0, 0)


def connect(path):
    """A connection to the daemon at path, reads waiting 10 s at most."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    s.settimeout(10)
    return s


def reserve_payload(dev, size, flags=0):
    """RESERVE's payload: size bytes of device memory on dev; flags
    GF_RESERVE_* (1: a lease asked for too)."""
    return dev + struct.pack("<QII", size, KIND_MEM, flags)


def commit_payload(dev, ptr, reserved, size):
    """COMMIT's payload: ptr holds size bytes on dev, reserved of them
    by a RESERVE (0: a re-registration)."""
    return dev + struct.pack("<QQQII", ptr, reserved, size, KIND_MEM, 0)


def restore_payload(dev, size):
    """LEASE_RESTORE's payload: a lease of size bytes on dev, all drawn."""
    return dev + struct.pack("<Q", size)
